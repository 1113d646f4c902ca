"""Resource and queue signals follow the fault's mechanism (issue 18), read as an SRE reads them: through
the tools (metrics, logs, Kubernetes state) of a simulator with one fault injected."""

from __future__ import annotations

import pytest

from sre_marathon_gym.backends import SimBackend
from sre_marathon_gym.catalog import Fault
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.tools.runner import ToolRunner

APP = "astronomy_shop"
INJECT_S = 300.0
MI = 1024.0 * 1024.0


class _NoAlerts:
    def history(self, until=None):
        return []


def _fault(catalog, mechanism: str, target: str, **params) -> Fault:
    """The catalog's fault of this mechanism on this target, with the issue's parameters (the catalog
    generator may pick other values and ids when it is re-run)."""
    fault = next(f for f in catalog.faults[APP] if f.mechanism == mechanism and f.target == target)
    return fault.model_copy(update={"params": {**fault.params, **params}}) if params else fault


def _run(catalog, fault: Fault | None, until: float) -> tuple[Simulator, ToolRunner]:
    sim = Simulator(catalog, APP, seed=catalog.leaderboard.seed_for(APP))
    sim.advance_to(INJECT_S)
    if fault is not None:
        sim.inject(fault)
    sim.advance_to(until)
    return sim, ToolRunner(SimBackend(sim), _NoAlerts())


def _call(runner: ToolRunner, **args) -> dict:
    result = runner.call(args)
    assert result.ok, result
    return result.data


def _series(runner: ToolRunner, metric: str, matchers: dict, start: float, end: float, **kw) -> list[dict]:
    data = _call(
        runner,
        tool="query_metrics",
        metric=metric,
        matchers=matchers,
        start_s=start,
        end_s=end,
        step_s=15,
        **kw,
    )
    return data["series"]


def _runs(values: list) -> list[list[float]]:
    """Consecutive samples of a running container (a crash-looping container reports no working set)."""
    runs, cur = [], []
    for _, v in values:
        if v:
            cur.append(v)
        elif cur:
            runs.append(cur)
            cur = []
    return runs  # the last run may still be alive: only the runs that ended are returned


def test_memory_grows_to_the_limit_before_an_oom_kill(catalog):
    """A memory limit below the working set: each container's working set rises toward the limit and
    is reset at its restart; the container is OOMKilled only when it reached the limit."""
    limit_mi = 16.0
    _, runner = _run(catalog, _fault(catalog, "memory_limit_cut", "image-provider", mem_limit_mi=16), 900.0)
    pods = _call(runner, tool="get_k8s_state", resource="pods", service="image-provider")["items"]
    killed = [p["name"] for p in pods if p["last_terminated_reason"] == "OOMKilled"]
    assert killed, pods
    limits = _series(
        runner,
        "kube_pod_container_resource_limits",
        {"pod": killed[0], "resource": "memory"},
        INJECT_S,
        900.0,
    )
    assert {v for _, v in limits[0]["values"] if v is not None} == {limit_mi * MI}
    for pod in killed:
        ws = _series(runner, "container_memory_working_set_bytes", {"pod": pod}, INJECT_S, 900.0)
        runs = _runs(ws[0]["values"])
        assert len(runs) >= 2, ws  # several container runs: OOMKilled, restarted, OOMKilled again
        for run in runs:
            assert all(b > a for a, b in zip(run, run[1:])), run  # grows while the container runs
            assert run[-1] <= limit_mi * MI and run[-1] >= 0.75 * limit_mi * MI, run  # killed at the limit
            assert run[0] < 0.75 * limit_mi * MI  # reset at the restart


def test_a_crashing_code_path_is_not_an_oom_kill(catalog):
    """A code crash (a nil dereference in a new revision) exits with an error, not OOMKilled, and its
    logs show the crash, not an OutOfMemoryError; its working set stays flat, far below the limit."""
    _, runner = _run(catalog, _fault(catalog, "code_crash", "checkout"), 900.0)
    pods = _call(runner, tool="get_k8s_state", resource="pods", service="checkout")["items"]
    reasons = {p["last_terminated_reason"] for p in pods if p["restarts"]}
    assert reasons == {"Error"}, pods
    oom = _call(runner, tool="search_logs", service="checkout", query="OutOfMemory", start_s=0, end_s=900)
    assert oom["count"] == 0, oom


def test_consumer_lag_grows_while_the_broker_is_gone(catalog):
    """Kafka scaled to zero: the consumers fetch nothing, so their lag grows, accounting stops logging
    processed orders and both consumers log their client's connection errors; after the broker is back
    the lag drains."""
    fault = _fault(catalog, "scale_to_zero", "kafka")
    sim, runner = _run(catalog, fault, 900.0)
    lag = _series(
        runner, "kafka_consumer_records_lag_max", {"topic": "orders"}, 0.0, 900.0, group_by=["service_name"]
    )
    assert {s["labels"]["service_name"] for s in lag} == {"accounting", "fraud-detection"}
    for s in lag:
        before = [v for t, v in s["values"] if t < INJECT_S]
        during = [v for t, v in s["values"] if t >= INJECT_S + 60]
        assert max(before) == 0.0
        assert during[0] > 0 and all(b > a for a, b in zip(during, during[1:])), s
    orders = _call(
        runner, tool="search_logs", service="accounting", query='"Order details"', start_s=0, end_s=900
    )
    times = [row["timestamp"] for row in orders["logs"]]
    assert times and max(times) < INJECT_S + 60, times  # processed orders before, none while kafka is gone
    for svc, text in (
        ("accounting", "Connection refused"),
        ("fraud-detection", "Broker may not be available"),
    ):
        errs = _call(runner, tool="search_logs", service=svc, query=f'"{text}"', start_s=INJECT_S, end_s=900)
        assert errs["count"] > 0, (svc, errs)
    sim.revert(fault.id)
    sim.advance_to(1200.0)
    lag = _series(runner, "kafka_consumer_records_lag_max", {"topic": "orders"}, 1150.0, 1200.0)
    assert all(v == 0.0 for s in lag for _, v in s["values"]), lag


def test_cpu_throttling_raises_latency(catalog):
    """Cart's CPU limit cut to 20m: its containers are throttled in every period and its p95 (span
    metrics) rises well above the healthy p95 of the same seed."""
    end = 900.0

    def p95(runner: ToolRunner) -> float:
        rows = _series(
            runner,
            "traces_span_metrics_duration_milliseconds_bucket",
            {"service_name": "cart"},
            end,
            end,
            function="p95",
            group_by=["service_name"],
            window_s=300,
        )
        return float(rows[0]["values"][-1][1])

    _, healthy = _run(catalog, None, end)
    _, cut = _run(catalog, _fault(catalog, "cpu_limit_cut", "cart", cpu_limit_m=20), end)
    throttled = _series(
        cut,
        "container_cpu_cfs_throttled_periods_total",
        {"container": "cart"},
        end,
        end,
        function="rate",
        group_by=["container"],
    )
    periods = _series(
        cut,
        "container_cpu_cfs_periods_total",
        {"container": "cart"},
        end,
        end,
        function="rate",
        group_by=["container"],
    )
    assert throttled[0]["values"][-1][1] == pytest.approx(periods[0]["values"][-1][1])  # every period
    assert p95(cut) > 5 * p95(healthy), (p95(healthy), p95(cut))
