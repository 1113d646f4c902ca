"""Build the wheel, install it into a fresh virtual environment, and load the catalog from there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_ships_the_catalog(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = venv / "bin" / "pip"
    subprocess.run(
        [str(pip), "install", "-q", str(wheel)], check=True
    )  # with its dependencies, as a user would
    code = (
        "from sre_marathon_gym.catalog import load_catalog; c = load_catalog(); "
        "print(c.root); print(len(c.all_faults()), len(c.rules.rules))"
    )
    out = subprocess.run(
        [str(venv / "bin" / "python"), "-c", code], check=True, capture_output=True, text=True, cwd=tmp_path
    ).stdout.split("\n")
    assert "site-packages/sre_marathon_gym/_catalog" in out[0]
    assert out[1] == "700 44"
    # the run report's page assets and plotly.js come with the wheel and its dependencies
    runs = tmp_path / "runs"
    short = ["--mode", "train", "--seed", "3", "--injection-minutes", "8", "--observation-minutes", "4"]
    subprocess.run(
        [str(venv / "bin" / "sre-marathon"), "run", "--app", "online_boutique", *short, "--no-context"]
        + ["--out", str(runs)],
        check=True,
        capture_output=True,
        cwd=tmp_path,
    )
    page = (runs / "online_boutique-runbook-3.html").read_text(encoding="utf-8")
    assert (
        'id="plotly-gz"' in page and "Plotly.react" in page and "online_boutique / runbook / seed 3" in page
    )
