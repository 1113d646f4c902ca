"""The agent's tools: call models and their JSON Schemas (`models`), the policy layer (`policy`:
forbidden operations, the incident guard, scope), the workspace, the PromQL subset (`promql`) and
`ToolRunner`, which runs a validated call on a `Backend`.

May import: `core`, `catalog`, `metrics` and `backends.base` (the protocol), never the simulator.
"""
