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
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(REPO)],
                   check=True, capture_output=True)
    wheel = next(dist.glob("*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = venv / "bin" / "pip"
    # the catalog needs only pydantic and pyyaml; install the wheel itself without its heavy deps
    subprocess.run([str(pip), "install", "-q", "--no-deps", str(wheel)], check=True)
    subprocess.run([str(pip), "install", "-q", "pydantic>=2.7,<3", "pyyaml>=6,<7"], check=True)
    code = (
        "from sre_marathon_gym.catalog import load_catalog; c = load_catalog(); "
        "print(c.root); print(len(c.all_faults()), len(c.rules.rules))"
    )
    out = subprocess.run([str(venv / "bin" / "python"), "-c", code], check=True, capture_output=True,
                         text=True, cwd=tmp_path).stdout.split("\n")
    assert "site-packages/sre_marathon_gym/_catalog" in out[0]
    assert out[1] == "700 44"
