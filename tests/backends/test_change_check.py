"""Every kind of benign change, applied alone, fails no symptom probe and fires no alert beyond what
a rolling restart of the same workload (or, for node maintenance, the node's own state) fires."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sre_marathon_gym.backends.change_check import check_change, twins_to_check, validate_changes
from sre_marathon_gym.catalog import APPS

KINDS = {"code", "config", "image", "cpu_limit_m", "mem_limit_mi", "replicas", "netpol", "cordon"}


def test_one_change_of_every_kind_passes_the_harness(catalog):
    checks = validate_changes(catalog, per_kind=1, progress=False)
    assert {c.app for c in checks} == set(APPS)
    kinds = {c.kind for c in checks}
    assert kinds >= KINDS - {"cpu_limit_m"} and "cpu_limit_m" in {
        c.kind for c in checks if c.app != "astronomy_shop"
    }
    failed = [c for c in checks if not c.passed]
    assert not failed, failed[:5]


@pytest.mark.slow
def test_every_benign_twin_passes_the_harness(catalog):
    checks = validate_changes(catalog, progress=False)
    assert len(checks) >= 400
    failed = [c for c in checks if not c.passed]
    assert not failed, failed[:5]


def test_the_harness_catches_a_harmful_change(catalog):
    """The same checks flag a 'benign' change that is not: a CPU limit cut to 5m, and a
    NetworkPolicy that blocks a call the service makes."""
    app = catalog.app("online_boutique")
    twins = dict((c.kind, c) for _, c in twins_to_check(catalog, ["online_boutique"], per_kind=1))
    cut = replace(twins["cpu_limit_m"], new_value="5")
    assert not check_change(catalog, "online_boutique", cut).passed
    edge = next(e for e in app.edges if e.source == "checkoutservice")
    blocking = replace(
        twins["netpol"],
        service=edge.source,
        new_value=edge.target,
        artifact=f"networkpolicy/deny-{edge.source}-to-{edge.target}",
    )
    result = check_change(catalog, "online_boutique", blocking)
    assert result.failing_probes or result.extra_alerts


def test_many_probes_read_at_once_are_each_probe_read_alone(catalog):
    """The harness reads every catalog probe at each tick through `probes_failing`, which computes
    each distinct value once: the verdicts are those of `probe_failing`, healthy and under a fault."""
    from sre_marathon_gym.backends.sim_run import SimulatedRun
    from sre_marathon_gym.schedule.fault_schedule import FaultSchedule

    app = "astronomy_shop"
    probes = list({f.probe.model_dump_json(): f.probe for f in catalog.faults[app]}.values())
    run = SimulatedRun(catalog, app, 0, FaultSchedule(app, 0, 600, 0, faults=()), telemetry=False)
    assert run.probes_failing(probes) == [False] * len(probes)  # no tick yet: nothing fails
    fault = next(f for f in catalog.faults[app] if f.mechanism == "dependency_unavailable")
    seen = set()
    for t in (120, 300):
        run.advance_to(t)
        if t == 120:
            run.sim.inject(fault)
        many = run.probes_failing(probes)
        assert many == [run.probe_failing(p) for p in probes]
        seen.add(any(many))
    assert seen == {False, True}
