"""ORCA's layering: the judge reads recorded data only, and only `sim/` and `backends/` import the simulator.

(a) `scoring.orca` (the judge) works from tasks and reports: nothing it imports, however indirectly,
is the simulator, the tool layer or a backend. (b) ORCA's modules and the agents reach the simulator
through `backends/` (`SimBackend`, `run_flag_schedule`), never by importing `sim` themselves.
"""

from __future__ import annotations

import pytest
from import_graph import PACKAGE, closure, direct_imports, import_path, modules_under, within

JUDGE = f"{PACKAGE}.scoring.orca"
SIM = f"{PACKAGE}.sim"
FORBIDDEN_FOR_THE_JUDGE = (SIM, f"{PACKAGE}.tools", f"{PACKAGE}.backends")


def test_the_graph_follows_relative_and_transitive_imports():
    # the world is simulated through the backend: transitively, not directly, the simulator
    world = f"{PACKAGE}.orca.world"
    assert f"{PACKAGE}.backends.sim" in direct_imports(world)
    assert f"{PACKAGE}.orca.schedule" in direct_imports(world)  # `from .schedule import ...`
    assert f"{PACKAGE}.orca" in direct_imports(world)  # `from . import APP, DAY_S`
    assert f"{SIM}.simulator" in closure(world)
    assert import_path(world, SIM)[:2] == [world, f"{PACKAGE}.backends.sim"]


def test_the_judge_imports_no_simulator_tool_or_backend():
    reached = closure(JUDGE)
    assert {f"{PACKAGE}.orca.task_model", f"{PACKAGE}.orca.report", f"{PACKAGE}.scoring"} <= reached
    for layer in FORBIDDEN_FOR_THE_JUDGE:
        bad = sorted(m for m in reached if within(m, layer))
        assert not bad, f"the ORCA judge imports {bad} (via {' -> '.join(import_path(JUDGE, layer) or [])})"


@pytest.mark.parametrize("package", [f"{PACKAGE}.orca", f"{PACKAGE}.agents"])
def test_orca_and_agents_reach_the_simulator_only_through_backends(package):
    modules = modules_under(package)
    assert len(modules) > 3
    for module in modules:
        bad = sorted(n for n in direct_imports(module) if within(n, SIM))
        assert not bad, f"{module} imports {bad}: go through sre_marathon_gym.backends"
