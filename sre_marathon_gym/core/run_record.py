"""A recorded marathon run, as plain data: what the scorer reads and the bundle stores.

The environment (or a live-cluster harness) fills these models while a run is going on; the
scorer (`marathon.py`) only ever sees this record, never the simulator, so a sealed bundle can be
rescored offline and a live run is scored exactly like a simulated one.

Every model forbids unknown fields (a typo in a recorder is an error, not a silently ignored
value) and round-trips through JSON (`RunRecord.model_dump_json` / `RunRecord.model_validate_json`).
Times are simulated seconds since the start of the run.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

RUN_SCHEMA_VERSION = 1


class RunModel(BaseModel):
    """Common base: strict about unknown fields, mutable so a recorder can append as it goes."""

    model_config = ConfigDict(extra="forbid")


class RunManifest(RunModel):
    """Which run this is and under what settings (the bundle seals the same values)."""

    app: str
    seed: int
    mode: Literal["train", "eval"] = "eval"
    interval_s: float = Field(gt=0, description="agent invocation interval; MTTx resolution")
    injection_s: float = Field(ge=0)
    observation_s: float = Field(ge=0)
    package_version: str = ""
    catalog_version: str = ""
    env_config: dict[str, Any] = Field(default_factory=dict)
    scope_share: dict[str, float] = Field(
        default_factory=dict,
        description=(
            "per service, the share of the app's catalog faults whose scope holds it (public catalog "
            "data; rules v3 discounts alerts of services nearly every fault touches). Empty in records "
            "sealed before rules v3: rescoring fills it from the catalog"
        ),
    )


class ProbeSpec(RunModel):
    """The fault's symptom check (a copy of the catalog's `SymptomProbe`, kept for the record)."""

    kind: str
    service: str
    request_type: str | None = None
    threshold: float
    below: bool | None = None


class FaultTruth(RunModel):
    """One injected fault as the orchestrator scheduled it: hidden ground truth."""

    fault_id: str
    category: str
    mechanism: str
    target: str = Field(description="the culprit: a service, or a node/zone for infrastructure faults")
    artifact: str = Field(description="the responsible artifact, exactly")
    aliases: list[str] = Field(
        default_factory=list, description="names accepted for localization (exact match)"
    )
    scope: list[str] = Field(default_factory=list, description="services expected to show symptoms")
    remedy_targets: list[str] = Field(
        default_factory=list,
        description="what the catalog's remedies act on (a failover: the zone it moves to); public data",
    )
    start_s: float
    planned_end_s: float
    reverted_s: float | None = Field(
        None, description="when the orchestrator reverted it; None if repaired first, or not (yet) reverted"
    )
    probe: ProbeSpec

    @property
    def deadline_s(self) -> float:
        """When the orchestrator reverted (or would revert) the fault: repair must start before this."""
        return self.reverted_s if self.reverted_s is not None else self.planned_end_s

    @property
    def accepted_artifacts(self) -> frozenset[str]:
        """The exact names that localize this fault (the artifact itself is always one)."""
        return frozenset((*self.aliases, self.artifact))

    @property
    def touched(self) -> frozenset[str]:
        """Everything whose alerts or interventions relate to the fault: its scope and its target."""
        return frozenset((*self.scope, self.target))

    @property
    def culprits(self) -> frozenset[str]:
        """Where a fix of the fault acts (rules v3): its target, what owns its artifact when that is
        something else (``flagd`` for ``flagd:configmap/...``, ``node-a3`` for ``node/node-a3``), and
        what the catalog's remedies act on (``zone-b`` for a failover)."""
        art = self.artifact
        out = {self.target, *self.remedy_targets}
        if ":" in art and "/" not in art.split(":", 1)[0]:
            out.add(art.split(":", 1)[0])
        kind, _, name = art.partition("/")
        if kind in ("node", "zone") and name and ":" not in name:
            out.add(name)
        return frozenset(out)

    @property
    def actionable(self) -> frozenset[str]:
        """What an intervention may act on to address the fault (rules v2): its scope and target, and
        the service that owns its artifact (``flagd`` for ``flagd:configmap/...``: a feature flag is
        fixed on flagd, not on the service it breaks)."""
        return self.touched | self.culprits

    @model_validator(mode="after")
    def _ordered(self) -> FaultTruth:
        if self.planned_end_s < self.start_s:
            raise ValueError(
                f"fault {self.fault_id}: planned_end_s {self.planned_end_s} < start_s {self.start_s}"
            )
        if self.reverted_s is not None and self.reverted_s < self.start_s:
            raise ValueError(f"fault {self.fault_id}: reverted_s {self.reverted_s} < start_s {self.start_s}")
        return self


