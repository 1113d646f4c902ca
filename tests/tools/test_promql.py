"""PromQL on the embedded simulator: the parser's subset and errors, hand-computed results on a small
store, agreement with the metric tool's `function` path on a real run, and the tool's errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.core.errors import PatternError, PromQLError
from sre_marathon_gym.metrics.store import MetricStore
from sre_marathon_gym.tools.promql import (
    RANGE_FUNCTIONS,
    Limits,
    PromQLLimitError,
    PromQLSyntaxError,
    PromQLUnsupportedError,
    parse,
    query_range,
)

TIMES = np.array([600.0, 660.0, 720.0])


@pytest.fixture(scope="module")
def store() -> MetricStore:
    """Counters with exact slopes, constant gauges, a gauge that stops, a cycling gauge, a histogram."""
    s = MetricStore(step_s=15, dtype=np.float64)
    per_step = {("a", "200"): 15.0, ("a", "500"): 3.0, ("b", "200"): 30.0}  # rates 1, 0.2, 2 per s
    req = {k: s.series_id("req_total", {"svc": k[0], "code": k[1]}) for k in per_step}
    temp = {v: s.series_id("temp", {"svc": v}) for v in ("a", "b", "c")}
    wave = s.series_id("wave", {"svc": "a"})
    buckets = {le: s.series_id("lat_bucket", {"svc": "a", "le": le}) for le in ("1", "2", "+Inf")}
    reset = s.series_id("resets_total", {"svc": "a"})
    for k in range(0, 61):  # t = 0 .. 900
        t = 15.0 * k
        for key, sid in req.items():
            s.record(t, [sid], per_step[key] * k)
        s.record(t, [temp["a"]], 10.0)
        s.record(t, [temp["b"]], 20.0)
        if t <= 300:
            s.record(t, [temp["c"]], 30.0)
        s.record(t, [wave], float(k % 4))
        for le, inc in (("1", 1.0), ("2", 3.0), ("+Inf", 4.0)):
            s.record(t, [buckets[le]], inc * k)
        s.record(t, [reset], 10.0 * k if t < 630 else 5.0 + 10.0 * (k - 42))
    return s


def q(store: MetricStore, expr: str, times: np.ndarray = TIMES) -> dict[tuple, list[float]]:
    return {tuple(sorted(lab.items())): vals.tolist() for lab, _, vals in query_range(store, expr, times)}


def test_range_functions_and_selectors(store):
    assert q(store, "rate(req_total[5m])") == {
        (("code", "200"), ("svc", "a")): pytest.approx([1.0] * 3),
        (("code", "500"), ("svc", "a")): pytest.approx([0.2] * 3),
        (("code", "200"), ("svc", "b")): pytest.approx([2.0] * 3),
    }
    assert q(store, 'increase(req_total{svc="b"}[2m])') == {
        (("code", "200"), ("svc", "b")): pytest.approx([240.0] * 3)
    }
    # regexes are fully anchored: "5" does not match "500"
    assert q(store, 'rate(req_total{code=~"5"}[5m])') == {}
    assert list(q(store, 'rate(req_total{code!~"2.*"}[5m])')) == [(("code", "500"), ("svc", "a"))]
    assert q(store, 'req_total{svc="a",code="200"} offset 5m') == {
        (("__name__", "req_total"), ("code", "200"), ("svc", "a")): [300.0, 360.0, 420.0]
    }
    assert q(store, 'irate(req_total{svc="b"}[1m])') == {
        (("code", "200"), ("svc", "b")): pytest.approx([2.0] * 3)
    }
    # irate reads a drop as a counter reset: at 630 the counter fell from 620 to 5
    assert q(store, "irate(resets_total[1m])", np.array([630.0, 645.0])) == {
        (("svc", "a"),): pytest.approx([5 / 15, 10 / 15])
    }
    for fn, want in (("max", 3.0), ("min", 0.0), ("avg", 1.5), ("sum", 6.0), ("count", 4.0)):
        got = q(store, f"{fn}_over_time(wave[1m])")
        assert got == {(("svc", "a"),): pytest.approx([want] * 3)}, fn


def test_aggregations(store):
    by_svc = {(("svc", "a"),): pytest.approx([1.2] * 3), (("svc", "b"),): pytest.approx([2.0] * 3)}
    assert q(store, "sum by (svc) (rate(req_total[5m]))") == by_svc
    assert q(store, "sum without (code) (rate(req_total[5m]))") == by_svc
    assert q(store, "sum(rate(req_total[5m])) by (svc)") == by_svc
    # temp{svc="c"} stopped at 300: outside the 5 min lookback from 600 on
    assert q(store, "count(temp)") == {(): [2.0] * 3}
    assert q(store, "avg(temp)") == {(): [15.0] * 3}
    assert q(store, "max(temp)") == {(): [20.0] * 3} and q(store, "min(temp)") == {(): [10.0] * 3}
    assert q(store, "count(temp)", np.array([300.0])) == {(): [3.0]}
    assert list(q(store, "topk(1, temp)")) == [(("__name__", "temp"), ("svc", "b"))]
    assert list(q(store, "bottomk(1, temp)")) == [(("__name__", "temp"), ("svc", "a"))]
    assert len(q(store, "topk by (svc) (1, rate(req_total[5m]))")) == 2


def test_binary_operators_and_matching(store):
    assert q(store, "1 + 2 * 3") == {(): [7.0] * 3}
    assert q(store, "2 ^ 3 ^ 2") == {(): [512.0] * 3}
    assert q(store, "-2 ^ 2") == {(): [-4.0] * 3}
    assert q(store, "temp * 2 + 1") == {(("svc", "a"),): [21.0] * 3, (("svc", "b"),): [41.0] * 3}
    # a comparison filters and keeps the name and the vector's value (also with the scalar first)
    assert q(store, "temp > 15") == {(("__name__", "temp"), ("svc", "b")): [20.0] * 3}
    assert q(store, "15 < temp") == {(("__name__", "temp"), ("svc", "b")): [20.0] * 3}
    assert q(store, "temp > bool 15") == {(("svc", "a"),): [0.0] * 3, (("svc", "b"),): [1.0] * 3}
    ratio = 'sum(rate(req_total{code=~"5.."}[5m])) / sum(rate(req_total[5m]))'
    assert q(store, ratio) == {(): pytest.approx([0.2 / 3.2] * 3)}
    assert q(store, "sum by (svc) (rate(req_total[5m])) / on(svc) temp") == {
        (("svc", "a"),): pytest.approx([0.12] * 3),
        (("svc", "b"),): pytest.approx([0.1] * 3),
    }
    assert q(store, 'rate(req_total{code="200"}[5m]) / ignoring(code) temp') == {
        (("svc", "a"),): pytest.approx([0.1] * 3),
        (("svc", "b"),): pytest.approx([0.1] * 3),
    }
    # two left series per match group (as in Prometheus): an error, not a silent pick
    with pytest.raises(Exception, match="many-to-many"):
        q(store, "rate(req_total[5m]) / ignoring(code) temp")
    assert q(store, "rate(req_total[5m]) / temp") == {}  # label sets differ: nothing matches
    with pytest.raises(Exception, match="many-to-many"):
        q(store, "temp / ignoring(code) rate(req_total[5m])")
    name_a = (("__name__", "temp"), ("svc", "a"))
    name_b = (("__name__", "temp"), ("svc", "b"))
    assert list(q(store, 'temp and on(svc) req_total{code="500"}')) == [name_a]
    assert list(q(store, 'temp unless on(svc) req_total{code="500"}')) == [name_b]
    assert set(q(store, 'temp{svc="a"} or temp')) == {name_a, name_b}


def test_scalar_and_elementwise_functions(store):
    assert q(store, "time()") == {(): TIMES.tolist()}
    assert q(store, "vector(2) * 3") == {(): [6.0] * 3}
    assert q(store, 'scalar(temp{svc="b"}) + 1') == {(): [21.0] * 3}
    assert q(store, "scalar(temp)") == {}  # two series: NaN, shown as no sample
    assert q(store, "abs(-temp)") == {(("svc", "a"),): [10.0] * 3, (("svc", "b"),): [20.0] * 3}
    assert q(store, "sqrt(temp{svc='a'} * 10)") == {(("svc", "a"),): [10.0] * 3}
    assert q(store, "clamp_max(temp, 12)") == {(("svc", "a"),): [10.0] * 3, (("svc", "b"),): [12.0] * 3}
    assert q(store, "clamp_min(temp, 12)") == {(("svc", "a"),): [12.0] * 3, (("svc", "b"),): [20.0] * 3}
    assert q(store, "round(rate(req_total{code='500'}[5m]) * 7)") == {
        (("code", "500"), ("svc", "a")): [1.0] * 3
    }
    assert q(store, "round(temp / 3, 0.5)") == {(("svc", "a"),): [3.5] * 3, (("svc", "b"),): [6.5] * 3}
    assert q(store, "ceil(temp / 3)") == {(("svc", "a"),): [4.0] * 3, (("svc", "b"),): [7.0] * 3}
    assert q(store, "floor(temp / 3)") == {(("svc", "a"),): [3.0] * 3, (("svc", "b"),): [6.0] * 3}
    # last_over_time keeps the name (as Prometheus does) and sees a stopped series for its range only
    assert q(store, "last_over_time(temp[6m])", np.array([600.0, 660.0])) == {
        (("__name__", "temp"), ("svc", "a")): [10.0] * 2,
        (("__name__", "temp"), ("svc", "b")): [20.0] * 2,
        (("__name__", "temp"), ("svc", "c")): [30.0],
    }
    assert q(store, "last_over_time(wave[1m])") == {(("__name__", "wave"), ("svc", "a")): [0.0] * 3}


def test_histogram_quantile_by_hand(store):
    # bucket rates 1/15, 3/15, 4/15 per second at le 1, 2, +Inf
    assert q(store, "histogram_quantile(0.5, rate(lat_bucket[5m]))") == {
        (("svc", "a"),): pytest.approx([1.5] * 3)
    }
    assert q(store, "histogram_quantile(0.95, sum by (le) (rate(lat_bucket[5m])))") == {
        (): pytest.approx([2.0] * 3)
    }


@pytest.mark.parametrize(
    "expr, pos",
    [("sum(rate(req_total[5m])", 23), ("req_total{svc=}", 14), ("rate(req_total[5m]) +", 21)],
)
def test_syntax_errors_give_the_position(expr, pos):
    with pytest.raises(PromQLSyntaxError, match=f"position {pos}"):
        parse(expr)


@pytest.mark.parametrize(
    "expr, what",
    [
        ('label_replace(temp, "a", "$1", "svc", "(.*)")', "function label_replace"),
        ("rate(req_total[5m:1m])", "subqueries"),
        ("temp @ 600", "@ modifier"),
        ("temp offset -5m", "negative offset"),
        ("temp * on(svc) group_left req_total", "group_left"),
        ("quantile(0.9, temp)", "aggregation quantile"),
        ('{svc="a"}', "without a metric name"),
    ],
)
def test_unsupported_constructs_are_named(expr, what):
    with pytest.raises(PromQLUnsupportedError, match=what) as err:
        parse(expr)
    assert "Supported here" in str(err.value) and "histogram_quantile" in str(err.value)


def test_type_errors_and_limits(store):
    with pytest.raises(PromQLSyntaxError, match="range vector"):
        parse("req_total[5m]")
    with pytest.raises(PromQLSyntaxError, match=r"rate\(\) takes \(range vector\), e.g. rate\(x\[5m\]\)"):
        parse("rate(req_total)")
    with pytest.raises(PromQLSyntaxError, match=r"clamp_min\(\) takes \(instant vector, scalar\)"):
        parse("clamp_min(req_total)")
    with pytest.raises(PromQLSyntaxError, match="bool"):
        parse("1 > 2")
    with pytest.raises(PromQLSyntaxError, match="nested"):
        parse("(" * 200 + "1" + ")" * 200)
    parse("(" * 40 + "sum(rate(req_total[5m])) / 2" + ")" * 40)  # brackets count, precedence levels do not
    with pytest.raises(PromQLLimitError, match="matches 3 series"):
        query_range(store, "req_total", TIMES, Limits(series_per_selector=2))
    with pytest.raises(PromQLLimitError, match="reads too much"):
        query_range(store, "rate(req_total[15m])", np.arange(0, 900, 15.0), Limits(samples_read=1000))


# ------------------------------------------------------------------ through the tool, on a real run
def _by_labels(res) -> dict[tuple, dict[float, float]]:
    return {
        tuple(sorted(s["labels"].items())): {t: v for t, v in s["values"] if v is not None}
        for s in res.data["series"]
    }


@pytest.mark.parametrize(
    "call, expr, tol",
    [
        (
            {"metric": "traces_span_metrics_calls_total", "function": "rate", "window_s": 120},
            "sum by (service_name) (rate(traces_span_metrics_calls_total[2m]))",
            1e-6,
        ),
        (
            {"metric": "traces_span_metrics_duration_milliseconds", "function": "p95", "window_s": 300},
            "histogram_quantile(0.95, sum by (le, service_name) "
            "(rate(traces_span_metrics_duration_milliseconds_bucket[5m])))",
            1e-3,  # the function path rounds quantiles to 3 decimals
        ),
    ],
)
def test_promql_agrees_with_the_function_path(env, call, expr, tol):
    base = {"tool": "query_metrics", "step_s": 15, "start_s": 0}
    want = env.call_tool({**base, **call, "group_by": ["service_name"]})
    got = env.call_tool({**base, "promql": expr})
    assert want.ok and got.ok, (want.error, got.error)
    w, g = _by_labels(want), _by_labels(got)
    assert len(w) >= 5 and set(w) == set(g)
    points = 0
    for key in w:
        assert set(w[key]) == set(g[key]), key
        for t, v in w[key].items():
            assert g[key][t] == pytest.approx(v, abs=tol, rel=1e-9), (key, t)
            points += 1
    assert points > 50


def test_tool_errors_are_structured(env):
    bad = env.call_tool({"tool": "query_metrics", "promql": "sum(rate(up[5m])"})
    assert not bad.ok and bad.error.code == "invalid_arguments" and "position 16" in bad.error.message
    bad = env.call_tool({"tool": "query_metrics", "promql": "absent(up)"})
    assert not bad.ok and "unsupported PromQL" in bad.error.message and "absent" in bad.error.message
    bad = env.call_tool({"tool": "query_metrics", "promql": 'up{job=~"(a"}'})
    assert not bad.ok and bad.error.code == "invalid_arguments"
    # the reference's family name without the suffix: PromQL's empty answer, plus a warning
    miss = env.call_tool({"tool": "query_metrics", "promql": "sum(rate(traces_span_metrics_calls[5m]))"})
    assert miss.ok and miss.data["series"] == []
    assert "traces_span_metrics_calls_total" in miss.data["warnings"][0]
    ok = env.call_tool({"tool": "query_metrics", "promql": "count(up)", "step_s": 60})
    assert ok.ok and "warnings" not in ok.data
    assert ok.data["series"][0]["labels"] == {}
    assert all(v >= 1 for _, v in ok.data["series"][0]["values"])
    buckets = "traces_span_metrics_duration_milliseconds_bucket"
    wide = env.call_tool({"tool": "query_metrics", "promql": buckets})
    assert wide.ok and len(wide.data["series"]) == 100 and "of" in wide.data["truncated"]
    # a window between two grid points holds no evaluation time: an error, not a traceback
    now = float(ok.data["series"][0]["values"][-1][0])
    off_grid = {"start_s": now - 7.5, "end_s": now - 7.3}
    for expr in ("irate(traces_span_metrics_calls_total[5m])", "last_over_time(up[5m])", "up"):
        empty = env.call_tool({"tool": "query_metrics", "promql": expr, **off_grid})
        assert not empty.ok and empty.error.code == "invalid_arguments" and "grid" in empty.error.message


TOKENS = [
    "req_total", "temp", "lat_bucket", "wave", "{", "}", "[5m]", "[1m:]", "(", ")", ",", "svc=",
    '"a"', "'5..'", "=~", "!~", "!=", "==", "le", "by", "without", "on(svc)", "ignoring(code)",
    "sum", "topk", "2", "0.5", "-", "+", "*", "/", "%", "^", ">", "bool", "and", "or", "unless",
    "rate", "irate", "histogram_quantile", "offset 1m", "@", "scalar", "vector", "clamp_min", "1e308",
    "NaN", "Inf", "`raw`", '"\\q"', "#", "group_left", "label_replace", " ",
]  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(TOKENS), max_size=14))
def test_fuzzed_expressions_fail_only_with_promql_errors(store, toks):
    """Whatever an agent writes: a result or a PromQL/pattern error, never anything else."""
    expr = " ".join(toks)
    try:
        rows = query_range(store, expr, TIMES)
    except (PromQLError, PatternError):
        return
    for _, times, vals in rows:
        assert times.shape == vals.shape and not np.isnan(vals).any()


_SEL = st.sampled_from(
    ["req_total", "temp", "lat_bucket", "wave", "resets_total", 'req_total{code=~"5.."}', 'temp{svc!="a"}']
)
_LEAF = st.one_of(_SEL, st.sampled_from(["1", "0", "2.5", "NaN", "-Inf"]))


def _grow(child):
    pair = st.tuples(child, child)
    return st.one_of(
        st.builds(lambda f, s: f"{f}({s}[2m])", st.sampled_from(RANGE_FUNCTIONS), _SEL),
        st.builds(
            lambda a, lab, x: f"{a} by ({lab}) ({x})",
            st.sampled_from(["sum", "avg", "max", "min", "count"]),
            st.sampled_from(["svc", "code", "le", ""]),
            child,
        ),
        st.builds(
            lambda ab, op: f"({ab[0]}) {op} ({ab[1]})",
            pair,
            st.sampled_from(["+", "-", "*", "/", "%", "^", ">", "<= bool", "and", "or", "unless"]),
        ),
        st.builds(
            lambda ab, op: f"({ab[0]}) {op} ({ab[1]})",
            pair,
            st.sampled_from(["/ on(svc)", "> ignoring(code)"]),
        ),
        st.builds(lambda k, x: f"bottomk({k}, {x})", st.integers(0, 3), child),
        st.builds(lambda x: f"histogram_quantile(0.9, {x})", child),
        st.builds(lambda f, x: f"{f}({x})", st.sampled_from(["abs", "scalar", "vector", "ceil"]), child),
        st.builds(lambda x: f"clamp_min({x}, 1)", child),
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(_LEAF, _grow, max_leaves=6))
def test_generated_expressions_evaluate_or_fail_cleanly(store, expr):
    """Well-formed-ish expressions either evaluate (finite labels, no NaN shown) or raise a PromQL
    error (a type error such as a set operator on a scalar, or many-to-many matching)."""
    try:
        rows = query_range(store, expr, TIMES)
    except PromQLError:
        return
    labels = [tuple(sorted(lab.items())) for lab, _, _ in rows]
    assert len(set(labels)) == len(labels), expr  # no two result series with the same labels
    for _, times, vals in rows:
        assert times.size and times.shape == vals.shape and not np.isnan(vals).any(), expr
