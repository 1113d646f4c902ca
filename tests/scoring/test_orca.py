"""ORCA judge and aggregation: worked examples with a stub evidence checker (no telemetry)."""

from __future__ import annotations

import math

import pytest

from sre_marathon_gym.orca.report import MetricRef, RcaReport, RootCause, TimelineEntry, WhyStep
from sre_marathon_gym.orca.tasks import GroundTruthCause, OrcaTask
from sre_marathon_gym.scoring.orca import judge, mean_stderr, published_metrics

PAY = GroundTruthCause(
    event_id="e-pay",
    flag="paymentFailure",
    value="10%",
    services=("payment",),
    mechanisms=("errors",),
    start_s=1000,
    end_s=5000,
)
CART = GroundTruthCause(
    event_id="e-cart",
    flag="cartFailure",
    value="on",
    services=("cart",),
    mechanisms=("errors",),
    start_s=3000,
    end_s=6000,
)
GOOD = MetricRef(metric="traces_span_metrics_calls_total", matchers={"service_name": "payment"})


def task(gt=(PAY, CART), **kw) -> OrcaTask:
    base = dict(
        task_id="t",
        qid="q",
        event_id="e-pay",
        scenario="d2-x",
        scenario_type="sequential",
        granularity="hard",
        difficulty="medium",
        question="users are unable to pay",
        areas=("checkout",),
        section="exact",
        ttd_min=60,
        offset_min=10,
        reported_styled="at 1:00 PM today ET",
        reported_correctly_specified=True,
        incident_s=1000,
        reported_s=1600,
        current_s=4600,
        horizon_s=5100,
        ground_truth=gt,
    )
    base.update(kw)
    return OrcaTask(**base)


def shows(ref, cause) -> bool:  # the stub checker: only the payment series shows payment's signal
    return ref == GOOD and cause.flag == "paymentFailure"


def rc(flag, start, mech="errors", ev=(), service=None):
    return RootCause(flag=flag, service=service, mechanism=mech, incident_start_s=start, evidence=list(ev))


def test_empty_report_scores_zero_on_incidents_and_passes_controls():
    s = judge(task(), RcaReport(), shows)
    assert (s.mode, s.reward, s.rca_accuracy, s.hallucinate) == ("empty_report", 0.0, 0, 0)
    c = judge(
        task(gt=(), section="control", ttd_min=0, quiet_window_start_s=0, quiet_window_end_s=9000),
        RcaReport(),
        shows,
    )
    assert c.control_pass and c.reward == 1.0 and c.hallucinate is None and c.rca_accuracy == 0


def test_rubric_levels_3_2_1_and_accuracy_needs_every_flag():
    report = RcaReport(
        summary="x", root_causes=[rc("paymentFailure", 1300, ev=[GOOD]), rc("cartFailure", 4000)]
    )
    s = judge(task(), report, shows)
    assert [r.score for r in s.rubrics] == [3, 1]  # cart: named while active, start 17 min off, no evidence
    assert s.rca_accuracy == 1 and s.hallucinate == 0 and s.rca_depth == pytest.approx(2.0)
    on_time = judge(task(), RcaReport(root_causes=[report.root_causes[0], rc("cartFailure", 3300)]), shows)
    # flag and start within 10 min, no evidence: the task text gives the flip time away, so only 1
    assert [r.score for r in on_time.rubrics] == [3, 1] and on_time.rubrics[1].time_match
    only_pay = judge(task(), RcaReport(root_causes=[rc("paymentFailure", 1300, ev=[GOOD])]), shows)
    assert only_pay.rca_accuracy == 0 and [r.score for r in only_pay.rubrics] == [3, 0]  # nothing on cart


