"""PromQL through ORCA's tools on the one-day world (day 1: adFailure from 12:32 ET): a rubric's
query (the ad service's GetAds error ratio, as flag_signals.md cites it, in our metric names) shows
the incident, agrees with the `function` path, and never sees past the task's horizon."""

from __future__ import annotations

import numpy as np
import pytest

from sre_marathon_gym.orca.schedule import orca_schedule
from sre_marathon_gym.orca.tools import OrcaTools
from sre_marathon_gym.orca.world import orca_world

SERVER = 'service_name="ad",span_name="oteldemo.AdService/GetAds",span_kind="SPAN_KIND_SERVER"'
ERRORS = f'traces_span_metrics_calls_total{{{SERVER},status_code="STATUS_CODE_ERROR"}}'
CALLS = f"traces_span_metrics_calls_total{{{SERVER}}}"
RATIO = f"sum(rate({ERRORS}[5m])) / sum(rate({CALLS}[5m]))"


@pytest.fixture(scope="module")
def day1():
    world = orca_world(days=1)
    ev = orca_schedule(1).event("d1-i2-adFailure-on")
    horizon = ev.on_s + 3600 + 7  # off the 15 s grid on purpose
    return world, ev, horizon, OrcaTools(world, horizon)


def _call(tools: OrcaTools, **args):
    model, err = tools.parse({"tool": "query_metrics", **args})
    assert err is None, err
    return tools.call(model)


def test_rubric_error_ratio_shows_the_incident_up_to_the_horizon(day1):
    world, ev, horizon, tools = day1
    res = _call(tools, promql=RATIO, start_s=ev.on_s - 3600, end_s=horizon + 7200, step_s=60)
    assert res.ok, res.error
    (series,) = res.data["series"]
    assert series["labels"] == {}
    times = np.array([t for t, _ in series["values"]])
    vals = np.array([v for _, v in series["values"]], dtype=np.float64)
    assert times.max() <= horizon  # the end is clamped to the task's horizon
    before = vals[times < ev.on_s]
    after = vals[times >= ev.on_s + 600]
    assert after.size >= 40 and after.mean() > 0.02
    assert before.size == 0 or before.mean() < after.mean() / 5
    # the same ratio from two `function: rate` reads
    common = {"start_s": ev.on_s - 3600, "end_s": horizon, "step_s": 60, "window_s": 300}
    sel = {"service_name": "ad", "span_name": "oteldemo.AdService/GetAds", "span_kind": "SPAN_KIND_SERVER"}
    num, den = (
        _call(
            tools,
            metric="traces_span_metrics_calls_total",
            function="rate",
            group_by=["service_name"],
            matchers=m,
            **common,
        )
        for m in ({**sel, "status_code": "STATUS_CODE_ERROR"}, sel)
    )
    assert num.ok and den.ok
    n = dict(num.data["series"][0]["values"])
    d = dict(den.data["series"][0]["values"])
    checked = 0
    for t, v in series["values"]:
        assert v == pytest.approx(n[t] / d[t], rel=1e-4, abs=1e-6), t
        checked += 1
    assert checked == vals.size and checked > 40


def test_orca_promql_refuses_what_would_read_past_the_horizon(day1):
    _, ev, horizon, tools = day1
    late = _call(tools, promql=RATIO, start_s=horizon + 60)
    assert not late.ok and "after end_s" in late.error.message
    future = _call(tools, promql=f"sum(rate({CALLS}[5m] offset -1h))")
    assert not future.ok and "negative offset" in future.error.message
    at = _call(tools, promql=f"sum(rate({CALLS}[5m] @ {horizon + 3600}))")
    assert not at.ok and "@ modifier" in at.error.message
