"""Worked examples for every scored formula under rules v1 (SRE-Marathon §3, App. F, Figure 9);
rules v2 are in test_marathon_v2.py.

Each test states its arithmetic in the docstring. Unless a test says otherwise: weights
0.3/0.3/0.4, penalty 1 point per forbidden attempt, repair_stable_s 120, interval 120 s, and a
fault "cart" with scope {cart, frontend}, artifact ``cart/config:REDIS_ADDR``, alias
``cartservice:REDIS_ADDR``, active 60-600 s (reverted at 600 s).
"""

from __future__ import annotations

import json
import math

import pytest
from pydantic import ValidationError

from sre_marathon_gym.catalog.settings import Scoring
from sre_marathon_gym.scoring import (
    ActionRecord,
    AlertRecord,
    Degradation,
    FaultTruth,
    IncidentEvent,
    MarathonReward,
    ProbeSeries,
    RunManifest,
    RunRecord,
    Usage,
    attributable,
    degraded_fraction,
    intervention_risk,
    median_time,
    round_up,
    score_run,
    score_until,
    stage_progress,
)

SCORING = Scoring(
    schema_version=1,
    stage_weights={"correlation": 0.3, "localization": 0.3, "repair": 0.4},
    forbidden_operation_penalty=1.0,
    slow_request_threshold_s=2.5,
    repair_stable_s=120,
)
ART = "cart/config:REDIS_ADDR"
ALIAS = "cartservice:REDIS_ADDR"
RUN_END = 1200.0


# ----------------------------------------------------------------------------- builders
def fault(
    fid: str = "f1",
    start: float = 60,
    end: float = 600,
    target: str = "cart",
    scope: tuple[str, ...] = ("cart", "frontend"),
    artifact: str = ART,
    aliases: tuple[str, ...] = (ALIAS,),
    reverted: float | None | str = "end",
) -> FaultTruth:
    return FaultTruth(
        fault_id=fid,
        category="config",
        mechanism="config_bad_value",
        target=target,
        artifact=artifact,
        aliases=list(aliases),
        scope=list(scope),
        start_s=start,
        planned_end_s=end,
        reverted_s=end if reverted == "end" else reverted,
        probe={"kind": "service_error_ratio", "service": target, "threshold": 0.05},
    )


def alert(aid: str, fired: float, *services: str) -> AlertRecord:
    return AlertRecord(
        id=aid,
        rule="HighErrorRate",
        severity="critical",
        labels={"service_name": services[0]},
        fired_at=fired,
        services=list(services),
    )


def opened(t: float, inc: str, *alert_ids: str) -> IncidentEvent:
    return IncidentEvent(time_s=t, op="open", incident_id=inc, alert_ids=list(alert_ids))


def rooted(t: float, inc: str, alert_ids: list[str], services: list[str], artifact: str) -> IncidentEvent:
    return IncidentEvent(
        time_s=t, op="root_cause", incident_id=inc, alert_ids=alert_ids, services=services, artifact=artifact
    )


def act(
    t: float,
    *targets: str,
    verdict: str = "ok",
    in_scope: bool | None = True,
    tool: str = "restart",
    kind: str = "intervention",
) -> ActionRecord:
    return ActionRecord(
        time_s=t,
        invocation=int(t // 120),
        tool=tool,
        kind=kind,
        args={"service": targets[0]} if targets else {},
        ok=verdict == "ok",
        verdict=verdict,
        incident_id="inc-1" if kind == "intervention" else None,
        targets=list(targets),
        in_scope=in_scope if kind == "intervention" else None,
    )


def probe(
    fid: str, failing: list[tuple[float, float]], end: float = RUN_END, step: float = 5.0
) -> ProbeSeries:
    """Sampled every `step` s from 0 to `end`; failing on [a, b) for each (a, b)."""
    times = [i * step for i in range(int(end / step) + 1)]
    return ProbeSeries(
        fault_id=fid, times=times, failing=[any(a <= t < b for a, b in failing) for t in times]
    )


def record(faults: list[FaultTruth], alerts=(), events=(), actions=(), probes=(), **kw) -> RunRecord:
    return RunRecord(
        manifest=RunManifest(
            app="online-boutique",
            seed=7,
            mode="eval",
            interval_s=120,
            injection_s=900,
            observation_s=300,
            package_version="0.1.0",
            catalog_version="1",
        ),
        faults=faults,
        alerts=list(alerts),
        incident_events=list(events),
        actions=list(actions),
        probes=list(probes),
        **kw,
    )


def handled_record() -> RunRecord:
    """f1 correlated at 240, localized at 360, restart of cart at 360, probe failing 60-405, stable after."""
    return record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(360, "inc-1", ["a1"], ["cart"], ART)],
        actions=[act(360, "cart")],
        probes=[probe("f1", [(60, 405)])],
    )


