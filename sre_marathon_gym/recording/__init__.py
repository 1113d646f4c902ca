"""Sealed bundles: the format and its seal (`bundle`), bounded reading of the ZIP container and
canonical JSON (`archive`), the metrics recorded with a run (`metrics`) and rescoring a bundle
offline (`rescoring`).

May import: the layers before it (core, catalog, metrics, sim, schedule, alerting, prometheus,
backends, tools, scoring); never ORCA, the environments or anything above them.
"""
