"""Worked examples for Marathon-Score rules v2: one test per rule, each exploit earning nothing, and a
correct minimal report earning full credit (the v1 examples are in test_marathon.py).

Unless a test says otherwise: weights 0.3/0.3/0.4, penalties false incident 0.3, false claim 0.7,
needless intervention 0.1 (units of one fault's full credit, x 100 / faults), eligibility at half of
an incident's fired alerts, repair_stable_s 120, interval 120 s, and the builders of test_marathon.py
(fault "f1" on cart with scope {cart, frontend}, artifact ``cart/config:REDIS_ADDR``, active 60-600 s).
"""

from __future__ import annotations

import itertools
import math

import pytest
from pydantic import ValidationError
from test_marathon import ALIAS, ART, RUN_END, act, alert, fault, opened, probe, record, rooted

from sre_marathon_gym.catalog.settings import Scoring
from sre_marathon_gym.scoring import IncidentEvent, MarathonReward, score_run, score_until
from sre_marathon_gym.scoring.matching import match_incidents

V2 = Scoring(
    schema_version=1,
    rules_version=2,
    stage_weights={"correlation": 0.3, "localization": 0.3, "repair": 0.4},
    forbidden_operation_penalty=1.0,
    slow_request_threshold_s=2.5,
    repair_stable_s=120,
    matching={"min_explained_share": 0.5},
    penalties={"false_incident": 0.3, "false_claim": 0.7, "needless_action": 0.1},
)


def updated(
    t: float, inc: str, alert_ids: list[str], services=(), artifact=None, op="update"
) -> IncidentEvent:
    return IncidentEvent(
        time_s=t, op=op, incident_id=inc, alert_ids=alert_ids, services=list(services), artifact=artifact
    )


def three_faults():
    return [
        fault("f1"),
        fault("f2", target="payment", scope=("payment",), artifact="payment/src/charge.go"),
        fault("f3", target="ads", scope=("ads",), artifact="ads/config:X"),
    ]


def cited(t: float, *targets: str, inc: str = "inc-1", tool: str = "restart"):
    a = act(t, *targets, tool=tool)
    return a.model_copy(update={"incident_id": inc})


# ----------------------------------------------------------------------------- full credit
def test_correct_minimal_report_earns_full_credit() -> None:
    """One incident holding f1's alert, the right culprit and artifact, one restart of cart, the
    probe recovers at 405 and stays healthy: C + L + R = 1.0 -> 100, nothing subtracted."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(360, "inc-1", ["a1"], ["cart"], ART)],
        actions=[cited(360, "cart")],
        probes=[probe("f1", [(60, 405)])],
    )
    card = score_run(rec, V2)
    assert card.rules_version == 2
    assert card.marathon_score == pytest.approx(100.0)
    assert (card.false_incidents, card.false_claims, card.needless_actions) == (0, 0, 0)
    assert card.incident_precision == 1.0 and card.outcomes["handled"] == 1
    assert "incidents matched / opened" in card.as_table() and "rules" in card.as_table()


# ----------------------------------------------------------------------------- report deadline
DEADLINE = V2.model_copy(update={"matching": V2.matching.model_copy(update={"report_grace_s": 0.0})})


@pytest.mark.parametrize(
    ("open_s", "root_s", "credit"),
    [
        (240, 360, (True, True)),
        (240, 600, (True, False)),
        (600, 720, (False, False)),
        (1080, 1080, (False, False)),
    ],
)
def test_correlation_and_localization_count_only_before_the_deadline(open_s, root_s, credit) -> None:
    """f1 is reverted at 600 s. An incident (or claim) at or after the revert earns nothing and costs
    nothing: a post-mortem read off the orchestrator's revert is not a diagnosis. Before it, full
    credit; without the rule (report_grace_s None, files sealed before it) late reports counted."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(open_s, "inc-1", "a1"), rooted(root_s, "inc-1", ["a1"], ["cart"], ART)],
    )
    card = score_run(rec, DEADLINE)
    assert (card.correlated == 1.0, card.localized == 1.0) == credit
    assert (card.false_incidents, card.false_claims) == (0, 0)  # late, not wrong
    assert score_run(rec, V2).localized == 1.0  # no deadline in V2's matching
    assert score_until(rec, DEADLINE) == pytest.approx(card.marathon_score_unclipped)


