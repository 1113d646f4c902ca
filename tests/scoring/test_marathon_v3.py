"""Worked examples for Marathon-Score rules v3: per rule, a crafted record where the hole a second
adversarial review found earns nothing under v3 (and did under v2), and a correct minimal report
that still earns full credit. Builders and sizes as in test_marathon_v2.py (one fault f1 on cart,
scope {cart, frontend}, artifact ``cart/config:REDIS_ADDR``, active 60-600 s; 100 / faults points per
fault; false incident 0.3, false claim 0.7, needless intervention 0.1). The record's manifest says
frontend is in every catalog fault's scope (non-specific) and cart, payment and ads in few.
"""

from __future__ import annotations

import pytest
from test_marathon import ART, RUN_END, alert, fault, opened, probe, record, rooted
from test_marathon_v2 import V2, cited, rich_v2_record, three_faults, updated

from sre_marathon_gym.scoring import MarathonReward, score_run, score_until

V3 = V2.model_copy(
    update={
        "rules_version": 3,
        "matching": V2.matching.model_copy(update={"report_grace_s": 0.0, "nonspecific_scope_share": 0.8}),
    }
)
V2_DEADLINE = V2.model_copy(
    update={"matching": V3.matching.model_copy(update={"nonspecific_scope_share": None})}
)
SHARE = {"frontend": 1.0, "cart": 0.2, "payment": 0.1, "ads": 0.1}


def rec3(faults, alerts=(), events=(), actions=(), probes=(), **kw):
    r = record(faults, alerts, events, actions, probes, **kw)
    return r.model_copy(update={"manifest": r.manifest.model_copy(update={"scope_share": SHARE})})


def both(r):
    return score_run(r, V2_DEADLINE), score_run(r, V3)


def test_v3_validates_its_settings():
    assert V3.rules_version == 3 and V3.matching.nonspecific_scope_share == 0.8


def test_correct_minimal_report_earns_full_credit_under_v3() -> None:
    r = rec3(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], ART)],
        actions=[cited(240, "cart")],
        probes=[probe("f1", [(60, 300)])],
    )
    card = score_run(r, V3)
    assert card.marathon_score == pytest.approx(100.0) and card.rules_version == 3
    assert (card.false_incidents, card.false_claims, card.needless_actions) == (0, 0, 0)


# ----------------------------------------------------------------------------- specific evidence
def test_an_entry_point_alert_alone_is_evidence_of_no_fault() -> None:
    """One incident on one frontend alert: 100% of it is attributable to f1 (frontend is in its
    scope), so v2 correlated f1 (30); under v3 the alert is non-specific and names no culprit: the
    incident is false (-30)."""
    r = rec3([fault()], alerts=[alert("a1", 150, "frontend")], events=[opened(240, "inc-1", "a1")])
    v2, v3 = both(r)
    assert v2.correlated == 1.0 and v2.marathon_score_unclipped == pytest.approx(30.0)
    assert v3.correlated == 0.0 and v3.false_incidents == 1
    assert v3.marathon_score_unclipped == pytest.approx(-30.0)


def test_a_correct_diagnosis_makes_entry_point_alerts_specific() -> None:
    """The same frontend alert, with a claim naming f1's culprit and artifact: the diagnosis is the
    specific evidence (C + L = 60). A wrong claim on it is false and matches nothing (-30 - 70)."""
    right = rec3(
        [fault()],
        alerts=[alert("a1", 150, "frontend")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], ART)],
    )
    card = score_run(right, V3)
    assert card.localized == 1.0 and card.marathon_score_unclipped == pytest.approx(60.0)
    wrong = rec3(
        [fault()],
        alerts=[alert("a1", 150, "frontend")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], "cart/src/main.go")],
    )
    card = score_run(wrong, V3)
    assert (card.false_incidents, card.false_claims) == (1, 1)
    assert card.marathon_score_unclipped == pytest.approx(-100.0)


