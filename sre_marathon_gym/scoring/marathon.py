"""Marathon-Score and the operational metrics of one recorded run (SRE-Marathon §3, App. F, Fig. 9).

Pure functions over a `RunRecord`: nothing here touches a simulator, so a sealed bundle is rescored
exactly as the live run was. Every rule below is a reconstruction of the paper's prose; where the
paper leaves a choice open, the choice is written down here and pinned by `tests/scoring/`.

Two rule sets (``Scoring.rules_version``; a card and a bundle say which one scored them):

* **v1**, the literal reading of the paper's prose (below, "Correlated" to "Repaired"). It can be
  won without diagnosing anything: one incident holding every alert correlates every fault; any
  incident state that ever names an alias localizes, whatever wrong names came before or beside
  it; any intervention on a fault's service shortly before its recovery repairs it. Policies that
  never read telemetry score 47-63 under v1, above the paper's best method (41.3).
* **v2** (the default everywhere): a score only diagnosis earns. Soundness comes before a literal
  reading of the paper:

  - Correlation is a one-to-one matching of incidents to faults (`matching.py`, greedy in event
    order so that it is causal): an incident is eligible for a fault only when at least
    ``matching.min_explained_share`` of its fired alerts are attributable to it, and one incident
    is evidence for at most one fault. A fault is correlated while it is matched.
  - Localization is judged on the matched incident: its claim names the fault's target among its
    services (and no service outside the fault's scope: "the exact culprit service or services")
    and an alias of its artifact; the match then locks.
  - Both count only before the fault's deadline (its revert) plus ``matching.report_grace_s``, as
    repair must: the agent operates a live system, and the orchestrator's revert names the faulty
    change at the deadline, so a report read off it afterwards is not a diagnosis. A late incident
    or claim earns nothing and costs nothing (it is matched, not false). A claim (distinct incident,
    services, artifact) that never localizes its incident's fault is a *false claim*; an incident
    matched to no fault (noise, a pool of several faults, or a duplicate) is a *false incident*.
  - Repair keeps v1's evidence rules, but only an intervention that is *called for* may be
    credited: at its invocation the incident it cites is locked to a fault f and it acts on f's
    target, scope or the owner of f's artifact. Every other executed intervention is *needless*.
  - Score = 100 / faults x (sum_f (w_c C + w_l C L + w_r C L R) - false_incident x false incidents
    - false_claim x false claims - needless_action x needless interventions) - penalty x forbidden
    attempts, clipped to [0, 100]. The sizes (`catalog/scoring.yaml`) make a wrong answer cost what
    the right one earns, so guessing has no positive expected value; the file says which guessing
    strategy each size is set against.
  - Outcomes (Figure 9) use the matching's C and L.

Per fault f (all injected faults are in the denominator), rules v1:

Attributable alert
    Alert a is attributable to f when it fired while f was active, with a grace of one invocation
    interval for rules that hold for a while (``f.start_s <= a.fired_at <= f.deadline_s +
    interval_s``, where ``deadline_s`` is ``reverted_s`` or, if f was not reverted,
    ``planned_end_s``) and one of the services its labels point at is in f's scope or is f's
    target (node- and zone-wide alerts name the node/zone, which is the target of such faults).
    An alert can be attributable to several overlapping faults; it then counts for each.

Correlated C_f
    Some state of the agent's incident store (the incident events replayed in order; each event is
    the incident's full state after the change) has an incident containing an alert attributable
    to f that had fired by then. ``correlated_s`` is the first such event time.

Localized L_f
    Some incident state contains an alert attributable to f AND names f's target among its
    root-cause services AND names an artifact in f's alias table by exact string match (no case
    folding, no trimming; the artifact itself is always accepted). Implies C_f by construction.

Repaired R_f (repair evidence; credited only with C_f and L_f, in any time order)
    Candidates, of which the one confirmed first counts:

    * probe recovery: a probe sample at ``t_r`` that is healthy right after a failing sample, both
      at or after ``f.start_s``, with ``t_r < f.deadline_s`` (recovery starts before the
      orchestrator reverts, or would revert, the fault); every sample in
      ``[t_r, t_r + repair_stable_s]`` is healthy and one sample reaches ``t_r + repair_stable_s``
      (the repair is *confirmed* at that sample); and an agent intervention with verdict ``ok``
      whose targets include a service in f's scope (or f's target) happened at ``t_a`` with
      ``f.start_s <= t_a < t_r`` and ``t_r - t_a <= REPAIR_ATTRIBUTION_S`` (480 s: a code change
      spends ~105 s in the pipeline, a rollout up to a minute, and a restart-count probe looks back
      300 s). The latest such intervention is the one credited.
    * artifact fix: ``artifact_fixed[f]`` (set by the recorder only for agent actions) lies in
      ``[f.start_s, f.deadline_s)`` and the probe had not failed between ``f.start_s`` and the fix
      (the paper's "no symptom failure was observed"; failures after the fix are not f's). The
      repair is confirmed at the fix time.

    Attribution is computed here from ``actions`` and ``probes``; the record carries no claimed
    repair actions. Both candidates depend only on evidence up to their confirmation time, which is
    what makes `stage_progress` causal.

Scores (v1)
    Marathon-Score = 100 x mean_f (w_c C + w_l C L + w_r C L R) - penalty x forbidden attempts,
    clipped to [0, 100]; with no faults the stage part is 0.

Intervention risk
    Over the *risk-relevant attempts* -- every intervention call that reached the policy layer
    (verdict ok, error, forbidden or guard_failed; malformed ``invalid`` calls never did) plus every
    forbidden attempt of any tool kind (e.g. reading secrets) -- the fraction that is a policy
    violation (``forbidden`` or ``guard_failed``) or went through the policy but acted outside
    its incident's scope (``in_scope is False``). Each attempt counts once; 0 when there were none.

Service degradation
    Per interval, the degraded fraction is ``min(degraded, requests) / requests`` (capped at one);
    cumulatively, ``sum_i min(d_i, r_i) / sum_i r_i`` (so busy intervals weigh more, i.e. weighted
    by entry traffic). Reported for this run, for the matched no-action run, and as the difference
    (this run minus no-action; negative when the agent reduced user impact). None without baseline.

MTTD / MTTL / MTTR
    For each fault reaching the stage (C; C and L; C, L and R), the stage time minus ``start_s``,
    rounded UP to a multiple of the invocation interval (the resolution at which an agent can act);
    the metric is the median of those values (a midpoint for an even count), None if no fault
    reached the stage. Stage times: first correlating event, first localizing event, and the
    recovery time ``t_r`` (or the fix time) -- not the confirmation time.

Outcomes (Figure 9, first match)
    handled (C, L, R) > repaired_not_handled (repair evidence exists but not C and L) >
    acted_without_repair (an ``ok`` intervention targeted a service in f's scope or f's target
    while f was active, ``start_s <= t <= deadline_s``) > located_without_action (C and L) >
    correlated_only (C) > missed.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..catalog.settings import Scoring
from ..core.run_record import ActionRecord, AlertRecord, FaultTruth, RunRecord
from ..core.table import format_table
from .matching import Matching, Replay, Rules3, is_attributable, match_incidents, rules3
from .repair import REPAIR_ATTRIBUTION_S, Repair, RepairEvidence, repair, touches

Outcome = Literal[
    "handled",
    "repaired_not_handled",
    "acted_without_repair",
    "located_without_action",
    "correlated_only",
    "missed",
]
OUTCOMES: tuple[str, ...] = (
    "handled",
    "repaired_not_handled",
    "acted_without_repair",
    "located_without_action",
    "correlated_only",
    "missed",
)
_EPS = 1e-9


class FaultScore(BaseModel):
    """How far one fault got, and when (absolute run times in seconds)."""

    model_config = ConfigDict(extra="forbid")

    fault_id: str
    start_s: float
    correlated: bool
    localized: bool = Field(description="C and L")
    repaired: bool = Field(description="C and L and R")
    correlated_s: float | None = None
    localized_s: float | None = None
    repair_evidence: Literal["probe", "artifact"] | None = Field(None, description="ungated repair evidence")
    repair_s: float | None = Field(None, description="recovery (or fix) time of the repair evidence")
    repair_confirmed_s: float | None = Field(None, description="when the evidence became conclusive")
    repair_action: int | None = Field(None, description="index into actions of the credited intervention")
    acted_on: bool = False
    points: float = Field(description="w_c C + w_l C L + w_r C L R, in [0, 1]")
    outcome: Outcome


class ScoreCard(BaseModel):
    """Every metric of one run; `first_line` is what the CLI prints first."""

    model_config = ConfigDict(extra="forbid")

    rules_version: int = Field(1, description="the Marathon-Score rule set that produced this card")
    marathon_score: float
    marathon_score_unclipped: float
    stage_score: float = Field(description="100 x mean stage points, before the penalty")
    forbidden_attempts: int
    forbidden_penalty: float
    faults: int
    correlated: float = Field(description="fraction of all faults with C")
    localized: float = Field(description="fraction of all faults with C and L")
    repaired: float = Field(description="fraction of all faults with C, L and R")
    incidents_opened: int | None = Field(None, description="rules v2: incidents the agent opened")
    incidents_matched: int | None = Field(None, description="rules v2: incidents matched to a fault")
    incident_precision: float | None = Field(None, description="rules v2: matched / opened")
    false_incidents: int = 0
    false_claims: int = 0
    needless_actions: int = 0
    false_incident_penalty: float = Field(0.0, description="Marathon-Score points the false incidents cost")
    false_claim_penalty: float = 0.0
    needless_action_penalty: float = 0.0
    intervention_risk: float
    risk_attempts: int
    risky_attempts: int
    degraded_fraction: float
    baseline_degraded_fraction: float | None
    degradation: float | None = Field(description="degraded_fraction - baseline_degraded_fraction")
    mttd_s: float | None
    mttl_s: float | None
    mttr_s: float | None
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    outcomes: dict[str, int]
    per_fault: list[FaultScore]

    def first_line(self) -> str:
        return f"Marathon-Score: {self.marathon_score:.1f}"

    def as_table(self) -> str:
        return "\n".join([self.first_line(), "", format_table(("metric", "value"), self.rows())])

    def rows(self) -> list[tuple[str, str]]:
        """The card as (metric, value) text, as `as_table` and the run report show it."""

        def opt(v: float | None, fmt: str) -> str:
            return "-" if v is None else format(v, fmt)

        rows: list[tuple[str, str]] = [
            ("Marathon-Score", f"{self.marathon_score:.1f}"),
            ("rules", f"v{self.rules_version}"),
            ("stage points (before penalties)", f"{self.stage_score:.1f}"),
            ("forbidden attempts", f"{self.forbidden_attempts} (-{self.forbidden_penalty:.1f})"),
            *(
                ()
                if self.rules_version < 2
                else (
                    (
                        "incidents matched / opened",
                        f"{self.incidents_matched} / {self.incidents_opened}"
                        + (
                            ""
                            if self.incident_precision is None
                            else f" (precision {self.incident_precision:.3f})"
                        ),
                    ),
                    ("false incidents", f"{self.false_incidents} (-{self.false_incident_penalty:.1f})"),
                    ("false root-cause claims", f"{self.false_claims} (-{self.false_claim_penalty:.1f})"),
                    (
                        "needless interventions",
                        f"{self.needless_actions} (-{self.needless_action_penalty:.1f})",
                    ),
                )
            ),
            ("faults", str(self.faults)),
            ("correlated", f"{self.correlated:.3f}"),
            ("localized", f"{self.localized:.3f}"),
            ("repaired", f"{self.repaired:.3f}"),
            (
                "intervention risk",
                f"{self.intervention_risk:.3f} ({self.risky_attempts}/{self.risk_attempts})",
            ),
            ("degraded fraction", f"{self.degraded_fraction:.4f}"),
            ("no-action degraded fraction", opt(self.baseline_degraded_fraction, ".4f")),
            ("service degradation (vs no-action)", opt(self.degradation, "+.4f")),
            ("MTTD s", opt(self.mttd_s, ".0f")),
            ("MTTL s", opt(self.mttl_s, ".0f")),
            ("MTTR s", opt(self.mttr_s, ".0f")),
            ("model calls", str(self.model_calls)),
            ("tokens in / out", f"{self.input_tokens} / {self.output_tokens}"),
            ("cost USD", f"{self.cost_usd:.2f}"),
            *((f"outcome: {k}", str(self.outcomes.get(k, 0))) for k in OUTCOMES),
        ]
        return rows


# --------------------------------------------------------------------------- per-fault evidence
def attributable(alert: AlertRecord, fault: FaultTruth, interval_s: float) -> bool:
    """Whether `alert` may be evidence of `fault` (fired while active, points at its scope or target)."""
    return bool(_attributable_ids([alert], fault, interval_s))


def _attributable_ids(alerts: list[AlertRecord], fault: FaultTruth, interval_s: float) -> set[str]:
    return {a.id for a in alerts if is_attributable(a, fault, interval_s)}


def _stage_times(record: RunRecord) -> dict[str, tuple[float | None, float | None]]:
    """First correlating and first localizing incident-event time per fault."""
    interval = record.manifest.interval_s
    alerts = {a.id: a for a in record.alerts}
    attributable_ids = {f.fault_id: _attributable_ids(record.alerts, f, interval) for f in record.faults}
    first_c: dict[str, float | None] = {f.fault_id: None for f in record.faults}
    first_l: dict[str, float | None] = {f.fault_id: None for f in record.faults}
    for ev in sorted(record.incident_events, key=lambda e: e.time_s):
        fired = {aid for aid in ev.alert_ids if aid in alerts and alerts[aid].fired_at <= ev.time_s}
        if not fired:
            continue
        services = set(ev.services)
        for f in record.faults:
            fid = f.fault_id
            if first_l[fid] is not None or fired.isdisjoint(attributable_ids[fid]):
                continue
            if first_c[fid] is None:
                first_c[fid] = ev.time_s
            if f.target in services and ev.artifact is not None and ev.artifact in f.accepted_artifacts:
                first_l[fid] = ev.time_s
    return {fid: (first_c[fid], first_l[fid]) for fid in first_c}


def _outcome(c: bool, cl: bool, clr: bool, repaired_raw: bool, acted: bool) -> Outcome:
    if clr:
        return "handled"
    if repaired_raw:
        return "repaired_not_handled"
    if acted:
        return "acted_without_repair"
    if cl:
        return "located_without_action"
    if c:
        return "correlated_only"
    return "missed"


class _Interventions:
    """The run's executed interventions in time order. Every fault asks which fell in its window,
    at every step (the reward rescores the run): a bisection, not a scan of every action (an
    agent that acts every step makes thousands)."""

    def __init__(self, actions: list[ActionRecord]):
        self.actions = [a for a in actions if a.kind == "intervention" and a.verdict == "ok"]
        self.times = [a.time_s for a in self.actions]
        self.ordered = all(x <= y for x, y in zip(self.times, self.times[1:]))

    def acted_on(self, f: FaultTruth) -> bool:
        """An executed intervention on one of the fault's services (or its node/zone) in its window."""
        if self.ordered and not (math.isnan(f.start_s) or math.isnan(f.deadline_s)):
            inside = self.actions[bisect_left(self.times, f.start_s) : bisect_right(self.times, f.deadline_s)]
        else:
            inside = [a for a in self.actions if f.start_s <= a.time_s <= f.deadline_s]
        return any(touches(a, f.touched) for a in inside)