def test_the_deadline_uses_the_planned_end_when_the_fault_was_not_reverted() -> None:
    late = record(
        [fault(reverted=None)],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(599, "inc-1", "a1"), rooted(600, "inc-1", ["a1"], ["cart"], ART)],
    )
    card = score_run(late, DEADLINE)
    assert card.correlated == 1.0 and card.localized == 0.0


def test_a_claim_naming_services_the_fault_leaves_untouched_does_not_localize() -> None:
    """ "The exact culprit service or services": naming every service fits any culprit, so a claim
    may name the target and services of its scope, nothing else."""

    def card(services):
        rec = record(
            [fault()],
            alerts=[alert("a1", 150, "cart")],
            events=[opened(240, "inc-1", "a1"), rooted(360, "inc-1", ["a1"], services, ART)],
        )
        return score_run(rec, V2)

    assert card(["cart"]).localized == 1.0
    assert card(["cart", "frontend"]).localized == 1.0  # frontend is in f1's scope
    wide = card(["cart", "frontend", "payment", "ads"])
    assert wide.localized == 0.0 and wide.false_claims == 1


# ----------------------------------------------------------------------------- correlation
def test_one_incident_holding_every_faults_alerts_correlates_nothing() -> None:
    """v1 exploit: one incident with the alerts of f1, f2 and f3 correlated all three (30 points).
    Each fault explains 1/3 < 1/2 of it: no match, one false incident -> -0.3 x 100/3 = -10."""
    rec = record(
        three_faults(),
        alerts=[alert("a1", 150, "cart"), alert("a2", 200, "payment"), alert("a3", 200, "ads")],
        events=[opened(240, "inc-1", "a1", "a2", "a3")],
    )
    card = score_run(rec, V2)
    assert card.correlated == 0.0 and card.false_incidents == 1
    assert card.marathon_score_unclipped == pytest.approx(-10.0) and card.marathon_score == 0.0


def test_an_incident_is_evidence_for_one_fault_only() -> None:
    """a1 (f1) and a2 (f2) in one incident: each explains half, so it is eligible for both but
    matched to one (the earlier start, f1): 0.3 x 100/2 = 15, not 30."""
    faults = [fault("f1"), fault("f2", start=70, target="payment", scope=("payment",), artifact="p/x")]
    rec = record(
        faults,
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "payment")],
        events=[opened(240, "inc-1", "a1", "a2")],
    )
    card = score_run(rec, V2)
    assert [f.correlated for f in card.per_fault] == [True, False]
    assert card.marathon_score == pytest.approx(15.0)


def test_ambiguous_incident_goes_to_the_fault_its_claim_localizes() -> None:
    """The same incident naming f2's culprit and artifact: matched to f2 and localized ->
    (0.3 + 0.3) x 100/2 = 30; f1 is left uncorrelated."""
    faults = [fault("f1"), fault("f2", start=70, target="payment", scope=("payment",), artifact="p/x")]
    rec = record(
        faults,
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "payment")],
        events=[opened(240, "inc-1", "a1", "a2"), rooted(360, "inc-1", ["a1", "a2"], ["payment"], "p/x")],
    )
    card = score_run(rec, V2)
    assert [(f.correlated, f.localized) for f in card.per_fault] == [(False, False), (True, True)]
    assert card.marathon_score == pytest.approx(30.0) and card.false_claims == 0


def test_one_incident_per_alert_pays_for_every_duplicate() -> None:
    """f1 with three alerts, one incident each: one match, two duplicates -> 100 x (0.3 - 2 x 0.3) = -30."""
    rec = record(
        [fault()],
        alerts=[alert(f"a{i}", 150, "cart") for i in (1, 2, 3)],
        events=[opened(240, f"inc-{i}", f"a{i}") for i in (1, 2, 3)],
    )
    card = score_run(rec, V2)
    assert card.incidents_matched == 1 and card.false_incidents == 2
    assert card.marathon_score_unclipped == pytest.approx(-30.0)


