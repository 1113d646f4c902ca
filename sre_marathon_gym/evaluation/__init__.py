"""Running and reporting agents: one scored and sealed episode (`episode_runner`), the published
leaderboard's protocol over apps and seeds (`leaderboard`), its tables and charts (`reports`), the
simulator's statistics beside the papers' (`fidelity_stats`) and the alert-noise report
(`alert_noise`); ORCA-bench tasks run with the same judge `OrcaRCA-v0` uses (`orca`).

May import: every layer but the command line.
"""

from __future__ import annotations

import pkgutil
from typing import Any

from ..core.moved import moved_to

SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(__path__))
_leaderboard_name = moved_to(__name__, "sre_marathon_gym.evaluation.leaderboard")


def __getattr__(name: str) -> Any:
    """`sre_marathon_gym.evaluation` was the leaderboard module before it became this package: its
    names still resolve (with a DeprecationWarning); submodule names are left to the import system."""
    if name in SUBMODULES:
        raise AttributeError(name)
    return _leaderboard_name(name)
