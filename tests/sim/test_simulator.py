"""The simulator: deterministic per seed, faults change the model and symptoms emerge from it."""

from __future__ import annotations

import numpy as np
import pytest

from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator, SimulatorError


def run(catalog, app, seed, minutes=20, with_schedule=True):
    schedule = FaultSchedule.generate(catalog, app, seed) if with_schedule else None
    sim = Simulator(catalog, app, seed, schedule=schedule)
    sim.advance_to(minutes * 60)
    return sim


def telemetry(sim):
    ids = np.arange(sim.store.series_count)
    return sim.store.range(ids, 0, sim.now)[1]


@pytest.mark.parametrize("app", ["online_boutique", "astronomy_shop"])
def test_same_seed_gives_identical_telemetry(catalog, app):
    a, b = run(catalog, app, 7), run(catalog, app, 7)
    assert [a.store.labels(i) for i in range(a.store.series_count)] == [
        b.store.labels(i) for i in range(b.store.series_count)
    ]
    np.testing.assert_array_equal(telemetry(a), telemetry(b))
    assert a.cluster.events == b.cluster.events


def test_different_seeds_differ(catalog):
    a, b = run(catalog, "online_boutique", 1), run(catalog, "online_boutique", 2)
    assert a.schedule.to_dict()["faults"] != b.schedule.to_dict()["faults"]
    assert not np.array_equal(telemetry(a)[:, -1], telemetry(b)[:, -1])


def test_healthy_system_serves_without_errors(catalog):
    sim = run(catalog, "train_ticket", 3, minutes=10, with_schedule=False)
    assert sim.last.rt_rate.sum() == pytest.approx(catalog.apps["train_ticket"].load.requests_per_second)
    assert sim.entry_degraded_fraction() < 0.01
    assert all(p.ready for p in sim.cluster.pods.values())


def test_bad_image_tag_stalls_rollout_and_rollback_repairs(catalog):
    fault = next(f for f in catalog.faults["online_boutique"] if f.mechanism == "bad_image_tag")
    sim = Simulator(catalog, "online_boutique", 0, telemetry=False)
    sim.advance_to(120)
    sim.inject(fault)
    sim.advance_to(300)
    statuses = [sim.cluster.pod_status(p) for p in sim.cluster.pods_of(fault.target)]
    assert "ImagePullBackOff" in statuses and "Running" in statuses  # old pod keeps serving
    assert sim.probes.failing(fault.probe)
    sim.act.rollback(fault.target)
    sim.advance_to(420)
    assert not sim.probes.failing(fault.probe)
    assert all(s == "Running" for s in (sim.cluster.pod_status(p) for p in sim.cluster.pods_of(fault.target)))


@pytest.mark.parametrize(
    "mechanism", ["bad_image_tag", "cpu_limit_cut", "memory_limit_cut", "bad_readiness_probe"]
)
def test_a_direct_manifest_change_records_no_cause_of_its_own(catalog, mechanism):
    """`kubectl set`/`patch` without --record: the new revision repeats the previous change-cause, so
    the rollout history shows that the spec changed, not what was injected or its value."""
    fault = next(f for f in catalog.faults["online_boutique"] if f.mechanism == mechanism)
    sim = Simulator(catalog, "online_boutique", 0, telemetry=False)
    sim.advance_to(60)
    dep = sim.cluster.deployments[fault.target]
    before = dep.current
    sim.inject(fault)
    sim.advance_to(120)
    injected = dep.current
    assert injected.number == before.number + 1 and injected.spec != before.spec
    assert injected.cause == before.cause and "kubectl" not in injected.cause
    assert not any(str(v) in injected.cause for v in fault.params.values())
    sim.revert(fault.id)  # the orchestrator's restore is as silent
    sim.advance_to(180)
    assert dep.current.number == injected.number + 1 and dep.current.spec == before.spec
    assert dep.current.cause == before.cause


def test_scale_to_zero_fails_requests_that_need_the_service(catalog):
    fault = next(
        f for f in catalog.faults["online_boutique"] if f.mechanism == "scale_to_zero" and not f.full_outage
    )
    sim = Simulator(catalog, "online_boutique", 0, telemetry=False)
    sim.advance_to(60)
    sim.inject(fault)
    sim.advance_to(120)
    touched = [i for i, rt in enumerate(sim.app.request_types) if fault.target in rt.services]
    untouched = [i for i, rt in enumerate(sim.app.request_types) if fault.target not in rt.services]
    assert (sim.last.rt_fail[touched] > 0.9).all()
    assert (sim.last.rt_fail[untouched] < 0.05).all()


def test_invalid_intervention_raises_simulator_error_with_suggestion(catalog):
    sim = Simulator(catalog, "online_boutique", 0, telemetry=False)
    with pytest.raises(SimulatorError, match="did you mean 'cartservice'"):
        sim.act.restart("cartservic")
    with pytest.raises(SimulatorError, match="replicas"):
        sim.act.scale("cartservice", -1)


def test_exported_series_use_real_metric_names(catalog):
    sim = run(catalog, "astronomy_shop", 5, minutes=5, with_schedule=False)
    names = set(sim.store.names())
    assert {
        "traces_span_metrics_calls_total",
        "kube_pod_status_ready",
        "container_cpu_usage_seconds_total",
        "kube_node_labels",
        "probe_success",
    } <= names
    known = set()
    for m in catalog.metrics.metrics:
        known |= {m.name + s for s in ("_bucket", "_sum", "_count")} if m.type == "histogram" else {m.name}
    assert names <= known
    entry = sim.store.select(
        "traces_span_metrics_calls_total", {"service_name": "frontend-proxy", "span_kind": "SPAN_KIND_SERVER"}
    )
    assert len(entry) > 0 and np.nansum(sim.store.rate(entry, sim.now, 120)) == pytest.approx(20, rel=0.25)


def test_expected_values_follow_input_values_not_cluster_bookkeeping(catalog):
    """The traffic model's feedback (retries, thread holds) moves only when what it reads changes."""
    sim = run(catalog, "train_ticket", 3, minutes=5, with_schedule=False)
    before, state = sim.traffic._expected, sim.traffic.prev_edge_fail.copy()
    sim.cluster.version += 1  # a cluster change that leaves every effect array and readiness as it was
    sim.advance_to(sim.now + 30)
    assert sim.traffic._expected is before
    np.testing.assert_array_equal(sim.traffic.prev_edge_fail, state)
    fault = next(f for f in catalog.faults["train_ticket"] if f.mechanism == "code_error")
    sim.inject(fault)
    sim.advance_to(sim.now + 900)  # a code change passes the build pipeline and a rollout first
    assert sim.traffic._expected is not before
    assert (
        sim.last.svc_fail[sim.compiled.index[fault.target]]
        > before.svc_fail[sim.compiled.index[fault.target]]
    )