def test_an_incident_that_grows_past_its_fault_loses_it() -> None:
    """Opened with f1's alert (matched), then every other alert is added: f1 explains 1/3, the match
    is lost, and the incident is false -> -0.3 x 100/3 = -10 (one incident for everything)."""
    rec = record(
        three_faults(),
        alerts=[alert("a1", 150, "cart"), alert("a2", 200, "payment"), alert("a3", 200, "ads")],
        events=[opened(240, "inc-1", "a1"), updated(360, "inc-1", ["a1", "a2", "a3"])],
    )
    assert score_until(rec, V2, 300) == pytest.approx(10.0)  # matched to f1 at 240: 0.3 x 100/3
    card = score_run(rec, V2)
    assert card.correlated == 0.0 and card.marathon_score_unclipped == pytest.approx(-10.0)


def test_a_freed_fault_goes_to_the_duplicate_waiting_for_it() -> None:
    """inc-1 and inc-2 both hold f1's alerts; inc-1 matched first, then pools other alerts and loses
    f1, which passes to inc-2: f1 stays correlated, inc-1 is the false incident -> 100/3 x (0.3 - 0.3) = 0."""
    rec = record(
        three_faults(),
        alerts=[
            alert("a1", 150, "cart"),
            alert("a2", 200, "payment"),
            alert("a3", 200, "ads"),
            alert("a4", 200, "cart"),
        ],
        events=[
            opened(240, "inc-1", "a1"),
            opened(240, "inc-2", "a4"),
            updated(360, "inc-1", ["a1", "a2", "a3"]),
        ],
    )
    m = match_incidents(rec, 0.5)
    assert m.incident_of == {"f1": "inc-2"} and m.false_incidents == ["inc-1"]
    assert m.matched_s["f1"] == 360.0
    assert score_run(rec, V2).marathon_score_unclipped == pytest.approx(0.0)


# ----------------------------------------------------------------------------- localization
def test_wrong_claims_cost_even_when_the_right_one_follows() -> None:
    """v1 exploit: cycling guesses until one names an alias. Two wrong claims before the right one:
    C + L = 0.6, minus 2 x 0.7 -> 100 x (0.6 - 1.4) = -80."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[
            opened(240, "inc-1", "a1"),
            rooted(360, "inc-1", ["a1"], ["cart"], "cart/env:A"),
            rooted(480, "inc-1", ["a1"], ["cart"], "cart/env:B"),
            rooted(600, "inc-1", ["a1"], ["cart"], ALIAS),
        ],
    )
    card = score_run(rec, V2)
    assert card.localized == 1.0 and card.false_claims == 2
    assert card.marathon_score_unclipped == pytest.approx(-80.0)


def test_a_claim_is_counted_once_however_often_it_is_repeated() -> None:
    """The same wrong claim three times (and carried by later updates) is one false claim:
    100 x (0.3 - 0.7) = -40."""
    ev = [
        opened(240, "inc-1", "a1"),
        *(rooted(t, "inc-1", ["a1"], ["cart"], "cart/env:A") for t in (360, 480, 600)),
        updated(720, "inc-1", ["a1"], ["cart"], "cart/env:A"),
    ]
    card = score_run(record([fault()], alerts=[alert("a1", 150, "cart")], events=ev), V2)
    assert card.false_claims == 1 and card.marathon_score_unclipped == pytest.approx(-40.0)


def test_claims_beside_the_right_one_cost_too() -> None:
    """v1 exploit: one incident per guess, each holding f1's alert. One guess is right (C + L), the
    other two incidents are duplicates with wrong claims: 100 x (0.6 - 2 x 0.3 - 2 x 0.7) = -140."""
    guesses = ["cart/env:A", ALIAS, "cart/env:B"]
    ev = []
    for i, g in enumerate(guesses, 1):
        ev += [opened(240, f"inc-{i}", "a1"), rooted(240, f"inc-{i}", ["a1"], ["cart"], g)]
    card = score_run(record([fault()], alerts=[alert("a1", 150, "cart")], events=ev), V2)
    assert (card.localized, card.false_incidents, card.false_claims) == (1.0, 2, 2)
    assert card.marathon_score_unclipped == pytest.approx(-140.0)


def test_a_localizing_claim_takes_the_fault_from_an_unlocalized_incident() -> None:
    """inc-1 (no claim) is matched to f1 first; inc-2 holds f1's other alert and names the right
    root cause: it takes f1 and localizes it; inc-1 becomes the duplicate -> 100 x (0.6 - 0.3) = 30."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart"), alert("a2", 160, "cart")],
        events=[
            opened(240, "inc-1", "a1"),
            opened(360, "inc-2", "a2"),
            rooted(360, "inc-2", ["a2"], ["cart"], ART),
        ],
    )
    m = match_incidents(rec, 0.5)
    assert m.incident_of == {"f1": "inc-2"} and m.false_incidents == ["inc-1"]
    assert m.matched_s["f1"] == 240.0  # correlated since 240 (continuously, by one incident or the other)
    assert score_run(rec, V2).marathon_score_unclipped == pytest.approx(30.0)


