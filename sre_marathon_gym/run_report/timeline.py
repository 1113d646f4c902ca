"""A sealed run as the report draws it: one lane per fault and lanes for what matched no fault.

Everything here is derived from the bundle alone (its record, its sealed scoring weights) by the same
functions `sre-marathon score` uses, so the report shows the score's own verdicts: which incident
matched which fault, which root-cause claim was right, which intervention was called for. The
fault details come from the bundle's ground truth, which is fine after the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from ..core.run_record import ActionRecord, ProbeSeries, RunRecord
from ..evaluation.reports import OUTCOME_COLORS
from ..recording.bundle import Bundle
from ..scoring import OUTCOMES, FaultScore, ScoreCard, attributable, evidence_matching
from ..scoring.matching import Matching

CHANGES = "changes shipped"
FALSE_INCIDENTS = "false incidents"
FALSE_CLAIMS = "false root-cause claims"
NEEDLESS = "needless interventions"
REFUSED = "refused or failed calls"
UNMATCHED = "incidents (rules v1: not matched)"
UNJUDGED = "interventions (rules v1: not judged)"
NOISE_LANES = (CHANGES, FALSE_INCIDENTS, FALSE_CLAIMS, NEEDLESS, REFUSED, UNMATCHED, UNJUDGED)
VERDICT_NOTES = {
    "forbidden": "refused: a forbidden operation (penalised)",
    "guard_failed": "refused: its guard failed",
    "invalid": "failed: invalid arguments",
    "error": "failed: the tool returned an error",
}


class Item(BaseModel):
    """One mark on a lane: its time, what it is, and the hover card's lines."""

    t: float
    kind: str = Field(
        description="alert, credit, incident, incident_late, claim_right, claim_late, claim_false, "
        "action_<verdict>, change_faulty, change_benign"
    )
    services: list[str] = Field(default_factory=list)
    label: str
    details: list[str] = Field(default_factory=list)


class FaultLane(BaseModel):
    fault_id: str
    category: str
    mechanism: str
    target: str
    artifact: str
    services: list[str]
    start_s: float
    end_s: float
    end_kind: str = Field(description="repaired, reverted, or planned (not reverted by the run's end)")
    outcome: str
    points: float
    incident_id: str | None = Field(description="the incident the score matched to it in time (credited)")
    late_incident_id: str | None = Field(None, description="matched only after its deadline: no credit")
    probe_failing: list[tuple[float, float]] = Field(description="intervals when the symptom probe failed")
    items: list[Item] = Field(default_factory=list)


class NoiseLane(BaseModel):
    name: str
    items: list[Item] = Field(default_factory=list)


class RunView(BaseModel):
    """Everything the page shows about one run."""

    source: str = Field(description="the bundle's file name")
    title: str
    app: str
    seed: int
    mode: str
    agent: str
    complete: bool
    incomplete_note: str = ""
    run_s: float
    injection_s: float
    interval_s: float
    score: str = Field(description="the Marathon-Score as `sre-marathon score` prints it")
    rules_version: int
    breakdown: str = Field(description="stage points and what the penalties took, one line")
    card: list[tuple[str, str]]
    outcomes: dict[str, int]
    outcome_colors: dict[str, str]
    faults: list[FaultLane]
    noise: list[NoiseLane]
    degradation: dict[str, list[float]]


def run_view(path: Path, bundle: Bundle, record: RunRecord, card: ScoreCard, scoring) -> RunView:
    """The report's view of one scored bundle (`record` as scored, `scoring` the weights used)."""
    m = record.manifest
    matching = evidence_matching(record, scoring)
    per_fault = {fs.fault_id: fs for fs in card.per_fault}
    lanes = [_fault_lane(f, per_fault[f.fault_id], record, matching) for f in record.faults]
    by_id = {lane.fault_id: lane for lane in lanes}
    noise = {name: NoiseLane(name=name) for name in NOISE_LANES}
    board = _Board(record, matching, by_id, per_fault, noise)
    board.place_incidents()
    board.place_actions()
    noise[CHANGES].items = [
        Item(
            t=c.time_s,
            kind="change_faulty" if c.fault_id else "change_benign",
            services=[c.service],
            label=f"{c.plane}: {c.kind} on {c.service}",
            details=[
                f"artifact: {c.artifact}",
                c.summary,
                f"FAULTY: {c.fault_id}" if c.fault_id else "harmless",
            ],
        )
        for c in record.changes
    ]
    agent = str(bundle.extra.get("agent_name") or _agent_from_stem(path.stem, m.app, m.seed))
    d = record.degradation
    return RunView(
        source=path.name,
        title=f"{m.app} / {agent} / seed {m.seed} ({m.mode})",
        app=m.app,
        seed=m.seed,
        mode=m.mode,
        agent=agent,
        complete=bundle.info.complete,
        incomplete_note=bundle.info.describe_incomplete(),
        run_s=m.injection_s + m.observation_s,
        injection_s=m.injection_s,
        interval_s=m.interval_s,
        score=f"{card.marathon_score:.1f}",
        rules_version=card.rules_version,
        breakdown=_breakdown(card),
        card=card.rows(),
        outcomes={k: card.outcomes.get(k, 0) for k in OUTCOMES},
        outcome_colors=dict(OUTCOME_COLORS),
        faults=sorted(lanes, key=lambda lane: (lane.start_s, lane.fault_id)),
        noise=[lane for lane in noise.values() if lane.items or lane.name == CHANGES],
        degradation={
            "times": list(d.times),
            "run": _shares(d.degraded, d.requests),
            "no_action": _shares(d.baseline_degraded, d.baseline_requests),
        },
    )