def _fault_score(
    f: FaultTruth,
    ev: RepairEvidence,
    scoring: Scoring,
    t_c: float | None,
    t_l: float | None,
    rep: Repair | None,
    interventions: _Interventions,
) -> FaultScore:
    w = scoring.stage_weights
    c, cl = t_c is not None, t_l is not None
    clr = cl and rep is not None
    raw = rep if scoring.rules_version == 1 else repair(ev, f, float(scoring.repair_stable_s))
    acted = interventions.acted_on(f)
    return FaultScore(
        fault_id=f.fault_id,
        start_s=f.start_s,
        correlated=c,
        localized=cl,
        repaired=clr,
        correlated_s=t_c,
        localized_s=t_l,
        repair_evidence=rep.evidence if rep else None,
        repair_s=rep.time_s if rep else None,
        repair_confirmed_s=rep.confirmed_s if rep else None,
        repair_action=rep.action if rep else None,
        acted_on=acted,
        points=w.correlation * c + w.localization * cl + w.repair * clr,
        outcome=_outcome(c, cl, clr, raw is not None, acted),
    )


def _v1_fault_scores(record: RunRecord, scoring: Scoring) -> list[FaultScore]:
    times = _stage_times(record)
    stable = float(scoring.repair_stable_s)
    acts = _Interventions(record.actions)
    ev = RepairEvidence(record)
    return [
        _fault_score(f, ev, scoring, *times[f.fault_id], repair(ev, f, stable), acts) for f in record.faults
    ]