def test_a_localized_match_is_final() -> None:
    """Once inc-1 localizes f1, a second incident naming f1's root cause is a duplicate; its claim
    is false (it localizes nothing through a match): 100 x (0.6 - 0.3 - 0.7) = -40."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart"), alert("a2", 160, "cart")],
        events=[
            opened(240, "inc-1", "a1"),
            rooted(240, "inc-1", ["a1"], ["cart"], ART),
            opened(360, "inc-2", "a2"),
            rooted(360, "inc-2", ["a2"], ["cart"], ALIAS),
        ],
    )
    card = score_run(rec, V2)
    assert (card.false_incidents, card.false_claims) == (1, 1)
    assert card.marathon_score_unclipped == pytest.approx(-40.0)


# ----------------------------------------------------------------------------- repair
def test_an_intervention_no_localized_incident_calls_for_is_needless_and_repairs_nothing() -> None:
    """v1 exploit: act on everything. The incident is correlated but names no root cause; a restart
    of cart precedes the recovery at 405. Not called for: no R, and it costs 0.1 -> 100 x (0.3 - 0.1) = 20."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1")],
        actions=[cited(240, "cart")],
        probes=[probe("f1", [(60, 405)])],
    )
    card = score_run(rec, V2)
    assert card.repaired == 0.0 and card.needless_actions == 1
    assert card.per_fault[0].outcome == "repaired_not_handled"  # Figure 9: the symptom ended, unearned
    assert card.marathon_score_unclipped == pytest.approx(20.0)


def test_acting_outside_the_localized_fault_is_needless() -> None:
    """The incident localizes f1 (on cart); restarts of payment and ads cite it: two needless actions,
    and f1's recovery is not credited to them -> 100 x (0.6 - 0.2) = 40."""
    rec = record(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], ART)],
        actions=[cited(240, "payment"), cited(240, "ads")],
        probes=[probe("f1", [(60, 405)])],
    )
    card = score_run(rec, V2)
    assert card.needless_actions == 2 and card.repaired == 0.0
    assert card.marathon_score_unclipped == pytest.approx(40.0)


def test_a_flag_is_fixed_on_flagd() -> None:
    """A feature-flag fault (artifact ``flagd:configmap/...``) breaks payment; the fix is a set_config
    on flagd. flagd owns the artifact, so the fix is called for and credited -> 100."""
    f = fault(
        target="payment",
        scope=("payment", "checkout"),
        artifact="flagd:configmap/flagd-config/paymentFailure",
        aliases=("paymentFailure",),
    )
    rec = record(
        [f],
        alerts=[alert("a1", 150, "payment")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["payment"], "paymentFailure")],
        actions=[cited(240, "flagd", tool="set_config")],
        probes=[probe("f1", [(60, 300)])],
    )
    card = score_run(rec, V2)
    assert card.needless_actions == 0 and card.marathon_score == pytest.approx(100.0)


def test_an_action_called_for_by_one_diagnosis_repairs_another_localized_fault_it_fixes() -> None:
    """f1 and f2 both on cart, each localized by its own incident; one restart (citing f1's incident)
    ends both symptoms: both repaired -> 100. The repair is credited through called-for actions only."""
    f2 = fault("f2", artifact="cart/src/main.go")
    rec = record(
        [fault(), f2],
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "cart")],
        events=[
            opened(240, "inc-1", "a1"),
            rooted(240, "inc-1", ["a1"], ["cart"], ART),
            opened(240, "inc-2", "a2"),
            rooted(240, "inc-2", ["a2"], ["cart"], "cart/src/main.go"),
        ],
        actions=[cited(240, "cart")],
        probes=[probe("f1", [(60, 300)]), probe("f2", [(60, 300)])],
    )
    assert score_run(rec, V2).marathon_score == pytest.approx(100.0)


