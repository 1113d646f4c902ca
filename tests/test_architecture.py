"""The layering rules of `docs/ARCHITECTURE.md`, checked on the source's import graph."""

from __future__ import annotations

import ast

import pytest
from import_graph import (
    PACKAGE,
    ROOT,
    closure,
    file_edges,
    imports,
    in_layer,
    loops,
    modules,
    third_party,
    under,
)

FOUNDATION = ("core",)
# The layers of docs/ARCHITECTURE.md, bottom up, one folder each: a folder may import the folders of
# its own layer and of the layers before it, and nothing else (`EXCEPTIONS` are the documented ones).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("catalog",),
    ("metrics",),
    ("sim",),
    ("schedule", "alerting"),
    ("prometheus",),
    ("backends",),
    ("tools",),
    ("scoring",),
    ("recording",),
    ("orca",),
    ("envs",),
    ("agents", "wrappers"),
    ("evaluation",),
    ("run_report", "mcp_server", "rllib"),
    ("llm_rl",),
    ("cli",),
)
EXCEPTIONS = {  # folder -> modules above it that it may import, and why (docs/ARCHITECTURE.md)
    "scoring": ("orca", "orca.report", "orca.task_model"),  # the ORCA judge reads ORCA's data models
}
FACE = ("__init__",)  # the package root's own modules: what `import sre_marathon_gym` is
SIMULATOR = ("sim",)
MAY_BUILD_THE_SIMULATOR = ("sim", "backends")
MAX_LINES = 800


def _all() -> list[str]:
    return sorted(modules())


def _folder(module: str) -> str:
    return module.removeprefix(PACKAGE + ".").split(".")[0]


def _rank(folder: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if folder in layer)


def test_the_package_root_holds_only_its_face_and_the_layer_folders():
    files = sorted(p.stem for p in ROOT.glob("*.py"))
    assert files == sorted(FACE), f"move these into their layer's folder: {sorted(set(files) - set(FACE))}"
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders == {f for layer in LAYERS for f in layer}, (
        "a folder that is no layer (or a layer with no folder)"
    )


@pytest.mark.parametrize("folder", [f for layer in LAYERS for f in layer])
def test_each_layer_folder_says_what_it_holds_and_may_import(folder):
    init = ROOT / folder / "__init__.py"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
    assert doc and "May import:" in doc, f"{init}: a docstring that says what it holds and 'May import: ...'"


@pytest.mark.parametrize("module", [m for m in sorted(modules()) if m != PACKAGE])
def test_each_folder_imports_only_its_layer_and_the_layers_before_it(module):
    own = _folder(module)
    allowed = EXCEPTIONS.get(own, ())
    bad = [
        t
        for t in imports(module)
        if t != PACKAGE and _rank(_folder(t)) > _rank(own) and not any(t == f"{PACKAGE}.{a}" for a in allowed)
    ]
    assert not bad, f"{module} ({own}) imports {bad}, from a layer above its own"


@pytest.mark.parametrize("module", [m for m in sorted(modules()) if under(m, "alerting")])
def test_the_alert_engine_never_sees_the_schedule(module):
    """Same layer, one direction: alerts are computed from metrics alone, as a real Prometheus does."""
    assert not in_layer(closure(module), "schedule"), f"{module} reaches the fault schedule"


def test_no_two_package_files_need_each_other():
    """No import loop between files, counting every import (in functions and under TYPE_CHECKING
    too): break one by moving the shared piece down, or merging two files that are one concept."""
    found = loops(file_edges())
    assert not found, "import loops:\n" + "\n".join(
        " <-> ".join(m.removeprefix(PACKAGE + ".") for m in g) for g in found
    )


def test_the_loop_finder_finds_loops():
    """The check above passes because there is no loop, not because it cannot see one."""
    edges = {
        "a": frozenset({"b"}),
        "b": frozenset({"c"}),
        "c": frozenset({"a", "d"}),
        "d": frozenset(),
        "e": frozenset({"e2"}),
        "e2": frozenset({"e"}),
    }
    assert loops(edges) == [["a", "b", "c"], ["e", "e2"]]
    assert loops({"a": frozenset({"b"}), "b": frozenset()}) == []
    real = dict(file_edges())
    core, table = f"{PACKAGE}.core.clock", f"{PACKAGE}.core.table"
    real[core] = real[core] | {table}
    real[table] = real[table] | {core}
    assert [core, table] in loops(real)
    # through the package root: it imports core.version, so core.version importing the root loops
    version = f"{PACKAGE}.core.version"
    assert version in file_edges()[PACKAGE]
    real = dict(file_edges())
    real[version] = real[version] | {PACKAGE}
    assert [PACKAGE, version] in loops(real)


def test_an_own_package_is_no_dependency_of_its_files_but_another_package_is():
    edges = file_edges()[
        f"{PACKAGE}.sim.traffic"
    ]  # `from ..core import detmath`, `from .topology import ...`
    assert f"{PACKAGE}.sim.topology" in edges and f"{PACKAGE}.core.detmath" in edges
    assert f"{PACKAGE}.core" in edges  # importing core.detmath runs core's __init__ first
    assert f"{PACKAGE}.sim" not in edges  # sim's __init__ is already running when traffic's imports run


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
        reached, "sim", "backends", "tools", "envs", "agents", "wrappers", "recording", "rllib", "cli"
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
        m for m in imports(module) if m != PACKAGE and not under(m, "sim", "catalog", "metrics", *FOUNDATION)
    ]
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", [m for m in _all() if under(m, "tools")])
def test_tools_reach_a_cluster_only_through_the_backend_protocol(module):
    bad = [
        m
        for m in imports(module)
        if m != PACKAGE
        and m != f"{PACKAGE}.backends"  # the package, whose __init__ loads only the protocol
        and not under(m, "tools", "catalog", "metrics", "backends.base", *FOUNDATION)
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
            "metrics",
            "schedule",
            "alerting",
            *FOUNDATION,
        )
    ],
)
def test_lower_layers_do_not_import_gymnasium_or_ray(module):
    assert not third_party(module) & {"gymnasium", "ray"}, f"{module} imports {third_party(module)}"


@pytest.mark.parametrize("module", _all())
def test_nothing_imports_the_command_line(module):
    if under(module, "cli"):
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
