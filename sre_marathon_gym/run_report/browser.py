"""Which Chromium draws the report in its tests and benchmark: Debian's `chromium` (what `.ci/run`
installs), or the binary `SRE_MARATHON_CHROMIUM` names. Playwright is pointed at it, so no browser
build is downloaded."""

from __future__ import annotations

import os
import shutil

CHROMIUM_ENV = "SRE_MARATHON_CHROMIUM"


def find_chromium() -> str | None:
    """The Chromium binary to drive, or None when there is none."""
    return os.environ.get(CHROMIUM_ENV) or shutil.which("chromium") or shutil.which("chromium-browser")


def launch_chromium(playwright):
    """Headless Chromium through Playwright (``--no-sandbox``: CI runs as root)."""
    path = find_chromium()
    if path is None:
        raise RuntimeError(f"needs Chromium: apt-get install -y chromium (or set {CHROMIUM_ENV})")
    return playwright.chromium.launch(executable_path=path, args=["--no-sandbox"])