# ----------------------------------------------------------------------------- the sizes
def test_sequential_guessing_among_three_names_has_no_positive_expected_value() -> None:
    """A guesser that tries k = 3 candidate names in a uniformly random order, until one localizes,
    and then repairs at once (the best case), scores C + L + R = 1.0 minus 0.7 per wrong claim; over
    the 3! orders the mean is 1.0 - 0.7 x (0 + 1 + 2) / 3 = 0.3 ... with the correlation it earned
    anyway (0.3) subtracted, guessing itself is worth 0: EV(guess) = 0.7 - 0.7 x 1 = 0."""
    names = ["cart/env:A", ALIAS, "cart/env:B"]
    values = []
    for order in itertools.permutations(names):
        ev, t = [opened(120, "inc-1", "a1")], 120.0
        for name in order:
            ev.append(rooted(t, "inc-1", ["a1"], ["cart"], name))
            if name == ALIAS:
                break
            t += 1
        rec = record(
            [fault()],
            alerts=[alert("a1", 100, "cart")],
            events=ev,
            actions=[cited(t, "cart")],
            probes=[probe("f1", [(60, t + 10)])],
        )
        values.append(score_run(rec, V2).marathon_score_unclipped)
    correlated_only = score_run(
        record([fault()], alerts=[alert("a1", 100, "cart")], events=[opened(120, "inc-1", "a1")]), V2
    ).marathon_score_unclipped
    assert math.fsum(values) / len(values) - correlated_only == pytest.approx(0.0, abs=1e-9)


def test_one_incident_per_alert_has_no_positive_expected_value_at_two_alerts_per_fault() -> None:
    """Every incident earns 0.3 if matched and costs 0.3 if not: with two alerts per fault, one
    incident per alert nets 0 (the leaderboard runs hold 5-11 alerts per fault: far below)."""
    faults = [fault("f1"), fault("f2", target="payment", scope=("payment",), artifact="p/x")]
    alerts = [
        alert("a1", 150, "cart"),
        alert("a2", 160, "cart"),
        alert("a3", 150, "payment"),
        alert("a4", 160, "payment"),
    ]
    rec = record(faults, alerts=alerts, events=[opened(240, f"inc-{a.id}", a.id) for a in alerts])
    assert score_run(rec, V2).marathon_score_unclipped == pytest.approx(0.0, abs=1e-9)


def test_shipped_penalties_are_set_against_their_guessing_strategies(catalog) -> None:
    """The shipped sizes keep the guarantees scoring.yaml states: a false incident costs what a
    correlation earns; a false claim costs what localization and repair together earn; a needless
    intervention costs something (it can earn nothing)."""
    s = catalog.scoring
    w, p = s.stage_weights, s.penalties
    assert s.rules_version == 3 and s.matching.min_explained_share == 0.5
    assert p.false_incident == pytest.approx(w.correlation)
    assert p.false_claim == pytest.approx(w.localization + w.repair)
    assert 0 < p.needless_action < w.correlation


# ----------------------------------------------------------------------------- rewards
def rich_v2_record():
    """Three faults; a match that moves (steal), a wrong claim, a needless action and a repair."""
    faults = three_faults()
    alerts = [
        alert("a1", 150, "cart"),
        alert("a2", 160, "cart"),
        alert("a3", 200, "payment"),
        alert("a4", 200, "ads"),
    ]
    events = [
        opened(240, "inc-1", "a1"),
        opened(240, "inc-2", "a3", "a4"),
        rooted(360, "inc-2", ["a3", "a4"], ["ads"], "ads/config:Y"),
        opened(480, "inc-3", "a2"),
        rooted(480, "inc-3", ["a2"], ["cart"], ART),
        updated(600, "inc-2", ["a3"], op="update"),
        rooted(720, "inc-2", ["a3"], ["payment"], "payment/src/charge.go"),
    ]
    actions = [
        cited(240, "ads", inc="inc-2"),
        cited(480, "cart", inc="inc-3"),
        cited(720, "payment", inc="inc-2"),
    ]
    probes = [probe("f1", [(60, 560)]), probe("f2", [(60, 800)]), probe("f3", [])]
    return record(faults, alerts, events, actions, probes)


