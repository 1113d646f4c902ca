"""How big the run report is and how long it takes to open, per app, on the leaderboard seed.

For each app: the Runbook's leaderboard run is sealed, its report written, and the page opened in
headless Chromium (Debian's `chromium`, or `SRE_MARATHON_CHROMIUM`) through Playwright five times;
printed are the file size, the time `sre-marathon report` takes, and the median and worst time from
navigation to the page drawn (`window.reportReadyMs`: plotly.js unpacked and loaded, every lane and
the degradation chart plotted). The issue's target: Train Ticket's opens in under 2 s, under 5 MB.

    python benchmarks/bench_report.py [--apps train_ticket] [--keep DIR] [--screenshot docs/run_report.png]

`--screenshot` saves the first app's report as drawn (the top of the page, with a fault's hover card
open): the picture in the README.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from sre_marathon_gym.catalog import APPS, load_catalog
from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode
from sre_marathon_gym.run_report import write_report
from sre_marathon_gym.run_report.browser import launch_chromium

OPENS = 5


def open_times(browser, page_path: Path) -> list[float]:
    """Seconds from navigation to the drawn page, one fresh page per open."""
    out = []
    for _ in range(OPENS):
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(page_path.resolve().as_uri())
        page.wait_for_function("document.body.dataset.ready !== '0'", timeout=60_000)
        if page.evaluate("document.body.dataset.ready") != "1":
            raise SystemExit(f"{page_path}: the page failed to draw")
        out.append(page.evaluate("window.reportReadyMs") / 1000.0)
        page.close()
    return out


def screenshot(browser, page_path: Path, png: Path) -> None:
    """The top of the report with the hover card of a missed fault's bar open."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(page_path.resolve().as_uri())
    page.wait_for_function("document.body.dataset.ready === '1'", timeout=60_000)
    page.evaluate(
        "(() => { const gd = document.getElementById('timeline-0');"
        " const i = gd.data.findIndex((t) => t.name === 'missed');"
        " Plotly.Fx.hover(gd, [{curveNumber: i, pointNumber: 6}]); })()"
    )
    png.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(png), clip={"x": 0, "y": 0, "width": 1400, "height": 1000})
    page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--keep", metavar="DIR", help="keep the bundles and reports here")
    parser.add_argument("--screenshot", metavar="PNG", help="save the first app's report as drawn here")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    cat = load_catalog()
    out = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_report-"))
    print(
        f"{'app':16} {'faults':>6} {'alerts':>6} {'changes':>7} {'MB':>5} {'write s':>7} "
        f"{'open s (median, max)':>21}"
    )
    with sync_playwright() as p:
        browser = launch_chromium(p)
        for app in args.apps.split(","):
            ep = run_scored_episode(lambda app=app: make_marathon_env(app, "eval", cat), "runbook", out=out)
            t0 = time.perf_counter()
            page = write_report([ep.bundle], out / f"{app}.html")
            written = time.perf_counter() - t0
            opens = open_times(browser, page)
            if args.screenshot:
                screenshot(browser, page, Path(args.screenshot))
                args.screenshot = None
            rec = ep.record
            print(
                f"{app:16} {len(rec.faults):>6} {len(rec.alerts):>6} {len(rec.changes):>7} "
                f"{page.stat().st_size / 1e6:>5.2f} {written:>7.2f} "
                f"{statistics.median(opens):>12.2f}, {max(opens):.2f}"
            )
        browser.close()
    if not args.keep:
        shutil.rmtree(out)


if __name__ == "__main__":
    main()
