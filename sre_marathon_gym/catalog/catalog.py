"""Reading the catalog: every file parsed, cross-checked (`validate`) and cached per directory."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from ..core.errors import CatalogError
from .alerts import MetricsFile, RulePack
from .apps import App
from .faults import FaultFile
from .loader import parse_model
from .locate import catalog_dir
from .model import Catalog, public_app
from .pricing import Pricing
from .settings import Leaderboard, Published, Scoring
from .validate import cross_check

APPS = ("online_boutique", "astronomy_shop", "train_ticket")


def read_catalog(root: Path, validate: bool = True) -> Catalog:
    """Parse every file, collecting problems from all files before raising."""
    problems: list[str] = []

    def attempt(fn):  # type: ignore[no-untyped-def]
        try:
            return fn()
        except CatalogError as exc:
            problems.extend(exc.problems)
            return None

    apps = {a: attempt(lambda a=a: parse_model(root / "apps" / f"{a}.yaml", App)) for a in APPS}
    fault_files = {
        a: attempt(lambda a=a: parse_model(root / "faults" / f"{a}.yaml", FaultFile)) for a in APPS
    }
    parts = {
        "metrics": attempt(lambda: parse_model(root / "metrics.yaml", MetricsFile)),
        "rules": attempt(lambda: parse_model(root / "alerts" / "rules.yaml", RulePack)),
        "scoring": attempt(lambda: parse_model(root / "scoring.yaml", Scoring)),
        "leaderboard": attempt(lambda: parse_model(root / "leaderboard.yaml", Leaderboard)),
        "published": attempt(lambda: parse_model(root / "published.yaml", Published)),
        "pricing": attempt(lambda: parse_model(root / "pricing.yaml", Pricing)),
    }
    if problems:
        raise CatalogError(problems)
    cat = Catalog(
        root=root,
        apps=apps,  # type: ignore[arg-type]
        faults={a: ff.faults for a, ff in fault_files.items()},  # type: ignore[union-attr]
        **parts,  # type: ignore[arg-type]
    )
    if validate:
        problems = cross_check(cat)
        if problems:
            raise CatalogError(problems)
    return cat


@lru_cache(maxsize=4)
def _cached(root: str) -> Catalog:
    return read_catalog(Path(root))


def load_catalog(path: str | os.PathLike[str] | None = None) -> Catalog:
    """Load and validate the catalog (cached per directory): `path`, $SRE_MARATHON_CATALOG, or the
    shipped one."""
    return _cached(str(catalog_dir(path).resolve()))


__all__ = ["APPS", "Catalog", "load_catalog", "public_app", "read_catalog"]
