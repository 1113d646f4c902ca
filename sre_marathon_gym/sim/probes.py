"""Symptom probes over a short sliding window of ticks (what the scorer and the harness check)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import numpy as np

from ..catalog.faults import SymptomProbe
from .traffic import TickResult, lognormal_quantile_factor

WINDOW_S = 60.0
RESTART_WINDOW_S = 300.0
P95 = lognormal_quantile_factor(0.95)


class ProbeWindow:
    def __init__(self, compiled, tick_s: float):
        self.c = compiled
        self.ticks: deque[TickResult] = deque(maxlen=max(1, int(WINDOW_S / tick_s)))
        self.restarts: deque[np.ndarray] = deque(maxlen=int(RESTART_WINDOW_S / tick_s) + 1)
        self.ready_ratio = np.ones(len(compiled.services))
        self.kafka_lag = np.zeros(len(compiled.services))
        self.rt_index = {n: i for i, n in enumerate(compiled.request_types)}

    def record(
        self, result: TickResult, restarts: np.ndarray, ready_ratio: np.ndarray, kafka_lag: np.ndarray
    ) -> None:
        self.ticks.append(result)
        self.restarts.append(restarts.copy())
        self.ready_ratio = ready_ratio
        self.kafka_lag = kafka_lag

    def snapshot(self) -> ProbeWindow:
        """This window as it is now, kept apart from later ticks: probes can be read at this tick
        afterwards (`backends.fault_check.AloneRun` judges many probes on one run)."""
        snap = object.__new__(ProbeWindow)
        snap.c, snap.rt_index = self.c, self.rt_index
        snap.ticks = tuple(self.ticks)  # type: ignore[assignment]  # read-only: iterated and indexed
        snap.restarts = tuple(self.restarts)  # type: ignore[assignment]
        snap.ready_ratio = self.ready_ratio.copy()
        snap.kafka_lag = self.kafka_lag.copy()  # updated in place by the simulator
        return snap

    def value(self, probe: SymptomProbe, expected: bool = False) -> float:
        """The probe's value over the window: from sampled counts, or noise-free when `expected`."""
        s = self.c.index[probe.service]
        ticks = self.ticks
        kind = probe.kind
        if expected and kind == "entry_error_ratio":
            if probe.request_type is not None:
                r = self.rt_index[probe.request_type]
                return float(_mean([t.rt_fail[r] for t in ticks]))
            return float(_mean([_per_tick(t, "entry_fail") for t in ticks]))
        if expected and kind == "service_error_ratio":
            return float(_mean([t.svc_fail[s] for t in ticks]))
        if kind == "entry_error_ratio":
            if probe.request_type is not None:
                r = self.rt_index[probe.request_type]
                n = sum(t.rt_count[r] for t in ticks)
                return (
                    float(sum(t.rt_errors[r] for t in ticks) / n)
                    if n
                    else float(_mean([t.rt_fail[r] for t in ticks]))
                )
            n = sum(_per_tick(t, "entry_count") for t in ticks)
            return float(sum(_per_tick(t, "entry_errors") for t in ticks) / n) if n else 0.0
        if kind == "entry_latency_p95_ms":
            if probe.request_type is not None:
                r = self.rt_index[probe.request_type]
                return float(_mean([t.rt_latency_ms[r] for t in ticks]) * P95)
            return float(_mean([_per_tick(t, "entry_latency") for t in ticks]) * P95)
        if kind == "service_error_ratio":
            n = sum(t.svc_count[s] for t in ticks)
            return (
                float(sum(t.svc_errors[s] for t in ticks) / n)
                if n
                else float(_mean([t.svc_fail[s] for t in ticks]))
            )
        if kind == "service_latency_p95_ms":
            return float(_mean([t.svc_latency_ms[s] for t in ticks]) * P95)
        if kind == "ready_replicas_ratio":
            return float(self.ready_ratio[s])
        if kind == "restarts_per_5m":
            return float(self.restarts[-1][s] - self.restarts[0][s])
        if kind == "entry_rate_rps":
            return float(_mean([_per_tick(t, "entry_rate") for t in ticks]))
        if kind == "kafka_consumer_lag":
            return float(self.kafka_lag[s])
        raise ValueError(f"unknown probe kind {probe.kind}")

    def failing(self, probe: SymptomProbe) -> bool:
        return probe.is_failing(self.value(probe)) if self.ticks else False

    def failing_many(self, probes: Iterable[SymptomProbe]) -> list[bool]:
        """`failing` of each probe, each distinct value (kind, service, request type) computed once:
        a catalog's probes differ mostly in their thresholds (the change harness reads them all)."""
        if not self.ticks:
            return [False for _ in probes]
        values: dict[tuple[str, str, str | None], float] = {}
        out = []
        for p in probes:
            key = (p.kind, p.service, p.request_type)
            v = values.get(key)
            if v is None:
                v = values[key] = self.value(p)
            out.append(p.is_failing(v))
        return out


def _mean(values: list) -> np.floating:
    """`np.mean(values)` of float64 scalars, bit for bit (the same pairwise sum, divided by the count)
    without `np.mean`'s dispatch, which costs more than the sum at a window's dozen values."""
    if not values:
        return np.float64(np.nan)  # what np.mean gives an empty window (without its warning)
    return _sum(np.array(values, dtype=np.float64)) / len(values)


_sum = np.add.reduce

# Per tick, what the entry-point probes read of the whole tick: computed once per tick (a tick is read
# in every window it belongs to, by every probe) and kept on the tick. The expected values' parts are
# the same for every copy of one expected tick; the sampled counts' are the tick's own.
_PER_TICK = {
    "entry_fail": lambda t: np.average(t.rt_fail, weights=t.rt_rate + 1e-12),
    "entry_latency": lambda t: np.average(t.rt_latency_ms, weights=t.rt_rate + 1e-9),
    "entry_rate": lambda t: t.rt_rate.sum(),
    "entry_count": lambda t: t.rt_count.sum(),
    "entry_errors": lambda t: t.rt_errors.sum(),
}


def _per_tick(t: TickResult, what: str):
    memo = t.__dict__.setdefault("_probe_memo", {})
    v = memo.get(what)
    if v is None:
        v = memo[what] = _PER_TICK[what](t)
    return v