# ----------------------------------------------------------------------------- stage credits
def test_worked_example_three_faults() -> None:
    """3 faults; f1 correlated at 240 s and localized at 360 s, f2 correlated only, f3 missed;
    weights 0.3/0.3/0.4 -> (0.6 + 0.3 + 0)/3 x 100 = 30.0."""
    rec = record(
        [
            fault("f1"),
            fault("f2", target="payment", scope=("payment",), artifact="payment/src/charge.go"),
            fault("f3", target="ads", scope=("ads",), artifact="ads/config:X"),
        ],
        alerts=[alert("a1", 150, "cart"), alert("a2", 200, "payment"), alert("a3", 200, "ads")],
        events=[
            opened(240, "inc-1", "a1"),
            rooted(360, "inc-1", ["a1"], ["cart"], ART),
            opened(240, "inc-2", "a2"),
        ],
    )
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(30.0)
    assert card.first_line() == "Marathon-Score: 30.0"
    assert [(f.correlated, f.localized, f.repaired) for f in card.per_fault] == [
        (True, True, False),
        (True, False, False),
        (False, False, False),
    ]
    assert (card.correlated, card.localized, card.repaired) == pytest.approx((2 / 3, 1 / 3, 0.0))
    assert card.per_fault[0].correlated_s == 240 and card.per_fault[0].localized_s == 360


def test_all_faults_in_denominator_even_unalerted() -> None:
    """2 faults, f1 fully handled (1.0), f2 never raised any alert (0) -> (1.0 + 0)/2 x 100 = 50.0."""
    rec = handled_record()
    rec.faults.append(fault("f2", target="ads", scope=("ads",), artifact="ads/config:X"))
    assert score_run(rec, SCORING).marathon_score == pytest.approx(50.0)


def test_localization_without_correlation_counts_nothing() -> None:
    """The incident names cart and the exact artifact, but its only alert (on 'payment') is not
    attributable to f1 (out of scope): L needs C in the same incident -> 0 x 0.3 + 0 = 0.0.
    A second incident with an attributable alert but no root cause gives C only -> 30.0."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "payment"), alert("a2", 150, "frontend")],
        events=[rooted(240, "inc-1", ["a1"], ["cart"], ART)],
    )
    card = score_run(rec, SCORING)
    assert card.marathon_score == 0.0 and card.per_fault[0].outcome == "missed"
    rec.incident_events.append(opened(300, "inc-2", "a2"))
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(30.0)
    assert (card.per_fault[0].correlated, card.per_fault[0].localized) == (True, False)


def test_localization_must_be_in_an_incident_with_an_attributable_alert() -> None:
    """inc-1 holds f1's alert (C at 240); inc-2 names the right root cause but holds an unrelated
    alert: L stays false -> 0.3 x 100 = 30.0. Moving a1 into inc-2 at 480 localizes -> 60.0."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "payment")],
        events=[opened(240, "inc-1", "a1"), rooted(300, "inc-2", ["a2"], ["cart"], ART)],
    )
    assert score_run(rec, SCORING).marathon_score == pytest.approx(30.0)
    rec.incident_events.append(
        IncidentEvent(
            time_s=480,
            op="update",
            incident_id="inc-2",
            alert_ids=["a1", "a2"],
            services=["cart"],
            artifact=ART,
        )
    )
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(60.0) and card.per_fault[0].localized_s == 480


def test_localization_needs_the_culprit_service() -> None:
    """Right artifact, but the incident blames 'frontend' (in scope, not the culprit) -> C only = 30.0."""
    rec = record(
        [fault()], alerts=[alert("a1", 150, "cart")], events=[rooted(240, "inc-1", ["a1"], ["frontend"], ART)]
    )
    assert score_run(rec, SCORING).marathon_score == pytest.approx(30.0)


