"""Cluster backends behind one `Backend` protocol: the embedded simulator (default) and a live
Kubernetes cluster (`backends.kubernetes`, imported on demand so the client stays optional)."""

from __future__ import annotations

from .base import INJECTABLE_LIVE, K8S_RESOURCES, Backend, MetricSource
from .sim import SimBackend

__all__ = ["INJECTABLE_LIVE", "K8S_RESOURCES", "Backend", "MetricSource", "SimBackend"]