def test_evidence_that_does_not_show_the_signal_earns_no_level_3():
    wrong = MetricRef(metric="traces_span_metrics_calls_total", matchers={"service_name": "currency"})
    s = judge(task(gt=(PAY,)), RcaReport(root_causes=[rc("paymentFailure", 1300, ev=[wrong])]), shows)
    assert [r.score for r in s.rubrics] == [1] and not s.rubrics[0].evidence_match
    late = judge(task(gt=(PAY,)), RcaReport(root_causes=[rc("paymentFailure", 1000 + 601, ev=[GOOD])]), shows)
    assert late.rubrics[0].score == 2  # the incident start is more than 10 min off


def test_wrong_claim_lowers_every_rubric_and_hallucination():
    report = RcaReport(
        root_causes=[rc("paymentFailure", 1300, ev=[GOOD]), rc("cartFailure", 3000), rc("adFailure", 10)]
    )
    s = judge(task(), report, shows)
    assert s.wrong_claims == ("flag adFailure",) and [r.score for r in s.rubrics] == [2, 0]
    two = judge(task(), RcaReport(root_causes=[*report.root_causes, rc(None, 10, service="currency")]), shows)
    assert len(two.wrong_claims) == 2 and [r.score for r in two.rubrics] == [2, 0]  # still one -1
    h = judge(task(), RcaReport(root_causes=[rc("adFailure", 10)]), shows)
    assert h.hallucinate == 1 and [r.score for r in h.rubrics] == [
        0,
        0,
    ]  # t=10 confirms nothing; 0 - 1 clipped


def test_control_false_positive_uses_the_10_minute_margin():
    ctl = task(gt=(), section="control", ttd_min=0, quiet_window_start_s=10_000, quiet_window_end_s=20_000)
    at = lambda t: RcaReport(summary="x", timeline=[TimelineEntry(time_s=t)])  # noqa: E731
    assert judge(ctl, at(10_600), shows).control_pass  # exactly on the shrunk bound: outside
    assert not judge(ctl, at(10_601), shows).control_pass
    assert judge(ctl, at(5_000), shows).control_pass  # a past, resolved incident
    assert not judge(ctl, at(19_399), shows).control_pass and judge(ctl, at(19_400), shows).control_pass


def test_mean_and_standard_error_match_the_leaderboard_formula():
    st = mean_stderr([1, 0, 0, 1])
    assert st.mean == 50.0 and st.stderr == pytest.approx(round(100 * math.sqrt((1 / 3) / 4), 2))
    s1 = judge(
        task(difficulty="hard"), RcaReport(root_causes=[rc("paymentFailure", 0), rc("cartFailure", 0)]), shows
    )
    s2 = judge(task(difficulty="hard"), RcaReport(), shows)
    pub = published_metrics([s1, s2])
    assert pub["rca_accuracy_incident_hard"].mean == 50.0 and pub["hallucinate_any_incident"].mean == 0.0
    assert pub["rca_accuracy_incident_medium"].n == 0


def test_a_summary_only_report_confirms_nothing_and_fails_controls():
    summary = RcaReport(summary="something is wrong with checkout")
    empty = judge(task(), RcaReport(), shows)
    s = judge(task(), summary, shows)
    assert s.reward == empty.reward == 0.0 and [r.score for r in s.rubrics] == [0, 0]
    ctl = task(
        gt=(),
        section="control",
        ttd_min=0,
        current_s=15_000,
        quiet_window_start_s=10_000,
        quiet_window_end_s=20_000,
    )
    c = judge(ctl, summary, shows)  # no time given: an incident claimed at the current time
    assert not c.control_pass and c.reward == 0.0 < judge(ctl, RcaReport(), shows).reward