@pytest.mark.parametrize(
    ("named", "expected"),
    [
        (ART, 60.0),  # the artifact itself: C + L = 0.3 + 0.3
        (ALIAS, 60.0),  # an alias-table entry
        ("cart/config:redis_addr", 30.0),  # case differs: near miss, C only
        (" cart/config:REDIS_ADDR", 30.0),  # leading space
        ("cart/config:REDIS_ADDR@r2", 30.0),  # revision suffix
        ("cart/config", 30.0),  # prefix
    ],
)
def test_alias_exact_match(named: str, expected: float) -> None:
    """Localization is an exact alias-table match: only ART or ALIAS give 0.3 + 0.3 = 60.0;
    any near miss leaves C only = 30.0."""
    rec = record(
        [fault()], alerts=[alert("a1", 150, "cart")], events=[rooted(240, "inc-1", ["a1"], ["cart"], named)]
    )
    assert score_run(rec, SCORING).marathon_score == pytest.approx(expected)


def test_attribution_window_and_scope() -> None:
    """f1 active 60-600, interval 120: an alert at 59 (before start) or at 721 (> 600 + 120) is not
    attributable; at 720 (grace end) it is; a cart alert counts, a payment alert does not.
    A node fault (target node-a, scope {cart}) accepts an alert whose services name the node."""
    f = fault()
    assert not attributable(alert("x", 59, "cart"), f, 120)
    assert attributable(alert("x", 60, "cart"), f, 120)
    assert attributable(alert("x", 720, "frontend"), f, 120)
    assert not attributable(alert("x", 721, "cart"), f, 120)
    assert not attributable(alert("x", 300, "payment"), f, 120)
    node = fault("n1", target="node-a", scope=("cart",), artifact="node/node-a")
    assert attributable(alert("x", 300, "node-a"), node, 120)
    # not reverted (repaired first): the window ends at planned_end_s + interval
    assert attributable(alert("x", 700, "cart"), fault(reverted=None), 120)


def test_one_alert_correlates_all_overlapping_faults() -> None:
    """f1 (scope cart, frontend) and f2 (scope frontend) overlap; one frontend alert in an incident
    correlates both -> (0.3 + 0.3)/2 x 100 = 30.0."""
    rec = record(
        [fault("f1"), fault("f2", target="frontend", scope=("frontend",), artifact="frontend/x")],
        alerts=[alert("a1", 200, "frontend")],
        events=[opened(240, "inc-1", "a1")],
    )
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(30.0) and card.correlated == 1.0


# ----------------------------------------------------------------------------- repair
def test_repair_handled_end_to_end() -> None:
    """C at 240, L at 360, restart of cart at 360; probe failing 60-405, healthy from 405 through
    405 + 120 (confirmed at 525), before the revert at 600 -> 0.3 + 0.3 + 0.4 = 1.0 -> 100.0.
    MTTD = 240 - 60 = 180 -> 240; MTTL = 300 -> 360; MTTR = 405 - 60 = 345 -> 360."""
    card = score_run(handled_record(), SCORING)
    fs = card.per_fault[0]
    assert card.marathon_score == pytest.approx(100.0)
    assert (fs.repair_evidence, fs.repair_s, fs.repair_confirmed_s) == ("probe", 405, 525)
    assert fs.repair_action == 0
    assert fs.outcome == "handled"
    assert (card.mttd_s, card.mttl_s, card.mttr_s) == (240, 360, 360)


def test_repair_after_revert_does_not_count() -> None:
    """Restart of cart at 480, but the probe keeps failing until the revert at 600 (healthy from
    600): recovery does not start before the revert -> C + L only = 60.0; Figure 9: acted on
    without repair."""
    rec = handled_record()
    rec.actions = [act(480, "cart")]
    rec.probes = [probe("f1", [(60, 600)])]
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(60.0)
    assert card.per_fault[0].repair_evidence is None
    assert card.per_fault[0].outcome == "acted_without_repair"


