"""Healthy simulators warmed up to a given time, restored from one pickled prototype.

The validation harness (`backends.fault_check`) and the fault generator start every check from the
same state: an app, fault-free and without telemetry, warmed up for two minutes. Building and warming
a Train Ticket simulator costs about 8 ms (its pods, ReplicaSets and first traffic solution); the
generator starts tens of thousands of them. `healthy_at` builds that state once per process and
hands out copies restored from its pickle: a copy carries the state itself (the random generator's
position included), so every later step is the one a freshly warmed simulator takes.

The app (frozen catalog models) and its compiled arrays (read-only) are shared, not copied;
everything else is the copy's own.
"""

from __future__ import annotations

import io
import pickle
import threading
from dataclasses import dataclass

from ..catalog import App
from .simulator import Simulator
from .topology import CompiledApp

_CACHE_SIZE = 8  # prototypes kept per process: a few apps and seeds at a time in practice


@dataclass(frozen=True)
class _Prototype:
    app: App  # kept alive with the entry, so the id in its key is never reused while it is cached
    compiled: CompiledApp
    state: bytes


_prototypes: dict[tuple[int, int, float], _Prototype] = {}
_lock = threading.Lock()


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, shared: dict[int, str]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._shared = shared

    def persistent_id(self, obj: object) -> str | None:
        return self._shared.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, shared: dict[str, object]):
        super().__init__(file)
        self._shared = shared

    def persistent_load(self, pid: str) -> object:
        return self._shared[pid]


def healthy_at(app: App, seed: int, at_s: float) -> Simulator:
    """A new simulator of `app` (no catalog, no schedule, no telemetry) advanced to `at_s`, fault-free:
    in every later step equal to ``Simulator(None, app, seed, telemetry=False)`` advanced to `at_s`."""
    key = (id(app), seed, float(at_s))
    with _lock:
        proto = _prototypes.get(key)
    if proto is None:
        sim = Simulator(None, app, seed, telemetry=False)
        sim.advance_to(at_s)
        buf = io.BytesIO()
        _Pickler(buf, {id(app): "app", id(sim.compiled): "compiled"}).dump(sim)
        proto = _Prototype(app, sim.compiled, buf.getvalue())
        with _lock:
            while len(_prototypes) >= _CACHE_SIZE:
                _prototypes.pop(next(iter(_prototypes)))
            _prototypes[key] = proto
    return _Unpickler(io.BytesIO(proto.state), {"app": proto.app, "compiled": proto.compiled}).load()
