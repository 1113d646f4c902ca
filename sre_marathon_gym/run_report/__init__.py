"""The run report: one sealed bundle (or several runs of one seed) as an interactive, self-contained
HTML page. Integrations layer: reads bundles and the scorer's verdicts, never a simulator.

`write_report(bundles, out)` verifies each bundle's seal first (a bundle that fails verification is
a `BundleError`), scores it with the weights sealed in it, and writes the page (`page.py`) drawn from
`timeline.run_view`.

May import: every layer but `llm_rl`, `mcp_server`, `rllib` and the command line.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from ..core.errors import ConfigurationError
from ..recording.rescoring import bundle_scoring, with_scope_share
from ..scoring import score_run
from .page import default_report_path, render_html
from .timeline import RunView, run_view

MAX_RUNS = 3


def report_views(bundles: Sequence[str | os.PathLike[str]], key: str | bytes | None = None) -> list[RunView]:
    """Verify, score and lay out each bundle; a comparison needs runs of one app and seed."""
    from ..recording.bundle import load_bundle

    paths = [Path(b) for b in bundles]
    if not paths:
        raise ConfigurationError("report: name a bundle")
    if len(paths) > MAX_RUNS:
        raise ConfigurationError(f"report: at most {MAX_RUNS} bundles side by side, got {len(paths)}")
    views = []
    for path in paths:
        bundle = load_bundle(path, key)
        scoring = bundle_scoring(bundle, None, None)
        record = with_scope_share(bundle.record)
        views.append(run_view(path, bundle, record, score_run(record, scoring), scoring))
    schedules = {_schedule(v) for v in views}
    if len(schedules) > 1:
        seen = ", ".join(
            f"{v.source}: {v.app} seed {v.seed} ({v.mode}, {v.run_s / 60:.0f} min, {len(v.faults)} faults)"
            for v in views
        )
        raise ConfigurationError(f"report: a comparison needs runs of one app, seed and schedule; got {seen}")
    return views


def _schedule(view: RunView) -> tuple:
    """What makes two runs comparable fault by fault: the same faults at the same times."""
    faults = tuple(sorted((f.fault_id, f.start_s) for f in view.faults))
    return (view.app, view.seed, view.mode, view.run_s, view.injection_s, faults)


def write_report(
    bundles: Sequence[str | os.PathLike[str]],
    out: str | os.PathLike[str] | None = None,
    key: str | bytes | None = None,
) -> Path:
    """Write the report of `bundles` to `out` (default: beside the first bundle, `.html`)."""
    views = report_views(bundles, key)
    target = Path(out) if out is not None else default_report_path([Path(b) for b in bundles])
    if target.suffix.lower() not in (".html", ".htm"):
        raise ConfigurationError(
            f"report: the output is an HTML file: name a .html file, got {str(target)!r:.80}"
        )
    page = render_html(views)
    tmp = target.with_name(f".{target.name}.tmp")
    try:
        if target.is_dir():
            raise IsADirectoryError(0, "it is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ConfigurationError(f"report: cannot write {target}: {exc.strerror or exc}") from None
    return target


__all__ = ["MAX_RUNS", "RunView", "report_views", "run_view", "write_report"]
