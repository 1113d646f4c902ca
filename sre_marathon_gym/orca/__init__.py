"""ORCA-bench: read-only oncall root-cause analysis over the Astronomy Shop's telemetry.

`schedule` places the published feature-flag events on the simulated clock (`fresh` draws a new
schedule from their distribution by a seed; `world_spec.WorldSpec` says which), `world` simulates the
days once per process, `tasks` generates the 1,079 deterministic tasks (`task_model`: what a task
carries, all the judge reads), `evidence` checks cited telemetry, `tools` serves time-capped read
tools, `report` is the agent's RCA report. The simulator is reached only through `backends.sim`.

May import: `core`, `catalog`, `metrics`, `backends` (for the simulator), `tools`, `scoring`,
`recording`; never envs, agents, evaluation or the command line (`evaluation.orca` runs agents on
tasks).
"""

from __future__ import annotations

APP = "astronomy_shop"  # the application every ORCA-bench day runs
DAY_S = 86_400  # one simulated day, seconds (t = 0 is day 1, 00:00 local time)
