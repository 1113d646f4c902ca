"""Cited metric evidence counts only if the agent's own queries returned it across the cause's flip
(`orca.observed`): citing a flag's public rubric signals without looking earns nothing."""

from __future__ import annotations

import pytest
from test_evidence import day1_cause

from sre_marathon_gym.orca.episode import Episode
from sre_marathon_gym.orca.flags import flag_mechanisms
from sre_marathon_gym.orca.report import MetricRef, RcaReport, RootCause
from sre_marathon_gym.orca.tasks import orca_tasks
from sre_marathon_gym.orca.tools import OrcaTools
from sre_marathon_gym.orca.world import orca_world

CALLS = "traces_span_metrics_calls_total"
AD_ERRORS = MetricRef(metric=CALLS, matchers={"service_name": "ad", "status_code": "STATUS_CODE_ERROR"})


@pytest.fixture(scope="module")
def tools_and_flip():
    cause, _ = day1_cause("d1-i2-adFailure-on")
    horizon = cause.start_s + 3600
    return OrcaTools(orca_world(days=1), horizon), float(cause.start_s)


def _run(tools: OrcaTools, **args) -> None:
    model, err = tools.parse({"tool": "query_metrics", **args})
    assert err is None, err
    assert tools.call(model).ok


def test_a_grouped_query_over_the_flip_observes_each_returned_series(tools_and_flip):
    tools, flip = tools_and_flip
    before = dict(start_s=flip - 3600, end_s=flip - 600, step_s=300)
    _run(
        tools,
        metric=CALLS,
        matchers={"status_code": "STATUS_CODE_ERROR"},
        group_by=["service_name"],
        **before,
    )
    assert not tools.observed.covers(AD_ERRORS, flip)  # it ended before the flip
    _run(
        tools,
        metric=CALLS,
        matchers={"status_code": "STATUS_CODE_ERROR"},
        group_by=["service_name"],
        function="rate",
        start_s=flip - 1800,
        end_s=flip + 1800,
        step_s=300,
    )
    assert tools.observed.covers(AD_ERRORS, flip)
    # a label neither pinned by the query nor on the returned series, or another family: not seen
    narrower = MetricRef(
        metric=CALLS, matchers={**AD_ERRORS.matchers, "span_name": "oteldemo.AdService/GetAds"}
    )
    assert not tools.observed.covers(narrower, flip)
    assert not tools.observed.covers(MetricRef(metric="app_ads_ad_requests_total"), flip)


def test_promql_credits_only_the_labels_its_result_series_carry(tools_and_flip):
    """A selector's matchers need not hold for every series of an expression (`a{x="1"} or b`), so
    only a PromQL result series' own labels count."""
    tools, flip = tools_and_flip
    window = dict(start_s=flip - 1800, end_s=flip + 1800, step_s=300)
    fresh = OrcaTools(tools.world, tools.horizon_s)
    _run(fresh, promql=f"sum(rate({CALLS}[5m]))", **window)
    assert not fresh.observed.covers(AD_ERRORS, flip)  # one total: no service, no status seen
    errors = f'rate({CALLS}{{service_name="ad", status_code="STATUS_CODE_ERROR"}}[5m])'
    _run(fresh, promql=f"sum by (service_name) ({errors}) or vector(1)", **window)
    assert not fresh.observed.covers(AD_ERRORS, flip)  # the status was filtered, not returned
    _run(fresh, promql=f"sum by (service_name, status_code) ({errors})", **window)
    assert fresh.observed.covers(AD_ERRORS, flip)


def test_a_series_own_label_wins_over_the_regex_that_selected_it(tools_and_flip):
    tools, flip = tools_and_flip
    fresh = OrcaTools(tools.world, tools.horizon_s)
    _run(
        fresh,
        metric=CALLS,
        matchers={"service_name": "~ad|cart", "status_code": "STATUS_CODE_ERROR"},
        group_by=["service_name"],
        start_s=flip - 1800,
        end_s=flip + 1800,
        step_s=300,
    )
    assert fresh.observed.covers(AD_ERRORS, flip)


def test_cited_signals_count_only_after_the_agent_queried_them():
    """The same report on the same task: level 3 once the agent ran the query, only the symptom level
    before (the flag at its start, no evidence of its own)."""
    task = next(
        t
        for t in orca_tasks()
        if t.event_id == "d1-i2-adFailure-on" and t.ttd_min == 60 and t.section == "exact"
    )
    cause = next(c for c in task.ground_truth if c.flag == "adFailure")
    report = RcaReport(
        summary="ads fail",
        root_causes=[
            RootCause(
                flag="adFailure",
                service="ad",
                mechanism=flag_mechanisms("adFailure")[0],
                incident_start_s=cause.start_s,
                evidence=[AD_ERRORS],
            )
        ],
    )

    def ad_score(ep: Episode) -> int:
        return next(r.score for r in ep.score(report).rubrics if r.flag == "adFailure")

    blind = Episode(task)
    assert ad_score(blind) <= 1
    looked = Episode(task)
    res = looked.call(
        {
            "tool": "query_metrics",
            "metric": CALLS,
            "matchers": AD_ERRORS.matchers,
            "start_s": cause.start_s - 1800,
            "end_s": cause.start_s + 1800,
            "step_s": 300,
        }
    )
    assert res.ok and ad_score(looked) == 3
