"""The alert engine: Prometheus semantics on hand-built series, lifecycle, templating, noise figures.

The hand-built stores use float64 and counters that start far from zero, so PromQL's rate()
extrapolation is a plain factor: with 15 s samples and a window of w seconds, the samples in
(t - w, t] span w - 15 s and rate = (last - first) / (w - 15).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from sre_marathon_gym.alerting.engine import Alert, AlertEngine, AlertEvaluationError, AlertRuleError
from sre_marathon_gym.alerting.templates import go_float, humanize, humanize_percentage, render_template
from sre_marathon_gym.catalog.alerts import AlertRule, RulePack
from sre_marathon_gym.core.errors import SREMarathonError
from sre_marathon_gym.evaluation.alert_noise import alert_ambiguity, alert_compatibility, flapping_share
from sre_marathon_gym.metrics.grid import at_grid, extrapolated_grid
from sre_marathon_gym.metrics.store import MetricStore, bucket_quantile

APP = SimpleNamespace(app="demo", namespace="shop", entry_point="frontend")
NS = "shop"


def rule(name: str, params: dict, for_s: int = 0, annotations: dict | None = None, **kw) -> AlertRule:
    return AlertRule(
        name=name,
        template=kw.get("template", "t"),
        severity=kw.get("severity", "warning"),
        for_s=for_s,
        params=params,
        metrics=[params["a_metric"]],
        expr="(see params)",
        labels={"severity": kw.get("severity", "warning"), "namespace": "{namespace}", "team": "sre"},
        annotations=annotations or {},
    )


def pack(*rules: AlertRule) -> RulePack:
    return RulePack(schema_version=1, templates=[], rules=list(rules))


def store() -> MetricStore:
    return MetricStore(step_s=15, dtype=np.float64)


def run(engine: AlertEngine, st: MetricStore, until: int, write) -> None:
    """Write samples every 15 s with `write(t)` and evaluate after each write."""
    for t in range(0, until + 1, 15):
        write(t)
        engine.evaluate_until(t)


# ------------------------------------------------------------------------------------------------
# ratio rule: pending -> firing -> resolved

ERROR_RATIO = {
    "kind": "ratio",
    "group_by": "namespace,service_name",
    "op": ">",
    "threshold": 0.1,
    "a_metric": "calls_total",
    "a_fn": "rate",
    "a_window_s": 60,
    "a_agg": "sum",
    "a_match.namespace": "{namespace}",
    "a_match.status_code": "ERROR",
    "b_metric": "calls_total",
    "b_fn": "rate",
    "b_window_s": 60,
    "b_agg": "sum",
    "b_match.namespace": "{namespace}",
}


def error_bursts(bursts: list[tuple[int, int]]):
    """ok +10 per sample; errors +5 per sample whose time lies in one of the [start, end] bursts."""
    st = store()
    ok = st.series_id("calls_total", {"namespace": NS, "service_name": "cart", "status_code": "OK"})
    err = st.series_id("calls_total", {"namespace": NS, "service_name": "cart", "status_code": "ERROR"})
    state = {"ok": 1000.0, "err": 1000.0}

    def write(t: int) -> None:
        if t > 0:
            state["ok"] += 10
            if any(a <= t <= b for a, b in bursts):
                state["err"] += 5
        st.record(t, [ok, err], [state["ok"], state["err"]])

    return st, write


def test_ratio_rule_pending_firing_resolved():
    st, write = error_bursts([(315, 600)])
    ann = {
        "description": "{{ $value | humanizePercentage }} of {{ $labels.service_name }} in "
        "{{ $labels.namespace }} failed ({{ $labels.team }})"
    }
    eng = AlertEngine(pack(rule("ErrorRatio", ERROR_RATIO, for_s=60, annotations=ann)), APP, st)
    run(eng, st, 300, write)
    assert eng.pending() == [] and eng.history() == []
    run_from(eng, write, 315, 360)
    (p,) = eng.pending()
    assert p.state == "pending" and p.pending_at == 315 and p.fired_at is None and p.id == "p0001"
    assert p.value == pytest.approx(15 / 45)  # latest value (t = 360): the window is inside the burst
    assert eng.history() == []
    run_from(eng, write, 375, 630)
    (a,) = eng.history()
    assert a.id == "a0001" and a.state == "firing" and a.fired_at == 375 and a.pending_at == 315
    assert a.value == pytest.approx(5 / 35)  # latest value: at 630 only the 585->600 burst is left
    assert a.labels == {
        "alertname": "ErrorRatio",
        "namespace": NS,
        "service_name": "cart",
        "severity": "warning",
        "team": "sre",
    }
    # $labels are the series labels (rule labels are not visible to templates, as in Prometheus)
    assert a.annotations == {"description": "14.29% of cart in shop failed ()"}
    assert eng.firing(630) == [a] and eng.pending(630) == []
    run_from(eng, write, 645, 700)
    (a,) = eng.history()
    assert a.state == "resolved" and a.resolved_at == 645
    # the as-of views reconstruct earlier states
    assert eng.history(until=374) == []
    assert eng.history(until=400)[0].state == "firing" and eng.history(until=400)[0].resolved_at is None
    assert [x.id for x in eng.pending(330)] == ["p0001"] and eng.firing(330) == []
    assert eng.firing(700) == [] and eng.pending_history() == []


def run_from(eng: AlertEngine, write, t0: int, t1: int) -> None:
    for t in range(t0, t1 + 1, 15):
        write(t)
        eng.evaluate_until(t)


def test_firing_value_and_for_boundary():
    st, write = error_bursts([(315, 600)])
    eng = AlertEngine(pack(rule("ErrorRatio", ERROR_RATIO, for_s=60)), APP, st)
    run(eng, st, 375, write)
    (a,) = eng.history()
    assert a.fired_at == 375  # t - ActiveAt >= for: 375 - 315 == 60
    assert a.value == pytest.approx(15 / 45)  # window 330..375 entirely inside the burst


def test_refiring_gets_new_id_and_short_blips_stay_pending():
    st, write = error_bursts([(315, 450), (600, 600), (900, 1050)])
    eng = AlertEngine(pack(rule("ErrorRatio", ERROR_RATIO, for_s=60)), APP, st)
    run(eng, st, 1200, write)
    hist = eng.history()
    assert [a.id for a in hist] == ["a0001", "a0002"]
    assert [a.fired_at for a in hist] == [375, 960]
    assert hist[0].labels == hist[1].labels and all(a.state == "resolved" for a in hist)
    # the 600 blip stays in the 60 s window from 600 to 630 only: pending, never fired
    (blip,) = eng.pending_history()
    assert blip.state == "resolved" and blip.fired_at is None and blip.pending_at == 600
    assert blip.resolved_at == 645 and blip.id == "p0002"
    assert flapping_share(hist) == 1.0  # fired twice within 10 minutes (375, 960 -> 585 s apart)


def test_evaluation_granularity_does_not_matter():
    """evaluate_until every tick or once per agent invocation gives the same history."""
    st, write = error_bursts([(315, 600), (900, 1000)])
    for t in range(0, 1201, 15):
        write(t)
    coarse = AlertEngine(pack(rule("ErrorRatio", ERROR_RATIO, for_s=60)), APP, st)
    for t in range(120, 1201, 120):
        coarse.evaluate_until(t)
    fine = AlertEngine(pack(rule("ErrorRatio", ERROR_RATIO, for_s=60)), APP, st)
    for t in range(0, 1201, 15):
        fine.evaluate(t)
    assert coarse.history() == fine.history() and len(fine.history()) == 2
    assert coarse.evaluations == fine.evaluations == 81


@pytest.mark.parametrize("v2", [False, True])
def test_many_times_at_once_is_bit_identical_to_one_time_queries(v2):
    """The engine and PromQL range queries read several grid points per call (`metrics.grid`:
    `extrapolated_grid`, `at_grid`); each row must be the store's one-time rate / increase / at to
    the last bit: gaps, staleness markers,
    counter resets, zeros and windows reaching before the first sample."""
    rng = np.random.default_rng(7)
    st = MetricStore(dtype=np.float32, prometheus_v2=v2, chunk_samples=16)
    ids = np.array([st.series_id("c", {"i": str(i)}) for i in range(40)])
    counters = np.cumsum(rng.integers(0, 5, (40, 90)), axis=1).astype(float)
    counters[rng.random((40, 90)) < 0.05] = 0.0  # resets
    counters[:4] = 0.0  # flat zero counters
    for k in range(90):
        keep = rng.random(40) > 0.15  # gaps
        st.record(k * 15, ids[keep], counters[keep, k])
        gone = ids[~keep & (rng.random(40) < 0.3)]
        st.mark_stale(k * 15, gone)
    for start, n in [(0, 9), (105, 8), (600, 32), (1200, 1), (1290, 5)]:
        times = np.arange(start, start + 15 * n, 15, dtype=np.float64) - 7.5 * (start == 1290)
        got = [at_grid(st, ids, times)] + [extrapolated_grid(st, ids, times, 120.0, r) for r in (True, False)]
        for i, t in enumerate(times.tolist()):
            want = [st.at(ids, t), st.rate(ids, t, 120.0), st.increase(ids, t, 120.0)]
            for g, w in zip(got, want):
                assert g[i].tobytes() == w.tobytes(), (start, t)


# ------------------------------------------------------------------------------------------------
# quantile rule

LES = ["100", "500", "1000", "+Inf"]


def histogram_store():
    """Service `slow`: spans A (all < 100 ms) and B (500-1000 ms), 10 requests each per sample.
    Service `idle`: buckets exist but never move (no requests: total 0 -> no quantile)."""
    st = store()
    incs = {("slow", "A"): [10, 10, 10, 10], ("slow", "B"): [0, 0, 10, 10], ("idle", "C"): [0, 0, 0, 0]}
    ids, steps = [], []
    for (svc, span), inc in incs.items():
        for le, d in zip(LES, inc):
            lab = {"namespace": NS, "service_name": svc, "span_name": span, "le": le}
            ids.append(st.series_id("dur_bucket", lab))
            steps.append(d)
    ids, steps = np.array(ids), np.array(steps, dtype=float)
    return st, lambda t: st.record(t, ids, 1000.0 + steps * (t // 15))


QUANTILE = {
    "kind": "quantile",
    "group_by": "namespace,service_name",
    "quantile": 0.95,
    "op": "<",
    "threshold": 2000,
    "a_metric": "dur_bucket",
    "a_fn": "rate",
    "a_window_s": 120,
    "a_agg": "sum",
    "a_match.namespace": "{namespace}",
}


def test_quantile_rule_sums_buckets_by_le_and_drops_nan():
    st, write = histogram_store()
    for t in range(0, 301, 15):
        write(t)
    eng = AlertEngine(
        pack(
            rule("P95", QUANTILE),
            rule("P95High", {**QUANTILE, "op": ">", "threshold": 900}),
            rule("P95Higher", {**QUANTILE, "op": ">", "threshold": 1000}),
        ),
        APP,
        st,
    )
    # summed rates per le are proportional to [10, 10, 20, 20]: rank 19 falls in (500, 1000]
    expected = 500 + 500 * (0.95 * 20 - 10) / (20 - 10)
    assert expected == 950
    vec = eng.vector("P95", 300)
    assert vec == {(("namespace", NS), ("service_name", "slow")): pytest.approx(950)}  # `idle` is NaN: absent
    eng.evaluate_until(300)
    fired = {a.rule: a for a in eng.history()}
    assert set(fired) == {"P95", "P95High"}
    assert fired["P95High"].value == pytest.approx(950) and fired["P95High"].labels["service_name"] == "slow"


# ------------------------------------------------------------------------------------------------
# guard (PromQL `and` on the group labels)

GUARDED = {
    **ERROR_RATIO,
    "a_window_s": 120,
    "b_window_s": 120,
    "guard_metric": "calls_total",
    "guard_fn": "rate",
    "guard_window_s": 120,
    "guard_agg": "sum",
    "guard_match.namespace": "{namespace}",
    "guard_op": ">",
    "guard_threshold": 1.0,
}


def test_guard_keeps_only_groups_with_enough_volume():
    st = store()
    per_sample = {"busy": 30.0, "quiet": 6.0}  # 2 req/s and 0.4 req/s, half of them errors
    ids, incs = [], []
    for svc, n in per_sample.items():
        for status in ("OK", "ERROR"):
            lab = {"namespace": NS, "service_name": svc, "status_code": status}
            ids.append(st.series_id("calls_total", lab))
            incs.append(n / 2)
    ids, incs = np.array(ids), np.array(incs)
    eng = AlertEngine(pack(rule("Guarded", GUARDED)), APP, st)
    for t in range(0, 301, 15):
        st.record(t, ids, 1000.0 + incs * (t // 15))
        eng.evaluate_until(t)
    (a,) = eng.history()
    assert a.labels["service_name"] == "busy" and a.value == pytest.approx(0.5)
    # for: 0 fires at the first evaluation where the guard holds; early windows are extrapolated
    # by half a sample interval only (extrapolatedRate): at 60 s busy's rate is 120 * 67.5 / 60 / 120
    assert a.fired_at == 60
    assert eng.vector("Guarded", 300) == {(("namespace", NS), ("service_name", "busy")): pytest.approx(0.5)}


# ------------------------------------------------------------------------------------------------
# offset: traffic drop against the rate 15 minutes earlier

DROP = {
    "kind": "ratio",
    "group_by": "namespace,service_name",
    "op": "<",
    "threshold": 0.5,
    "a_metric": "calls_total",
    "a_fn": "rate",
    "a_window_s": 120,
    "a_agg": "sum",
    "a_match.namespace": "{namespace}",
    "a_match.service_name": "{entry}",
    "b_metric": "calls_total",
    "b_fn": "rate",
    "b_window_s": 120,
    "b_offset_s": 900,
    "b_agg": "sum",
    "b_match.namespace": "{namespace}",
    "b_match.service_name": "{entry}",
    "guard_metric": "calls_total",
    "guard_fn": "rate",
    "guard_window_s": 120,
    "guard_offset_s": 900,
    "guard_agg": "sum",
    "guard_match.namespace": "{namespace}",
    "guard_match.service_name": "{entry}",
    "guard_op": ">",
    "guard_threshold": 0.5,
}


def test_offset_traffic_drop():
    st = store()
    sid = st.series_id("calls_total", {"namespace": NS, "service_name": "frontend"})
    other = st.series_id("calls_total", {"namespace": NS, "service_name": "cart"})  # not the entry point
    eng = AlertEngine(pack(rule("TrafficDrop", DROP)), APP, st)
    value = 10_000.0
    for t in range(0, 3001, 15):
        if t > 0:
            value += 30 if t <= 1200 else 6  # 2 req/s, then 0.4 req/s from 1200 s on
        st.record(t, [sid, other], [value, 0.0])
        eng.evaluate_until(t)
    # rate over 120 s = (sum of the 7 increments in the window) / 105; the baseline is 2 req/s.
    # ratio < 0.5 once 5 of the 7 increments are low: t = 1275 (value 90 / 105 / 2)
    (a,) = eng.history()
    assert a.fired_at == 1275 and a.labels["service_name"] == "frontend"
    assert eng.vector("TrafficDrop", 1260) == {}
    key = (("namespace", NS), ("service_name", "frontend"))
    assert eng.vector("TrafficDrop", 1275) == {key: pytest.approx(90 / 105 / 2)}
    assert eng.vector("TrafficDrop", 1800) == {key: pytest.approx(0.4 / 2)}
    # the alert keeps the last value it held: at 2175 the baseline (t - 900 = 1275) is 90 / 105
    assert a.value == pytest.approx(0.4 / (90 / 105))
    # it resolves when the offset window itself holds 6 low increments (t - 900 = 1290): the
    # baseline 66/105 makes the ratio 0.4 / 0.63 > 0.5
    assert a.resolved_at == 2190
    assert eng.vector("TrafficDrop", 600) == {}  # no drop before


# ------------------------------------------------------------------------------------------------
# `last` per pod: waiting reason, staleness, lookback

WAITING = {
    "kind": "value",
    "group_by": "namespace,pod,container",
    "op": ">",
    "threshold": 0,
    "a_metric": "kube_pod_container_status_waiting_reason",
    "a_fn": "last",
    "a_agg": "sum",
    "a_match.namespace": "{namespace}",
    "a_match.reason": "CrashLoopBackOff",
}


def test_waiting_reason_last_per_pod_with_staleness_and_lookback():
    st = store()

    def sid(pod: str, reason: str) -> int:
        return st.series_id(
            "kube_pod_container_status_waiting_reason",
            {"namespace": NS, "pod": pod, "container": "cart", "reason": reason},
        )

    summary = {"summary": "{{ $labels.pod }}/{{ $labels.container }} crash-looping"}
    eng = AlertEngine(pack(rule("PodCrashLooping", WAITING, for_s=60, annotations=summary)), APP, st)
    for t in range(0, 1201, 15):
        if 150 <= t <= 300:
            st.record(t, [sid("cart-1", "CrashLoopBackOff"), sid("cart-3", "CrashLoopBackOff")], 1.0)
        if t == 315:
            st.mark_stale(t, [sid("cart-1", "CrashLoopBackOff")])  # cart-1's series ended: gone at once
            # cart-3's series just stops: Prometheus keeps seeing it for the 5 min lookback
        st.record(t, [sid("cart-2", "ImagePullBackOff")], 1.0)  # other reason: not selected
        eng.evaluate_until(t)
    by_pod = {a.labels["pod"]: a for a in eng.history()}
    assert set(by_pod) == {"cart-1", "cart-3"}
    assert by_pod["cart-1"].fired_at == 210 and by_pod["cart-1"].resolved_at == 315
    # (300, 600] holds no sample of cart-3: the 5-minute lookback ends at 600
    assert by_pod["cart-3"].fired_at == 210 and by_pod["cart-3"].resolved_at == 600
    assert by_pod["cart-1"].annotations == {"summary": "cart-1/cart crash-looping"}
    assert by_pod["cart-1"].labels == {
        "alertname": "PodCrashLooping",
        "container": "cart",
        "namespace": NS,
        "pod": "cart-1",
        "severity": "warning",
        "team": "sre",
    }
    assert [a.id for a in eng.history()] == ["a0001", "a0002"]  # same firing time: ordered by labels
    assert [a.labels["pod"] for a in eng.history()] == ["cart-1", "cart-3"]


# ------------------------------------------------------------------------------------------------
# the zone join

ZONE = {
    "kind": "value",
    "group_by": "label_topology_kubernetes_io_zone",
    "op": "==",
    "threshold": 0,
    "a_metric": "kube_node_status_condition",
    "a_fn": "last",
    "a_agg": "max",
    "a_match.condition": "Ready",
    "a_match.status": "true",
    "a_join_metric": "kube_node_labels",
    "a_join_on": "node",
    "a_join_labels": "label_topology_kubernetes_io_zone",
}


def test_zone_join_fires_only_when_every_node_of_a_zone_is_down():
    st = store()
    zones = {"a1": "zone-a", "a2": "zone-a", "b1": "zone-b", "b2": "zone-b"}
    ready = {
        n: st.series_id("kube_node_status_condition", {"node": n, "condition": "Ready", "status": "true"})
        for n in [*zones, "x1"]
    }
    labels = [
        st.series_id("kube_node_labels", {"node": n, "label_topology_kubernetes_io_zone": z})
        for n, z in zones.items()
    ]
    summary = {"summary": "zone {{ $labels.label_topology_kubernetes_io_zone }} down"}
    eng = AlertEngine(pack(rule("ZoneNodesNotReady", ZONE, for_s=60, annotations=summary)), APP, st)
    for t in range(0, 901, 15):
        up = {n: 1.0 for n in ready}
        up["x1"] = 0.0  # a node without kube_node_labels: no partner, dropped by the join
        if t >= 300:
            up["a1"] = 0.0  # one node of zone-a: the zone still has a Ready node
        if 300 <= t < 600:
            up["b1"] = up["b2"] = 0.0
        st.record(t, [ready[n] for n in up], list(up.values()))
        st.record(t, labels, 1.0)
        eng.evaluate_until(t)
    (a,) = eng.history()
    assert a.labels == {
        "alertname": "ZoneNodesNotReady",
        "label_topology_kubernetes_io_zone": "zone-b",
        "namespace": NS,
        "severity": "warning",
        "team": "sre",
    }
    assert (a.pending_at, a.fired_at, a.resolved_at) == (300, 360, 600)
    assert a.annotations == {"summary": "zone zone-b down"}
    assert eng.vector("ZoneNodesNotReady", 450) == {(("label_topology_kubernetes_io_zone", "zone-b"),): 0.0}


# ------------------------------------------------------------------------------------------------
# templating


def test_value_formatting_matches_go_and_prometheus():
    assert go_float(3.0) == "3" and go_float(0.5) == "0.5" and go_float(123456.0) == "123456"
    assert go_float(1e6) == "1e+06" and go_float(1234567.0) == "1.234567e+06"
    assert go_float(1e-5) == "1e-05" and go_float(0.0001) == "0.0001" and go_float(-2.5) == "-2.5"
    assert go_float(1 / 3) == "0.3333333333333333" and go_float(math.nan) == "NaN"
    assert humanize(1234.5) == "1.234k" and humanize(0.0123) == "12.3m" and humanize(0) == "0"
    assert humanize(3) == "3" and humanize(2.5e9) == "2.5G" and humanize(1500) == "1.5k"
    assert humanize_percentage(0.1234567) == "12.35%" and humanize_percentage(1) == "100%"
    assert (
        render_template(
            "{{ $labels.pod }} at {{$value}} ({{ $value | humanize }}, {{ $labels.nope }})",
            {"pod": "p-1"},
            2000.0,
        )
        == "p-1 at 2000 (2k, )"
    )


def test_unsupported_template_or_params_are_refused():
    with pytest.raises(AlertRuleError, match="humanizeDuration"):
        bad = {"d": "{{ $value | humanizeDuration }}"}
        AlertEngine(pack(rule("X", ERROR_RATIO, annotations=bad)), APP, store())
    with pytest.raises(SREMarathonError, match="ratoi"):
        AlertEngine(pack(rule("X", {**ERROR_RATIO, "kind": "ratoi"})), APP, store())
    with pytest.raises(SREMarathonError, match="unknown param"):
        AlertEngine(pack(rule("X", {**ERROR_RATIO, "c_metric": "x"})), APP, store())
    eng = AlertEngine(pack(rule("X", ERROR_RATIO)), APP, store())
    eng.evaluate(30)
    with pytest.raises(AlertEvaluationError):
        eng.evaluate(15)


# ------------------------------------------------------------------------------------------------
# the shipped pack on the simulator


@pytest.fixture(scope="module")
def ob_run(catalog):
    from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
    from sre_marathon_gym.sim.simulator import Simulator

    def go():
        app = "online_boutique"
        seed = catalog.leaderboard.seed_for(app)
        schedule = FaultSchedule.generate(catalog, app, seed)
        sim = Simulator(catalog, app, seed, schedule=schedule)
        eng = AlertEngine(catalog.rules, sim.app, sim.store)
        for t in range(120, 1201, 120):
            sim.advance_to(t)
            eng.evaluate_until(t)
        return sim, eng, schedule

    return go(), go()


def test_shipped_pack_fires_on_the_leaderboard_schedule(ob_run, catalog):
    (sim, eng, schedule), _ = ob_run
    assert len(eng.rules) == sum(r.applies_to("online_boutique") for r in catalog.rules.rules)
    hist = eng.history()
    assert hist, "no alert fired in 20 minutes of the leaderboard schedule"
    assert [a.id for a in hist] == [f"a{i:04d}" for i in range(1, len(hist) + 1)]
    for a in hist:
        assert {"alertname", "severity", "namespace"} <= set(a.labels)
        assert a.labels["namespace"] == "online-boutique" and a.labels["alertname"] == a.rule
        assert a.fired_at - a.pending_at >= next(r.for_s for r in catalog.rules.rules if r.name == a.rule)
        assert "{{" not in "".join(a.annotations.values())
    ambiguity = alert_ambiguity(hist, schedule, catalog, store=sim.store)
    assert 0.0 <= ambiguity <= 1.0


def test_same_seed_same_alert_history(ob_run):
    (_, e1, _), (_, e2, _) = ob_run
    assert [a.model_dump() for a in e1.history()] == [a.model_dump() for a in e2.history()]
    assert [a.model_dump() for a in e1.pending_history()] == [a.model_dump() for a in e2.pending_history()]


def test_an_engine_adopting_the_stores_leading_block_routes_as_one_series_at_a_time(ob_run, catalog):
    """The simulator's span series are one block; engines copy views routed with it once (the second
    engine of `ob_run` already did). An engine on a copy of the store without the block routes every
    series itself: views, selections, group codes and alerts must be the same."""
    import copy

    (sim, adopted, _), (sim2, _, _) = ob_run
    assert sim.store.leading_block is not None and sim.store.leading_block is sim2.store.leading_block
    plain_store = copy.deepcopy(sim.store)
    plain_store.leading_block = None
    plain = AlertEngine(catalog.rules, sim.app, plain_store)
    again = AlertEngine(catalog.rules, sim.app, sim.store)
    for t in range(120, 1201, 120):
        plain.evaluate_until(t)
        again.evaluate_until(t)
    for eng in (adopted, again):
        assert [a.model_dump() for a in eng.history()] == [a.model_dump() for a in plain.history()]
        assert [a.model_dump() for a in eng.pending_history()] == [
            a.model_dump() for a in plain.pending_history()
        ]
    # `again` and `plain` met the same series at once (`adopted` met them as the run made them)
    assert again._views.keys() == plain._views.keys()
    for metric, view in again._views.items():
        assert view.ids.tolist() == plain._views[metric].ids.tolist(), metric
        assert view.labels == plain._views[metric].labels, metric
    for r, pr in zip(again.rules, plain.rules):
        assert r.groups == pr.groups, r.name
        for o, po in zip(r.operands, pr.operands):
            assert o.sel.tolist() == po.sel.tolist() and o.gidx.tolist() == po.gidx.tolist(), r.name


def test_an_interrupted_block_adoption_leaves_no_half_built_view(catalog, monkeypatch):
    """The views routed with a block are shared by every later engine of the app: one interrupted
    while building them (Ctrl-C in a reset) must publish nothing half built, and the next engine
    must route as an engine that never saw the block."""
    import copy

    from sre_marathon_gym.alerting import engine as engine_module
    from sre_marathon_gym.alerting.rules import SeriesView
    from sre_marathon_gym.sim.simulator import Simulator

    sim = Simulator(catalog, "online_boutique", 11)
    sim.advance_to(600)
    block = sim.store.leading_block
    engine_module._BLOCK_VIEWS.pop(block, None)  # as in a fresh process
    real, calls = SeriesView.key_codes, []

    def interrupted(self, names):
        calls.append(names)
        if len(calls) == 5:
            raise KeyboardInterrupt
        return real(self, names)

    monkeypatch.setattr(SeriesView, "key_codes", interrupted)
    with pytest.raises(KeyboardInterrupt):
        AlertEngine(catalog.rules, sim.app, sim.store).evaluate_until(600)
    monkeypatch.undo()
    after = AlertEngine(catalog.rules, sim.app, sim.store)
    published = engine_module._BLOCK_VIEWS[block]
    assert 0 < len(published) < len(after._views), "the interrupt came in the middle of the views"
    for metric, view in published.items():
        assert view.ids.tolist() == block.by_name.get(metric, []) and view.has_codes(after._key_names[metric])
    plain_store = copy.deepcopy(sim.store)
    plain_store.leading_block = None
    plain = AlertEngine(catalog.rules, sim.app, plain_store)
    for t in (120, 360, 600):
        after.evaluate_until(t)
        plain.evaluate_until(t)
    assert [a.model_dump() for a in after.pending_history()] == [
        a.model_dump() for a in plain.pending_history()
    ]
    for r, pr in zip(after.rules, plain.rules):
        assert r.groups == pr.groups, r.name
        for o, po in zip(r.operands, pr.operands):
            assert o.sel.tolist() == po.sel.tolist() and o.gidx.tolist() == po.gidx.tolist(), r.name


def test_a_copied_engine_goes_on_like_the_original(catalog):
    """An env leaving a shared world deep-copies its run and engine; the engine's views share their
    label sets with the original's (`SeriesView.__deepcopy__`), so both must go on independently."""
    import copy

    from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
    from sre_marathon_gym.sim.simulator import Simulator

    app = "online_boutique"
    seed = catalog.leaderboard.seed_for(app)
    sim = Simulator(catalog, app, seed, schedule=FaultSchedule.generate(catalog, app, seed))
    eng = AlertEngine(catalog.rules, sim.app, sim.store)
    sim.advance_to(600)
    eng.evaluate_until(600)
    sim2, eng2 = copy.deepcopy((sim, eng))
    assert eng2.store is sim2.store and eng2.rules[0].operands[0].view is not eng.rules[0].operands[0].view
    for t in range(720, 2401, 120):
        for s, e in ((sim, eng), (sim2, eng2)):
            s.advance_to(t)
            e.evaluate_until(t)
    assert [a.model_dump() for a in eng2.history()] == [a.model_dump() for a in eng.history()]
    assert eng.history() and sim.store.series_count > len(sim.store.leading_block) + 1000  # pods came, went
    for metric, view in eng._views.items():
        copied = eng2._views[metric]
        assert copied.ids.tolist() == view.ids.tolist() and copied.labels == view.labels, metric
        assert view.ids.size == sum(sim.store.name(i) == metric for i in range(sim.store.series_count)), (
            metric
        )