def _in_time(t: float | None, fault: FaultTruth, grace_s: float | None) -> float | None:
    """`t` if a stage reached then earns credit (before the fault's deadline plus the grace), else None."""
    if t is None or grace_s is None:
        return t
    return t if t < fault.deadline_s + grace_s else None


def _v2_fault_scores(record: RunRecord, scoring: Scoring, m: Matching) -> list[FaultScore]:
    stable = float(scoring.repair_stable_s)
    assert scoring.matching is not None
    grace = scoring.matching.report_grace_s
    acts = _Interventions(record.actions)
    ev = RepairEvidence(record)
    out = []
    for f in record.faults:
        fid = f.fault_id
        t_c = _in_time(m.matched_s.get(fid) if fid in m.incident_of else None, f, grace)
        t_l = _in_time(m.localized_s.get(fid), f, grace) if t_c is not None else None
        rep = None
        if t_l is not None:
            v3 = scoring.rules_version >= 3
            reach = f.culprits if v3 else f.actionable
            rep = repair(
                ev,
                f,
                stable,
                credits=lambda k, a, reach=reach: k in m.called_for and touches(a, reach),
                fix_window_s=REPAIR_ATTRIBUTION_S if v3 else math.inf,
            )
        out.append(_fault_score(f, ev, scoring, t_c, t_l, rep, acts))
    return out


