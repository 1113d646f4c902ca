"""Real Prometheus around the simulator: OpenMetrics export and TSDB backfill, a local server,
PromQL reads through `prometheus-api-client`, and `promtool test rules` suites that check the alert
engine against Prometheus' own rule evaluation.

Nothing here is needed to run or train on the simulator; it is how a user opens a simulated run in
Prometheus or Grafana, and how the live Kubernetes backend reads metrics.

May import: `core`, `catalog`, `metrics`, `alerting`.
"""

from __future__ import annotations

from .openmetrics import DEFAULT_ORIGIN_S, write_openmetrics
from .server import PrometheusServer, create_blocks
from .source import PrometheusMetrics

PrometheusTelemetry = PrometheusMetrics  # the earlier name (deprecated)

__all__ = ["DEFAULT_ORIGIN_S", "PrometheusServer", "PrometheusMetrics", "create_blocks", "write_openmetrics"]
