"""The metric store: the Prometheus-like series the simulator writes and the alert engine, tools
and bundles read.

May import: `core`.
"""