def test_repair_must_stay_healthy() -> None:
    """Probe recovers at 405 but fails again 450-700 (relapse within the 120 s stability period;
    the next recovery at 700 is after the revert at 600) -> no R -> 60.0. A run whose probe series
    stops at 500 cannot confirm the recovery at 405 (needs a sample at 525) -> 60.0 too."""
    rec = handled_record()
    rec.probes = [probe("f1", [(60, 405), (450, 700)])]
    assert score_run(rec, SCORING).marathon_score == pytest.approx(60.0)
    rec.probes = [probe("f1", [(60, 405)], end=500)]
    assert score_run(rec, SCORING).marathon_score == pytest.approx(60.0)
    rec.probes = [probe("f1", [(60, 405)], end=525)]
    assert score_run(rec, SCORING).marathon_score == pytest.approx(100.0)


@pytest.mark.parametrize(
    ("action", "repaired"),
    [
        (act(360, "cart"), True),  # in scope, 45 s before recovery
        (act(360, "frontend"), True),  # another service of the fault's scope
        (act(360, "payment"), False),  # outside the fault's scope
        (act(360, "cart", verdict="error"), False),  # the call failed: nothing changed
        (act(360, "cart", verdict="guard_failed", in_scope=None), False),  # refused by the policy
        (act(405, "cart"), False),  # not before the recovery (sample at 405 predates the action)
        (act(30, "cart"), False),  # before the fault started
    ],
)
def test_repair_attribution_rule(action: ActionRecord, repaired: bool) -> None:
    """Recovery at 405 is credited to an ok intervention targeting f1's scope or target made at
    t_a with start <= t_a < 405 and 405 - t_a <= 480 s; then 100.0, else 60.0."""
    rec = handled_record()
    rec.actions = [action]
    assert score_run(rec, SCORING).marathon_score == pytest.approx(100.0 if repaired else 60.0)


def test_repair_attribution_window() -> None:
    """Probe failing 60-700 on a fault planned until 900: a restart at 120 precedes the recovery
    at 700 by 580 s > 480 s -> not credited (60.0); one at 240 (460 s before) is -> 100.0."""
    rec = handled_record()
    rec.faults = [fault(end=900)]
    rec.probes = [probe("f1", [(60, 700)])]
    rec.actions = [act(120, "cart")]
    assert score_run(rec, SCORING).marathon_score == pytest.approx(60.0)
    rec.actions = [act(120, "cart"), act(240, "cart")]
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(100.0) and card.per_fault[0].repair_action == 1


def test_repair_via_artifact_fixed_when_probe_never_failed() -> None:
    """The probe never fails; the agent's fix verifiably restores the artifact at 300 (< revert
    600) -> R via the artifact -> 100.0, MTTR = 300 - 60 = 240. A fix at 650 (after the revert) does
    not count -> 60.0. If the probe failed 100-200, before the fix, only a probe recovery could prove
    the repair (none is attributable: the action comes after) -> 60.0."""
    rec = handled_record()
    rec.probes = [probe("f1", [])]
    rec.actions = [act(300, "cart", tool="set_config")]
    rec.artifact_fixed = {"f1": 300.0}
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(100.0)
    fs = card.per_fault[0]
    assert (fs.repair_evidence, fs.repair_action, card.mttr_s) == ("artifact", 0, 240)
    rec.artifact_fixed = {"f1": 650.0}
    assert score_run(rec, SCORING).marathon_score == pytest.approx(60.0)
    rec.artifact_fixed = {"f1": 300.0}
    rec.probes = [probe("f1", [(100, 200)])]
    assert score_run(rec, SCORING).marathon_score == pytest.approx(60.0)
    rec.probes = []  # no probe recorded at all: treated as never failing
    assert score_run(rec, SCORING).marathon_score == pytest.approx(100.0)


def test_repair_without_correlation_and_localization_is_not_credited() -> None:
    """Recovery proven, but no incident holds f1's alert -> 0 x (0.3 + 0.3 + 0.4) = 0.0;
    Figure 9: repaired but not handled."""
    rec = handled_record()
    rec.incident_events = [opened(240, "inc-1")]
    card = score_run(rec, SCORING)
    assert card.marathon_score == 0.0 and card.repaired == 0.0
    assert card.per_fault[0].outcome == "repaired_not_handled"
    assert card.mttr_s is None


