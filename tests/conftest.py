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

# The files whose tests take minutes (the clean-clone CI's durations, 2026-12-05), longest first.
# They start first, so the two xdist workers finish together instead of one running a four-minute
# test alone at the end (with `--no-loadscope-reorder` in pyproject's addopts: xdist's own order puts
# files with many tests first, and these have few). The rest keep their collection order.
LONGEST_FIRST = (
    "prometheus/test_promtool_rule_tests.py",
    "scoring/test_adversarial.py",
    "catalog/test_generators.py",
    "rl/test_macro_actions.py",
    "sim/test_span_realism.py",
    "envs/test_fuzz.py",
    "backends/test_change_check.py",
    "agents/test_orca_baselines.py",
    "cli/test_cli_runs.py",
)


def pytest_collection_modifyitems(config, items) -> None:
    here = Path(__file__).resolve().parent
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def order(item) -> int:
        try:
            rel = Path(str(item.path)).resolve().relative_to(here).as_posix()
        except ValueError:
            return len(LONGEST_FIRST)
        return rank.get(rel, len(LONGEST_FIRST))

    items.sort(key=order)  # stable: within a rank, the collection order


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