class AlertRecord(RunModel):
    """One fired alert episode; `services` are what its labels point at (resolved by the recorder)."""

    id: str
    rule: str
    severity: str = ""
    labels: dict[str, str] = Field(default_factory=dict)
    fired_at: float
    resolved_at: float | None = None
    services: list[str] = Field(
        default_factory=list, description="services (or node/zone) named by the labels"
    )


class IncidentEvent(RunModel):
    """One change to the agent's incident store.

    Each event carries the incident's full state AFTER the operation (its alerts, root-cause
    services and artifact), as `tools.workspace.IncidentStore` records it; replaying the events in
    order therefore gives every state the store went through.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)  # shared by the runner, recorder and scorer

    time_s: float
    op: Literal["open", "root_cause", "update", "resolve"]
    incident_id: str
    alert_ids: list[str] = Field(default_factory=list)
    services: list[str] = Field(default_factory=list)
    artifact: str | None = None


class ActionRecord(RunModel):
    """One tool call with its policy verdict (read, incident and intervention tools alike)."""

    model_config = ConfigDict(extra="forbid", frozen=True)  # shared by the runner, recorder and scorer

    time_s: float
    invocation: int = 0
    tool: str
    kind: Literal["read", "incident", "intervention"]
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    verdict: Literal["ok", "error", "invalid", "forbidden", "guard_failed"]
    error: str = ""
    incident_id: str | None = None
    targets: list[str] = Field(default_factory=list, description="services the intervention acts on")
    in_scope: bool | None = Field(
        None, description="targets within the cited incident's scope (interventions)"
    )


class ProbeSeries(RunModel):
    """The fault's symptom probe over the run, sampled every tick (5 s) or at least every 15 s."""

    fault_id: str
    times: list[float] = Field(default_factory=list)
    failing: list[bool] = Field(default_factory=list)

    @model_validator(mode="after")
    def _aligned(self) -> ProbeSeries:
        if len(self.times) != len(self.failing):
            raise ValueError(f"probe {self.fault_id}: {len(self.times)} times but {len(self.failing)} values")
        if any(b < a for a, b in zip(self.times, self.times[1:])):
            raise ValueError(f"probe {self.fault_id}: times must be non-decreasing")
        return self


class Degradation(RunModel):
    """Entry-point requests per invocation interval, for this run and the matched no-action run.

    `requests` are entry-point requests weighted by entry traffic; `degraded` those that failed or
    were slower than the slow threshold. The baseline lists are empty when no no-action run exists.
    """

    times: list[float] = Field(default_factory=list, description="interval ends")
    requests: list[float] = Field(default_factory=list)
    degraded: list[float] = Field(default_factory=list)
    baseline_requests: list[float] = Field(default_factory=list)
    baseline_degraded: list[float] = Field(default_factory=list)

    @model_validator(mode="after")
    def _aligned(self) -> Degradation:
        n = len(self.times)
        if len(self.requests) != n or len(self.degraded) != n:
            raise ValueError(
                f"degradation: {n} times, {len(self.requests)} requests, {len(self.degraded)} degraded"
            )
        if len(self.baseline_requests) != len(self.baseline_degraded):
            raise ValueError("degradation: baseline_requests and baseline_degraded differ in length")
        counts = (*self.requests, *self.degraded, *self.baseline_requests, *self.baseline_degraded)
        if any(v < 0 for v in counts):
            raise ValueError("degradation: request counts must be non-negative")
        return self


class Usage(RunModel):
    """What the agent cost: model calls, tokens and dollars (zero for non-LLM agents)."""

    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    failed_model_calls: int = Field(0, ge=0, description="requests that got no usable answer (after retries)")
    timed_out_invocations: list[int] = Field(
        default_factory=list, description="invocations ended by the wall-clock budget (LLM evaluation mode)"
    )


