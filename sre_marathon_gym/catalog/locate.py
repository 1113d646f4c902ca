"""Find the catalog directory from a wheel install, an editable install, or an override."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.errors import CatalogError

ENV_VAR = "SRE_MARATHON_CATALOG"


def catalog_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Return the catalog directory: `override`, then $SRE_MARATHON_CATALOG, then the shipped copy.

    A wheel ships the catalog as ``sre_marathon_gym/_catalog``; an editable install reads the
    repository's ``catalog/`` next to the package.
    """
    chosen = override or os.environ.get(ENV_VAR)
    if chosen:
        path = Path(chosen)
        if not path.is_dir():
            raise CatalogError(
                f"{path}: catalog directory does not exist (from {'argument' if override else ENV_VAR})"
            )
        return path
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_catalog", package.parent / "catalog"):
        if (candidate / "apps").is_dir():
            return candidate
    raise CatalogError(f"no catalog found next to {package} (looked for _catalog/ and ../catalog/)")
