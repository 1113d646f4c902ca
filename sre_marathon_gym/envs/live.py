"""LiveMarathonEnv: the SRE-Marathon protocol against any `Backend`, in the backend's own time.

Why a separate env: `MarathonEnv` drives the embedded simulator tick by tick and reads its
internals for observations, recording and reward. A live cluster cannot be stepped or replayed;
it runs in wall time. This env keeps what an agent sees identical (the same tools through
`call_tool`, the same alert rules, the same action slots and observation space) so agent code runs
unchanged, while time passes through the backend's clock and faults are injected and reverted
through the backend at their scheduled times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from ..backends.base import ALREADY_REPAIRED
from ..catalog import Catalog, load_catalog
from ..core.clock import DEFAULT_INVOCATION_S, METRIC_STEP_S
from ..core.errors import SREMarathonError
from ..core.run_record import AlertRecord, RunRecord
from ..tools.models import ToolResult
from ..tools.runner import ToolRunner
from .actions import baseline_values
from .core import MarathonCore
from .inputs import MAX_RUN_MINUTES, check_reset_arguments, slot_array, whole
from .observation import cluster_features
from .recorder import action_records, alert_records, fault_truth, incident_events


@dataclass
class FaultLogEntry:
    """Ground truth of one scheduled event on the live cluster (never shown to the agent)."""

    time_s: float
    fault_id: str
    kind: str  # inject | revert
    status: str  # ok | skipped | error | already_repaired (revert found nothing left to undo)
    message: str = ""


REVERT_RETRY_S = 15.0
"""How often a failed revert is retried while the env runs (and once more in `close()`)."""


@dataclass
class _PendingRevert:
    """A revert that failed: the fault is still in the cluster, so the handle is kept and retried."""

    fault_id: str
    handle: Any
    attempts: int
    next_s: float


@dataclass
class AlertErrorEntry:
    """An alert evaluation that failed (the metric source was unreachable or refused a query)."""

    time_s: float
    error: str
    message: str


class _NoAlerts:
    """Alert source when no metric source is configured: nothing ever fires."""

    def evaluate_until(self, t: float) -> list:
        return []

    def history(self, until: float | None = None) -> list:
        return []


class LiveMarathonEnv(MarathonCore):
    """
    ## Description
    The SRE-Marathon loop on a `Backend` that keeps its own time (a live Kubernetes cluster
    through `KubernetesBackend`). Each step is one agent invocation: the agent's actions run
    now, then the env waits on the backend's clock until the next point of a fixed grid
    (`interval_s`, 2 `interval_s`, ...: time the agent spends does not shift later invocations; an
    agent that overruns the interval is invoked again at once and the overrun is recorded in
    `overruns` and `info["overrun_s"]`), injecting and reverting the schedule's faults at their
    times (mechanisms the backend cannot inject are skipped and logged in `fault_log`; a failed
    revert is retried every 15 s and in `close()`) and evaluating the catalog's alert rules on the
    backend's metrics (a failed evaluation, e.g. Prometheus down, is recorded in `alert_errors`
    and the run goes on).

    ## Action Space
    Same as `MarathonEnv`: `MultiDiscrete` action slots; LLM-style agents use
    `env.unwrapped.call_tool(call)` and `step(None)`.

    ## Observation Space
    Same `Dict` as `MarathonEnv`. Per-service features a cluster API shows (ready ratio, pods not
    running, restarts, rollouts) are filled in; traffic features (request rate, errors, latency,
    throttling) are 0 because they need the metric source's query language, not the cluster API.

    ## Rewards
    0: the Marathon-Score needs probe results the live backend does not compute. `record()`
    returns the run (faults injected, alerts, incidents, actions; no probes) so
    `agents.base.run_episode` drives this env like `MarathonEnv`; scoring that record credits
    correlation and localization but never repair.

    ## Episode End
    Terminates when `run_s` seconds have passed on the backend's clock.

    ## Arguments
    `backend` (a `Backend` with `clock`, `start()` and `t0`, e.g. `KubernetesBackend`),
    `catalog`, `schedule` (a `FaultSchedule` or None), `interval_s`, `run_s`, `alert_engine`
    (defaults to the catalog's rules over `backend.metrics`), `action_slots`, `max_alerts`,
    `max_incidents`.

    ## Version History
    - v0: initial release.
    """

    def __init__(
        self,
        backend: Any,
        catalog: Catalog | str | None = None,
        *,
        schedule: Any = None,
        interval_s: int = DEFAULT_INVOCATION_S,
        run_s: int | None = None,
        alert_engine: Any = None,
        action_slots: int = 4,
        max_alerts: int = 64,
        max_incidents: int = 16,
    ):
        self.catalog = catalog if isinstance(catalog, Catalog) else load_catalog(catalog)
        self.backend = backend
        self.app = backend.app
        self.interval_s = whole("interval_s", interval_s, METRIC_STEP_S, 60 * MAX_RUN_MINUTES)
        self.schedule = schedule
        run_s = run_s if run_s is not None else (schedule.run_s if schedule is not None else 5400)
        self.run_s = whole("run_s", run_s, self.interval_s + 1, 7 * 24 * 3600)  # > one interval
        self.injection_s = schedule.injection_s if schedule is not None else self.run_s
        self._alert_engine_arg = alert_engine
        self._init_spaces(max_alerts, max_incidents, action_slots)
        self.baseline_values = baseline_values(self.app)
        self.runner: ToolRunner | None = None
        self.fault_log: list[FaultLogEntry] = []
        self.alert_errors: list[AlertErrorEntry] = []
        self.overruns: list[dict] = []
        self._grid_t = 0.0
        self._seed: int | None = None
        from ..recording.bundle import catalog_digest

        self._catalog_version = catalog_digest(self.catalog)
        self._handles: dict[str, Any] = {}  # injected this episode, revert not yet due
        self._failed: list[_PendingRevert] = []  # revert due but failed: still in the cluster (any episode)
        self._injected_at: dict[str, float] = {}
        self._reverted_at: dict[str, float | None] = {}

    # ------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        check_reset_arguments(seed, options)
        super().reset(seed=seed)
        self._seed = seed
        self._alert_records: dict[str, AlertRecord] = {}
        from ..alerting.engine import AlertEngine

        self._revert_outstanding()  # a previous episode's faults must not leak into this one
        self.backend.start()
        if self._alert_engine_arg is not None:
            self.alert_engine = self._alert_engine_arg
        elif self.backend.metrics is not None:
            self.alert_engine = AlertEngine(self.catalog.rules, self.app, self.backend.metrics)
        else:
            self.alert_engine = _NoAlerts()
        self.runner = ToolRunner(self.backend, self.alert_engine)
        self.fault_log = []
        self.alert_errors = []
        self._injected_at, self._reverted_at = {}, {}
        self._events = list(self.schedule.events()) if self.schedule is not None else []
        self._event_pos = 0
        self._restarts_seen = self._restarts()
        self.overruns = []
        self._grid_t = float(min(self.interval_s, self.run_s))
        self._advance(self._grid_t)
        return self._observe(), self._info()

    def step(self, action: Any):
        if self.runner is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.backend.now() >= self.run_s:
            raise gym.error.ResetNeeded("the episode is over; call reset()")
        arr, problem = slot_array(action, self.action_space)
        results = [ToolResult.fail("action", "invalid_arguments", problem)] if problem is not None else []
        results += self._run_slots(arr)
        overrun = self._next_grid_point()
        self.runner.invocation += 1
        self._advance(self._grid_t)
        terminated = self.backend.now() >= self.run_s
        info = self._info()
        info["tool_results"] = [r.model_dump() for r in results]
        info["overrun_s"] = overrun
        return self._observe(), 0.0, terminated, False, info

    def _next_grid_point(self) -> float:
        """Move `_grid_t` one interval on the fixed grid (invocations at interval_s, 2 interval_s, ...,
        however long the agent took). An agent that overran the interval gets its next invocation at
        once, on the grid point it overran into; the overrun is recorded in `overruns` and returned."""
        target = self._grid_t + self.interval_s
        now = self.backend.now()
        overrun = 0.0
        if now > target + 1e-9:
            overrun = round(now - target, 3)
            missed = math.floor(overrun / self.interval_s)
            self.overruns.append(
                {
                    "invocation": self.runner.invocation if self.runner else 0,
                    "due_s": target,
                    "ended_s": now,
                    "overrun_s": overrun,
                    "skipped_invocations": missed,
                }
            )
            target += missed * self.interval_s
        self._grid_t = float(min(target, self.run_s))
        return overrun

    def record(self) -> RunRecord:
        """The live run so far as a `RunRecord`, what `agents.base.run_episode` returns.

        It holds the manifest, the faults that were actually injected (ground truth; `start_s` is
        when the injection went through, `reverted_s` when the orchestrator's revert went through,
        None when the agent had already repaired it or the revert is still pending), the alerts,
        the incident events and every action with its verdict.

        NOT in it: `probes` is empty and `degradation` is empty, because the live backend measures
        no symptom probes and no request degradation. A live record therefore scores correlation
        and localization, but never credits repair (R) or degradation; `env_config["probes"]`
        says so, so a bundle of a live run is not mistaken for a simulated one.
        """
        from ..core.run_record import RunManifest
        from ..core.version import __version__

        if self.runner is None:
            raise gym.error.ResetNeeded("call reset() before record()")
        runner = self.runner
        planned = {sf.fault_id: sf for sf in (self.schedule.faults if self.schedule is not None else ())}
        faults = []
        for fid, start in self._injected_at.items():
            f, sf = self.catalog.fault(fid), planned.get(fid)
            planned_end = max(float(sf.planned_end_s) if sf else start, start)
            faults.append(fault_truth(f, start, planned_end, self._reverted_at.get(fid)))
        try:
            pod_service = self.backend.pod_services()
        except SREMarathonError:
            pod_service = {}
        alerts = alert_records(self.alert_engine.history(), self.app, pod_service, self._alert_records)
        events, actions = incident_events(runner), action_records(runner)
        config = {
            "backend": type(self.backend).__name__,
            "namespace": getattr(self.backend, "namespace", None),
            "interval_s": self.interval_s,
            "run_s": self.run_s,
            "probes": "not measured: the live backend has no symptom probes or degradation; "
            "repair (R) and degradation are not scored from this record",
            "fault_log": [vars(e) for e in self.fault_log],
            "overruns": list(self.overruns),
            "alert_errors": [vars(e) for e in self.alert_errors],
            "pending_reverts": self.pending_reverts,
        }
        manifest = RunManifest(
            app=self.app.app,
            seed=self._seed if self._seed is not None else 0,
            mode="eval",
            interval_s=self.interval_s,
            injection_s=self.injection_s,
            observation_s=max(self.run_s - self.injection_s, 0),
            package_version=__version__,
            catalog_version=self._catalog_version,
            env_config=config,
            scope_share=self.catalog.scope_share(self.app.app),
        )
        return RunRecord(
            manifest=manifest, faults=faults, alerts=alerts, incident_events=events, actions=actions
        )

    @property
    def pending_reverts(self) -> list[str]:
        """Faults still in the cluster whose revert is due or failed (empty after a clean `close()`)."""
        return [*self._handles, *(p.fault_id for p in self._failed)]

    def call_tool(self, call: Any) -> ToolResult:
        """Interactive mode: run one tool call now (within the current invocation)."""
        if self.runner is None:
            return ToolResult.fail(
                str(call.get("tool", "?")) if isinstance(call, dict) else "?",
                "unavailable",
                "call reset() before using tools",
            )
        return self.runner.call(call)

    def close(self) -> None:
        """Revert every fault this env injected and has not reverted yet (the cluster outlives the env).

        A revert that fails again stays pending (see `pending_reverts`); calling `close()` again
        retries it."""
        self._revert_outstanding()
        super().close()

    # ------------------------------------------------------------ time and faults
    def _revert_outstanding(self) -> None:
        """Revert every fault still injected (and retry every failed revert); failures stay pending."""
        for fid in list(self._handles):
            self._revert(fid, self._handles.pop(fid), "episode ended")
        for p in list(self._failed):
            self._failed.remove(p)
            self._revert(p.fault_id, p.handle, "episode ended", p.attempts)

    def _revert(self, fid: str, handle: Any, why: str, attempts: int = 0) -> bool:
        """One revert attempt. A failure keeps the handle in `_failed` (retried every `REVERT_RETRY_S`
        and in `close()`); the fault log says whether the revert changed the cluster or the agent had
        already repaired the fault."""
        now = self.backend.now()
        try:
            outcome = self.backend.revert(handle)
        except SREMarathonError as exc:
            attempts += 1
            self._failed.append(_PendingRevert(fid, handle, attempts, now + REVERT_RETRY_S))
            if attempts == 1:  # later failures only count; the final entry says how many there were
                self.fault_log.append(
                    FaultLogEntry(
                        now,
                        fid,
                        "revert",
                        "error",
                        f"{why}: {exc} (the fault is still in place; retrying every "
                        f"{REVERT_RETRY_S:.0f} s and on close())",
                    )
                )
            return False
        after = f" after {attempts} failed attempt(s)" if attempts else ""
        if outcome == ALREADY_REPAIRED:
            self.fault_log.append(
                FaultLogEntry(
                    now,
                    fid,
                    "revert",
                    "already_repaired",
                    f"{why}: nothing to undo, the agent had already repaired it{after}",
                )
            )
            self._reverted_at.setdefault(fid, None)
        else:
            self.fault_log.append(FaultLogEntry(now, fid, "revert", "ok", f"{why}{after}"))
            self._reverted_at.setdefault(fid, now)
        return True

    def _retry_failed(self) -> None:
        now = self.backend.now()
        for p in list(self._failed):
            if p.next_s <= now + 1e-9:
                self._failed.remove(p)
                self._revert(p.fault_id, p.handle, "retry", p.attempts)

    def _advance(self, t: float) -> None:
        """Wait on the backend's clock until `t`, running schedule events on time (and retrying failed
        reverts), then evaluate alerts."""
        clock = self.backend.clock
        while True:
            self._run_events()
            self._retry_failed()
            now = self.backend.now()
            if now >= t - 1e-9:
                break
            nxt = self._events[self._event_pos].time_s if self._event_pos < len(self._events) else t
            nxt = min([nxt, t, *(p.next_s for p in self._failed)])
            clock.sleep(max(nxt - now, 0.0) or min(1.0, t - now))
        now = self.backend.now()
        try:
            self.alert_engine.evaluate_until(now)
        except SREMarathonError as exc:  # e.g. Prometheus unreachable: no new alerts this time, run goes on
            self.alert_errors.append(AlertErrorEntry(now, type(exc).__name__, str(exc)))

    def _run_events(self) -> None:
        while (
            self._event_pos < len(self._events)
            and self._events[self._event_pos].time_s <= self.backend.now() + 1e-9
        ):
            ev = self._events[self._event_pos]
            self._event_pos += 1
            if ev.kind == "benign":
                continue  # benign commits need the build pipeline; a live cluster has its own history
            fid = ev.item.fault_id
            now = self.backend.now()
            if ev.kind != "inject":
                if fid in self._handles:
                    self._revert(fid, self._handles.pop(fid), "scheduled")
                continue
            try:
                fault = self.catalog.fault(fid)
                if not self.backend.supports(fault):
                    self.fault_log.append(
                        FaultLogEntry(now, fid, "inject", "skipped", f"{fault.mechanism} needs a build")
                    )
                    continue
                self._handles[fid] = self.backend.inject(fault)
                self._injected_at[fid] = now
                self.fault_log.append(FaultLogEntry(now, fid, "inject", "ok"))
            except SREMarathonError as exc:  # a failed injection must not end the run
                self.fault_log.append(FaultLogEntry(now, fid, "inject", "error", str(exc)))

    # ------------------------------------------------------------ observation
    def _restarts(self) -> dict[str, int]:
        try:
            return {r["name"]: int(r["restarts"]) for r in self.backend.k8s_state("pods", None, 10_000)}
        except SREMarathonError:
            return {}

    def _extra_info(self) -> dict:
        return {"alert_errors": len(self.alert_errors)}

    def _service_features(self) -> np.ndarray:
        feats, self._restarts_seen = cluster_features(self, self._restarts_seen)
        return feats


__all__ = ["AlertErrorEntry", "FaultLogEntry", "LiveMarathonEnv"]