def test_entry_point_alerts_count_beside_a_specific_one_or_for_an_entry_point_culprit() -> None:
    """Two frontend alerts beside one cart alert: all three count for f1 (3 of 3). And for a fault
    whose culprit is the frontend, a frontend alert alone is specific."""
    r = rec3(
        [fault()],
        alerts=[alert("a1", 150, "frontend"), alert("a2", 150, "frontend"), alert("a3", 160, "cart")],
        events=[
            opened(240, "inc-1", "a1", "a2", "a3"),
            rooted(240, "inc-1", ["a1", "a2", "a3"], ["cart"], ART),
        ],
    )
    assert score_run(r, V3).localized == 1.0
    fe = fault(target="frontend", scope=("frontend",), artifact="frontend/config:X", aliases=())
    r = rec3(
        [fe],
        alerts=[alert("a1", 150, "frontend")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["frontend"], "frontend/config:X")],
    )
    assert score_run(r, V3).localized == 1.0 and score_run(r, V3).false_incidents == 0


def test_an_incident_pooling_two_faults_half_and_half_explains_neither() -> None:
    """f1 (cart) and f2 (payment), one alert each in one incident: at exactly half v2 matched it to
    f1 (15 of 3 faults' 100); v3 needs more than half: a false incident (-10)."""
    r = rec3(
        three_faults(),
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "payment")],
        events=[opened(240, "inc-1", "a1", "a2")],
    )
    v2, v3 = both(r)
    assert v2.correlated == pytest.approx(1 / 3) and v2.false_incidents == 0
    assert v3.correlated == 0 and v3.false_incidents == 1
    assert v3.marathon_score_unclipped == pytest.approx(-10.0)
    fair = rec3(
        three_faults(),
        alerts=[alert("a1", 150, "cart"), alert("a2", 150, "payment")],
        events=[opened(240, "inc-1", "a1"), opened(240, "inc-2", "a2")],
    )
    assert score_run(fair, V3).correlated == pytest.approx(2 / 3)


# ----------------------------------------------------------------------------- no late matches
def test_an_incident_pointed_after_the_deadline_cannot_take_the_fault() -> None:
    """A false incident (an ads alert no fault explains) re-pointed at f1's alert at 720 s, after
    f1's deadline (600): v2 matched it late (no credit, no cost: laundered); v3 leaves it false."""
    r = rec3(
        [fault()],
        alerts=[alert("a1", 150, "cart"), alert("n1", 200, "ads")],
        events=[opened(240, "inc-1", "n1"), updated(720, "inc-1", ["a1"])],
    )
    v2, v3 = both(r)
    assert v2.false_incidents == 0 and v2.correlated == 0.0
    assert v3.false_incidents == 1 and v3.marathon_score_unclipped == pytest.approx(-30.0)


def test_a_match_made_in_time_survives_a_late_update() -> None:
    """Opened in time on f1's alert, given another of its alerts after the deadline: still f1's."""
    r = rec3(
        [fault()],
        alerts=[alert("a1", 150, "cart"), alert("a2", 590, "cart")],
        events=[opened(240, "inc-1", "a1"), updated(720, "inc-1", ["a1", "a2"])],
    )
    card = score_run(r, V3)
    assert card.correlated == 1.0 and card.false_incidents == 0


# ----------------------------------------------------------------------------- claims judged when made
def test_a_standing_claim_repointed_later_is_false_when_made() -> None:
    """f1 runs 600-1000 s. At 240 an incident on a cart alert from before f1 (no fault explains it)
    claims f1's artifact; at 720 it is re-pointed at f1's alert. v2 judged the claim at the end: it
    localized at 720, so C + L (60), nothing false. v3 judged it at 240: false (-70); the re-pointed
    claim is a new one, right, so C + L still count: 60 - 70 = -10."""
    f1 = fault(start=600, end=1000)
    r = rec3(
        [f1],
        alerts=[alert("x1", 200, "cart"), alert("a1", 650, "cart")],
        events=[
            opened(240, "inc-1", "x1"),
            rooted(240, "inc-1", ["x1"], ["cart"], ART),
            updated(720, "inc-1", ["a1"], services=["cart"], artifact=ART),
        ],
    )
    v2, v3 = both(r)
    assert v2.localized == 1.0 and v2.false_claims == 0 and v2.marathon_score_unclipped == pytest.approx(60.0)
    assert (
        v3.localized == 1.0 and v3.false_claims == 1 and v3.marathon_score_unclipped == pytest.approx(-10.0)
    )


