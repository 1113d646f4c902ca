"""Every catalog fault, injected alone, shows its symptom, recovers after revert and is repairable."""

from __future__ import annotations

import pytest

from sre_marathon_gym.backends.fault_check import MAX_SEVERITY, check_fault, fault_severity, validate_catalog
from sre_marathon_gym.catalog.flag_behaviour import OUT_OF_MARATHON_CATALOG


@pytest.mark.slow
def test_every_fault_passes_the_validation_harness(catalog):
    checks = validate_catalog(catalog, progress=False)
    assert len(checks) == 700
    failed = [
        (c.fault_id, c.fails, c.entry_serves, c.recovers, c.repaired_by, c.note)
        for c in checks
        if not c.passed
    ]
    assert not failed, failed[:10]
    assert max(c.severity for c in checks if not catalog.fault(c.fault_id).full_outage) <= MAX_SEVERITY
    # symptomless by design (wrong answers, no errors): only the artifact-correction path applies
    assert [c.fault_id for c in checks if not c.observable] == [
        f.id for f in catalog.all_faults() if not f.observable
    ]
    assert sum(not c.observable for c in checks) <= 2


def _spike(catalog, multiplier: float, full_outage: bool):
    base = next(f for f in catalog.faults["online_boutique"] if f.mechanism == "network_delay")
    return base.model_copy(
        update={
            "mechanism": "load_spike",
            "target": "frontend",
            "params": {"multiplier": multiplier},
            "full_outage": full_outage,
        }
    )


def test_the_harness_rejects_a_fault_that_stops_the_service_unless_it_is_an_outage_by_design(catalog):
    """SRE-Marathon's faults are "observable failures while requests continue to be served": a
    fault that degrades more than half of the entry point's requests over its window fails the
    harness, even though its probe fails and it is repairable; marked a full outage, it passes that
    part."""
    app = catalog.app("online_boutique")
    flood = check_fault(app, _spike(catalog, 10.0, full_outage=False))
    assert flood.severity > MAX_SEVERITY and flood.severity == pytest.approx(
        fault_severity(app, _spike(catalog, 10.0, full_outage=False)), abs=1e-4
    )
    assert not flood.entry_serves and not flood.passed and "degrades" in flood.note
    assert check_fault(app, _spike(catalog, 10.0, full_outage=True)).entry_serves


def test_full_outages_are_a_small_named_share(catalog):
    """Full outages are a small named share: scale-to-zero or a failing readiness probe of a service
    every request needs."""
    outages = [f for f in catalog.all_faults() if f.full_outage]
    assert len(outages) <= 0.03 * len(catalog.all_faults())
    for f in outages:
        app = catalog.app(f.app)
        on_every_path = all(f.target in rt.services for rt in app.request_types)
        assert f.mechanism in ("scale_to_zero", "bad_readiness_probe") and on_every_path, f.id


def test_flags_left_out_of_the_catalog_really_stop_the_shop(catalog):
    """A flag stays out of SRE-Marathon's catalog only while the simulator's version of it is too
    severe; once the simulator models it faithfully, the exclusion must go (and the flag come back)."""
    app = catalog.app("astronomy_shop")
    template = next(f for f in catalog.faults["astronomy_shop"] if f.mechanism == "feature_flag")
    assert OUT_OF_MARATHON_CATALOG
    for name in OUT_OF_MARATHON_CATALOG:
        flag = next(fl for fl in app.feature_flags if fl.name == name)
        fault = template.model_copy(update={"params": {"flag": name, "variant": flag.on_variant}})
        assert fault_severity(app, fault) > MAX_SEVERITY, name
        assert not any(f.params.get("flag") == name for f in catalog.faults["astronomy_shop"])


def _live(app, fault, probe):
    """The harness's window and recovery on a live simulator, tick by tick: (first failure, lowest
    share served, severity, recovered)."""
    from sre_marathon_gym.backends.fault_check import RECOVERY_S, STABLE_S, WARMUP_S
    from sre_marathon_gym.core.clock import TICK_S
    from sre_marathon_gym.sim.simulator import Simulator

    sim = Simulator(None, app, 0, telemetry=False)
    sim.advance_to(WARMUP_S)
    sim.inject(fault)
    before, first, served = sim.degraded.copy(), None, 1.0
    while sim.now + TICK_S <= WARMUP_S + fault.duration.min_s:
        sim.advance_to(sim.now + TICK_S)
        if first is None and sim.probes.failing(probe):
            first = sim.now
        total = sim.last.rt_rate.sum()
        served = min(served, float(((1 - sim.last.rt_fail) * sim.last.rt_rate).sum() / total))
    n, bad = (sim.degraded - before).tolist()
    sim.revert(fault.id)
    streak, recovered, deadline = 0.0, False, sim.now + RECOVERY_S
    while sim.now + TICK_S <= deadline and not recovered:
        sim.advance_to(sim.now + TICK_S)
        streak = 0.0 if sim.probes.failing(probe) else streak + TICK_S
        recovered = streak >= STABLE_S
    return first, served, bad / n, recovered


def test_one_alone_run_judges_every_probe_as_a_live_run_does(catalog):
    """`AloneRun` records the run once and judges any probe on it (the fault generator checks many
    probes and remedies of a fault): each probe's first failure, recovery and the run's severity are
    those of a live simulator watched tick by tick, for probes that fail, that never fail and that
    stay failing after the revert; a run of another fault is refused."""
    from sre_marathon_gym.backends.fault_check import AloneRun
    from sre_marathon_gym.catalog.faults import SymptomProbe

    app = catalog.app("online_boutique")
    faults = {f.mechanism: f for f in catalog.faults["online_boutique"]}
    outcomes = set()
    for mechanism in ("code_error", "network_delay", "memory_limit_cut", "scale_to_zero"):
        fault = faults[mechanism]
        run = AloneRun(app, fault)
        probes = [
            fault.probe,
            SymptomProbe(kind="restarts_per_5m", service=fault.target, threshold=0),
            SymptomProbe(kind="ready_replicas_ratio", service=fault.target, threshold=1.0),
            SymptomProbe(kind="service_latency_p95_ms", service=fault.target, threshold=100),
            SymptomProbe(kind="service_latency_p95_ms", service=fault.target, threshold=0.001),  # never heals
        ]
        for probe in probes:
            first, served, severity, recovered = _live(app, fault, probe)
            assert run.first_fail(probe) == first, (mechanism, probe.kind)
            assert run.recovers(probe) == recovered, (mechanism, probe.kind)
            assert run.served == served and run.severity == severity, mechanism
            outcomes.add((first is not None, recovered))
            judged = fault.model_copy(update={"probe": probe})
            assert check_fault(app, judged, alone=run) == check_fault(app, judged), (mechanism, probe.kind)
    assert {(True, True), (False, True), (True, False)} <= outcomes  # every kind of probe was judged
    with pytest.raises(ValueError, match="another fault"):
        check_fault(app, faults["code_error"], alone=AloneRun(app, faults["network_delay"]))
    with pytest.raises(ValueError, match="another app or seed"):
        check_fault(app, faults["code_error"], seed=1, alone=AloneRun(app, faults["code_error"]))