def test_vectorised_engine_agrees_with_a_naive_promql_evaluator(ob_run, catalog):
    """Every rule of the pack, at several times, against a per-series Python evaluation."""
    (sim, eng, _), _ = ob_run
    st, app = sim.store, sim.app
    times = [300, 615, 900, 1200]
    checked = 0
    for r in catalog.rules.rules:
        if not r.applies_to("online_boutique"):
            continue
        for t in times:
            got = eng.vector(r.name, t)
            want = naive_vector(st, r, app.namespace, app.entry_point, t)
            assert got.keys() == want.keys(), (r.name, t)
            for k in want:
                assert got[k] == pytest.approx(want[k], rel=1e-9, abs=1e-12), (r.name, t, k)
            checked += len(want)
    assert checked > 0


def naive_vector(st: MetricStore, r: AlertRule, ns: str, entry: str, t: float) -> dict:
    """PromQL of the params convention, one series at a time, with dicts (the obvious way)."""
    p = {
        k: (v.replace("{namespace}", ns).replace("{entry}", entry) if isinstance(v, str) else v)
        for k, v in r.params.items()
    }
    gb = [g for g in str(p["group_by"]).split(",") if g]
    ops = {
        ">": np.greater,
        ">=": np.greater_equal,
        "<": np.less,
        "<=": np.less_equal,
        "==": np.equal,
        "!=": np.not_equal,
    }
    mk = {"match": "=", "match_ne": "!=", "match_re": "=~", "match_nre": "!~"}

    def series(pre: str) -> list[tuple[dict, float]]:
        matchers = {}
        for k, v in p.items():
            if k.startswith(pre) and "." in k:
                kind, label = k[len(pre) :].split(".", 1)
                matchers[label] = (mk[kind], v)
        te = t - float(p.get(pre + "offset_s", 0))
        out = []
        for sid in st.select(p[pre + "metric"], matchers).tolist():
            fn = p[pre + "fn"]
            if fn == "last":
                v = float(st.at([sid], te)[0])
            else:
                v = float(getattr(st, fn)([sid], te, float(p[pre + "window_s"]))[0])
            if not math.isnan(v):
                out.append((st.labels(sid), v))
        if pre + "join_metric" in p:
            on, copy = p[pre + "join_on"], p[pre + "join_labels"].split(",")
            partners = {}
            for sid in st.select(p[pre + "join_metric"]).tolist():
                v = float(st.at([sid], te)[0])
                if not math.isnan(v):
                    partners[st.labels(sid).get(on, "")] = (st.labels(sid), v)
            joined = []
            for lab, v in out:
                if lab.get(on, "") in partners:
                    plab, pv = partners[lab.get(on, "")]
                    joined.append(({**lab, **{c: plab.get(c, "") for c in copy}}, v * pv))
            out = joined
        return out

    def key(lab: dict) -> tuple:
        return tuple(sorted((g, lab[g]) for g in gb if lab.get(g, "") != ""))

    def agg(pre: str) -> dict:
        groups: dict[tuple, list[float]] = {}
        for lab, v in series(pre):
            groups.setdefault(key(lab), []).append(v)
        f = {"sum": sum, "max": max, "min": min}[p[pre + "agg"]]
        return {k: f(vs) for k, vs in groups.items()}

    if p["kind"] == "quantile":
        cells: dict[tuple, dict[float, float]] = {}
        for lab, v in series("a_"):
            le = float(lab["le"])
            cells.setdefault(key(lab), {}).setdefault(le, 0.0)
            cells[key(lab)][le] += v
        vec = {}
        for k, by_le in cells.items():
            les = sorted(by_le)
            q = bucket_quantile(float(p["quantile"]), np.array([[by_le[x] for x in les]]), np.array(les))[0]
            if not math.isnan(q):
                vec[k] = q
    else:
        vec = agg("a_")
        if p["kind"] == "ratio":
            b = {k: v for k, v in agg("b_").items() if v > 0}
            vec = {k: vec[k] / b[k] for k in vec if k in b}
        elif p["kind"] == "difference":
            b = agg("b_")
            vec = {k: vec[k] - b[k] for k in vec if k in b}
    vec = {k: v for k, v in vec.items() if ops[p["op"]](v, float(p["threshold"]))}
    if "guard_metric" in p:
        g = {k for k, v in agg("guard_").items() if ops[p["guard_op"]](v, float(p["guard_threshold"]))}
        vec = {k: v for k, v in vec.items() if k in g}
    return vec