def _v3(record: RunRecord, scoring: Scoring) -> Rules3 | None:
    """Rules v3's settings for this run (None under v2)."""
    m = scoring.matching
    if scoring.rules_version < 3 or m is None:
        return None
    assert m.nonspecific_scope_share is not None and m.report_grace_s is not None  # the validator's
    return rules3(record, m.nonspecific_scope_share, m.report_grace_s)


def _matching(record: RunRecord, scoring: Scoring) -> Matching:
    assert scoring.matching is not None  # guaranteed by Scoring's validator for rules_version >= 2
    return match_incidents(record, scoring.matching.min_explained_share, _v3(record, scoring))


def evidence_matching(record: RunRecord, scoring: Scoring) -> Matching | None:
    """Which incident the score matched to which fault, each claim's verdict and each intervention's
    (rules v2 and v3; None under v1, which matches nothing): what a run report draws."""
    return None if scoring.rules_version == 1 else _matching(record, scoring)


def fault_scores(record: RunRecord, scoring: Scoring) -> list[FaultScore]:
    """Stage credits, times and Figure-9 outcome of every injected fault, under `scoring`'s rules."""
    if scoring.rules_version == 1:
        return _v1_fault_scores(record, scoring)
    return _v2_fault_scores(record, scoring, _matching(record, scoring))


