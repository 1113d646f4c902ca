"""`healthy_at` hands out copies of one warmed-up simulator: each must be a simulator of its own that
steps as a freshly built and warmed one does."""

from __future__ import annotations

import numpy as np
import pytest

from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.sim.warm_start import healthy_at


def _state(sim: Simulator) -> tuple:
    last = sim.last
    return (
        sim.now,
        tuple(np.asarray(getattr(last, k)).tobytes() for k in sorted(vars(last))),
        sim.degraded.tobytes(),
        tuple(sorted(sim.cluster.pods)),
        len(sim.cluster.events),
    )


def test_copies_are_independent_and_step_as_a_fresh_simulator(catalog):
    app = catalog.app("online_boutique")
    fault = next(f for f in catalog.faults["online_boutique"] if f.mechanism == "code_error")
    fresh = Simulator(None, app, 0, telemetry=False)
    fresh.advance_to(120)
    faulted, quiet = healthy_at(app, 0, 120), healthy_at(app, 0, 120)
    assert faulted is not quiet and faulted.cluster is not quiet.cluster and faulted.rng is not quiet.rng
    assert _state(faulted) == _state(quiet) == _state(fresh)
    faulted.inject(fault)
    fresh.inject(fault)
    for sim in (faulted, quiet, fresh):
        sim.advance_to(600)
    assert _state(faulted) == _state(fresh)  # the copy steps as the fresh one, fault included
    healthy = Simulator(None, app, 0, telemetry=False)
    healthy.advance_to(600)
    assert _state(quiet) == _state(healthy) != _state(faulted)  # its sibling's fault left it alone
    assert healthy_at(app, 0, 120).now == 120  # the prototype did not move either


def test_the_shared_compiled_app_refuses_writes(catalog):
    sim = healthy_at(catalog.app("online_boutique"), 0, 120)
    with pytest.raises(ValueError, match="read-only"):
        sim.compiled.threads[0] = 99.0
