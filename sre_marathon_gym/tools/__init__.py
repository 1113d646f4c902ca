"""The agent's tools: call models and their JSON Schemas (`models`), the policy layer (`policy`:
forbidden operations, the incident guard, scope), the workspace, the PromQL subset (`promql`) and
`ToolRunner`, which runs a validated call on a `Backend`; and readers of tool outputs that agents
and observation wrappers share: `symptoms` (per-service telemetry and the before/after step test)
and `change_planes` (the recent changes of every change plane).

May import: `core`, `catalog`, `metrics` and `backends.base` (the protocol), never the simulator.
"""
