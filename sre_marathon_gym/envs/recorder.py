"""Records a marathon run as a `RunRecord` while it happens (what scoring and the bundle read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..catalog.apps import label_place
from ..core.run_record import (
    ActionRecord,
    AlertRecord,
    ChangeRecord,
    Degradation,
    FaultTruth,
    IncidentEvent,
    ProbeSeries,
    ProbeSpec,
    RunManifest,
    RunRecord,
)
from ..core.version import __version__
from ..schedule.change_stream import change_plane

if TYPE_CHECKING:
    from ..backends.sim_run import SimulatedRun


class RunRecorder:
    def __init__(self, env: Any):
        self.env = env
        self.probes: dict[str, ProbeSeries] = {}
        self.artifact_fixed: dict[str, float | None] = {}
        self.degradation = Degradation(
            times=[], requests=[], degraded=[], baseline_requests=[], baseline_degraded=[]
        )
        self._alert_records: dict[str, AlertRecord] = {}
        self._seen_bad: set[str] = set()
        self.faults = [self._truth(sf) for sf in env.schedule.faults]
        self.scope_share = env.catalog.scope_share(env.app.app)
        self._by_id = {f.id: f for f in (env.catalog.fault(sf.fault_id) for sf in env.schedule.faults)}

    def _truth(self, sf: Any) -> FaultTruth:
        return fault_truth(self.env.catalog.fault(sf.fault_id), sf.start_s, sf.planned_end_s)

    def sample(self, run: SimulatedRun) -> None:
        """Every 15 s: the probe of each fault that has started and is not long over."""
        now = run.now
        for truth in self.faults:
            if truth.start_s > now or now > truth.planned_end_s + 900:
                continue
            fault = self._by_id[truth.fault_id]
            series = self.probes.setdefault(
                truth.fault_id, ProbeSeries(fault_id=truth.fault_id, times=[], failing=[])
            )
            series.times.append(now)
            series.failing.append(run.probe_failing(fault.probe))

    def before_invocation(self, run: SimulatedRun) -> None:
        """Which faults' artifacts are bad as the agent is invoked (a change still in the pipeline is
        not: its artifact was never bad, so the agent cannot have fixed it)."""
        for fid in run.applied_faults():
            if fid not in self._seen_bad and run.reverted_s(fid) is None and not run.artifact_restored(fid):
                self._seen_bad.add(fid)

    def after_invocation(self, run: SimulatedRun, acted: bool) -> None:
        """Artifact checks after the agent's actions (a fix without a failing probe still counts)."""
        if not acted:
            return
        for fid in run.applied_faults():
            if (
                fid not in self.artifact_fixed
                and fid in self._seen_bad
                and run.reverted_s(fid) is None
                and run.artifact_restored(fid)
            ):
                self.artifact_fixed[fid] = run.now

    def interval(self, run: SimulatedRun) -> None:
        requests, degraded = run.interval_traffic()
        self.degradation.times.append(run.now)
        self.degradation.requests.append(requests)
        self.degradation.degraded.append(degraded)

    def fill_baseline(self) -> None:
        """The matched no-action run: same seed and schedule, nobody acting (computed exactly)."""
        requests, degraded = self.env.run.no_action_traffic(self.degradation.times)
        self.degradation.baseline_requests = requests
        self.degradation.baseline_degraded = degraded

    def record(self, full: bool = True) -> RunRecord:
        """The run so far. `full=False` gives only what the score and the reward read, for the RL
        step's hot path: no change log (the run report's) and no no-action run. With `full`, once
        the run is over, the no-action run's traffic is computed on first request: a second
        simulation of the whole episode (half the cost of the run itself) that only the score
        card's degradation reads."""
        env, run = self.env, self.env.run
        if full and run.now >= env.run_s and not self.degradation.baseline_requests:
            self.fill_baseline()
        alerts = alert_records(
            env.alert_engine.history(), env.app, env.backend.pod_services(), self._alert_records
        )
        for truth in self.faults:
            truth.reverted_s = run.reverted_s(truth.fault_id)
        events, actions = incident_events(env.runner), action_records(env.runner)
        manifest = RunManifest(
            app=env.app.app,
            seed=env.seed_used,
            mode=env.mode,
            interval_s=env.interval_s,
            injection_s=env.injection_s,
            observation_s=env.observation_s,
            package_version=__version__,
            catalog_version=env.catalog_version,
            env_config=env.config(),
            scope_share=self.scope_share,
        )
        return RunRecord(
            manifest=manifest,
            faults=self.faults,
            alerts=alerts,
            incident_events=events,
            actions=actions,
            probes=list(self.probes.values()),
            degradation=self.degradation,
            artifact_fixed=dict(self.artifact_fixed),
            changes=self.changes(run.now) if full else [],
        )

    def changes(self, now: float) -> list[ChangeRecord]:
        """Every change shipped by `now` on a plane the agent reads, harmless or a fault's, in time
        order (faults first at equal times): what the run report's change lane shows."""
        out = [
            ChangeRecord(
                time_s=truth.start_s,
                plane=plane,
                service=truth.target,
                artifact=truth.artifact,
                kind=truth.mechanism,
                summary=fault.change.message if fault.change else fault.title,
                fault_id=truth.fault_id,
            )
            for truth in self.faults
            if truth.start_s <= now
            for fault in (self._by_id[truth.fault_id],)
            if (plane := change_plane(truth.mechanism)) is not None
        ]
        out += [
            ChangeRecord(
                time_s=b.time_s,
                plane=b.plane,
                service=b.service,
                artifact=b.artifact,
                kind=b.kind,
                summary=b.message or (b.new_value or ""),
            )
            for b in getattr(self.env.schedule, "benign", ())
            if b.time_s <= now
        ]
        return sorted(out, key=lambda c: (c.time_s, c.fault_id is None))


