"""The simulated ORCA days on disk, so a new process loads them in about a second instead of
simulating them again (RLlib workers, repeated `sre-marathon orca ...` runs, test processes).

The key covers everything the recording depends on: days and seed, the catalog's data files and
the package's source (any edit to the code rebuilds it), plus the Python and numpy versions the
pickle was written with. Writers write a temporary file in the cache directory and rename it into
place, so concurrent writers never leave a partial file and a reader sees either no file or a
whole one; a file that does not load (truncated by a crash, another format) is rebuilt. The
`KEEP` most recently used worlds are kept per directory (the published one and a fresh one or two:
an evaluation on a fresh world must not evict the published world every time).

Directory: `$SRE_MARATHON_CACHE`, else `$XDG_CACHE_HOME/sre_marathon_gym`, else
`~/.cache/sre_marathon_gym`; `SRE_MARATHON_CACHE=off` disables the cache. The files are pickles:
the cache directory must be as trusted as the package itself (it is the user's own).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np

PACKAGE_ROOT = Path(__file__).resolve().parents[1]
PREFIX = "orca-world-"
KEEP = 3  # worlds kept per directory, most recently used first (each is about 1 GB)
T = TypeVar("T")


def cache_dir() -> Path | None:
    """Where worlds are kept, or None when caching is off."""
    env = os.environ.get("SRE_MARATHON_CACHE")
    if env is not None and env.strip().lower() in ("off", "0", "none", ""):
        return None
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sre_marathon_gym"


def source_digest(root: Path = PACKAGE_ROOT) -> str:
    """sha256 over the package's Python sources (relative path and bytes, sorted by path)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        if "__pycache__" in p.parts:
            continue
        h.update(p.relative_to(root).as_posix().encode("utf-8") + b"\0")
        h.update(p.read_bytes() + b"\0")
    return h.hexdigest()


def world_key(days: int, seed: int, catalog_digest: str, schedule: str = "published") -> str:
    """`schedule`: what names the flag changes simulated (a digest of a fresh world's changes)."""
    parts = (
        f"days={days}",
        f"seed={seed}",
        f"schedule={schedule}",
        f"catalog={catalog_digest}",
        f"source={source_digest()}",
        f"python={sys.version_info[:2]}",
        f"numpy={np.__version__}",
        f"pickle={pickle.HIGHEST_PROTOCOL}",
    )
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:32]


def load_or_build(key: str, build: Callable[[], T], directory: Path | None = None) -> T:
    """The object cached under `key`, or `build()`'s result, which is then written for next time.

    Caching is best effort: a cache that cannot be read or written (read-only home, full disk)
    costs only the rebuild, never the result.
    """
    directory = directory if directory is not None else cache_dir()
    if directory is None:
        return build()
    path = directory / f"{PREFIX}{key}.pkl"
    try:
        with path.open("rb") as f:
            obj = pickle.load(f)
        try:
            os.utime(path)  # most recently used: kept longest
        except OSError:
            pass
        return obj
    except FileNotFoundError:
        pass
    except Exception:  # a truncated or foreign file: rebuild it below
        pass
    obj = build()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{PREFIX}", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, path)  # atomic: readers see the whole file or none
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        others = sorted(
            (p for p in directory.glob(f"{PREFIX}*.pkl") if p != path),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )
        for old in others[KEEP - 1 :]:  # keep the KEEP most recently used worlds, this one included
            old.unlink(missing_ok=True)
    except OSError:
        pass
    return obj


__all__ = ["KEEP", "cache_dir", "load_or_build", "source_digest", "world_key"]
