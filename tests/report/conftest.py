from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def leaderboard_bundles(tmp_path_factory, catalog) -> dict[str, Path]:
    """Online Boutique's leaderboard seed, sealed: the runbook's run and the no-action run."""
    from sre_marathon_gym.episode_runner import make_marathon_env, run_scored_episode

    out = tmp_path_factory.mktemp("bundles")
    return {
        agent: Path(
            run_scored_episode(
                lambda: make_marathon_env("online_boutique", "eval", catalog), agent, out=out
            ).bundle
        )
        for agent in ("runbook", "noop")
    }


def chromium_path() -> str:
    """Debian's chromium (what `.ci/run` installs); `SRE_MARATHON_CHROMIUM` names another binary."""
    path = (
        os.environ.get("SRE_MARATHON_CHROMIUM")
        or shutil.which("chromium")
        or shutil.which("chromium-browser")
    )
    if not path:
        pytest.fail(
            "the run report's browser tests need Chromium: apt-get install -y chromium (.ci/run does)"
        )
    return path


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium driven by Playwright, pointed at the system binary (no browser download)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield b
        b.close()
