"""Cluster backends behind one `Backend` protocol: the embedded simulator (default) and a live
Kubernetes cluster (`backends.kubernetes`, imported on demand so the client stays optional).

`SimBackend` is loaded on first use too: the tools import the protocol from here, and must not
pull the simulator in with it (docs/ARCHITECTURE.md).

May import: `core`, `catalog`, `metrics`, `sim`, `schedule`, `alerting`, `prometheus`; the only
layer besides `sim` that builds the simulator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import INJECTABLE_LIVE, K8S_RESOURCES, Backend, MetricSource

if TYPE_CHECKING:
    from .sim import SimBackend


def __getattr__(name: str) -> Any:
    if name == "SimBackend":
        from .sim import SimBackend

        return SimBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["INJECTABLE_LIVE", "K8S_RESOURCES", "Backend", "MetricSource", "SimBackend"]
