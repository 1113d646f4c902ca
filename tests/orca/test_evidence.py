"""Evidence is checked against the telemetry: only a citation that really shows the signal counts.

Uses the one-day world (day 1: adFailure 12:32-16:02 ET) so it runs in seconds.
"""

from __future__ import annotations

import pytest

from sre_marathon_gym.orca.evidence import EvidenceChecker
from sre_marathon_gym.orca.flags import flag_mechanisms, flag_services
from sre_marathon_gym.orca.report import LogRef, MetricRef, RcaReport, RootCause, TraceRef
from sre_marathon_gym.orca.schedule import orca_schedule
from sre_marathon_gym.orca.tasks import GroundTruthCause, orca_tasks
from sre_marathon_gym.orca.tools import OrcaTools
from sre_marathon_gym.orca.world import orca_world
from sre_marathon_gym.scoring.orca import judge


def day1_cause(event_id: str) -> tuple[GroundTruthCause, float]:
    """A day-1 event as a ground-truth cause (the judge's services and mechanisms), and its horizon."""
    ev = orca_schedule(1).event(event_id)
    cause = GroundTruthCause(
        event_id=ev.id,
        flag=ev.flag,
        value=ev.value,
        services=flag_services(ev.flag),
        mechanisms=flag_mechanisms(ev.flag),
        start_s=ev.on_s,
        end_s=ev.end_s,
    )
    return cause, min(ev.end_s, 86_400)


@pytest.fixture(scope="module")
def day1():
    cause, _ = day1_cause("d1-i2-adFailure-on")
    return orca_world(days=1), cause, cause.start_s + 3600  # the agent sees one hour of the incident


def test_metric_evidence_must_select_the_signal_series_and_show_the_change(day1):
    world, cause, horizon = day1
    chk = EvidenceChecker(world)
    ad_errors = MetricRef(
        metric="traces_span_metrics_calls_total",
        matchers={"service_name": "ad", "status_code": "STATUS_CODE_ERROR"},
    )
    assert chk.shows(ad_errors, cause, horizon)
    # another service's errors, the ad service without the error status, an unknown series: no credit
    for ref in (
        MetricRef(
            metric="traces_span_metrics_calls_total",
            matchers={"service_name": "currency", "status_code": "STATUS_CODE_ERROR"},
        ),
        MetricRef(metric="traces_span_metrics_calls_total", matchers={"service_name": "ad"}),
        MetricRef(metric="container_cpu_usage_seconds_total", matchers={"container": "ad"}),
        MetricRef(metric="no_such_metric"),
    ):
        assert not chk.shows(ref, cause, horizon), ref
    # the right series, but the agent's data ends before the change could show
    assert not chk.shows(ad_errors, cause, cause.start_s + 60)


def test_log_and_trace_evidence_resolve_from_ids_and_must_show_the_flag(day1):
    world, cause, horizon = day1
    chk = EvidenceChecker(world)
    tools = OrcaTools(world, horizon)
    res = tools.call(
        tools.parse(
            {
                "tool": "search_logs",
                "service": "ad",
                "query": "GetAds Failed",
                "start_s": cause.start_s,
                "end_s": horizon,
                "limit": 3,
            }
        )[0]
    )
    assert res.ok and res.data["logs"]
    line = res.data["logs"][0]
    assert chk.shows(LogRef(log_id=line["id"]), cause, horizon)
    assert not chk.shows(
        LogRef(log_id=line["id"][:-1] + ("0" if line["id"][-1] != "0" else "1")), cause, horizon
    )  # tampered
    quiet = tools.call(
        tools.parse(
            {
                "tool": "search_logs",
                "service": "ad",
                "start_s": cause.start_s - 1800,
                "end_s": cause.start_s - 60,
                "limit": 3,
            }
        )[0]
    )
    assert (
        quiet.ok
        and quiet.data["logs"]
        and not chk.shows(LogRef(log_id=quiet.data["logs"][0]["id"]), cause, horizon)
    )
    traces = tools.call(
        tools.parse(
            {
                "tool": "get_traces",
                "service": "ad",
                "status": "error",
                "start_s": cause.start_s,
                "end_s": horizon,
                "limit": 3,
            }
        )[0]
    )
    assert traces.ok and traces.data["traces"]
    assert chk.shows(TraceRef(trace_id=traces.data["traces"][0]["trace_id"]), cause, horizon)
    assert not chk.shows(TraceRef(trace_id="0123456789abcdef0123456789abcdef"), cause, horizon)


def test_tools_never_see_past_the_horizon(day1):
    world, cause, horizon = day1
    tools = OrcaTools(world, horizon)
    res = tools.call(
        tools.parse(
            {
                "tool": "query_metrics",
                "metric": "traces_span_metrics_calls_total",
                "matchers": {"service_name": "ad"},
                "function": "rate",
                "group_by": ["service_name"],
                "start_s": horizon - 600,
                "end_s": horizon + 7200,
            }
        )[0]
    )
    assert res.ok and max(t for t, _ in res.data["series"][0]["values"]) <= horizon
    later = tools.call(
        tools.parse(
            {"tool": "get_traces", "status": "error", "start_s": horizon + 3600, "end_s": horizon + 7200}
        )[0]
    )
    assert not later.ok or not later.data["traces"]
    bad, err = tools.parse({"tool": "get_k8s_state"})  # cluster state would reveal the flags
    assert bad is None and err.error.code == "unknown_tool"
    bad, err = OrcaTools(world, horizon, source_access=False).parse({"tool": "read_source", "service": "ad"})
    assert bad is None and "source access is disabled" in err.error.message