def test_repair_before_localization_counts_once_localized() -> None:
    """Recovery at 405 (restart at 360, confirmed 525); C at 240 but L only at 840, after the
    revert: stages are gated, not time-ordered -> 100.0; MTTR uses the recovery time:
    405 - 60 = 345 -> 360; MTTL = 840 - 60 = 780 -> 840."""
    rec = handled_record()
    rec.incident_events = [opened(240, "inc-1", "a1"), rooted(840, "inc-1", ["a1"], ["cart"], ART)]
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(100.0)
    assert (card.mttl_s, card.mttr_s) == (840, 360)


# ----------------------------------------------------------------------------- penalty, risk, degradation
def test_forbidden_penalty_and_clipping() -> None:
    """Handled fault (100) with 3 forbidden attempts -> 100 - 3 x 1 = 97.0. A C-only fault (30)
    with 35 forbidden attempts -> 30 - 35 = -5 -> clipped to 0.0 (unclipped -5.0 is kept)."""
    rec = handled_record()
    rec.actions += [act(400 + i, kind="read", tool="get_k8s_state", verdict="forbidden") for i in range(3)]
    card = score_run(rec, SCORING)
    assert card.marathon_score == pytest.approx(97.0) and card.forbidden_attempts == 3
    assert card.first_line() == "Marathon-Score: 97.0"
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1")],
        actions=[act(300, "cart", verdict="forbidden", in_scope=None) for _ in range(35)],
    )
    card = score_run(rec, SCORING)
    assert card.marathon_score == 0.0 and card.marathon_score_unclipped == pytest.approx(-5.0)
    assert card.first_line() == "Marathon-Score: 0.0"


def test_intervention_risk() -> None:
    """Relevant attempts: 4 ok/error interventions (1 out of scope), 1 guard_failed intervention,
    1 forbidden read (secrets) = 6; the invalid (malformed) call and the 2 reads do not count.
    Risky: out-of-scope 1 + guard_failed 1 + forbidden 1 = 3 -> 3/6 = 0.5."""
    actions = [
        act(120, "cart"),
        act(130, "cart"),
        act(140, "cart", verdict="error"),
        act(150, "payment", in_scope=False),
        act(160, "cart", verdict="guard_failed", in_scope=False),
        act(170, kind="read", tool="get_k8s_state", verdict="forbidden"),
        act(180, "cart", verdict="invalid", in_scope=None),
        act(190, kind="read", tool="get_alerts"),
        act(200, kind="incident", tool="open_incident"),
    ]
    assert intervention_risk(actions) == (0.5, 3, 6)
    card = score_run(record([fault()], actions=actions), SCORING)
    assert (card.intervention_risk, card.risky_attempts, card.risk_attempts) == (0.5, 3, 6)
    assert intervention_risk([act(190, kind="read", tool="get_alerts")]) == (0.0, 0, 0)


def test_degradation_vs_no_action_run() -> None:
    """This run: requests 100, 200, 100; degraded 10, 250 (capped at 200), 0 -> 210/400 = 0.525.
    No-action run: degraded 50, 50, 0 of the same requests -> 100/400 = 0.25.
    Degradation = 0.525 - 0.25 = 0.275. Without a baseline the difference is None."""
    deg = Degradation(
        times=[120, 240, 360],
        requests=[100, 200, 100],
        degraded=[10, 250, 0],
        baseline_requests=[100, 200, 100],
        baseline_degraded=[50, 50, 0],
    )
    card = score_run(record([fault()], degradation=deg), SCORING)
    assert card.degraded_fraction == pytest.approx(0.525)
    assert card.baseline_degraded_fraction == pytest.approx(0.25)
    assert card.degradation == pytest.approx(0.275)
    deg = Degradation(times=[120], requests=[100], degraded=[5])
    card = score_run(record([fault()], degradation=deg), SCORING)
    assert (card.degraded_fraction, card.baseline_degraded_fraction, card.degradation) == (0.05, None, None)
    assert degraded_fraction([], []) == 0.0 and degraded_fraction([0.0], [3.0]) == 0.0


