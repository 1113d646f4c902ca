"""Alerts: the catalog's rules compiled once (`rules`), evaluated with `for:` over the metric store
(`engine`, with every operand's aggregation in one pass: `aggregates`), and the annotation texts a
firing alert carries (`templates`).

May import: `core`, `catalog`, `metrics`. Never the schedule: the engine sees only metrics, as a
real Prometheus does.
"""