def test_a_lock_after_the_deadline_clears_nothing() -> None:
    """Opened in time (C), named only at 720 s, after f1's deadline (600): v2 let the late lock clear
    the claim (30, nothing false); v3 counts it false: 30 - 70."""
    r = rec3(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(720, "inc-1", ["a1"], ["cart"], ART)],
    )
    v2, v3 = both(r)
    assert v2.false_claims == 0 and v2.marathon_score_unclipped == pytest.approx(30.0)
    assert v3.false_claims == 1 and v3.marathon_score_unclipped == pytest.approx(-40.0)


def test_repeating_a_claim_on_the_same_evidence_is_one_claim() -> None:
    r = rec3(
        [fault()],
        alerts=[alert("a1", 150, "cart"), alert("a2", 170, "cart")],
        events=[
            opened(240, "inc-1", "a1"),
            rooted(240, "inc-1", ["a1"], ["cart"], ART),
            rooted(360, "inc-1", ["a1"], ["cart"], ART),
            updated(480, "inc-1", ["a1", "a2"], services=["cart"], artifact=ART),
        ],
    )
    card = score_run(r, V3)
    assert card.false_claims == 0 and card.localized == 1.0


# ----------------------------------------------------------------------------- interventions
def _locked(actions, probes=(), fixed=None):
    return rec3(
        [fault()],
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], ART)],
        actions=actions,
        probes=list(probes),
        artifact_fixed={} if fixed is None else {"f1": fixed},
    )


def test_acting_after_the_fault_ended_is_needless() -> None:
    """A restart of cart at 720 s citing f1's locked incident, after f1's deadline (600): free under
    v2, needless under v3."""
    v2, v3 = both(_locked([cited(720, "cart")]))
    assert v2.needless_actions == 0 and v3.needless_actions == 1


def test_acting_on_the_scope_instead_of_the_culprit_is_needless() -> None:
    """A restart of the frontend (in f1's scope) citing f1's incident: v2 called for, v3 needless."""
    v2, v3 = both(_locked([cited(360, "frontend")]))
    assert v2.needless_actions == 0 and v3.needless_actions == 1


def test_an_artifact_fix_credits_the_action_that_made_it() -> None:
    """f1 lasts to 1100 s, its probe never fails; a called-for restart at 240, and the artifact found
    fixed at 960 (by another action). v2 credited the restart of 720 s before (R: 100); v3 credits
    only an action at most 480 s before the fix: no repair (60). A called-for fix at 960 itself: 100."""
    long = fault(end=1100)
    base = dict(
        alerts=[alert("a1", 150, "cart")],
        events=[opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], ART)],
        probes=[probe("f1", [])],
        artifact_fixed={"f1": 960.0},
    )
    early = rec3([long], actions=[cited(240, "cart")], **base)
    v2, v3 = score_run(early, V2_DEADLINE), score_run(early, V3)
    assert v2.repaired == 1.0 and v3.repaired == 0.0 and v3.marathon_score == pytest.approx(60.0)
    right = rec3([long], actions=[cited(960, "cart", tool="set_config")], **base)
    assert score_run(right, V3).marathon_score == pytest.approx(100.0)


def test_a_flag_is_fixed_on_flagd_and_a_node_on_the_node() -> None:
    """The culprit of a flag fault includes flagd (its artifact's owner); of a node fault, the node."""
    flag = fault(target="ads", scope=("ads",), artifact="flagd:configmap/flagd-config/adFailure", aliases=())
    node = fault("f2", target="cart", artifact="node/node-a3", aliases=())
    assert {"flagd", "ads"} <= flag.culprits and {"node-a3", "cart"} <= node.culprits
    assert "frontend" not in node.culprits