class ChangeRecord(RunModel):
    """One change shipped on a plane the agent reads (pipeline, manifest, NetworkPolicy, node):
    harmless or a fault's. Ground truth (``fault_id``), for the run report after the run; the
    scorer does not read it."""

    time_s: float
    plane: str
    service: str
    artifact: str
    kind: str = Field(description="code, config, flag, image, replicas, cpu_limit_m, netpol, cordon ...")
    summary: str = Field("", description="the commit message, or the value the change sets")
    fault_id: str | None = Field(None, description="the fault this change injected; None: harmless")


class RunRecord(RunModel):
    """Everything the scorer needs about one run.

    `artifact_fixed[fault_id]` is when the responsible artifact was verifiably back in its good
    state by an agent action (None or absent: never). Repair attribution (which intervention
    caused a recovery) is NOT recorded: the scorer derives it from `actions` and `probes`, so a
    bundle cannot claim a repair its evidence does not show.
    """

    schema_version: int = RUN_SCHEMA_VERSION
    manifest: RunManifest
    faults: list[FaultTruth] = Field(default_factory=list)
    alerts: list[AlertRecord] = Field(default_factory=list)
    incident_events: list[IncidentEvent] = Field(default_factory=list)
    actions: list[ActionRecord] = Field(default_factory=list)
    probes: list[ProbeSeries] = Field(default_factory=list)
    degradation: Degradation = Field(default_factory=Degradation)
    usage: Usage = Field(default_factory=Usage)
    artifact_fixed: dict[str, float | None] = Field(default_factory=dict)
    changes: list[ChangeRecord] = Field(default_factory=list, description="changes shipped so far")

    @model_validator(mode="after")
    def _consistent(self) -> RunRecord:
        ids = [f.fault_id for f in self.faults]
        if len(set(ids)) != len(ids):
            raise ValueError("faults: duplicate fault_id")
        known = set(ids)
        for p in self.probes:
            if p.fault_id not in known:
                raise ValueError(f"probes: unknown fault_id {p.fault_id!r}")
        for fid in self.artifact_fixed:
            if fid not in known:
                raise ValueError(f"artifact_fixed: unknown fault_id {fid!r}")
        for c in self.changes:
            if c.fault_id is not None and c.fault_id not in known:
                raise ValueError(f"changes: unknown fault_id {c.fault_id!r}")
        return self

    def probe_for(self, fault_id: str) -> ProbeSeries | None:
        for p in self.probes:
            if p.fault_id == fault_id:
                return p
        return None

    def truncated(self, until_s: float) -> RunRecord:
        """The record as it looked at `until_s`: only evidence observed by then.

        Alerts, incident events, actions, probe samples, degradation intervals, changes and artifact
        fixes after `until_s` are dropped; the fault schedule stays (it is the orchestrator's plan, known
        from the start). Used to check that incremental scoring is causal.
        """
        probes = [
            ProbeSeries(
                fault_id=p.fault_id,
                times=[t for t in p.times if t <= until_s],
                failing=[x for t, x in zip(p.times, p.failing) if t <= until_s],
            )
            for p in self.probes
        ]
        d = self.degradation
        keep = [i for i, t in enumerate(d.times) if t <= until_s]
        deg = Degradation(
            times=[d.times[i] for i in keep],
            requests=[d.requests[i] for i in keep],
            degraded=[d.degraded[i] for i in keep],
            baseline_requests=d.baseline_requests[: len(keep)],
            baseline_degraded=d.baseline_degraded[: len(keep)],
        )
        return self.model_copy(
            update={
                "alerts": [a for a in self.alerts if a.fired_at <= until_s],
                "incident_events": [e for e in self.incident_events if e.time_s <= until_s],
                "actions": [a for a in self.actions if a.time_s <= until_s],
                "probes": probes,
                "degradation": deg,
                "artifact_fixed": {
                    k: (v if v is not None and v <= until_s else None) for k, v in self.artifact_fixed.items()
                },
                "changes": [c for c in self.changes if c.time_s <= until_s],
            }
        )


__all__ = [
    "RUN_SCHEMA_VERSION",
    "ActionRecord",
    "AlertRecord",
    "ChangeRecord",
    "Degradation",
    "FaultTruth",
    "IncidentEvent",
    "ProbeSeries",
    "ProbeSpec",
    "RunManifest",
    "RunModel",
    "RunRecord",
    "Usage",
]
