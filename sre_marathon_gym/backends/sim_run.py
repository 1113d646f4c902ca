"""`SimulatedRun`: a simulated episode the environment owns, beyond what the `Backend` protocol serves.

Why a second object next to `SimBackend`: the protocol is what an agent's tools may reach on any
cluster. A simulation can also step time, measure the faults' symptom probes, tell whether a
fault's artifact is restored, summarise the last interval's traffic and replay the same seed with
nobody acting. Scoring needs those as ground truth and a live cluster has none of them, so they
live here: the environment reads the cluster through `backend` like any agent would, and the
ground truth through this object, never through the simulator's internals.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..catalog import Catalog
from ..catalog.faults import SymptomProbe
from ..core.clock import TICK_S, Epoch
from ..core.detmath import log
from ..sim.simulator import Simulator
from .sim import SimBackend

_LN10 = 2.302585092994046  # ln 10
_NO_ACTION_CACHE_SIZE = 32
_NO_ACTION_CACHE: dict[tuple, tuple[Any, tuple[float, ...], tuple[float, ...]]] = {}  # oldest first


class SimulatedRun:
    """One seeded simulation of `app` under `schedule` (a `FaultSchedule` or None)."""

    def __init__(
        self,
        catalog: Catalog,
        app: str,
        seed: int,
        schedule: Any = None,
        *,
        telemetry: bool = True,
        load_profile: Callable[[float], float] | None = None,
        epoch: Epoch | None = None,
        retention_s: float | None = None,
    ):
        self.catalog, self.app_name, self.seed, self.schedule = catalog, app, seed, schedule
        self._load_profile = load_profile  # the matched no-action run replays the same load
        self.sim = Simulator(
            catalog,
            app,
            seed,
            schedule=schedule,
            telemetry=telemetry,
            load_profile=load_profile,
            epoch=epoch,
            retention_s=retention_s,
        )
        self.backend = SimBackend(self.sim)

    # ------------------------------------------------------------ time
    @property
    def now(self) -> float:
        return self.sim.now

    def advance_to(self, t: float) -> None:
        self.sim.advance_to(t)

    @property
    def metric_store(self) -> Any:
        """Every series the run sampled (what a bundle stores); None without telemetry."""
        return self.sim.store

    # ------------------------------------------------------------ per-interval summaries
    def start_interval(self) -> None:
        """Start summing traffic for a new interval (`interval_traffic`, `service_features`)."""
        self.sim.window.reset()

    def interval_traffic(self) -> tuple[float, float]:
        """(entry-point requests, degraded requests) since `start_interval`."""
        w = self.sim.window
        return float(w.requests), float(w.degraded)

    def restart_counts(self) -> np.ndarray:
        """Container restarts per service so far (pods that are gone included)."""
        return self.sim.restarts_total.copy()

    def service_features(self, interval_s: float, restarts_since: np.ndarray) -> np.ndarray:
        """Per service, in the app's service order, over the interval since `start_interval`:
        request rate, error ratio, log10 mean latency, throttled share, ready ratio, restarts since
        `restarts_since`, pods not running, changes submitted in the last `interval_s`."""
        sim = self.sim
        now = sim.now
        w = sim.window
        ticks = max(w.ticks, 1)
        seconds = ticks * TICK_S
        c = sim.compiled
        cl = sim.cluster
        S = len(c.services)
        desired = cl.desired.sum(axis=0)
        ready = cl.ready.sum(axis=0)
        not_running = np.zeros(S)
        for p in cl.pods.values():
            if cl.pod_status(p) not in ("Running", "Terminating"):
                not_running[c.index[p.service]] += 1
        deploys = np.zeros(S)
        for r in sim.pipeline.history:
            if r.submitted_s > now - interval_s and r.service in c.index:
                deploys[c.index[r.service]] += 1
        return np.stack(
            [
                w.calls / seconds,
                np.where(w.calls > 0, w.errors / np.maximum(w.calls, 1), 0.0),
                # log10 without numpy's SIMD kernels (their last bits depend on the CPU)
                log(
                    np.maximum(np.where(w.calls > 0, w.latency_sum / np.maximum(w.calls, 1), 0.0), 1e-3) + 1.0
                )
                / _LN10,
                w.throttled_sum / ticks,
                np.where(desired > 0, ready / np.maximum(desired, 1), 1.0),
                sim.restarts_total - restarts_since,
                not_running,
                deploys,
            ],
            axis=1,
        ).astype(np.float32)

    # ------------------------------------------------------------ ground truth (scoring, oracle)
    def probe_failing(self, probe: SymptomProbe) -> bool:
        """Whether a fault's symptom probe fails now."""
        return bool(self.sim.probes.failing(probe))

    def probes_failing(self, probes: list[SymptomProbe]) -> list[bool]:
        """`probe_failing` of each of many probes at once (shared values computed once)."""
        return self.sim.probes.failing_many(probes)

    def applied_faults(self) -> list[str]:
        """Faults injected so far, in order of injection."""
        return list(self.sim.applied)

    def reverted_s(self, fault_id: str) -> float | None:
        """When the orchestrator reverted `fault_id` (None: not yet, or never applied)."""
        applied = self.sim.applied.get(fault_id)
        return applied.reverted_s if applied is not None else None

    def artifact_restored(self, fault_id: str) -> bool:
        """Whether the artifact `fault_id` changed is back to a good state (by anyone)."""
        return self.sim.mechanics.artifact_restored(self.sim.applied[fault_id])

    def artifact_live(self, fault_id: str) -> bool:
        """Whether the fault's bad artifact is live (a shipped change may still be in the pipeline)."""
        applied = self.sim.applied.get(fault_id)
        if applied is None:
            return False
        if applied.fault.change is None:  # a direct fault (no pipeline) is live once injected
            return True
        return not self.sim.mechanics.artifact_restored(applied)

    def revisions(self, service: str) -> tuple[list[tuple[int, float]], int | None]:
        """(every revision of `service`'s deployment as (number, created_s), the current number);
        ([], None) for an unknown service."""
        dep = self.sim.cluster.deployments.get(service)
        if dep is None:
            return [], None
        return [(r.number, r.time_s) for r in dep.revisions], dep.current.number

    def no_action_traffic(self, interval_ends: Iterable[float]) -> tuple[list[float], list[float]]:
        """The matched no-action run (same seed and schedule, nobody acting), computed exactly:
        (requests, degraded) per interval ending at each of `interval_ends`.

        Kept per process for the default load (`_NO_ACTION_CACHE`): it depends only on the catalog,
        app, seed, schedule and interval ends, and every agent evaluated on a seed needs the same
        one (about a quarter of a scripted agent's run)."""
        ends = tuple(float(t) for t in interval_ends)
        key = None
        if self._load_profile is None:
            schedule = None if self.schedule is None else json.dumps(self.schedule.to_dict(), sort_keys=True)
            key = (id(self.catalog), self.app_name, self.seed, schedule, ends)
            hit = _NO_ACTION_CACHE.get(key)
            if hit is not None and hit[0] is self.catalog:
                return list(hit[1]), list(hit[2])
        out = self._no_action_traffic(ends)
        if key is not None:
            if len(_NO_ACTION_CACHE) >= _NO_ACTION_CACHE_SIZE:
                _NO_ACTION_CACHE.pop(next(iter(_NO_ACTION_CACHE)))
            _NO_ACTION_CACHE[key] = (
                self.catalog,
                tuple(out[0]),
                tuple(out[1]),
            )  # holds the catalog: its id stays its own
        return out

    def _no_action_traffic(self, interval_ends: tuple[float, ...]) -> tuple[list[float], list[float]]:
        sim0 = Simulator(
            self.catalog,
            self.app_name,
            self.seed,
            schedule=self.schedule,
            telemetry=False,
            load_profile=self._load_profile,
        )
        requests, degraded = [], []
        for t in interval_ends:
            sim0.window.reset()
            sim0.advance_to(t)
            requests.append(float(sim0.window.requests))
            degraded.append(float(sim0.window.degraded))
        return requests, degraded


__all__ = ["SimulatedRun"]
