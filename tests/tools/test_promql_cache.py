"""The PromQL engine's shortcuts answer exactly as the plain path does: the parse cache (a shared,
frozen AST per query string) and the many-steps-at-once reads of `at`, `rate` and `increase`,
checked against step-by-step store reads on a store that keeps changing between the same queries
(new samples, staleness markers, a sample written again at the latest time, counter resets, gaps)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sre_marathon_gym.core.errors import RetentionError
from sre_marathon_gym.metrics.store import MetricStore
from sre_marathon_gym.tools.promql import metric_names, parse, query_range

QUERIES = (
    "sum by (svc) (rate(req_total[1m]))",
    "rate(req_total[2m] offset 30s)",
    'increase(req_total{code="500"}[2m])',
    "sum by (svc) (up) / sum by (svc) (rate(req_total[1m]))",
    'up == 1 unless on (svc) up{svc="b"}',
    "max by (svc) (up offset 1m)",
)


class Plain:
    """The store seen through its one-time reads only: not a `MetricStore`, so the engine reads it
    step by step, as before the shortcut."""

    def __init__(self, store: MetricStore):
        self._store = store

    def __getattr__(self, name: str):
        return getattr(self._store, name)


def _assert_same(store: MetricStore, expr: str, times: np.ndarray) -> None:
    fast, plain = query_range(store, expr, times), query_range(Plain(store), expr, times)
    assert [lab for lab, _, _ in fast] == [lab for lab, _, _ in plain], expr
    for (_, t1, v1), (_, t2, v2) in zip(fast, plain):
        assert t1.tobytes() == t2.tobytes() and v1.tobytes() == v2.tobytes(), expr


@pytest.mark.parametrize("v2", [False, True])
def test_the_same_queries_before_and_after_new_samples_answer_as_the_plain_path(v2):
    rng = np.random.default_rng(3)
    st = MetricStore(step_s=15, dtype=np.float32, chunk_samples=16, prometheus_v2=v2)
    req = [st.series_id("req_total", {"svc": s, "code": c}) for s in "abc" for c in ("200", "500")]
    up = [st.series_id("up", {"svc": s}) for s in "abc"]
    total = np.zeros(len(req))
    for k in range(80):
        t = 15.0 * k
        total += rng.integers(0, 9, len(req))
        if k % 23 == 22:
            total[1] = 0.0  # a counter reset
        keep = rng.random(len(req)) > 0.1  # gaps
        st.record(t, np.array(req)[keep], total[keep])
        st.record(t, up, (rng.random(len(up)) > 0.2).astype(float))
        if k % 7 == 6:
            st.mark_stale(t, [up[2]])  # a series that ends and comes back
            st.record(t, [req[0]], total[0] + 5)  # the latest sample written again
        if k % 10 == 9:  # a dashboard reading the last steps, then again after new samples
            times = np.arange(max(0.0, t - 150.0), t + 1.0, 15.0)
            for expr in QUERIES:
                _assert_same(st, expr, times)
                _assert_same(st, expr, times[-1:])


def test_retention_errors_come_from_the_step_by_step_reads():
    st = MetricStore(step_s=15, dtype=np.float64, chunk_samples=4, retention_s=60)
    sid = st.series_id("req_total", {"svc": "a"})
    for k in range(40):
        st.record(15.0 * k, [sid], float(k))
    times = np.array([60.0, 75.0])
    for expr in ("rate(req_total[1m])", "req_total"):
        with pytest.raises(RetentionError) as fast:
            query_range(st, expr, times)
        with pytest.raises(RetentionError) as plain:
            query_range(Plain(st), expr, times)
        assert str(fast.value) == str(plain.value)


def test_a_parsed_query_is_shared_and_cannot_be_changed():
    expr = "sum by (svc) (rate(req_total[1m]))"
    ast = parse(expr)
    assert parse(expr) is ast
    with pytest.raises(dataclasses.FrozenInstanceError):
        ast.op = "max"  # type: ignore[attr-defined]
    names = metric_names(expr)
    names.append("other")
    assert metric_names(expr) == ["req_total"]


def _signature(node, lab):
    """The per-series signature as the engine worked it out before `signatures`."""
    if node.on is True:
        d = dict(lab)
        return tuple((n, d.get(n, "")) for n in sorted(set(node.labels)))
    drop = set(node.labels) if node.on is False else set()
    return tuple(p for p in lab if p[0] != "__name__" and p[0] not in drop)


def _set_op(node, lhs, rhs, steps):
    """`and` / `unless` row by row, as the engine did before it did them as one array."""
    rpresent = {}
    for lab, row in zip(rhs.labels, rhs.values):
        sig = _signature(node, lab)
        rpresent[sig] = rpresent.get(sig, np.zeros(steps, bool)) | ~np.isnan(row)
    none = np.zeros(steps, bool)
    rows = []
    for lab, row in zip(lhs.labels, lhs.values):
        hit = rpresent.get(_signature(node, lab), none)
        rows.append(np.where(hit if node.op == "and" else ~hit, row, np.nan))
    return np.array(rows).reshape(len(rows), steps)


def test_set_operations_and_signatures_match_the_row_by_row_ones():
    from sre_marathon_gym.tools.promql.engine import Limits, Vector, _Evaluator
    from sre_marathon_gym.tools.promql.parser import Binary

    rng = np.random.default_rng(8)
    steps = 6
    ev = _Evaluator(None, np.arange(steps, dtype=np.float64), Limits())

    def vector(n):
        labels = []
        for _ in range(n):
            lab = {"__name__": str(rng.choice(["a", "b"])), "pod": f"p{rng.integers(6)}"}
            if rng.random() < 0.7:
                lab["node"] = f"n{rng.integers(3)}"
            if rng.random() < 0.3:
                lab["Zone"] = "z"  # sorts before __name__
            labels.append(tuple(sorted(lab.items())))
        values = rng.random((n, steps))
        values[rng.random((n, steps)) < 0.4] = np.nan
        return Vector(labels, values)

    for _ in range(300):
        lhs, rhs = vector(int(rng.integers(0, 12))), vector(int(rng.integers(0, 12)))
        on = [True, False, None][int(rng.integers(3))]
        names = tuple(rng.choice(["pod", "node", "absent"], int(rng.integers(1, 3)), replace=False))
        for op in ("and", "unless"):
            node = Binary(op, None, None, on=on, labels=names if on is not None else ())
            assert ev.signatures(node, lhs.labels) == [_signature(node, lab) for lab in lhs.labels]
            got = ev.set_op(node, lhs, rhs)
            assert got.labels == lhs.labels
            assert got.values.tobytes() == _set_op(node, lhs, rhs, steps).tobytes()


def test_steps_far_apart_are_read_step_by_step(monkeypatch):
    """The grid reads the union of the steps' windows: for steps hours apart that union is mostly
    samples no step reads (a review measured 588 MB for a 2-day store at a 1 h step), so the engine
    reads those step by step; close steps still take the grid. Answers are the same either way."""
    from sre_marathon_gym.tools.promql import engine

    st = MetricStore(dtype=np.float32, chunk_samples=64)
    ids = np.array([st.series_id("req_total", {"svc": s}) for s in "ab"])
    for k in range(2000):
        st.record(k * 15, ids, np.array([k, 2 * k], dtype=float))
    used: list[str] = []
    for name in ("at_grid", "extrapolated_grid"):
        real = getattr(engine, name)
        monkeypatch.setattr(
            engine, name, lambda *a, _real=real, _name=name, **k: used.append(_name) or _real(*a, **k)
        )
    for expr in ("req_total", "rate(req_total[5m])"):
        used.clear()
        _assert_same(st, expr, np.arange(3600.0, 29000.0, 3600.0))
        assert used == [], expr
        _assert_same(st, expr, np.arange(3600.0, 4800.0, 60.0))
        assert used, expr
    # irate and last_over_time read windows themselves: far apart, one read per step, same answers
    widest: list[int] = []
    real_range = MetricStore.range
    monkeypatch.setattr(
        MetricStore, "range", lambda self, ids, a, b: widest.append(int(b - a)) or real_range(self, ids, a, b)
    )
    for expr in ("irate(req_total[5m])", "last_over_time(req_total[5m])"):
        times = np.arange(3600.0, 29000.0, 3600.0)
        widest.clear()
        apart = query_range(st, expr, times)
        assert widest and max(widest) <= 300, expr
        monkeypatch.setattr(engine, "_UNION_MAX", 1e9)  # as before: the whole span at once
        widest.clear()
        whole = query_range(st, expr, times)
        assert max(widest) > 20000, expr
        monkeypatch.setattr(engine, "_UNION_MAX", 2.0)
        assert [(lab, t.tobytes(), v.tobytes()) for lab, t, v in apart] == [
            (lab, t.tobytes(), v.tobytes()) for lab, t, v in whole
        ], expr