def test_level_1_needs_this_causes_own_time_or_symptom_evidence():
    at = lambda t, *svc: RcaReport(summary="x", timeline=[TimelineEntry(time_s=t, services=list(svc))])  # noqa: E731
    claim = lambda t, svc: RcaReport(root_causes=[rc(None, t, service=svc)])  # noqa: E731
    assert [r.score for r in judge(task(), claim(1300, "payment"), shows).rubrics] == [1, 0]  # while active
    assert [r.score for r in judge(task(), claim(3300, "cart"), shows).rubrics] == [0, 1]
    assert [r.score for r in judge(task(), claim(1000 - 601, "payment"), shows).rubrics] == [0, 0]  # before
    assert [r.score for r in judge(task(), claim(4600 + 601, "payment"), shows).rubrics] == [0, 0]  # after
    # a timeline alone claims nothing: entries every 20 min naming every service would date every cause
    sweep = RcaReport(
        timeline=[TimelineEntry(time_s=t, services=["payment", "cart"]) for t in range(0, 6000, 1200)]
    )
    assert [r.score for r in judge(task(), sweep, shows).rubrics] == [0, 0]
    assert [r.score for r in judge(task(), at(1300, "payment"), shows).rubrics] == [0, 0]
    # with a claim about the cause, its timeline entries date it too
    dated = claim(5000, "payment").model_copy(update={"timeline": at(1300, "payment").timeline})
    assert judge(task(), dated, shows).rubrics[0].symptom_match
    sym = MetricRef(metric="traces_span_metrics_calls_total", matchers={"span_name": "POST /api/checkout"})
    why = RcaReport(summary="x", five_whys=[WhyStep(question="why", answer="checkout fails", evidence=[sym])])
    assert [r.score for r in judge(task(), why, shows).rubrics] == [0, 0]  # no confirmer: nothing confirmed
    # symptom evidence under no claim confirms nothing (a list of every request type's series would
    # otherwise confirm every rubric); under a claim about the cause it does, at that cause's flip only
    assert [r.score for r in judge(task(), why, shows, lambda ref, c: ref == sym).rubrics] == [0, 0]
    late = RcaReport(root_causes=[rc(None, 8000, service="cart", ev=[sym])])  # cart named, wrongly dated
    assert [r.score for r in judge(task(), late, shows, lambda ref, c: ref == sym).rubrics] == [0, 0]  # 1 - 1
    assert judge(task(), late, shows, lambda ref, c: ref == sym).rubrics[1].symptom_match
    assert not judge(task(), late, shows, lambda ref, c: ref == sym).rubrics[0].symptom_match
    assert [r.score for r in judge(task(), why, shows, lambda ref, c: False).rubrics] == [0, 0]


def test_an_ongoing_root_cause_from_before_the_quiet_window_fails_the_control():
    ctl = task(
        gt=(),
        section="control",
        ttd_min=0,
        current_s=15_000,
        quiet_window_start_s=10_000,
        quiet_window_end_s=20_000,
    )
    ongoing = RcaReport(root_causes=[rc("paymentFailure", 5_000)])  # no end: still failing now
    assert not judge(ctl, ongoing, shows).control_pass
    ended = RcaReport(
        root_causes=[
            RootCause(flag="paymentFailure", mechanism="errors", incident_start_s=5_000, end_s=9_000)
        ]
    )
    assert judge(ctl, ended, shows).control_pass  # a past, resolved incident
    into = RcaReport(
        root_causes=[
            RootCause(flag="paymentFailure", mechanism="errors", incident_start_s=5_000, end_s=10_601)
        ]
    )
    assert not judge(ctl, into, shows).control_pass  # lasted into the shrunk quiet window
    with pytest.raises(ValueError):
        RootCause(flag="x", mechanism="errors", incident_start_s=5_000, end_s=4_000)


