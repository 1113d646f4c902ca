"""Sealed bundles: the format and its seal (`bundle`), bounded reading of the ZIP container and
canonical JSON (`archive`), the metrics recorded with a run (`metrics`) and rescoring a bundle
offline (`rescoring`).

May import: every layer below the environments (core, catalog, metrics, simulator through
`backends`, schedule, alerting, Prometheus, backends, tools, scoring).
"""