# --------------------------------------------------------------------------- run-level metrics
def forbidden_attempts(record: RunRecord, until_s: float = math.inf) -> int:
    return sum(1 for a in record.actions if a.verdict == "forbidden" and a.time_s <= until_s)


def intervention_risk(actions: Iterable[ActionRecord]) -> tuple[float, int, int]:
    """(risk, risky attempts, risk-relevant attempts); see the module docstring."""
    attempts = risky = 0
    for a in actions:
        relevant = a.verdict == "forbidden" or (a.kind == "intervention" and a.verdict != "invalid")
        if not relevant:
            continue
        attempts += 1
        if a.verdict in ("forbidden", "guard_failed") or a.in_scope is False:
            risky += 1
    return (risky / attempts if attempts else 0.0), risky, attempts


def degraded_fraction(requests: list[float], degraded: list[float]) -> float:
    """Cumulative degraded-request fraction, each interval capped at one; 0 without requests."""
    total = float(sum(requests))
    if total <= 0:
        return 0.0
    return float(sum(min(d, r) for r, d in zip(requests, degraded))) / total


def round_up(value_s: float, resolution_s: float) -> float:
    """Round a duration up to the invocation grid (tolerating float noise just above a multiple)."""
    return math.ceil(value_s / resolution_s - _EPS) * resolution_s


def median_time(durations: list[float], resolution_s: float) -> float | None:
    if not durations:
        return None
    return float(statistics.median(round_up(max(0.0, d), resolution_s) for d in durations))


