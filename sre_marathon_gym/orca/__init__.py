"""ORCA-bench: read-only oncall root-cause analysis over the Astronomy Shop's telemetry.

`schedule` places the published feature-flag events on the simulated clock, `world` simulates the
days once per process, `tasks` generates the 1,079 deterministic tasks, `evidence` checks cited
telemetry, `tools` serves time-capped read tools, `report` is the agent's RCA report.
"""

from __future__ import annotations
