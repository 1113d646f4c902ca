"""A simulated run backfilled into a real Prometheus reads back exactly through prometheus-api-client."""

from __future__ import annotations

import os

import numpy as np
import pytest
from prom_helpers import SEED, SHORT, needs_prometheus

from sre_marathon_gym.prometheus import DEFAULT_ORIGIN_S, PrometheusMetrics, PrometheusServer
from sre_marathon_gym.prometheus.export import export_run
from sre_marathon_gym.prometheus.rule_tests import read_like_prometheus_v2
from sre_marathon_gym.prometheus.server import free_port

pytestmark = needs_prometheus


@pytest.fixture(scope="module")
def prom(short_run, tmp_path_factory):
    _, store = short_run
    out = tmp_path_factory.mktemp("prom")
    summary = export_run(store, out)
    server = PrometheusServer(summary["data_dir"]).start()
    yield server, summary
    pid = server.pid
    server.stop()
    with pytest.raises(ProcessLookupError):  # stopped by its PID, nothing left behind
        os.kill(pid, 0)


def _sample_ids(store, every: int = 37) -> np.ndarray:
    return np.arange(0, store.series_count, every, dtype=np.intp)


def test_export_summary_counts_every_sample(short_run, prom):
    _, store = short_run
    _, summary = prom
    rows = list(store.iter_samples())
    assert summary["series"] == len(rows) and summary["samples"] == sum(len(r[2]) for r in rows)
    assert summary["blocks"] and summary["start"] == DEFAULT_ORIGIN_S


def test_raw_range_queries_return_the_stored_samples(short_run, prom):
    """PromQL range queries (query_range, 15 s step) equal the store wherever the store has a sample."""
    _, store = short_run
    server, _ = prom
    from prometheus_api_client import PrometheusConnect

    client = PrometheusConnect(url=server.url, disable_ssl=True)
    end = store.last_time
    import datetime as dt

    checked = 0
    for sid in _sample_ids(store).tolist():
        name, labels = store.name(sid), store.labels(sid)
        selector = name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
        res = client.custom_query_range(
            selector,
            start_time=dt.datetime.fromtimestamp(DEFAULT_ORIGIN_S, dt.UTC),
            end_time=dt.datetime.fromtimestamp(DEFAULT_ORIGIN_S + end, dt.UTC),
            step="15s",
        )
        times, vals = store.range([sid], 0.0, end)
        present = ~np.isnan(vals[0])
        if not present.any():  # a series never written (a span row and status with no span yet)
            assert res == [], selector
            continue
        assert len(res) == 1, selector
        got = {float(t) - DEFAULT_ORIGIN_S: float(v) for t, v in res[0]["values"]}
        for t, v in zip(times[present], vals[0][present]):
            assert got[t] == v, (selector, t)
            checked += 1
    assert checked > 1000


def test_telemetry_source_matches_the_store(short_run, prom):
    """`PrometheusMetrics` answers the store's read interface with the same numbers: raw
    samples exactly, rate/increase exactly under Prometheus 2.42's range rules."""
    _, store = short_run
    server, _ = prom
    source = PrometheusMetrics(server.url)
    ids = _sample_ids(store)
    pids = np.array([source.series_id(store.name(s), store.labels(s)) for s in ids.tolist()])
    end = store.last_time
    t_s, v_s = store.range(ids, 0.0, end)
    t_p, v_p = source.range(pids, 0.0, end)
    assert np.array_equal(t_s, t_p) and np.array_equal(v_s, v_p, equal_nan=True)
    counters = np.array([i for i in ids.tolist() if store.name(i).endswith(("_total", "_bucket"))])
    pc = np.array([source.series_id(store.name(s), store.labels(s)) for s in counters.tolist()])
    with read_like_prometheus_v2(store):
        for t in (120.0, 300.0, 615.0, end):
            a, b = store.rate(counters, t, 120), source.rate(pc, t, 120)
            assert np.array_equal(np.isnan(a), np.isnan(b))
            np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12)
            a, b = store.increase(counters, t, 300), source.increase(pc, t, 300)
            np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12)
    names = source.names()
    assert "traces_span_metrics_calls_total" in names and set(names) == set(store.names())
    assert source.label_values(
        "kube_deployment_status_replicas_available", "deployment"
    ) == store.label_values("kube_deployment_status_replicas_available", "deployment")