def test_mttx_medians_and_interval_rounding() -> None:
    """Rounding up to the 120 s grid: 100 -> 120, 240 -> 240 (exact), 250 -> 360, 400 -> 480,
    1e-10 above 240 -> 240 (float noise). MTTD over 3 faults {120, 360, 480} -> 360; an even count
    {240, 600} gives the midpoint 420; no fault -> None."""
    assert [round_up(x, 120) for x in (100, 240, 250, 400, 240 + 1e-10, 0)] == [120, 240, 360, 480, 240, 0]
    assert median_time([100, 250, 400], 120) == 360
    assert median_time([130, 500], 120) == 420
    assert median_time([], 120) is None
    faults = [fault("f1", start=0, end=900), fault("f2", start=0, end=900), fault("f3", start=0, end=900)]
    rec = record(faults, alerts=[alert("a1", 50, "cart")], events=[opened(100, "i1", "a1")])
    # one alert, one incident: all three (same scope) correlated at 100 -> 120
    card = score_run(rec, SCORING)
    assert card.mttd_s == 120 and card.mttl_s is None and card.mttr_s is None
    # per-fault times 100, 250, 400 need distinct scopes
    faults = [
        fault(f"f{i}", start=0, end=900, target=s, scope=(s,), artifact=f"{s}/x")
        for i, s in enumerate(("cart", "ads", "payment"), 1)
    ]
    rec = record(
        faults,
        alerts=[alert("a1", 50, "cart"), alert("a2", 50, "ads"), alert("a3", 50, "payment")],
        events=[
            opened(100, "i1", "a1"),
            opened(250, "i2", "a2"),
            opened(400, "i3", "a3"),
            rooted(130, "i1", ["a1"], ["cart"], "cart/x"),
            rooted(500, "i2", ["a2"], ["ads"], "ads/x"),
        ],
    )
    card = score_run(rec, SCORING)
    assert (card.mttd_s, card.mttl_s) == (360, 420)


# ----------------------------------------------------------------------------- Figure 9
def test_figure9_outcomes_first_match() -> None:
    """Six faults, one per outcome (first match wins):
    f1 C, L, R -> handled; f2 recovered after a restart but never localized -> repaired_not_handled;
    f3 C and L plus a restart while active, probe never recovers -> acted_without_repair;
    f4 C and L, no action -> located_without_action; f5 C -> correlated_only; f6 nothing -> missed.
    Score: (1.0 + 0.3 + 0.6 + 0.6 + 0.3 + 0)/6 x 100 = 46.666... -> "46.7"."""
    svc = {f"f{i}": s for i, s in enumerate(("cart", "ads", "payment", "email", "shipping", "quote"), 1)}
    faults = [fault(fid, target=s, scope=(s,), artifact=f"{s}/cfg", aliases=()) for fid, s in svc.items()]
    alerts = [alert(f"a{i}", 150, s) for i, s in enumerate(svc.values(), 1)]
    events = [
        opened(240, "inc-1", "a1", "a2", "a3", "a4", "a5"),
        rooted(360, "inc-1", ["a1", "a2", "a3", "a4", "a5"], ["cart", "payment", "email"], "cart/cfg"),
        rooted(361, "inc-2", ["a3"], ["payment"], "payment/cfg"),
        rooted(362, "inc-3", ["a4"], ["email"], "email/cfg"),
    ]
    actions = [act(360, "cart"), act(360, "ads"), act(370, "payment")]
    probes = [
        probe("f1", [(60, 405)]),
        probe("f2", [(60, 410)]),
        probe("f3", [(60, 600)]),
        probe("f4", [(60, 600)]),
        probe("f5", [(60, 600)]),
        probe("f6", [(60, 600)]),
    ]
    card = score_run(record(faults, alerts, events, actions, probes), SCORING)
    assert [f.outcome for f in card.per_fault] == [
        "handled",
        "repaired_not_handled",
        "acted_without_repair",
        "located_without_action",
        "correlated_only",
        "missed",
    ]
    assert card.outcomes == {k: 1 for k in card.outcomes} and len(card.outcomes) == 6
    assert card.marathon_score == pytest.approx(280 / 6)
    assert card.first_line() == "Marathon-Score: 46.7"
    table = card.as_table()
    assert table.splitlines()[0] == "Marathon-Score: 46.7"
    assert "outcome: repaired_not_handled" in table and "intervention risk" in table


