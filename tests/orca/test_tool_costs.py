"""ORCA tools stay cheap: capped points per query and capped log/trace windows, as structured errors."""

from __future__ import annotations

import numpy as np
import pytest

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.metrics.store import bucket_quantile
from sre_marathon_gym.orca.tools import MAX_LOG_WINDOW_S, MAX_TRACE_WINDOW_S, OrcaTools
from sre_marathon_gym.orca.world import orca_world
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.tools.runner import MAX_POINTS_PER_QUERY, MAX_POINTS_PER_SERIES, ToolRunner, query_times

DAY = 86_400


@pytest.fixture(scope="module")
def world():
    return orca_world(days=1)


def _call(tools, raw):
    model, err = tools.parse(raw)
    assert err is None, err
    return tools.call(model)


def test_points_per_series_are_capped_before_any_work(world):
    tools = OrcaTools(world, 6 * DAY)  # a six-day horizon: a 15 s step would be 34,561 points per series
    res = _call(
        tools,
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_calls_total",
            "function": "rate",
            "group_by": ["service_name"],
            "start_s": 0,
            "end_s": 6 * DAY,
            "step_s": 15,
        },
    )
    assert not res.ok and res.error.code == "invalid_arguments"
    assert "34561 points per series" in res.error.message and "raise step_s" in res.error.message
    assert len(query_times(0, 6 * DAY, 60)) == 8641 <= MAX_POINTS_PER_SERIES
    with pytest.raises(ValueError, match="narrow start_s/end_s"):
        query_times(0, 6 * DAY, 15)


def test_series_times_points_are_capped(world):
    tools = OrcaTools(world, DAY)
    assert tools.runner.max_query_points == MAX_POINTS_PER_QUERY
    n = min(100, len(world.metrics.select("traces_span_metrics_calls_total", {})))
    tools.runner.max_query_points = n * 5761 - 1  # one point short of every series x one day at 15 s
    res = _call(
        tools,
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_calls_total",
            "function": "rate",
            "start_s": 0,
            "end_s": DAY,
            "step_s": 15,
        },
    )
    assert not res.ok and res.error.code == "invalid_arguments" and "group_by" in res.error.message
    ok = _call(
        tools,
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_calls_total",
            "function": "rate",
            "group_by": ["service_name"],
            "start_s": 0,
            "end_s": DAY,
            "step_s": 300,
        },
    )
    assert ok.ok and ok.data["series"]


def test_log_and_trace_windows_are_capped(world):
    tools = OrcaTools(world, DAY)
    logs = _call(tools, {"tool": "search_logs", "query": "zzz-no-match", "start_s": 0, "end_s": DAY})
    assert (
        not logs.ok
        and logs.error.code == "invalid_arguments"
        and "narrow start_s/end_s" in logs.error.message
    )
    assert _call(
        tools, {"tool": "search_logs", "query": "zzz-no-match", "start_s": DAY - 3600, "end_s": DAY}
    ).ok
    tr = _call(
        tools, {"tool": "get_traces", "min_duration_ms": 1e6, "start_s": 0, "end_s": MAX_TRACE_WINDOW_S + 60}
    )
    assert not tr.ok and tr.error.code == "invalid_arguments" and "narrow start_s/end_s" in tr.error.message
    assert _call(tools, {"tool": "get_traces", "start_s": DAY - MAX_TRACE_WINDOW_S, "end_s": DAY}).ok
    assert MAX_LOG_WINDOW_S <= 6 * 3600


def test_vectorised_quantile_matches_the_per_bucket_computation():
    s = Simulator(load_catalog(), "astronomy_shop", 5, telemetry=True)
    s.advance_to(1800)
    runner = ToolRunner(SimBackend(s), None)
    store = s.store
    for group_by in ([], ["service_name"], ["service_name", "status_code"]):
        res = runner.call(
            {
                "tool": "query_metrics",
                "metric": "traces_span_metrics_duration_milliseconds_bucket",
                "function": "p95",
                "group_by": group_by,
                "start_s": 600,
                "end_s": 1800,
                "step_s": 60,
            }
        )
        assert res.ok and res.data["series"]
        for series in res.data["series"]:
            matchers = dict(series["labels"])
            ids = store.select("traces_span_metrics_duration_milliseconds_bucket", matchers)
            by_le: dict[str, list[int]] = {}
            for sid in ids:
                by_le.setdefault(store.labels(int(sid))["le"], []).append(int(sid))
            les = sorted(by_le, key=lambda x: float("inf") if x == "+Inf" else float(x))
            for t, v in series["values"]:
                rates = np.array([[np.nansum(store.rate(by_le[le], float(t), 120)) for le in les]])
                want = bucket_quantile(0.95, rates, np.array([float(le) for le in les]))[0]
                assert v == (None if np.isnan(want) else round(float(want), 3))
