"""One self-contained HTML file per report: the data, the page's script and style, and plotly.js, all
inline, so the file opens offline and can be attached anywhere.

Why plotly.js (from the pinned `plotly` Python package, its offline bundle): a well-kept charting
library with hover cards, zoom and a legend that toggles traces, which the lanes need, and no
server. Its bundle is 4.8 MB, so it is stored gzip-compressed and base64-encoded (about 2 MB) and
unpacked by the browser's own `DecompressionStream` (Chrome 80, Firefox 113, Safari 16.4 and
later): the report stays a single file under 5 MB with a Train Ticket run's data.

The same bundles give the same bytes (no time stamp, gzip with a zero mtime) for the same zlib.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ..core.errors import ConfigurationError
from .timeline import RunView

ASSETS = "sre_marathon_gym.run_report.assets"


@lru_cache(maxsize=1)
def _plotly_js() -> tuple[str, str]:
    """plotly.js (gzip, base64) and its version, from the installed `plotly` package."""
    try:
        from plotly.offline import get_plotlyjs, get_plotlyjs_version
    except ImportError as exc:  # a broken install: plotly is a core dependency
        raise ConfigurationError(f"the run report needs the plotly package: {exc}") from None
    packed = gzip.compress(get_plotlyjs().encode("utf-8"), compresslevel=9, mtime=0)
    return base64.b64encode(packed).decode("ascii"), get_plotlyjs_version()


def _asset(name: str) -> str:
    return resources.files(ASSETS).joinpath(name).read_text(encoding="utf-8")


def script_json(value: object) -> str:
    """JSON safe inside a <script> element: no `</script>`, `<!--` or line separators can close it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def _card_table(view: RunView) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
        for k, v in view.card
        if k != "Marathon-Score"
    )
    return f'<table class="card">{rows}</table>'


def _comparison(views: list[RunView]) -> str:
    """Metric by metric and fault by fault, where the runs differ (two runs of one seed)."""
    head = "".join(f"<th>{html.escape(v.source)}</th>" for v in views)
    metrics = "".join(
        "<tr"
        + (' class="differs"' if len({dict(v.card).get(k) for v in views}) > 1 else "")
        + f"><th>{html.escape(k)}</th>"
        + "".join(f"<td>{html.escape(dict(v.card).get(k, '-'))}</td>" for v in views)
        + "</tr>"
        for k, _ in views[0].card
    )
    outcome = [{f.fault_id: f.outcome for f in v.faults} for v in views]
    differing = [f for f in views[0].faults if len({o.get(f.fault_id) for o in outcome}) > 1]
    faults = "".join(
        f"<tr><th>{html.escape(f.fault_id)}</th>"
        + "".join(
            f'<td class="o-{o.get(f.fault_id, "")}">{html.escape(o.get(f.fault_id, "-"))}</td>'
            for o in outcome
        )
        + "</tr>"
        for f in differing
    )
    return (
        '<section class="compare"><h2>Side by side</h2><div class="compare-tables">'
        f'<table class="card"><tr><th>metric</th>{head}</tr>{metrics}</table>'
        f'<table class="card" id="outcome-diff"><tr><th>fault ({len(differing)} differ)</th>{head}</tr>'
        f"{faults}</table></div></section>"
    )


def _run_column(i: int, view: RunView, titled: bool) -> str:
    banner = (
        ""
        if view.complete
        else f'<p class="incomplete">INCOMPLETE: {html.escape(view.incomplete_note)}; unreached faults '
        "count as missed, so this is not the run's Marathon-Score</p>"
    )
    return f"""<section class="run" id="run-{i}">
{f"<h2>{html.escape(view.title)}</h2>" if titled else ""}{banner}
<p class="headline">Marathon-Score <span class="score">{html.escape(view.score)}</span>
<span class="rules">= {html.escape(view.breakdown)}; rules v{view.rules_version}; {len(view.faults)} faults
</span></p>
<div class="timeline" id="timeline-{i}"></div>
<div class="degradation" id="degradation-{i}"></div>
<details><summary>Score card (MTTx, degradation, usage and cost)</summary>{_card_table(view)}</details>
</section>"""


def render_html(views: list[RunView]) -> str:
    """The report page for one run, or several runs of one seed side by side."""
    if not views:
        raise ConfigurationError("a report needs at least one bundle")
    plotly_b64, plotly_version = _plotly_js()
    title = " vs ".join(v.title for v in views)
    columns = "\n".join(_run_column(i, v, titled=len(views) > 1) for i, v in enumerate(views))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sre-marathon report; plotly.js {html.escape(plotly_version)}">
<title>{html.escape(title)}</title>
<style>{_asset("report.css")}</style></head>
<body data-ready="0">
<header><h1>{html.escape(title)}</h1>
<form class="filters" id="filters" onsubmit="return false">
<label>service <select id="filter-service"><option value="">all</option></select></label>
<label>category <select id="filter-category"><option value="">all</option></select></label>
<label>outcome <select id="filter-outcome"><option value="">all</option></select></label>
<span id="filter-count"></span></form>
{_HINT}</header>
{_comparison(views) if len(views) > 1 else ""}
<main class="runs cols-{len(views)}">
{columns}
</main>
<script id="report-data" type="application/json">{script_json([v.model_dump(mode="json") for v in views])}
</script>
<script id="plotly-gz" type="application/octet-stream">{plotly_b64}</script>
<script>{_asset("report.js")}</script>
</body></html>
"""


_HINT = """<p class="hint">One lane per fault from injection to repair or revert, coloured by its Figure 9
outcome; dark band: its symptom probe failing. Ticks: alerts attributable to it. Circles: the incident matched
to it; diamonds: right root-cause claims; triangles: interventions called for it. Top lanes: every change
shipped (red: a fault's, told apart only after the run), and what matched no fault. Hover for details; drag
to zoom; click a legend entry to hide it.</p>"""


def default_report_path(bundles: list[Path]) -> Path:
    """``X.html`` beside ``X.bundle``; for a comparison, ``A--vs--B.html`` beside A."""
    first = bundles[0]
    if len(bundles) == 1:
        return first.with_suffix(".html")
    return first.with_name("--vs--".join(b.stem for b in bundles) + ".html")