# ----------------------------------------------------------------------------- record model
def test_run_record_json_round_trip() -> None:
    """A record survives JSON exactly and rescoring it gives the same card."""
    rec = handled_record()
    rec.artifact_fixed = {"f1": None}
    rec.usage = Usage(model_calls=12, input_tokens=34000, output_tokens=5600, cost_usd=0.42)
    rec.degradation = Degradation(
        times=[120], requests=[10.5], degraded=[1.5], baseline_requests=[10.5], baseline_degraded=[0.5]
    )
    text = rec.model_dump_json()
    back = RunRecord.model_validate_json(text)
    assert back == rec and back.model_dump_json() == text
    json.loads(text)  # plain JSON
    card = score_run(back, SCORING)
    assert card == score_run(rec, SCORING)
    assert (card.model_calls, card.input_tokens, card.output_tokens, card.cost_usd) == (12, 34000, 5600, 0.42)
    assert json.loads(card.model_dump_json())["marathon_score"] == pytest.approx(100.0)


def test_run_record_rejects_bad_input() -> None:
    """Unknown fields, misaligned probes, unknown fault ids and bad verdicts are errors."""
    data = json.loads(handled_record().model_dump_json())
    with pytest.raises(ValidationError, match="extra"):
        RunRecord.model_validate({**data, "repair_claims": {}})
    with pytest.raises(ValidationError, match="2 times but 1 values"):
        ProbeSeries(fault_id="f1", times=[0, 5], failing=[True])
    with pytest.raises(ValidationError, match="unknown fault_id"):
        RunRecord.model_validate({**data, "artifact_fixed": {"nope": 1.0}})
    with pytest.raises(ValidationError):
        act(1, "cart", verdict="maybe")
    with pytest.raises(ValidationError, match="planned_end_s"):
        fault(start=600, end=60)


def test_shipped_scoring_weights(catalog) -> None:
    """The catalog's scoring.yaml (0.3/0.3/0.4, 1 point per forbidden attempt) scores the
    three-fault example as (0.6 + 0.3 + 0)/3 x 100 = 30.0."""
    s = catalog.scoring
    rec = record(
        [
            fault("f1"),
            fault("f2", target="ads", scope=("ads",), artifact="ads/x"),
            fault("f3", target="q", scope=("q",)),
        ],
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "ads")],
        events=[rooted(360, "inc-1", ["a1"], ["cart"], ART), opened(240, "inc-2", "a2")],
    )
    w = s.stage_weights
    assert (w.correlation, w.localization, w.repair) == (0.3, 0.3, 0.4)
    assert score_run(rec, s).marathon_score == pytest.approx(30.0)


# ----------------------------------------------------------------------------- incremental
def rich_record() -> RunRecord:
    """f1 handled (C 240, L 360, repair confirmed 525); f2 C at 480 and L at 960 (after its repair
    at 705, confirmed 825); f3 repaired via artifact at 300 but only correlated at 1080; f4 missed;
    two forbidden attempts at 130 and 600."""
    faults = [
        fault("f1"),
        fault("f2", start=300, end=900, target="ads", scope=("ads",), artifact="ads/x"),
        fault("f3", start=200, end=800, target="email", scope=("email",), artifact="email/y"),
        fault("f4", start=400, end=1000, target="quote", scope=("quote",), artifact="quote/z"),
    ]
    alerts = [
        alert("a1", 150, "cart"),
        alert("a2", 400, "ads"),
        alert("a3", 260, "email"),
        alert("a4", 500, "quote"),
    ]
    events = [
        opened(240, "inc-1", "a1"),
        rooted(360, "inc-1", ["a1"], ["cart"], ART),
        opened(480, "inc-2", "a2"),
        rooted(960, "inc-2", ["a2"], ["ads"], "ads/x"),
        opened(1080, "inc-3", "a3"),
    ]
    actions = [
        act(130, kind="read", tool="get_k8s_state", verdict="forbidden"),
        act(360, "cart"),
        act(300, "email", tool="set_config"),
        act(600, "ads"),
        act(600, kind="intervention", tool="cluster_op", verdict="forbidden", in_scope=None),
    ]
    probes = [
        probe("f1", [(60, 405)]),
        probe("f2", [(300, 705)]),
        probe("f3", []),
        probe("f4", [(400, 1000)]),
    ]
    return record(faults, alerts, events, actions, probes, artifact_fixed={"f3": 300.0})


