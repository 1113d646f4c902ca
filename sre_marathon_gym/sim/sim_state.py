"""`SimState`: what the simulator's components read of the simulator that holds them.

Why: the mechanics, the interventions, the metric exporter and the log recorder are built by
`Simulator` and read a few of its attributes back. They depend on this interface, not on the
module that builds them, so `simulator` imports them and none of them imports `simulator`.
`Simulator` satisfies it structurally. (The exporter and the recorder also read `_arrays` and
`broker_gone` with `getattr` and a fallback: optional, so not listed.)
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..catalog import App
from ..core.clock import Epoch
from ..metrics.store import MetricStore
from .cluster import ClusterState
from .effects import Effects
from .pipeline import DeployRecord, Pipeline
from .topology import CompiledApp
from .traffic import TickResult


class SimState(Protocol):
    """The simulator's attributes and change methods its components use."""

    app: App
    compiled: CompiledApp
    seed: int
    log_seed: np.random.SeedSequence  # the log synthesis' stream
    epoch: Epoch
    cluster: ClusterState
    effects: Effects
    pipeline: Pipeline
    store: MetricStore | None
    now: float
    last: TickResult | None  # the last tick's result
    load_mult: np.ndarray  # [R] request-rate multipliers
    kafka_lag: np.ndarray  # [S] consumer lag in records

    def ship_code(
        self, service: str, path: str, revision: str, message: str, diff: str, author: str
    ) -> DeployRecord: ...

    def ship_config(
        self, service: str, key: str, value: str | None, message: str, diff: str, author: str
    ) -> DeployRecord: ...

    def ship_flag(self, flag: str, variant: str, message: str, diff: str, author: str) -> DeployRecord: ...

    def drop_in_flight(self, service: str) -> None: ...


__all__ = ["SimState"]