# ----------------------------------------------------------------------------- rewards
def test_v3_rewards_sum_to_the_unclipped_score_and_every_step_is_causal() -> None:
    full = rich_v2_record()
    full = full.model_copy(update={"manifest": full.manifest.model_copy(update={"scope_share": SHARE})})
    reward = MarathonReward(V3)
    total = 0.0
    for t in range(120, int(RUN_END) + 1, 120):
        part = full.truncated(t)
        total += reward.step(part, t)
        assert reward.value == pytest.approx(score_run(part, V3).marathon_score_unclipped), t
        assert reward.value == pytest.approx(score_until(full, V3, t)), t
    assert total == pytest.approx(score_run(full, V3).marathon_score_unclipped)


def test_without_scope_shares_no_alert_is_non_specific() -> None:
    """A record sealed before rules v3 carries no scope shares: v3 then treats every alert as specific
    (bundle rescoring fills the shares from the catalog first, see test_bundle.py)."""
    r = record([fault()], alerts=[alert("a1", 150, "frontend")], events=[opened(240, "inc-1", "a1")])
    assert score_run(r, V3).correlated == 1.0


def test_the_shipped_threshold_makes_every_apps_entry_point_non_specific(catalog) -> None:
    """A second review found Train Ticket's entry point (251 of 280 rows, 0.896) left specific at a
    0.9 threshold; the shipped share must cover each app's entry point."""
    share = catalog.scoring.matching.nonspecific_scope_share
    for app in catalog.apps.values():
        shares = catalog.scope_share(app.app)
        assert shares[app.entry_point] >= share, (app.app, shares[app.entry_point], share)


def _full(events, actions, alerts):
    return rec3([fault()], alerts=alerts, events=events, actions=actions, probes=[probe("f1", [(60, 300)])])


@pytest.mark.parametrize(
    "case",
    [
        "entry_point_alert_with_the_right_claim",
        "late_update_of_a_timely_match",
        "one_claim_repeated",
        "fix_on_the_culprit",
    ],
)
def test_a_correct_minimal_report_earns_full_credit_at_each_v3_rule(case) -> None:
    """Each v3 rule's boundary, on the honest side: C + L + R = 100, nothing subtracted."""
    fe, ca = alert("a1", 150, "frontend"), alert("a2", 150, "cart")
    if case == "entry_point_alert_with_the_right_claim":  # specific evidence: the claim supplies it
        r = _full(
            [opened(240, "inc-1", "a1"), rooted(240, "inc-1", ["a1"], ["cart"], ART)],
            [cited(240, "cart")],
            [fe],
        )
    elif case == "late_update_of_a_timely_match":  # no late matches: a timely one survives an update
        r = _full(
            [
                opened(240, "inc-1", "a2"),
                rooted(240, "inc-1", ["a2"], ["cart"], ART),
                updated(720, "inc-1", ["a2", "a1"]),
            ],
            [cited(240, "cart")],
            [fe, ca],
        )
    elif case == "one_claim_repeated":  # claims judged when made: repeating one is still one
        r = _full(
            [
                opened(240, "inc-1", "a2"),
                rooted(240, "inc-1", ["a2"], ["cart"], ART),
                rooted(360, "inc-1", ["a2"], ["cart"], ART),
            ],
            [cited(240, "cart")],
            [ca],
        )
    else:  # interventions: on the culprit while the fault is active
        r = _full(
            [opened(240, "inc-1", "a2"), rooted(240, "inc-1", ["a2"], ["cart"], ART)],
            [cited(240, "cart", tool="set_config")],
            [ca],
        )
    card = score_run(r, V3)
    assert card.marathon_score == pytest.approx(100.0), case
    assert (card.false_incidents, card.false_claims, card.needless_actions) == (0, 0, 0), case
