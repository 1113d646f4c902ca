"""The layering rules of `docs/ARCHITECTURE.md`, checked on the source's import graph."""

from __future__ import annotations

import pytest
from import_graph import PACKAGE, closure, imports, in_layer, modules, third_party, under

FOUNDATION = (
    "errors",
    "clock",
    "patterns",
    "detmath",
    "quantities",
    "table",
    "logquery",
    "run_record",
    "_moved",
)
SIMULATOR = ("sim",)
MAY_BUILD_THE_SIMULATOR = ("sim", "backends")
MAX_LINES = 800


def _all() -> list[str]:
    return sorted(modules())


def test_the_graph_sees_the_package():
    mods = modules()
    assert f"{PACKAGE}.sim.simulator" in mods and f"{PACKAGE}.envs.marathon" in mods
    assert f"{PACKAGE}.sim.simulator" in closure(f"{PACKAGE}.backends.sim_run")  # edges are followed


@pytest.mark.parametrize("module", _all())
def test_only_sim_and_backends_import_the_simulator(module):
    if under(module, *MAY_BUILD_THE_SIMULATOR):
        return
    assert not in_layer(imports(module), *SIMULATOR), f"{module} imports the simulator; go through backends/"


@pytest.mark.parametrize("module", [m for m in _all() if under(m, "scoring")])
def test_scoring_reads_recordings_only(module):
    reached = closure(module)
    bad = in_layer(
        reached, "sim", "backends", "tools", "envs", "agents", "wrappers", "bundle", "rllib", "cli"
    )
    assert not bad, f"{module} reaches {bad}: scoring must work from a recorded run alone"


@pytest.mark.parametrize("module", [m for m in _all() if under(m, *FOUNDATION)])
def test_foundation_modules_import_only_foundation(module):
    bad = [m for m in imports(module) if m != PACKAGE and not under(m, *FOUNDATION)]
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", [m for m in _all() if under(m, "catalog")])
def test_catalog_models_know_nothing_above_them(module):
    bad = [m for m in imports(module) if m != PACKAGE and not under(m, "catalog", *FOUNDATION)]
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", [m for m in _all() if under(m, "sim")])
def test_the_simulator_imports_only_the_layers_below_it(module):
    bad = [
        m
        for m in imports(module)
        if m != PACKAGE and not under(m, "sim", "catalog", "metric_store", *FOUNDATION)
    ]
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", [m for m in _all() if under(m, "tools")])
def test_tools_reach_a_cluster_only_through_the_backend_protocol(module):
    bad = [
        m
        for m in imports(module)
        if m != PACKAGE
        and m != f"{PACKAGE}.backends"  # the package, whose __init__ loads only the protocol
        and not under(m, "tools", "catalog", "metric_store", "backends.base", *FOUNDATION)
    ]
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize(
    "module",
    [
        m
        for m in _all()
        if under(
            m,
            "sim",
            "catalog",
            "scoring",
            "tools",
            "backends",
            "metric_store",
            "fault_schedule",
            "alerts",
            *FOUNDATION,
        )
    ],
)
def test_lower_layers_do_not_import_gymnasium_or_ray(module):
    assert not third_party(module) & {"gymnasium", "ray"}, f"{module} imports {third_party(module)}"


@pytest.mark.parametrize("module", _all())
def test_nothing_imports_the_command_line(module):
    if under(module, "cli", "orca.cli"):
        return
    assert not in_layer(imports(module), "cli"), f"{module} imports the CLI"


def test_no_package_file_is_over_the_size_limit():
    long = {
        m: n
        for m, p in modules().items()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"split these by concept (at most {MAX_LINES} lines): {long}"


def test_importing_tools_and_scoring_loads_no_simulator():
    """The same rule at run time, package `__init__`s included (a fresh interpreter; gymnasium is
    loaded by the package root, which registers the env ids)."""
    import subprocess
    import sys

    code = (
        "import sys, sre_marathon_gym.tools.runner, sre_marathon_gym.scoring, sre_marathon_gym.scoring.orca;"
        "print(sorted(m for m in sys.modules if m.startswith('sre_marathon_gym.sim')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