def test_a_report_citing_a_series_without_the_signal_earns_no_full_credit(day1):
    world, cause, horizon = day1
    task = next(
        t
        for t in orca_tasks()
        if t.event_id == "d1-i2-adFailure-on"
        and t.ttd_min == 60
        and not t.is_control
        and [c.flag for c in t.ground_truth] == ["adFailure"]
    )
    chk = EvidenceChecker(world)

    def score(ref):
        rc = RootCause(
            flag="adFailure", service="ad", mechanism="errors", incident_start_s=cause.start_s, evidence=[ref]
        )
        return (
            judge(
                task,
                RcaReport(summary="ads fail", root_causes=[rc]),
                lambda r, c: chk.shows(r, c, task.horizon_s),
            )
            .rubrics[0]
            .score
        )

    assert (
        score(
            MetricRef(
                metric="traces_span_metrics_calls_total",
                matchers={"service_name": "ad", "status_code": "STATUS_CODE_ERROR"},
            )
        )
        == 3
    )
    assert (
        score(
            MetricRef(
                metric="traces_span_metrics_calls_total",
                matchers={"service_name": "payment", "status_code": "STATUS_CODE_ERROR"},
            )
        )
        == 1  # flag at its start, but no own signal: only the symptom level
    )


def test_symptom_evidence_must_show_the_complaints_request_types(day1):
    world, cause, horizon = day1
    chk = EvidenceChecker(world)
    ads = chk.request_type_signals(("get_ads",))
    assert ads and all(dict(s.labels)["span_name"].startswith("GET /api/data") for s in ads)
    err = next(s for s in ads if s.kind == "errors")
    periods = [(cause.start_s, cause.end_s)]
    assert chk.symptom_shows(MetricRef(metric=err.family, matchers=dict(err.labels)), ads, periods, horizon)
    checkout = next(s for s in chk.request_type_signals(("checkout",)) if s.kind == "errors")
    assert not chk.symptom_shows(
        MetricRef(metric=checkout.family, matchers=dict(checkout.labels)), ads, periods, horizon
    )
    assert not chk.symptom_shows(
        MetricRef(metric=checkout.family, matchers=dict(checkout.labels)),
        chk.request_type_signals(("checkout",)),
        periods,
        horizon,
    )  # checkout was fine on day 1


def test_a_cause_is_shown_by_its_rubrics_own_signals_only():
    """adHighCpu's rubric lists CPU families (and no error series): the ad service's error series
    does not show it even where errors rise, its container CPU does."""
    from sre_marathon_gym.orca.evidence import rubric_signals

    world = orca_world(days=1)
    cause, horizon = day1_cause("d1-c1-adHighCpu-on")
    chk = EvidenceChecker(world)
    assert {s.kind for s in rubric_signals("adHighCpu")} == {"cpu"}  # impressions: imageSlowLoad only
    cpu = MetricRef(metric="container_cpu_usage_seconds_total", matchers={"container": "ad"})
    errors = MetricRef(
        metric="traces_span_metrics_calls_total",
        matchers={"service_name": "ad", "status_code": "STATUS_CODE_ERROR"},
    )
    assert chk.shows(cpu, cause, horizon) and not chk.shows(errors, cause, horizon)
    # a pinned span: payment's series must be the Charge span, a checkout series another call's
    pay = {
        dict(s.labels)["service_name"]: dict(s.labels).get("span_name")
        for s in rubric_signals("paymentFailure")
    }
    assert pay == {
        "payment": "grpc.oteldemo.PaymentService/Charge",
        "checkout": "oteldemo.PaymentService/Charge",
    }


def test_image_slow_load_is_shown_by_its_impressions_only():
    """The demo delays only the browser's image fetches, which the load generator never makes: in
    ORCA's world the proxy is not slower, and flagd's impression counter of the flipped variant is
    the one signal (selecting the default variant too shows no change)."""
    world = orca_world(days=1)
    cause, horizon = day1_cause("d1-i1-imageSlowLoad-on")
    chk = EvidenceChecker(world)
    flipped = MetricRef(
        metric="feature_flag_flagd_impression_total",
        matchers={"feature_flag_key": "imageSlowLoad", "feature_flag_result_variant": cause.value},
    )
    every_variant = MetricRef(
        metric="feature_flag_flagd_impression_total", matchers={"feature_flag_key": "imageSlowLoad"}
    )
    other_flag = MetricRef(
        metric="feature_flag_flagd_impression_total",
        matchers={"feature_flag_key": "adFailure", "feature_flag_result_variant": "on"},
    )
    proxy = MetricRef(
        metric="traces_span_metrics_duration_milliseconds_sum", matchers={"service_name": "frontend-proxy"}
    )
    assert chk.shows(flipped, cause, horizon)
    assert not chk.shows(every_variant, cause, horizon)
    assert not chk.shows(other_flag, cause, horizon)
    assert not chk.shows(proxy, cause, horizon)
