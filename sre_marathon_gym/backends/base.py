"""The `Backend` protocol: what the tool runner and the environments need from a cluster.

Why a protocol: the same tools, policy layer and agents must run against the embedded simulator
and against a live Kubernetes cluster. Everything cluster-specific (how a pod list is read, how a
rollback is written, how a fault is injected) lives behind this interface; the tool layer keeps
validation, the policy guard, incidents, the workspace and the record.

Reads return JSON-ready rows (what `kubectl get` would show), so a tool result is the same shape
on every backend. Writes return a small JSON-ready summary. A backend signals a refused or failed
operation by raising `BackendError` (its `code` becomes the tool error code) or, for the
simulator, `SimulatorError`; the runner turns both into structured tool results.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..catalog.apps import App
from ..catalog.faults import Fault

K8S_RESOURCES = ("pods", "deployments", "events", "nodes", "networkpolicies", "configmaps")
"""Resources `k8s_state` serves (secrets are refused by the policy layer before a backend sees them)."""

INJECTABLE_LIVE = frozenset(
    {
        "bad_image_tag",
        "cpu_limit_cut",
        "memory_limit_cut",
        "config_bad_value",
        "config_missing_env",
        "config_timeout",
        "config_pool_size",
        "config_cache_ttl",
        "config_wrong_address",
        "scale_to_zero",
        "network_partition",
        "feature_flag",
    }
)
"""Mechanisms a live cluster can inject without building code (image, limits, env, replicas, policy,
flags)."""


ALREADY_REPAIRED = "already repaired"
"""What `Backend.revert` returns when the fault no longer owned the object (the agent repaired it)."""


class MetricSource(Protocol):
    """The read interface of `metrics.store.MetricStore` (and of `PrometheusMetrics`)."""

    def names(self) -> list[str]: ...
    def select(self, name: str, matchers: Any = None) -> np.ndarray: ...
    def labels(self, sid: int) -> dict[str, str]: ...
    def named_label_sets(self, ids: Any) -> list[tuple[tuple[str, str], ...]]: ...
    def at(self, ids: Any, t: float) -> np.ndarray: ...
    def rate(self, ids: Any, t: float, window_s: float) -> np.ndarray: ...
    def increase(self, ids: Any, t: float, window_s: float) -> np.ndarray: ...


@runtime_checkable
class Backend(Protocol):
    """One benchmark namespace of a cluster, as the tools see it."""

    app: App

    # ------------------------------------------------------------ time and telemetry
    def now(self) -> float:
        """Seconds since the episode started (simulated or wall-clock)."""
        ...

    @property
    def metrics(self) -> MetricSource | None:
        """Where `query_metrics` reads; None when no metric source is configured."""
        ...

    # ------------------------------------------------------------ reads
    def service_names(self) -> list[str]:
        """Deployments of the benchmark namespace that the tools may name."""
        ...

    def pod_services(self) -> dict[str, str]:
        """Pod name -> owning service (for alert scoping)."""
        ...

    def services_on_node(self, node: str) -> set[str]:
        """Services with a pod on `node` (what a cordon or drain touches)."""
        ...

    def policy_source(self, name: str) -> str | None:
        """The service a NetworkPolicy selects, None if there is no such policy."""
        ...

    def k8s_state(self, resource: str, service: str | None, limit: int) -> list[dict]:
        """Rows of one resource kind (`K8S_RESOURCES`), optionally for one service."""
        ...

    def deploy_history(self, service: str | None, since_s: float | None) -> list[dict]:
        """Changes shipped to the namespace, oldest first."""
        ...

    def service_config(self, service: str) -> dict:
        """A service's deployed env, ConfigMap keys, image, limits, replicas and readiness probe."""
        ...

    def source(self, service: str, path: str | None) -> dict:
        """A source file at its deployed revision (the file list when `path` is None)."""
        ...

    def search_logs(
        self,
        service: str | None,
        start_s: float,
        end_s: float,
        query: str | None,
        level: str | None,
        limit: int,
    ) -> list[dict]:
        """Log records of one service (or all) in [start_s, end_s]."""
        ...

    def traces(
        self,
        trace_id: str | None,
        service: str | None,
        start_s: float,
        end_s: float,
        min_duration_ms: float | None,
        status: str | None,
        limit: int,
    ) -> list[dict]:
        """Sampled traces, or one trace by id."""
        ...

    # ------------------------------------------------------------ interventions
    def rollback(self, service: str, revision: int | None) -> dict: ...
    def restart(self, service: str) -> dict: ...
    def scale(self, service: str, replicas: int) -> dict: ...
    def set_config(self, service: str, key: str, value: str) -> dict: ...
    def set_resources(
        self, service: str, cpu_limit_m: int | None = None, mem_limit_mi: int | None = None
    ) -> dict: ...
    def patch_source(self, service: str, path: str, revision: str | None) -> dict: ...
    def failover(self, zone: str) -> dict: ...
    def cordon(self, node: str) -> dict: ...
    def uncordon(self, node: str) -> dict: ...
    def drain(self, node: str) -> dict: ...
    def delete_network_policy(self, name: str) -> dict: ...

    # ------------------------------------------------------------ fault injection (orchestrator only)
    def supports(self, fault: Fault) -> bool:
        """Whether this backend can inject `fault`'s mechanism."""
        ...

    def inject(self, fault: Fault) -> Any:
        """Apply a fault; returns a handle `revert` takes."""
        ...

    def revert(self, handle: Any) -> str | None:
        """Undo a fault, restoring the objects it changed if it still owns them.

        Raises on failure (the fault is then still in place and the handle may be retried);
        may return "already repaired" when there was nothing left to undo."""
        ...


__all__ = ["ALREADY_REPAIRED", "INJECTABLE_LIVE", "K8S_RESOURCES", "Backend", "MetricSource"]
