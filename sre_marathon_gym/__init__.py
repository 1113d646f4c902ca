"""sre_marathon_gym: SRE-Marathon and ORCA-bench as a fast, seeded, Gymnasium-style environment.

Importing the package registers the `SREMarathon/*` environment ids with Gymnasium. The layers
live in one folder each (docs/ARCHITECTURE.md); modules that moved keep their old import path for
one release (`core.moved`).
"""

from __future__ import annotations

from .core.moved import install_aliases
from .core.version import __version__

install_aliases()

from .envs import ENV_IDS, register_envs  # noqa: E402

__all__ = ["ENV_IDS", "__version__", "register_envs"]
