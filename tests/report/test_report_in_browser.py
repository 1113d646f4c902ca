"""The run report as a user sees it: rendered by headless Chromium, checked from the page (the DOM
plotly.js drew), not from the HTML source."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from sre_marathon_gym.cli.commands import main
from sre_marathon_gym.recording.rescoring import score_bundle
from sre_marathon_gym.run_report import report_views, write_report
from sre_marathon_gym.run_report.page import render_html

FAULT_ID = re.compile(r"^[a-z]{2}-[a-z]+-\d{3,4} · ")


def _open(browser, path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.resolve().as_uri())
    page.wait_for_function("document.body.dataset.ready !== '0'", timeout=60_000)
    assert page.evaluate("document.body.dataset.ready") == "1", errors
    assert not errors
    return page


def _lanes(page, run: int = 0) -> list[str]:
    return page.eval_on_selector_all(f"#timeline-{run} .ytick text", "els => els.map(e => e.textContent)")


def _fault_lanes(page, run: int = 0) -> list[str]:
    return [t.split(" · ")[0] for t in _lanes(page, run) if FAULT_ID.match(t)]


def _select(page, which: str, value: str) -> None:
    page.select_option(f"#filter-{which}", value)
    page.wait_for_function("document.body.dataset.ready === '1'", timeout=30_000)


def _cli_score(bundle: Path) -> str:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["score", str(bundle)]) == 0
    return re.search(r"^Marathon-Score:\s+(\S+)", buf.getvalue(), re.M).group(1)


def test_the_report_shows_every_fault_the_score_and_filters(leaderboard_bundles, browser, tmp_path):
    bundle = leaderboard_bundles["runbook"]
    html = write_report([bundle], tmp_path / "report.html")
    _, card = score_bundle(bundle)
    page = _open(browser, html)
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[0] > 900 and pixels.shape[1] == 1400
    assert float(np.std(pixels[..., :3])) > 0.05  # drawn, not a blank page

    faults = [f.fault_id for f in card.per_fault]
    shown = _fault_lanes(page)
    assert len(shown) == len(faults) == card.faults
    assert sorted(shown) == sorted(faults)
    assert page.inner_text("#run-0 .score") == _cli_score(bundle)

    outcomes = {f.fault_id: f.outcome for f in card.per_fault}
    missed = sorted(f for f, o in outcomes.items() if o == "missed")
    assert 0 < len(missed) < len(faults)
    _select(page, "outcome", "missed")
    assert sorted(_fault_lanes(page)) == missed
    assert page.inner_text("#filter-count").startswith(f"{len(missed)} of {len(faults)} ")

    _select(page, "outcome", "")
    view = report_views([bundle])[0]
    service = "cartservice"
    touching = sorted(f.fault_id for f in view.faults if service in f.services)
    changes = [c for c in view.noise if c.name == "changes shipped"][0].items
    _select(page, "service", service)
    assert sorted(_fault_lanes(page)) == touching and 0 < len(touching) < len(faults)
    n_changes = sum(service in it.services for it in changes)
    assert f"changes shipped ({n_changes})" in _lanes(page) and n_changes < len(changes)

    _select(page, "service", "")
    category = view.faults[0].category
    in_category = sorted(f.fault_id for f in view.faults if f.category == category)
    _select(page, "category", category)
    assert sorted(_fault_lanes(page)) == in_category and len(in_category) < len(faults)
    _select(page, "category", "")
    assert len(_fault_lanes(page)) == len(faults)
    # the hover card of a fault's bar names the fault and its outcome
    page.evaluate("Plotly.Fx.hover('timeline-0', [{curveNumber: 0, pointNumber: 0}])")
    hover = page.evaluate("document.querySelector('#timeline-0 .hoverlayer').textContent")
    assert re.search(r"[a-z]{2}-[a-z]+-\d{3,4}: \w+", hover)


def test_two_runs_of_one_seed_side_by_side(leaderboard_bundles, browser, tmp_path):
    runbook, noop = leaderboard_bundles["runbook"], leaderboard_bundles["noop"]
    page = _open(browser, write_report([runbook, noop], tmp_path / "both.html"))
    assert len(_fault_lanes(page, 0)) == len(_fault_lanes(page, 1)) == score_bundle(noop)[1].faults
    assert page.inner_text("#run-1 .score") == _cli_score(noop) == "0.0"
    runbook_outcomes = {f.fault_id: f.outcome for f in score_bundle(runbook)[1].per_fault}
    differing = sum(o != "missed" for o in runbook_outcomes.values())  # noop misses every fault
    rows = page.eval_on_selector_all("#outcome-diff tr", "els => els.length")
    assert rows == 1 + differing


def test_text_from_the_bundle_cannot_run_as_script(leaderboard_bundles, browser, tmp_path):
    """Agent-chosen text (an artifact it claims, an error message) and catalog text, in the page's
    HTML, its tick labels and its hover cards."""
    view = report_views([leaderboard_bundles["random"]])[0]
    evil = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    lane = view.faults[0]
    item = lane.items[0].model_copy(update={"label": evil, "details": [evil, evil]})
    lane = lane.model_copy(update={"artifact": evil, "target": evil, "items": [item]})
    view = view.model_copy(update={"faults": [lane, *view.faults[1:]], "title": evil})
    path = tmp_path / "evil.html"
    path.write_text(render_html([view]), encoding="utf-8")
    page = _open(browser, path)
    assert evil in page.title() and any(evil in t for t in _lanes(page))
    for curve in range(page.evaluate("document.getElementById('timeline-0').data.length")):
        page.evaluate(f"Plotly.Fx.hover('timeline-0', [{{curveNumber: {curve}, pointNumber: 0}}])")
        page.evaluate("Plotly.Fx.unhover('timeline-0')")
    page.evaluate(
        "(() => { const gd = document.getElementById('timeline-0');"
        " const i = gd.data.findIndex((t) => (t.hovertext || []).some((h) => h.includes('window.pwned')));"
        " Plotly.Fx.hover(gd, [{curveNumber: i, pointNumber: 0}]); })()"
    )
    hover = page.evaluate("document.querySelector('#timeline-0 .hoverlayer').textContent")
    assert "window.pwned = 1" in hover  # shown as text
    assert page.evaluate("window.pwned === undefined")
    assert page.evaluate("document.querySelectorAll('#timeline-0 img, #timeline-0 script').length") == 0


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_bundle_gets_a_clear_error(leaderboard_bundles, tmp_path, damage, capsys):
    data = bytearray(leaderboard_bundles["noop"].read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    else:
        data = data[: len(data) // 3]
    bad = tmp_path / "bad.bundle"
    bad.write_bytes(bytes(data))
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "bad.bundle" in err and "Traceback" not in err
    assert not (tmp_path / "bad.html").exists()