def test_rich_record_final_score() -> None:
    """f1 1.0 + f2 1.0 (gated, repaired before localized) + f3 0.3 (R never counts without L) +
    f4 0 -> 2.3/4 x 100 = 57.5; minus 2 forbidden -> 55.5."""
    card = score_run(rich_record(), SCORING)
    assert [f.points for f in card.per_fault] == pytest.approx([1.0, 1.0, 0.3, 0.0])
    assert card.marathon_score == pytest.approx(55.5)
    assert [f.outcome for f in card.per_fault] == ["handled", "handled", "repaired_not_handled", "missed"]


def test_stage_progress_timeline() -> None:
    """f2 at 600: C (480) only; at 840: R confirmed at 825 but L not yet -> (T, F, F); at 960: all.
    f1 at 524: (T, T, F) -- the recovery at 405 is confirmed only at 525; at 525: (T, T, T)."""
    rec = rich_record()
    assert stage_progress(rec, SCORING, 600)["f2"] == (True, False, False)
    assert stage_progress(rec, SCORING, 840)["f2"] == (True, False, False)
    assert stage_progress(rec, SCORING, 960)["f2"] == (True, True, True)
    assert stage_progress(rec, SCORING, 524)["f1"] == (True, True, False)
    assert stage_progress(rec, SCORING, 525)["f1"] == (True, True, True)
    assert stage_progress(rec, SCORING, 0) == {f"f{i}": (False, False, False) for i in range(1, 5)}


def test_incremental_rewards_sum_to_the_final_score() -> None:
    """Rewards paid at every invocation (120, 240, ..., 1200) telescope to the unclipped final
    score 55.5: e.g. at 240 f1's C pays 100/4 x 0.3 = 7.5 and the forbidden read at 130 costs 1 ->
    6.5; at 360 f1's L pays 7.5."""
    rec = rich_record()
    reward = MarathonReward(SCORING)
    rewards = [reward.step(rec, t) for t in range(120, int(RUN_END) + 1, 120)]
    assert rewards[0] == pytest.approx(0.0)
    assert rewards[1] == pytest.approx(6.5)
    assert rewards[2] == pytest.approx(7.5)
    assert math.fsum(rewards) == pytest.approx(score_run(rec, SCORING).marathon_score_unclipped)
    assert math.fsum(rewards) == pytest.approx(55.5)
    assert score_until(rec, SCORING) == pytest.approx(55.5)


def test_incremental_scoring_is_causal() -> None:
    """At every time u, the flags from the full record equal those of scoring the record
    truncated to u (only evidence observed by then), and score_until(u) equals the truncated
    record's unclipped score; so a recorder scoring a run in progress pays the same rewards."""
    rec = rich_record()
    for u in [*range(0, int(RUN_END) + 1, 15), 404, 405, 524, 525, 526, 824, 825]:
        part = rec.truncated(u)
        card = score_run(part, SCORING)
        flags = {f.fault_id: (f.correlated, f.localized, f.repaired) for f in card.per_fault}
        assert stage_progress(rec, SCORING, u) == flags, u
        assert score_until(rec, SCORING, u) == pytest.approx(card.marathon_score_unclipped), u


def test_incremental_rewards_on_a_growing_record() -> None:
    """Paying rewards while the record grows (each step sees only the past) also sums to the
    final unclipped score, here with a negative total: 0 faults scored, 3 forbidden -> -3.0."""
    full = rich_record()
    full.incident_events = []
    full.actions.append(act(700, kind="read", tool="get_k8s_state", verdict="forbidden"))
    reward = MarathonReward(SCORING)
    total = math.fsum(reward.step(full.truncated(t), t) for t in range(120, int(RUN_END) + 1, 120))
    assert total == pytest.approx(score_run(full, SCORING).marathon_score_unclipped) == pytest.approx(-3.0)
    assert score_run(full, SCORING).marathon_score == 0.0


def test_scoring_imports_no_simulator_or_gymnasium() -> None:
    """Scoring is a pure layer: none of its modules imports the simulator, gymnasium or ray
    (checked on the source, since the package root itself registers the Gymnasium envs)."""
    import ast
    from pathlib import Path

    import sre_marathon_gym.scoring as pkg

    for path in Path(pkg.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for name in names:
                assert not name.startswith(
                    ("gymnasium", "ray", "..sim", "sre_marathon_gym.sim", "..envs", "..tools", "..backends")
                ), f"{path.name} imports {name}"
