"""Which user-facing request types a flag value degrades, measured with the simulator.

Why a separate, isolated run per (flag, value): ground truth keeps only candidate events whose
effect reaches user-visible symptoms, and whether it does is a property of the flag's mechanism in
the simulator (not of the noise of one day). The expected per-request-type failure share and
latency of the traffic model are deterministic, so the answer is the same on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..catalog import load_catalog
from ..sim.simulator import Simulator
from . import APP

WARMUP_S = 300.0
SETTLE_S = 300.0
FAIL_DELTA = 0.01  # a user notices failures from about 1 in 100 requests (the ads banner at 10%)
LATENCY_DELTA_MS = 500.0  # a page slower by half a second or more (adManualGc's blank banner)


@dataclass(frozen=True)
class Visibility:
    flag: str
    value: str
    failing: tuple[str, ...]  # request types whose failure share rose by >= FAIL_DELTA
    slow: tuple[str, ...]  # request types whose mean latency rose by >= LATENCY_DELTA_MS

    @property
    def request_types(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.failing) | set(self.slow)))

    @property
    def user_visible(self) -> bool:
        return bool(self.failing or self.slow)


def _expected(flag: str | None, value: str | None) -> tuple[list[str], np.ndarray, np.ndarray]:
    sim = Simulator(load_catalog(), APP, 0, telemetry=False)
    sim.advance_to(WARMUP_S)
    if flag is not None:
        sim.ship_flag(flag, str(value), f"flagd: set {flag} to {value}", "", author="ci")
    sim.advance_to(WARMUP_S + SETTLE_S)
    res = sim.last
    assert res is not None
    return [r.name for r in sim.app.request_types], res.rt_fail.copy(), res.rt_latency_ms.copy()


@lru_cache(maxsize=1)
def _baseline() -> tuple[list[str], np.ndarray, np.ndarray]:
    return _expected(None, None)


@lru_cache(maxsize=64)
def flag_visibility(flag: str, value: str) -> Visibility:
    names, f0, l0 = _baseline()
    _, f1, l1 = _expected(flag, value)
    failing = tuple(n for n, a, b in zip(names, f0, f1) if b - a >= FAIL_DELTA)
    slow = tuple(n for n, a, b in zip(names, l0, l1) if b - a >= LATENCY_DELTA_MS)
    return Visibility(flag, value, failing, slow)
