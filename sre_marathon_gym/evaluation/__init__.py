"""Running and reporting agents: one scored and sealed episode (`episode_runner`), the published
leaderboard's protocol over apps and seeds (`leaderboard`), its tables and charts (`reports`), the
simulator's statistics beside the papers' (`fidelity_stats`) and the alert-noise report
(`alert_noise`); ORCA-bench tasks run with the same judge `OrcaRCA-v0` uses (`orca`).

May import: every layer but the command line.
"""

from __future__ import annotations

from ..core.moved import package_was_module

# `sre_marathon_gym.evaluation` was the leaderboard module before it became this package
__getattr__ = package_was_module(__name__, __path__, "sre_marathon_gym.evaluation.leaderboard")