@pytest.mark.parametrize("scoring", [V2, DEADLINE], ids=["no-deadline", "deadline"])
def test_rewards_sum_to_the_unclipped_score_and_every_step_is_causal(scoring) -> None:
    """Per-step rewards on the growing record (each step sees only the past) telescope to the final
    unclipped score, and after every step the reward's value equals the score of the truncated record
    (with the report deadline too: a stage reached late is never paid, so nothing is taken back)."""
    full = rich_v2_record()
    reward = MarathonReward(scoring)
    total = 0.0
    for t in range(120, int(RUN_END) + 1, 120):
        part = full.truncated(t)
        total += reward.step(part, t)
        assert reward.value == pytest.approx(score_run(part, scoring).marathon_score_unclipped), t
        assert reward.value == pytest.approx(score_until(full, scoring, t)), t
    final = score_run(full, scoring)
    assert total == pytest.approx(final.marathon_score_unclipped)
    if scoring is DEADLINE:  # f2's localizing claim comes at 720 s, after its deadline (600 s)
        f2 = next(f for f in final.per_fault if f.fault_id == "f2")
        assert f2.correlated and not f2.localized and final.false_claims == 1  # late, not false
        assert final.marathon_score_unclipped == pytest.approx(100 / 3 * (0.5 - 0.3))
        return
    # the final card, worked out: f1 C+L+R via inc-3 (1.0), f2 C+L (inc-2 re-matched by its claim, the
    # payment fix recovers after the deadline 600: no R) = 0.6, f3 0; inc-1 false; the ads guess false;
    # the ads restart needless -> 100/3 x (1.6 - 0.3 - 0.7 - 0.1) = 16.67
    assert (final.false_incidents, final.false_claims, final.needless_actions) == (1, 1, 1)
    assert final.marathon_score_unclipped == pytest.approx(100 / 3 * 0.5)


def test_a_reward_given_a_record_from_the_future_truncates_it() -> None:
    """`MarathonReward.step(record, t)` pays only for evidence up to t even when the record holds more."""
    full = rich_v2_record()
    reward = MarathonReward(V2)
    values = []
    for t in range(120, int(RUN_END) + 1, 120):
        reward.step(full, t)
        values.append(reward.value)
    assert values == pytest.approx([score_until(full, V2, t) for t in range(120, int(RUN_END) + 1, 120)])


# ----------------------------------------------------------------------------- versions
def test_rules_version_defaults_to_v1_and_v2_needs_its_sizes() -> None:
    """A scoring file (or bundle) written before rule sets were versioned is v1; v2 without its
    matching and penalties is an error; `with_rules` switches and takes v2's sizes from defaults."""
    v1 = Scoring(
        schema_version=1,
        stage_weights={"correlation": 0.3, "localization": 0.3, "repair": 0.4},
        forbidden_operation_penalty=1.0,
        slow_request_threshold_s=2.5,
        repair_stable_s=120,
    )
    assert v1.rules_version == 1
    with pytest.raises(ValidationError, match="rules_version 2 needs"):
        Scoring.model_validate({**v1.model_dump(), "rules_version": 2})
    with pytest.raises(ValidationError, match="rules_version must be one of"):
        Scoring.model_validate({**v1.model_dump(), "rules_version": 4})
    with pytest.raises(ValidationError, match="rules_version 3 needs `matching.nonspecific_scope_share`"):
        Scoring.model_validate({**V2.model_dump(), "rules_version": 3})
    assert v1.with_rules(2, defaults=V2).penalties == V2.penalties
    assert V2.with_rules(1).rules_version == 1
    with pytest.raises(ValueError, match="unknown rules version"):
        V2.with_rules(7)


def test_v1_and_v2_disagree_exactly_where_v1_can_be_gamed() -> None:
    """One incident holding all three faults' alerts: v1 correlates all three (30), v2 nothing."""
    rec = record(
        three_faults(),
        alerts=[alert("a1", 150, "cart"), alert("a2", 200, "payment"), alert("a3", 200, "ads")],
        events=[opened(240, "inc-1", "a1", "a2", "a3")],
    )
    assert score_run(rec, V2.with_rules(1)).marathon_score == pytest.approx(30.0)
    assert score_run(rec, V2).marathon_score == 0.0