def fault_truth(
    fault: Any, start_s: float, planned_end_s: float, reverted_s: float | None = None
) -> FaultTruth:
    """A catalog fault as the record's ground truth, with its times on this run."""
    # a node or zone fault also shows in alerts that name the node or zone itself
    place = [fault.artifact.split("/", 1)[1]] if fault.artifact.startswith(("node/", "zone/")) else []
    return FaultTruth(
        fault_id=fault.id,
        category=fault.category,
        mechanism=fault.mechanism,
        target=fault.target,
        artifact=fault.artifact,
        aliases=list(fault.aliases),
        scope=[*fault.scope, *place],
        remedy_targets=sorted({r.target for r in fault.remedies}),
        start_s=start_s,
        planned_end_s=planned_end_s,
        reverted_s=reverted_s,
        probe=ProbeSpec(**fault.probe.model_dump()),
    )


def alert_records(
    history: Any, app: Any, pod_service: dict[str, str], cache: dict[str, AlertRecord]
) -> list[AlertRecord]:
    """The alert history as recorded: each alert with the services (and node or zone) it names.

    `cache` keeps each alert's record from the first time it was seen (rebuilt only when it
    resolves), and so its services, since pods (and so the pod -> service map) come and go after
    the alert fired; the recorder asks at every step for the whole history.
    """
    out = []
    for a in history:
        rec = cache.get(a.id)
        if rec is None or rec.fired_at != a.fired_at or rec.resolved_at != a.resolved_at:
            if rec is None:
                svcs = app.label_services(a.labels, pod_service)
                place = label_place(a.labels)
                services = sorted(svcs | ({place[1]} if place else set()))
            else:
                services = rec.services
            rec = cache[a.id] = AlertRecord(
                id=a.id,
                rule=a.rule,
                severity=a.severity,
                labels=dict(a.labels),
                fired_at=a.fired_at,
                resolved_at=a.resolved_at,
                services=services,
            )
        out.append(rec)
    return out


def incident_events(runner: Any) -> list[IncidentEvent]:
    """The workspace's incident events as recorded."""
    return list(runner.incidents.events)


def action_records(runner: Any) -> list[ActionRecord]:
    """Every tool call with its policy verdict, as recorded."""
    return list(runner.actions)