def test_env_reads_metrics_and_promql_from_prometheus(catalog, short_run, prom):
    """An env configured with the Prometheus URL answers the metrics tool from Prometheus,
    including raw PromQL; the simulator-only env answers the PromQL from its store."""
    import gymnasium as gym

    server, _ = prom
    env = gym.make("SREMarathon/OnlineBoutique-v3", catalog=catalog, prometheus_url=server.url, **SHORT)
    env.reset(seed=SEED)
    for _ in range(4):
        env.step(None)
    call = {
        "tool": "query_metrics",
        "metric": "kube_deployment_status_replicas_available",
        "group_by": ["deployment"],
        "start_s": 0,
        "end_s": env.unwrapped.sim.now,
    }
    from_prom = env.unwrapped.call_tool(call)
    local = gym.make("SREMarathon/OnlineBoutique-v3", catalog=catalog, **SHORT)
    local.reset(seed=SEED)
    for _ in range(4):
        local.step(None)
    from_sim = local.unwrapped.call_tool(call)
    assert from_prom.ok and from_sim.ok

    def by_labels(data):
        return sorted(data["series"], key=lambda s: sorted(s["labels"].items()))

    assert by_labels(from_prom.data) == by_labels(from_sim.data) and len(from_prom.data["series"]) == 11
    promql = 'sum by (service_name) (rate(traces_span_metrics_calls_total{span_kind="SPAN_KIND_SERVER"}[2m]))'
    res = env.unwrapped.call_tool({"tool": "query_metrics", "promql": promql, "step_s": 60})
    assert res.ok, res
    services = {s["labels"]["service_name"] for s in res.data["series"]}
    assert "frontend" in services and all(
        v is None or v > 0 for s in res.data["series"] for _, v in s["values"]
    )
    sim = local.unwrapped.call_tool({"tool": "query_metrics", "promql": promql, "step_s": 60})
    assert sim.ok and {s["labels"]["service_name"] for s in sim.data["series"]} == services  # tools.promql
    broken = env.unwrapped.call_tool({"tool": "query_metrics", "promql": "sum(rate(x[2m]"})
    assert (
        not broken.ok and broken.error.code == "invalid_arguments" and "parse error" in broken.error.message
    )
    down = gym.make(
        "SREMarathon/OnlineBoutique-v3",
        catalog=catalog,
        **SHORT,
        prometheus_url=f"http://127.0.0.1:{free_port()}",
    )
    down.reset(seed=SEED)
    res = down.unwrapped.call_tool(call)  # nothing listens there: an outage, not a crash
    assert not res.ok and res.error.code == "unavailable"


PROMQL_CASES = (
    'sum by (service_name) (rate(traces_span_metrics_calls_total{span_kind="SPAN_KIND_SERVER"}[2m]))',
    "histogram_quantile(0.95, sum by (le, service_name) "
    "(rate(traces_span_metrics_duration_milliseconds_bucket[5m])))",
    'sum by (service_name) (rate(traces_span_metrics_calls_total{status_code="STATUS_CODE_ERROR"}[5m])) '
    "/ sum by (service_name) (rate(traces_span_metrics_calls_total[5m]))",
    "topk(3, sum by (service_name) "
    '(increase(traces_span_metrics_calls_total{span_kind=~"SPAN_KIND_S.*"}[5m])))',
    "sum without (instance, job) (irate(container_cpu_usage_seconds_total[1m]))",
    "kube_deployment_status_replicas_available < 2 or kube_deployment_status_replicas_available offset 5m",
    "count(up == 1) + max(max_over_time(kube_pod_container_status_restarts_total[10m]))",
    'avg_over_time(probe_success[3m]) > bool 0.5 unless on(service) probe_success{service="frontend"}',
    "-sum by (namespace, deployment) (kube_deployment_status_replicas_available) "
    "+ ignoring(job) min without (instance) (kube_deployment_spec_replicas) >= 0",
    # (a sum of durations: counts tie between services called once per request, and ties are unordered)
    "bottomk(2, avg by (service_name) (delta(traces_span_metrics_duration_milliseconds_sum[4m])))",
    "count by (status_code) (count_over_time(traces_span_metrics_calls_total[2m]) > 4)",
    "sum by (service_name) (rate(traces_span_metrics_calls_total[2m])) > on(service_name) "
    "sum by (service_name) (rate(traces_span_metrics_calls_total[2m] offset 1m)) * 1.05",
    "last_over_time(kube_deployment_status_replicas_available[2m])",
    "last_over_time(kube_deployment_status_replicas_available[2m]) * scalar(count(up))",
    "round(clamp_min(sum by (service_name) (rate(traces_span_metrics_calls_total[5m])), 3), 0.25) "
    "or vector(1)",
    'sqrt(abs(floor(delta(container_memory_working_set_bytes{container="frontend"}[3m]) / 1000)))',
)


