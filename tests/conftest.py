from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))  # the catalog generators live in scripts/catalog_gen
os.environ.setdefault("RAY_AUTH_MODE", "disabled")


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
