"""The metric store: the Prometheus-like series the simulator writes and the alert engine, tools
and bundles read (`store`), its reads of many evaluation times at once (`grid`, and the sample
columns the alert engine keeps between evaluations: `sample_columns`), and Prometheus'
bucketQuantile (`histogram`).

May import: `core`.
"""
