"""A sealed run as the report draws it: one lane per fault and lanes for what matched no fault.

Everything here is derived from the bundle alone (its record, its sealed scoring weights) by the same
functions `sre-marathon score` uses, so the report shows the score's own verdicts: which incident
matched which fault, which root-cause claim was right, which intervention was called for. The
fault details come from the bundle's ground truth, which is fine after the run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from ..bundle import Bundle
from ..run_record import ActionRecord, ProbeSeries, RunRecord
from ..scoring import OUTCOMES, ScoreCard, attributable, evidence_matching
from ..scoring.matching import Matching

CHANGES = "changes shipped"
FALSE_INCIDENTS = "false incidents"
FALSE_CLAIMS = "false root-cause claims"
NEEDLESS = "needless interventions"
REFUSED = "refused interventions"
UNMATCHED = "incidents (rules v1: not matched)"
NOISE_LANES = (CHANGES, FALSE_INCIDENTS, FALSE_CLAIMS, NEEDLESS, REFUSED, UNMATCHED)


class Item(BaseModel):
    """One mark on a lane: its time, what it is, and the hover card's lines."""

    t: float
    kind: str = Field(description="alert, incident, claim_right, claim_false, action_<verdict>, change_*")
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
    incident_id: str | None
    probe_failing: list[tuple[float, float]] = Field(description="intervals when the symptom probe failed")
    items: list[Item] = Field(default_factory=list)


class NoiseLane(BaseModel):
    name: str
    items: list[Item] = Field(default_factory=list)


class RunView(BaseModel):
    """Everything the page shows about one run."""

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
    _place_incidents(record, matching, by_id, noise)
    _place_actions(record, matching, by_id, noise)
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
        faults=sorted(lanes, key=lambda lane: (lane.start_s, lane.fault_id)),
        noise=[lane for lane in noise.values() if lane.items or lane.name in (CHANGES, FALSE_INCIDENTS)],
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


def _failing_intervals(probe: ProbeSeries | None, step_s: float) -> list[tuple[float, float]]:
    """Runs of failing samples as [first failing sample, next sample) intervals."""
    if probe is None:
        return []
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
        incident_id=matching.incident_of.get(f.fault_id) if matching else None,
        probe_failing=_failing_intervals(record.probe_for(f.fault_id), 15.0),
        items=alerts,
    )


def _claim_text(services, artifact: str | None) -> str:
    return f"{', '.join(services) or '-'} / {artifact or '-'}"


def _place_incidents(
    record: RunRecord, matching: Matching | None, lanes: dict[str, FaultLane], noise: dict[str, NoiseLane]
) -> None:
    """Incident openings on their matched fault's lane (or the false-incident lane); each judged
    claim on its fault's lane when right, on the false-claim lane when not."""
    opened: set[str] = set()
    for ev in record.incident_events:
        if ev.op != "open" and ev.incident_id in opened:
            continue
        opened.add(ev.incident_id)
        fid = matching.fault_of.get(ev.incident_id) if matching else None
        lane = lanes[fid].items if fid else noise[UNMATCHED if matching is None else FALSE_INCIDENTS].items
        lane.append(
            Item(
                t=ev.time_s,
                kind="incident",
                services=list(ev.services),
                label=f"incident {ev.incident_id} opened",
                details=[
                    f"matched to {fid}" if fid else "matched to no fault",
                    f"{len(ev.alert_ids)} alert(s) at opening",
                ],
            )
        )
    if matching is None:
        return
    for claim in matching.claims.values():
        fid = matching.fault_of.get(claim.incident_id)
        right = claim.localized_s is not None
        item = Item(
            t=claim.made_s,
            kind="claim_right" if right else "claim_false",
            services=list(claim.services),
            label=f"root cause: {_claim_text(claim.services, claim.artifact)}",
            details=[
                f"incident {claim.incident_id}",
                "right: localizes " + fid if right and fid else "false",
            ],
        )
        (lanes[fid].items if right and fid else noise[FALSE_CLAIMS].items).append(item)


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


def _place_actions(
    record: RunRecord, matching: Matching | None, lanes: dict[str, FaultLane], noise: dict[str, NoiseLane]
) -> None:
    """Interventions: on the fault they were called for, else needless (executed) or refused."""
    for k, a in enumerate(record.actions):
        if a.kind != "intervention":
            continue
        fid = matching.called_for.get(k) if matching else None
        if fid:
            lanes[fid].items.append(_action_item(k, a, f"called for {fid}"))
        elif a.verdict == "ok":
            needless = matching is not None and k in matching.needless
            noise[NEEDLESS].items.append(_action_item(k, a, "needless" if needless else "not scored"))
        else:
            noise[REFUSED].items.append(_action_item(k, a, "refused by the policy layer"))
