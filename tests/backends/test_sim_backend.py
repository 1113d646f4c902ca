"""SimBackend: the simulator behind the Backend protocol, with the same row shapes as the live one."""

from __future__ import annotations

import pytest

from sre_marathon_gym.backends import Backend, SimBackend
from sre_marathon_gym.core.errors import BackendError
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.tools.runner import ToolRunner


class _NoAlerts:
    def history(self, until=None):
        return []


def test_tool_runner_runs_on_the_sim_backend_and_refuses_a_bare_simulator(catalog):
    sim = Simulator(catalog, "online_boutique", seed=1)
    with pytest.raises(TypeError, match="needs a Backend"):
        ToolRunner(sim, _NoAlerts())
    runner = ToolRunner(SimBackend(sim), _NoAlerts())
    assert isinstance(runner.backend, Backend) and runner.backend.sim is sim
    r = runner.call({"tool": "get_k8s_state", "resource": "deployments", "service": "emailservice"})
    assert r.ok and r.data["items"][0]["name"] == "emailservice"


def test_sim_and_live_rows_have_the_same_shape(catalog):
    pytest.importorskip("kubernetes")
    from live_harness import make_live

    app = catalog.app("online_boutique")
    sim_be = SimBackend(Simulator(catalog, app, seed=1))
    live = make_live(app)
    try:
        for resource in ("pods", "deployments", "nodes"):
            s_rows, l_rows = sim_be.k8s_state(resource, None, 50), live.backend.k8s_state(resource, None, 50)
            assert s_rows and l_rows and set(s_rows[0]) == set(l_rows[0]), resource
        assert set(sim_be.service_config("emailservice")) == set(live.backend.service_config("emailservice"))
        assert sorted(sim_be.service_names()) == live.backend.service_names()
        assert set(sim_be.pod_services().values()) == set(live.backend.pod_services().values())
    finally:
        live.close()


def test_live_only_refusals_are_backend_errors(catalog):
    pytest.importorskip("kubernetes")
    from live_harness import make_live

    live = make_live(catalog.app("online_boutique"))
    try:
        with pytest.raises(BackendError) as exc:
            live.backend.patch_source("emailservice", "email_server.py", None)
        assert exc.value.code == "unavailable"
        code_fault = next(f for f in catalog.faults["online_boutique"] if f.mechanism == "code_error")
        assert not live.backend.supports(code_fault)
        with pytest.raises(BackendError):
            live.backend.inject(code_fault)
    finally:
        live.close()
