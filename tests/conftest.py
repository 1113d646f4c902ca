from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))  # the catalog generators live in scripts/catalog_gen
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

# The oracle's floor on the leaderboard protocol (every seed evaluate --seeds 5 uses): a health check
# that a fault handled by its catalog remedy counts as repaired. Not 100: overlapping faults keep some
# probes failing after a correct repair (84.2-93.0 over those 18 runs since the realism changes of
# issue 18: CPU throttling delays requests and OOM kills come at the limit, which widen Train
# Ticket's overlaps; the fault severity calibration of issue 19 narrows them again).
ORACLE_FLOOR = 80.0


@pytest.fixture(scope="session")
def oracle_floor() -> float:
    return ORACLE_FLOOR


@pytest.fixture(scope="session")
def catalog():
    from sre_marathon_gym.catalog import load_catalog

    return load_catalog()


@pytest.fixture
def catalog_copy(tmp_path: Path, catalog) -> Path:
    """A writable copy of the shipped catalog, for tests that break it on purpose."""
    dest = tmp_path / "catalog"
    shutil.copytree(catalog.root, dest)
    return dest