# ------------------------------------------------------------------------------------------------
# noise figures


def _alert(i: int, rule_name: str, labels: dict, fired_at: float, template: str = "t") -> Alert:
    return Alert(
        id=f"a{i:04d}",
        rule=rule_name,
        template=template,
        severity="warning",
        labels={"alertname": rule_name, **labels},
        annotations={},
        state="firing",
        pending_at=fired_at - 60,
        fired_at=fired_at,
        value=1.0,
    )


def test_alert_ambiguity_and_flapping(catalog):
    from sre_marathon_gym.schedule.fault_schedule import FaultSchedule, ScheduledFault

    app = "online_boutique"
    faults = catalog.faults[app]
    pay = next(f for f in faults if f.target == "paymentservice" and "frontend" in f.scope)
    ad = next(
        f
        for f in faults
        if f.target == "adservice" and "paymentservice" not in f.scope and "frontend" in f.scope
    )

    def sched(f, start, end):
        return ScheduledFault(
            fault_id=f.id,
            app=app,
            target=f.target,
            mechanism=f.mechanism,
            category=f.category,
            artifact=f.artifact,
            start_s=start,
            planned_end_s=end,
        )

    schedule = FaultSchedule(
        app=app,
        seed=0,
        injection_s=3600,
        observation_s=1800,
        faults=(sched(pay, 100, 700), sched(ad, 200, 900)),
    )
    alerts = [
        _alert(1, "ServiceErrorRatioCritical", {"service_name": "paymentservice"}, 300),  # pay only
        _alert(2, "EntryErrorRatioCritical", {"service_name": "frontend"}, 300),  # entry: both
        _alert(3, "PodNotReady", {"pod": "adservice-5d8f9c7b6-x2k9q"}, 300),  # ad only (pod -> service)
        _alert(4, "EntryErrorRatioCritical", {"service_name": "frontend"}, 800),  # pay reverted: ad only
        _alert(5, "DeploymentUnavailable", {"deployment": "emailservice"}, 300),  # no fault
    ]
    comp = alert_compatibility(alerts, schedule, catalog)
    assert comp == [[pay.id], [pay.id, ad.id], [ad.id], [ad.id], []]
    assert alert_ambiguity(alerts, schedule, catalog) == pytest.approx(1 / 5)
    # node alerts: compatible with the faults whose target runs on the node (static zone placement)
    node = _alert(6, "NodeNotReady", {"node": catalog.app(app).nodes[0]}, 300)
    assert sorted(alert_compatibility([node], schedule, catalog)[0]) == sorted([pay.id, ad.id])

    flaps = [
        _alert(1, "R", {"pod": "a"}, 0),
        _alert(2, "R", {"pod": "a"}, 500),  # twice within 10 min
        _alert(3, "R", {"pod": "a"}, 2000),  # 1500 s later: not flapping
        _alert(4, "R", {"pod": "b"}, 100),
        _alert(5, "Q", {"pod": "a"}, 200),  # other labels / rule
    ]
    assert flapping_share(flaps) == pytest.approx(2 / 5)
    assert math.isnan(flapping_share([])) and math.isnan(alert_ambiguity([], schedule, catalog))
