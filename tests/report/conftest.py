from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def leaderboard_bundles(tmp_path_factory, catalog) -> dict[str, Path]:
    """Online Boutique's leaderboard seed, sealed: the runbook's, the no-action and the random run
    (the random one has false claims, needless and refused interventions)."""
    from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

    out = tmp_path_factory.mktemp("bundles")
    return {
        agent: Path(
            run_scored_episode(
                lambda: make_marathon_env("online_boutique", "eval", catalog), agent, out=out
            ).bundle
        )
        for agent in ("runbook", "noop", "random")
    }


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium driven by Playwright, pointed at the system binary (no browser download)."""
    from playwright.sync_api import sync_playwright

    from sre_marathon_gym.run_report.browser import find_chromium, launch_chromium

    if find_chromium() is None:
        pytest.fail(
            "the run report's browser tests need Chromium: apt-get install -y chromium (.ci/run does)"
        )
    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()