def _breakdown(card: ScoreCard) -> str:
    """``stage points 9.3 - false incidents 2.1 - ...``: where the Marathon-Score came from."""
    penalties = [
        ("false incidents", card.false_incident_penalty),
        ("false claims", card.false_claim_penalty),
        ("needless interventions", card.needless_action_penalty),
        ("forbidden attempts", card.forbidden_penalty),
    ]
    taken = "".join(f" - {name} {points:.1f}" for name, points in penalties if points > 0)
    clipped = " (clipped at 0)" if card.marathon_score_unclipped < 0 else ""
    return f"stage points {card.stage_score:.1f}{taken}{clipped}"


def _agent_from_stem(stem: str, app: str, seed: int) -> str:
    """The agent's name from ``<app>-<agent>-<seed>`` (bundles sealed before the name was recorded)."""
    middle = stem.removeprefix(f"{app}-").removesuffix(f"-{seed}")
    return middle if middle != stem else stem


def _shares(degraded: list[float], requests: list[float]) -> list[float]:
    return [round(x / r, 6) if r > 0 else 0.0 for x, r in zip(degraded, requests)]


def _failing_intervals(probe: ProbeSeries | None) -> list[tuple[float, float]]:
    """Runs of failing samples as [first failing sample, next sample) intervals (the last one lasts
    the series' smallest sampling step)."""
    if probe is None or not probe.times:
        return []
    steps = [b - a for a, b in zip(probe.times, probe.times[1:]) if b > a]
    step_s = min(steps) if steps else 15.0
    out: list[tuple[float, float]] = []
    start = None
    for t, failing in zip(probe.times, probe.failing):
        if failing and start is None:
            start = t
        elif not failing and start is not None:
            out.append((start, t))
            start = None
    if start is not None:
        out.append((start, probe.times[-1] + step_s))
    return out


def _fault_lane(f, fs, record: RunRecord, matching: Matching | None) -> FaultLane:
    if fs.repair_s is not None and fs.repair_s < f.deadline_s:
        end, end_kind = fs.repair_s, "repaired"
    elif f.reverted_s is not None:
        end, end_kind = f.reverted_s, "reverted"
    else:
        end, end_kind = f.planned_end_s, "planned"
    interval = record.manifest.interval_s
    incident = matching.incident_of.get(f.fault_id) if matching else None
    alerts = [
        Item(
            t=a.fired_at,
            kind="alert",
            services=list(a.services),
            label=f"alert {a.rule}",
            details=[
                f"id {a.id}, severity {a.severity or '-'}",
                "services: " + (", ".join(a.services) or "-"),
                f"fired {a.fired_at:.0f} s, resolved "
                + ("-" if a.resolved_at is None else f"{a.resolved_at:.0f} s"),
            ],
        )
        for a in record.alerts
        if attributable(a, f, interval)
    ]
    return FaultLane(
        fault_id=f.fault_id,
        category=f.category,
        mechanism=f.mechanism,
        target=f.target,
        artifact=f.artifact,
        services=sorted(f.touched),
        start_s=f.start_s,
        end_s=end,
        end_kind=end_kind,
        outcome=fs.outcome,
        points=round(fs.points, 4),
        incident_id=incident if fs.correlated else None,
        late_incident_id=None if fs.correlated else incident,
        probe_failing=_failing_intervals(record.probe_for(f.fault_id)),
        items=alerts + _credits(fs),
    )