@pytest.mark.parametrize("expr", PROMQL_CASES)
def test_promql_on_the_store_matches_prometheus(short_run, prom, expr):
    """`tools.promql` on the store and real Prometheus on the backfilled run answer the same range
    query alike (the store read like 2.42; NaN points, which the store shows as absence, dropped)."""
    from sre_marathon_gym.tools import promql

    _, store = short_run
    server, _ = prom
    source = PrometheusMetrics(server.url)
    end = store.last_time
    times = np.arange(0.0, end + 1e-9, 60.0)
    want = {
        tuple(sorted(lab.items())): {t: v for t, v in zip(ts.tolist(), vs.tolist()) if v == v}
        for lab, ts, vs in source.query_range(expr, 0.0, end, 60)
    }
    with read_like_prometheus_v2(store):
        got = {
            tuple(sorted(lab.items())): dict(zip(ts.tolist(), vs.tolist()))
            for lab, ts, vs in promql.query_range(store, expr, times)
        }
    want = {k: v for k, v in want.items() if v}
    assert want and set(got) == set(want), expr
    for key, points in want.items():
        assert set(got[key]) == set(points), (expr, key)
        for t, v in points.items():
            assert got[key][t] == pytest.approx(v, rel=1e-9, abs=1e-12), (expr, key, t)


def test_cli_exports_a_bundle_and_checks_its_alerts(catalog, short_run, tmp_path, capsys):
    """`sre-marathon export-prometheus BUNDLE --rule-tests` backfills and passes promtool; a second
    export into the same directory is refused instead of duplicating blocks."""
    from sre_marathon_gym.cli.commands import main
    from sre_marathon_gym.recording.bundle import write_bundle

    env, store = short_run
    bundle = write_bundle(tmp_path / "run.bundle", env.unwrapped.record(), store=store, catalog=catalog)
    out = tmp_path / "prom"
    assert main(["export-prometheus", str(bundle), "--out", str(out), "--rule-tests"]) == 0
    text = capsys.readouterr().out
    assert "backfilled 1 block(s)" in text and "promtool test rules" in text and ": PASS" in text
    assert (out / "data").is_dir() and (out / "metrics.om").read_text().endswith("# EOF\n")
    assert main(["export-prometheus", str(bundle), "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["export-prometheus", "--out", str(out)]) == 2  # neither a bundle nor --app


def test_live_backend_reads_prometheus_relative_to_its_episode_start(catalog, short_run, prom):
    """The Kubernetes backend's metric source is `PrometheusMetrics` with t=0 at the episode
    start: here the clock starts where the backfilled run starts, so reads equal the store's."""
    from sre_marathon_gym.backends.kubernetes import KubernetesBackend
    from sre_marathon_gym.core.clock import ManualClock

    server, summary = prom
    _, store = short_run
    clock = ManualClock(start=float(summary["start"]) - 100.0)
    backend = KubernetesBackend(None, catalog.app("online_boutique"), prometheus_url=server.url, clock=clock)
    clock.sleep(100.0)
    backend.start()
    ids = store.select("kube_deployment_status_replicas_available")
    pids = np.array([backend.metrics.series_id(store.name(i), store.labels(i)) for i in ids.tolist()])
    assert np.array_equal(backend.metrics.at(pids, 600.0), store.at(ids, 600.0))


@pytest.mark.parametrize("origin", [float("nan"), float("inf"), True, -1, 1.5, "0", 2**70])
def test_an_origin_that_is_not_a_whole_number_of_seconds_before_year_9999_is_refused(tmp_path, origin):
    """2**70 overflowed the int64 timestamps (promtool then spun); NaN, inf and True got through or
    raised from int()."""
    from sre_marathon_gym.core.clock import MAX_ORIGIN_S
    from sre_marathon_gym.core.errors import TelemetryError
    from sre_marathon_gym.prometheus.openmetrics import write_openmetrics

    rows = [("up", {"job": "x"}, np.array([0.0, 15.0]), np.array([1.0, 1.0]))]
    with pytest.raises(TelemetryError, match="origin_s must be a whole number of seconds"):
        write_openmetrics(rows, tmp_path / "m.om", origin_s=origin)
    write_openmetrics(rows, tmp_path / "m.om", origin_s=MAX_ORIGIN_S)
    assert (tmp_path / "m.om").read_text().endswith("# EOF\n")