def test_the_same_wrong_claim_repeated_is_penalised_once():
    base = [rc("paymentFailure", 1300, ev=[GOOD]), rc("cartFailure", 3000)]
    once = judge(task(), RcaReport(root_causes=[*base, rc("adFailure", 10)]), shows)
    thrice = judge(
        task(),
        RcaReport(
            root_causes=[
                *base,
                rc("adFailure", 10),
                rc(" ADFAILURE", 20, mech="latency"),
                rc("adFailure", 30),
            ]
        ),
        shows,
    )
    assert thrice.wrong_claims == once.wrong_claims == ("flag adFailure",)
    assert [r.score for r in thrice.rubrics] == [r.score for r in once.rubrics] == [2, 0]
    svc = judge(
        task(),
        RcaReport(root_causes=[*base, rc(None, 10, service="currency"), rc(None, 20, service="Currency")]),
        shows,
    )
    assert svc.wrong_claims == ("service currency",)


# ------------------------------------------------------------------ cheapest policies that must not score
def test_a_report_quoting_every_causes_time_window_scores_nothing():
    times = [t for c in (PAY, CART) for t in (c.start_s, (c.start_s + c.end_s) // 2)]
    spam = RcaReport(summary="incident", timeline=[TimelineEntry(time_s=t) for t in times])
    s = judge(task(), spam, shows)
    assert s.rca_depth == 0.0 and s.rca_accuracy == 0 and not any(r.symptom_match for r in s.rubrics)


def test_a_time_in_another_causes_window_earns_nothing_on_this_one():
    # cart named at its flip (3000), which also falls inside payment's window (1000-5000)
    s = judge(task(), RcaReport(root_causes=[rc("cartFailure", 3000)]), shows)
    assert [r.score for r in s.rubrics] == [0, 1] and not s.rubrics[0].symptom_match
    svc = judge(task(), RcaReport(root_causes=[rc(None, 3000, service="cart")]), shows)
    assert [r.score for r in svc.rubrics] == [0, 1]  # the culprit service alone: symptom level only


def test_a_report_naming_every_service_scores_nothing():
    services = ["payment", "cart", "checkout", "currency", "ad", "frontend", "email", "shipping"]
    s = judge(task(), RcaReport(root_causes=[rc(None, 4000, service=x) for x in services]), shows)
    assert len(s.wrong_claims) == 6 and s.rca_depth == 0.0 and s.hallucinate == 1 and s.rca_accuracy == 0


def test_a_service_shared_by_the_plausible_causes_identifies_none_of_them():
    gc = GroundTruthCause(
        event_id="e-gc",
        flag="adManualGc",
        value="on",
        services=("ad",),
        mechanisms=("latency",),
        start_s=1000,
        end_s=5000,
    )
    fail = GroundTruthCause(
        event_id="e-af",
        flag="adFailure",
        value="on",
        services=("ad",),
        mechanisms=("errors",),
        start_s=3000,
        end_s=6000,
    )
    s = judge(task(gt=(gc, fail)), RcaReport(root_causes=[rc(None, 3000, service="ad")]), shows)
    assert [r.score for r in s.rubrics] == [0, 0] and not s.wrong_claims  # not wrong, but not specific


def test_a_report_listing_every_flag_gets_the_penalty_and_no_accuracy():
    from sre_marathon_gym.catalog.flag_behaviour import FLAG_BEHAVIOUR

    every = RcaReport(root_causes=[rc(f, 3000, ev=[GOOD]) for f in FLAG_BEHAVIOUR])
    s = judge(task(), every, shows)
    assert len(s.wrong_claims) == len(FLAG_BEHAVIOUR) - 2 and s.rca_accuracy == 0 and s.hallucinate == 1
    assert s.rca_accuracy_published == 1 and s.rca_depth == 0.0  # a shotgun: nothing is identified
    one_extra = judge(
        task(), RcaReport(root_causes=[rc("paymentFailure", 1300, ev=[GOOD]), rc("adFailure", 3000)]), shows
    )
    assert [r.score for r in one_extra.rubrics] == [2, 0] and one_extra.rca_accuracy == 0  # 3 - 1


def test_the_penalty_is_one_point_however_many_wrong_claims():
    good = [rc("paymentFailure", 1300, ev=[GOOD]), rc("cartFailure", 3000)]
    for extra in (["adFailure"], ["adFailure", "kafkaQueueProblems"]):
        s = judge(task(), RcaReport(root_causes=[*good, *(rc(f, 3000) for f in extra)]), shows)
        assert [r.score for r in s.rubrics] == [2, 0] and len(s.wrong_claims) == len(extra)


def test_a_plausible_flag_dated_when_it_was_off_is_a_wrong_claim():
    s = judge(
        task(), RcaReport(root_causes=[rc("paymentFailure", 1300, ev=[GOOD]), rc("cartFailure", 8000)]), shows
    )
    assert s.wrong_claims == ("flag cartFailure at t=8000s",) and s.rca_accuracy == 0
    assert s.rca_accuracy_published == 1 and [r.score for r in s.rubrics] == [2, 0]


def test_a_mechanism_word_without_the_rubrics_own_signal_is_not_level_3():
    other = MetricRef(metric="traces_span_metrics_calls_total", matchers={"service_name": "cart"})
    for mech in ("errors", "latency", "cpu", "memory", "unreachable", "queue", "load", "readiness"):
        r = RcaReport(root_causes=[rc("paymentFailure", 1000, mech=mech, ev=[other])])
        assert judge(task(gt=(PAY,)), r, shows).rubrics[0].score == 1, mech  # on time, no own signal: 1
    wrong_mech = RcaReport(root_causes=[rc("paymentFailure", 1000, mech="latency", ev=[GOOD])])
    assert judge(task(gt=(PAY,)), wrong_mech, shows).rubrics[0].score == 2


def test_evidence_under_no_claim_about_the_cause_earns_nothing():
    why = [WhyStep(question="why", answer="everything", evidence=[GOOD])]
    assert judge(task(gt=(PAY,)), RcaReport(summary="x", five_whys=why), shows).rca_depth == 0.0
    svc = RcaReport(summary="x", five_whys=why, root_causes=[rc(None, 1300, service="payment")])
    assert judge(task(gt=(PAY,)), svc, shows).rubrics[0].score == 2  # under a claim about payment: progress
    cart = RcaReport(summary="x", five_whys=why, root_causes=[rc("cartFailure", 3000)])
    assert [r.score for r in judge(task(), cart, shows).rubrics] == [0, 1]  # payment's series, cart's claim


def test_cheap_padding_and_sweeps_do_not_pass_for_a_diagnosis():
    """Review findings: a wrong flag with a plausible cause's service earns nothing on that cause,
    plausible services do not dilute a shotgun, and each wrong date of a flag is its own claim."""
    full = lambda ref, c: True  # noqa: E731  every cited series shows every signal
    ev = [MetricRef(metric="traces_span_metrics_calls_total", matchers={"service_name": "payment"})]
    shield = RcaReport(root_causes=[rc("adHighCpu", 1000, service="payment", ev=ev)])
    s = judge(task(), shield, full)
    assert [r.score for r in s.rubrics] == [0, 0] and s.wrong_claims == ("flag adHighCpu",)
    wrong = [rc(f, 1000) for f in ("adFailure", "adHighCpu", "imageSlowLoad", "emailMemoryLeak")]
    services = [rc(None, 1000, service="payment"), rc(None, 3000, service="cart")]
    padded = RcaReport(root_causes=[*wrong, *services])
    assert [r.score for r in judge(task(), padded, full).rubrics] == [0, 0]  # still a shotgun
    sweep = RcaReport(root_causes=[rc("paymentFailure", t, ev=ev) for t in range(0, 9000, 1200)])
    s = judge(task(), sweep, full)
    assert len(s.wrong_claims) >= 3 and [r.score for r in s.rubrics] == [0, 0]
    once = RcaReport(root_causes=[rc("paymentFailure", 1000, ev=ev), rc("paymentFailure", 1000, ev=ev)])
    assert judge(task(), once, full).wrong_claims == ()  # repeating a right claim costs nothing