def _credits(fs: FaultScore) -> list[Item]:
    """The stages the score credited, at the times it credited them (every rules version)."""
    stages = (
        ("correlated", fs.correlated, fs.correlated_s, ""),
        ("localized", fs.localized, fs.localized_s, ""),
        ("repaired", fs.repaired, fs.repair_s, f"evidence: {fs.repair_evidence}"),
    )
    return [
        Item(
            t=t, kind="credit", label=f"credited: {name}", details=[note, f"stage points so far: {fs.points}"]
        )
        for name, credited, t, note in stages
        if credited and t is not None
    ]


@dataclass
class _Board:
    """The score's evidence and the lanes its marks go on."""

    record: RunRecord
    matching: Matching | None
    lanes: dict[str, FaultLane]
    scores: dict[str, FaultScore]
    noise: dict[str, NoiseLane]

    def place_incidents(self) -> None:
        """Incident openings on their matched fault's lane (credited, or matched too late for credit) or
        the false-incident lane; each judged claim on its fault's lane when right (credited or late), on
        the false-claim lane when not. Rules v1 match nothing: its incidents get a lane of their own."""
        services = {a.id: a.services for a in self.record.alerts}
        opened: set[str] = set()
        for ev in self.record.incident_events:
            if ev.incident_id in opened:
                continue
            opened.add(ev.incident_id)
            fid = self.matching.fault_of.get(ev.incident_id) if self.matching else None
            credited = fid is not None and self.scores[fid].correlated
            note = "matched to no fault" if fid is None else f"matched to {fid}"
            lane = (
                self.lanes[fid].items
                if fid
                else self.noise[UNMATCHED if self.matching is None else FALSE_INCIDENTS].items
            )
            lane.append(
                Item(
                    t=ev.time_s,
                    kind="incident" if credited or fid is None else "incident_late",
                    services=sorted(
                        {s for a in ev.alert_ids for s in services.get(a, ())} | set(ev.services)
                    ),
                    label=f"incident {ev.incident_id} opened",
                    details=[
                        note if credited or fid is None else note + " after its deadline: no credit",
                        f"{len(ev.alert_ids)} alert(s) at opening",
                    ],
                )
            )
        if self.matching is None:
            return
        for claim in self.matching.claims.values():
            fid = self.matching.fault_of.get(claim.incident_id)
            right = claim.localized_s is not None and fid is not None
            credited = right and self.scores[fid].localized
            item = Item(
                t=claim.made_s,
                kind="claim_right" if credited else "claim_late" if right else "claim_false",
                services=list(claim.services),
                label=f"root cause: {_claim_text(claim.services, claim.artifact)}",
                details=[
                    f"incident {claim.incident_id}",
                    f"right: localizes {fid}" + ("" if credited else ", too late for credit")
                    if right
                    else "false",
                ],
            )
            (self.lanes[fid].items if right else self.noise[FALSE_CLAIMS].items).append(item)

    def place_actions(self) -> None:
        """Interventions on the fault they were called for or whose repair the score credits to them,
        else needless (executed; under rules v1, not judged); every call refused or failed, reads
        included (a forbidden read is penalised too)."""
        repairs = {
            fs.repair_action: fid
            for fid, fs in self.scores.items()
            if fs.repaired and fs.repair_action is not None
        }
        for k, a in enumerate(self.record.actions):
            if a.verdict != "ok":
                if a.kind == "intervention" or a.verdict == "forbidden":
                    self.noise[REFUSED].items.append(
                        _action_item(k, a, VERDICT_NOTES.get(a.verdict, a.verdict))
                    )
                continue
            if a.kind != "intervention":
                continue
            fid = self.matching.called_for.get(k) if self.matching else None
            if k in repairs:
                self.lanes[repairs[k]].items.append(
                    _action_item(k, a, f"its repair of {repairs[k]} is credited")
                )
            elif fid:
                self.lanes[fid].items.append(_action_item(k, a, f"called for {fid}"))
            elif self.matching is None:
                self.noise[UNJUDGED].items.append(_action_item(k, a, "rules v1 do not judge interventions"))
            else:
                self.noise[NEEDLESS].items.append(_action_item(k, a, "needless"))


def _claim_text(services, artifact: str | None) -> str:
    return f"{', '.join(services) or '-'} / {artifact or '-'}"


def _action_item(k: int, a: ActionRecord, note: str) -> Item:
    args = ", ".join(f"{key}={value}" for key, value in sorted(a.args.items()))
    return Item(
        t=a.time_s,
        kind=f"action_{a.verdict}",
        services=list(a.targets),
        label=f"{a.tool}({args})"[:160],
        details=[
            f"verdict: {a.verdict}" + (f" ({a.error})" if a.error else ""),
            f"invocation {a.invocation}, action #{k}",
            note,
        ],
    )
