"""Scrape targets: the `job` and `instance` labels Prometheus attaches to every series it scrapes,
and the `up` series it writes per target.

Why a module of its own: every exporter of the simulated cluster (span metrics, kube-state-metrics,
cAdvisor, blackbox probes) is one scrape job; each series carries its target's labels the way the
Kubernetes service discovery of the demo's Prometheus configuration sets them:
- kube-state-metrics (endpoints role): instance = the exporter pod's IP and port 8080;
- cAdvisor through the kubelet (node role): instance = the node name;
- the OpenTelemetry collector's Prometheus exporter (span and application metrics): pod IP, port 8889;
- blackbox probes: instance = the probed service's host:port (relabelled from `__param_target`).
"""

from __future__ import annotations

from .k8s_events import pod_ip

KSM_JOB = "kube-state-metrics"
CADVISOR_JOB = "kubernetes-nodes-cadvisor"
OTEL_JOB = "otel-collector"
BLACKBOX_JOB = "blackbox"

_INSTANCES = {
    KSM_JOB: f"{pod_ip('kube-state-metrics')}:8080",
    OTEL_JOB: f"{pod_ip('otel-collector')}:8889",
}


def scrape_labels(job: str, instance: str | None = None) -> dict[str, str]:
    """`{"job": ..., "instance": ...}` of a series scraped by `job`; `instance` is needed only for
    the per-node (cAdvisor: the node name) and per-service (blackbox: host:port) jobs."""
    inst = instance if instance is not None else _INSTANCES.get(job)
    if inst is None:
        raise ValueError(f"scrape job {job!r} has one target per node or service: pass its instance")
    return {"job": job, "instance": inst}
