"""Rescoring a sealed bundle: which weights and rules, and what is refused.

Why apart from `bundle` (the format: writing, verifying, loading): scoring a bundle is a policy
on top of a verified one. The rules and weights sealed in the bundle are used unless the caller
asks otherwise; an incomplete run and a catalog other than the run's are refused unless asked for,
so a rescore is never silent.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core.errors import CatalogMismatchError, IncompleteBundleError
from ..scoring import RunRecord, ScoreCard, score_run
from .bundle import Bundle, catalog_digest, load_bundle

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..catalog.settings import Scoring


def _check_same_catalog(bundle: Bundle, catalog: Catalog, given: bool) -> None:
    """Refuse to score `bundle` under a catalog other than the one its run used.

    Why: the score of a run is a function of its record and its catalog's scoring; a different
    catalog silently gives a different number for the same evidence. A bundle that names no
    catalog digest (written without one) cannot be checked and passes."""
    sealed = bundle.info.catalog_digest
    used = catalog_digest(catalog)
    if sealed is None or used == sealed:
        return
    if given:
        what = (
            f"the catalog given to score it ({catalog.root}) is {used[:19]}...; drop it to score with "
            "the weights sealed in the bundle, or give the catalog the run used"
        )
    else:
        what = (
            f"the bundle seals no scoring weights and the shipped catalog is {used[:19]}...; give the "
            "catalog the run used (--catalog DIR)"
        )
    raise CatalogMismatchError(
        f"{bundle.info.path}: the run used catalog {sealed[:19]}... but {what}, or "
        "rescore deliberately with rescore_with_catalog=True (--rescore-with-catalog)"
    )


def bundle_scoring(
    bundle: Bundle,
    catalog: Catalog | None = None,
    rules: int | None = None,
    *,
    rescore_with_catalog: bool = False,
) -> Scoring:
    """The scoring a bundle is rescored under, and why it is that one.

    Weights and rules: `catalog`'s when given, else the ones sealed in the bundle (a bundle sealed
    before rule sets were versioned is rules v1), else the shipped catalog's. A catalog (given or
    shipped) whose `catalog_digest` differs from the one the run used raises `CatalogMismatchError`
    unless `rescore_with_catalog`. `rules` overrides the rule set; v2's matching and penalties then
    come from the shipped catalog if the chosen scoring has none (an old v1 bundle rescored with
    ``--rules v2``).
    """
    from ..catalog import load_catalog

    if catalog is not None:
        if not rescore_with_catalog:
            _check_same_catalog(bundle, catalog, given=True)
        scoring = catalog.scoring
    elif bundle.scoring is not None:
        scoring = bundle.scoring
    else:
        shipped = load_catalog()
        if not rescore_with_catalog:
            _check_same_catalog(bundle, shipped, given=False)
        scoring = shipped.scoring
    if rules is not None and rules != scoring.rules_version:
        scoring = scoring.with_rules(rules, defaults=load_catalog().scoring)
    return scoring


def with_scope_share(record: RunRecord, catalog: Catalog | None = None) -> RunRecord:
    """`record`, its manifest given the catalog's scope shares if it was sealed before rules v3
    recorded them (they are public catalog data, the same for every run of the app)."""
    if record.manifest.scope_share:
        return record
    from ..catalog import load_catalog

    cat = catalog or load_catalog()
    if record.manifest.app not in cat.apps:
        return record
    manifest = record.manifest.model_copy(update={"scope_share": cat.scope_share(record.manifest.app)})
    return record.model_copy(update={"manifest": manifest})


def score_bundle(
    path: str | os.PathLike[str],
    catalog: Catalog | None = None,
    key: str | bytes | None = None,
    rules: int | None = None,
    *,
    allow_incomplete: bool = False,
    rescore_with_catalog: bool = False,
) -> tuple[Bundle, ScoreCard]:
    """Verify, load and score one bundle; see `bundle_scoring` for which weights and rules.

    A bundle sealed as incomplete raises `IncompleteBundleError` unless `allow_incomplete`: a run
    that stopped early scores its unreached faults as missed, which is not its Marathon-Score."""
    bundle = load_bundle(path, key)
    if not bundle.info.complete and not allow_incomplete:
        raise IncompleteBundleError(
            f"{path}: INCOMPLETE ({bundle.info.describe_incomplete()}): a run that "
            "stopped early has no Marathon-Score; pass allow_incomplete=True "
            "(--allow-incomplete) to score what it recorded"
        )
    scoring = bundle_scoring(bundle, catalog, rules, rescore_with_catalog=rescore_with_catalog)
    return bundle, score_run(with_scope_share(bundle.record, catalog), scoring)


def score_bundles(
    paths: Iterable[str | os.PathLike[str]],
    catalog: Catalog | None = None,
    key: str | bytes | None = None,
    rules: int | None = None,
    *,
    allow_incomplete: bool = False,
    rescore_with_catalog: bool = False,
) -> list[ScoreCard]:
    """Verify and score each bundle (see `score_bundle`). The first bundle that fails verification,
    is incomplete or was run with another catalog raises a `BundleError`."""
    return [
        score_bundle(
            p,
            catalog,
            key,
            rules,
            allow_incomplete=allow_incomplete,
            rescore_with_catalog=rescore_with_catalog,
        )[1]
        for p in paths
    ]


__all__ = ["bundle_scoring", "score_bundle", "score_bundles"]
