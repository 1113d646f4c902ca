"""An app compiled to index arrays once at load time, so the per-tick traffic model is pure numpy."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..catalog.apps import App


def env_prefix(service: str) -> str:
    """`redis-cart` -> `REDIS_CART`: the prefix of a caller's `<T>_ADDR` / `<T>_TIMEOUT_MS` keys."""
    return re.sub(r"[^A-Za-z0-9]", "_", service).upper()


@dataclass(frozen=True)
class CompiledApp:
    app: App
    services: tuple[str, ...]
    index: dict[str, int]
    zones: tuple[str, ...]
    entry: int
    request_types: tuple[str, ...]
    weights: np.ndarray  # [R] traffic share of each request type (sums to 1)
    visits: np.ndarray  # [R, S] calls to each service per request
    edge_src: np.ndarray  # [E]
    edge_dst: np.ndarray  # [E]
    edge_flow: np.ndarray  # [R, E] calls over each edge per request of type r
    edge_timeout_ms: np.ndarray  # [E] catalog default
    edge_retries: np.ndarray  # [E]
    edge_index: dict[tuple[str, str], int]
    service_time_ms: np.ndarray  # [S]
    cpu_ms: np.ndarray  # [S]
    base_memory_mi: np.ndarray  # [S]
    threads: np.ndarray  # [S]
    background_rps: np.ndarray  # [S] health checks / consumers when no request type reaches a service
    depth: int  # longest call chain, bounds the fixed-point iterations
    derived: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def derive(self, name: str, build: Callable[[], Any]) -> Any:
        """What `build` computes from the app alone (its span shapes, the exporter's span series),
        built once per compiled app and shared, read-only, by every simulator of the app."""
        value = self.derived.get(name)
        if value is None:
            value = self.derived[name] = build()
        return value


_COMPILED: dict[int, CompiledApp] = {}  # id(app) -> its compiled form (which holds the app alive)
_COMPILED_KEPT = 16


def compile_app(app: App) -> CompiledApp:
    """The app compiled, once per app object (catalog models are frozen; the arrays are read-only):
    every reset of an env compiles the same app, and what is derived from it is kept with it."""
    hit = _COMPILED.get(id(app))
    if hit is not None and hit.app is app:
        return hit
    compiled = _compile(app)
    while len(_COMPILED) >= _COMPILED_KEPT:
        _COMPILED.pop(next(iter(_COMPILED)))
    _COMPILED[id(app)] = compiled
    return compiled


def _compile(app: App) -> CompiledApp:
    names = tuple(app.service_names)
    index = {n: i for i, n in enumerate(names)}
    S, R = len(names), len(app.request_types)
    edges = [(e.source, e.target) for e in app.edges]
    edge_index = {pair: i for i, pair in enumerate(edges)}
    weights = np.array([r.weight for r in app.request_types], dtype=np.float64)
    weights /= weights.sum()
    visits = np.zeros((R, S))
    flow = np.zeros((R, len(edges)))
    for ri, rt in enumerate(app.request_types):
        for pos, svc in enumerate(rt.services):
            count = rt.calls_per_request.get(svc, 1.0)
            visits[ri, index[svc]] = max(visits[ri, index[svc]], count)
            if pos == 0:
                continue
            # every service earlier on the path that has an edge to this one calls it
            for caller in rt.services[:pos]:
                if (caller, svc) in edge_index:
                    flow[ri, edge_index[(caller, svc)]] = count
    svc_params = [app.service(n).sim for n in names]
    reached = visits.sum(axis=0) > 0
    background = np.where(reached, 0.0, 0.5)
    compiled = CompiledApp(
        app=app,
        services=names,
        index=index,
        zones=tuple(z.name for z in app.zones),
        entry=index[app.entry_point],
        request_types=tuple(r.name for r in app.request_types),
        weights=weights,
        visits=visits,
        edge_src=np.array([index[s] for s, _ in edges], dtype=np.int64),
        edge_dst=np.array([index[t] for _, t in edges], dtype=np.int64),
        edge_flow=flow,
        edge_timeout_ms=np.array([e.timeout_ms for e in app.edges], dtype=np.float64),
        edge_retries=np.array([e.retries for e in app.edges], dtype=np.float64),
        edge_index=edge_index,
        service_time_ms=np.array([p.service_time_ms for p in svc_params]),
        cpu_ms=np.array([p.cpu_ms_per_request for p in svc_params]),
        base_memory_mi=np.array([p.base_memory_mi for p in svc_params]),
        threads=np.array([p.threads for p in svc_params], dtype=np.float64),
        background_rps=background,
        depth=min(S, max(len(r.services) for r in app.request_types) + 2),
    )
    for value in vars(compiled).values():  # shared by simulator copies (`warm_start`, shared worlds)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return compiled