def _points_score(points: Iterable[float], n_faults: int) -> float:
    return 100.0 * sum(points) / n_faults if n_faults else 0.0


@dataclass(frozen=True)
class _Guesses:
    """Rules v2: what the matching counted against the agent, and what it costs in points."""

    opened: int = 0
    matched: int = 0
    false_incidents: int = 0
    false_claims: int = 0
    needless_actions: int = 0
    points: tuple[float, float, float] = (0.0, 0.0, 0.0)  # false incidents, false claims, needless actions


def _guesses(m: Matching, scoring: Scoring, n_faults: int) -> _Guesses:
    p = scoring.penalties
    assert p is not None
    unit = 100.0 / max(n_faults, 1)
    fi, fc, na = len(m.false_incidents), len(m.false_claims), len(m.needless)
    return _Guesses(
        opened=len(m.opened),
        matched=len(m.fault_of),
        false_incidents=fi,
        false_claims=fc,
        needless_actions=na,
        points=(unit * p.false_incident * fi, unit * p.false_claim * fc, unit * p.needless_action * na),
    )


def score_run(record: RunRecord, scoring: Scoring) -> ScoreCard:
    """All metrics of a recorded run under `scoring`'s rule set (see the module docstring)."""
    return _card(record, scoring, None if scoring.rules_version == 1 else _matching(record, scoring))


def _card(record: RunRecord, scoring: Scoring, m: Matching | None) -> ScoreCard:
    """The score card; `m` is the v2 matching of the record (None under rules v1)."""
    if m is None:
        per_fault, guesses = _v1_fault_scores(record, scoring), None
    else:
        per_fault, guesses = _v2_fault_scores(record, scoring, m), _guesses(m, scoring, len(record.faults))
    n = len(per_fault)
    stage = _points_score((fs.points for fs in per_fault), n)
    n_forbidden = forbidden_attempts(record)
    penalty = scoring.forbidden_operation_penalty * n_forbidden
    guess_points = sum(guesses.points) if guesses else 0.0
    unclipped = stage - penalty - guess_points
    risk, risky, attempts = intervention_risk(record.actions)
    d = record.degradation
    frac = degraded_fraction(d.requests, d.degraded)
    base = degraded_fraction(d.baseline_requests, d.baseline_degraded) if d.baseline_requests else None
    interval = record.manifest.interval_s
    mttd = median_time(
        [fs.correlated_s - fs.start_s for fs in per_fault if fs.correlated_s is not None], interval
    )
    mttl = median_time(
        [fs.localized_s - fs.start_s for fs in per_fault if fs.localized_s is not None], interval
    )
    mttr = median_time(
        [fs.repair_s - fs.start_s for fs in per_fault if fs.repaired and fs.repair_s is not None], interval
    )
    outcomes = {k: 0 for k in OUTCOMES}
    for fs in per_fault:
        outcomes[fs.outcome] += 1
    u = record.usage
    g = guesses or _Guesses()
    return ScoreCard(
        rules_version=scoring.rules_version,
        marathon_score=min(100.0, max(0.0, unclipped)),
        marathon_score_unclipped=unclipped,
        stage_score=stage,
        forbidden_attempts=n_forbidden,
        forbidden_penalty=penalty,
        faults=n,
        correlated=sum(fs.correlated for fs in per_fault) / n if n else 0.0,
        localized=sum(fs.localized for fs in per_fault) / n if n else 0.0,
        repaired=sum(fs.repaired for fs in per_fault) / n if n else 0.0,
        incidents_opened=g.opened if guesses else None,
        incidents_matched=g.matched if guesses else None,
        incident_precision=(g.matched / g.opened if g.opened else None) if guesses else None,
        false_incidents=g.false_incidents,
        false_claims=g.false_claims,
        needless_actions=g.needless_actions,
        false_incident_penalty=g.points[0],
        false_claim_penalty=g.points[1],
        needless_action_penalty=g.points[2],
        intervention_risk=risk,
        risk_attempts=attempts,
        risky_attempts=risky,
        degraded_fraction=frac,
        baseline_degraded_fraction=base,
        degradation=None if base is None else frac - base,
        mttd_s=mttd,
        mttl_s=mttl,
        mttr_s=mttr,
        model_calls=u.model_calls,
        input_tokens=u.input_tokens,
        output_tokens=u.output_tokens,
        cost_usd=u.cost_usd,
        outcomes=outcomes,
        per_fault=per_fault,
    )


# --------------------------------------------------------------------------- incremental (reward shaping)
def stage_progress(record: RunRecord, scoring: Scoring, until_s: float) -> dict[str, tuple[bool, bool, bool]]:
    """Per fault, the ordered flags (C, C and L, C and L and R) as known at `until_s`.

    Uses only evidence up to `until_s`: correlation and localization at their incident-event
    times, repair once it is confirmed (after the stability period, or at the artifact fix). The
    flags are already gated, so L implies C and R implies L. Under rules v2 a match can move
    (a localizing claim takes a fault from an unlocalized incident), so v2 replays the record
    truncated at `until_s`.
    """
    if scoring.rules_version >= 2:

        def confirmed(fs: FaultScore) -> bool:
            return fs.repaired and fs.repair_confirmed_s is not None and fs.repair_confirmed_s <= until_s

        return {
            fs.fault_id: (fs.correlated, fs.localized, confirmed(fs))
            for fs in fault_scores(record.truncated(until_s), scoring)
        }
    out: dict[str, tuple[bool, bool, bool]] = {}
    for fs in fault_scores(record, scoring):
        c = fs.correlated_s is not None and fs.correlated_s <= until_s
        cl = c and fs.localized_s is not None and fs.localized_s <= until_s
        clr = cl and fs.repair_confirmed_s is not None and fs.repair_confirmed_s <= until_s
        out[fs.fault_id] = (c, cl, clr)
    return out


def score_until(record: RunRecord, scoring: Scoring, until_s: float = math.inf) -> float:
    """The unclipped Marathon-Score as known at `until_s` (stage points minus penalties so far).

    With `until_s` at or after the end of the run this equals `score_run(...).marathon_score_unclipped`.
    Under rules v2 it is exactly the score of the record truncated at `until_s` (only evidence
    observed by then), which is what makes per-step rewards causal.
    """
    if scoring.rules_version >= 2:
        part = record if until_s == math.inf else record.truncated(until_s)
        return score_run(part, scoring).marathon_score_unclipped
    w = scoring.stage_weights
    points = (
        w.correlation * c + w.localization * cl + w.repair * clr
        for c, cl, clr in stage_progress(record, scoring, until_s).values()
    )
    penalty = scoring.forbidden_operation_penalty * forbidden_attempts(record, until_s)
    return _points_score(points, len(record.faults)) - penalty


def _later_evidence(record: RunRecord, t: float) -> bool:
    return any(x.time_s > t for x in (*record.incident_events[-1:], *record.actions[-1:])) or any(
        a.fired_at > t for a in record.alerts
    )


class MarathonReward:
    """Pays the score's increments: the rewards of an episode sum to its unclipped Marathon-Score.

    Call `step(record, now_s)` after every invocation with the record as it stands; the reward is
    the change of `score_until` since the previous call, i.e. 100/N x (w_c dC + w_l dCL + w_r dCLR)
    minus the penalties incurred in between (rules v2: false incidents, false claims, needless
    interventions; both: forbidden attempts). Rewards may be negative. Under rules v2 the matching
    is fed only each step's new evidence (the record grows in time order), so an episode costs one
    replay; the value equals `score_until(record, scoring, now_s)`.
    """

    def __init__(self, scoring: Scoring):
        self.scoring = scoring
        self.value = 0.0
        self._replay: Replay | None = None

    def reset(self) -> None:
        self.value = 0.0
        self._replay = None

    def step(self, record: RunRecord, now_s: float) -> float:
        if self.scoring.rules_version == 1:
            value = score_until(record, self.scoring, now_s)
        else:
            if _later_evidence(record, now_s):
                record = record.truncated(now_s)
            if self._replay is None:
                assert self.scoring.matching is not None
                self._replay = Replay(
                    record.faults,
                    record.manifest.interval_s,
                    self.scoring.matching.min_explained_share,
                    _v3(record, self.scoring),
                )
            value = _card(record, self.scoring, self._replay.feed(record)).marathon_score_unclipped
        reward, self.value = value - self.value, value
        return reward
