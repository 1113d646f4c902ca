"""Deprecation aliases for moved modules: `old.Name` still works, with a DeprecationWarning that
names the new home, so user code keeps running for one release while it migrates.

One table (`MOVED_MODULES`) and one import hook serve every move, so an alias needs no file of its
own and the package's folders hold only what lives there.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

_P = "sre_marathon_gym"
MOVED_MODULES: dict[str, str] = {
    # old module -> its new home (each old name keeps working, with a warning, for one release)
    f"{_P}.orchestrator": f"{_P}.schedule.fault_schedule",
    f"{_P}.sim.telemetry": f"{_P}.metrics.store",
    f"{_P}.scoring.run": f"{_P}.core.run_record",
    **{
        f"{_P}.{old}": f"{_P}.{new}"
        for old, new in {
            "errors": "core.errors",
            "clock": "core.clock",
            "patterns": "core.patterns",
            "detmath": "core.detmath",
            "quantities": "core.quantities",
            "table": "core.table",
            "logquery": "core.logquery",
            "run_record": "core.run_record",
            "arg_types": "cli.arg_types",
            "metric_store": "metrics.store",
            "fault_schedule": "schedule.fault_schedule",
            "change_stream": "schedule.change_stream",
            "benign_edits": "schedule.benign_edits",
            "alerts": "alerting.engine",
            "alert_rules": "alerting.rules",
            "alert_templates": "alerting.templates",
            "bundle": "recording.bundle",
            "bundle_archive": "recording.archive",
            "bundle_metrics": "recording.metrics",
            "bundle_scoring": "recording.rescoring",
            "episode_runner": "evaluation.episode_runner",
            "reports": "evaluation.reports",
            "fidelity_stats": "evaluation.fidelity_stats",
            "alert_noise": "evaluation.alert_noise",
            "stats_cli": "cli.stats",
            "orca.evaluate": "evaluation.orca",
            "agents.symptoms": "tools.symptoms",
            "agents.change_planes": "tools.change_planes",
        }.items()
    },
}


def moved_to(old: str, new: str) -> Callable[[str], Any]:
    """A module `__getattr__` for module `old` that forwards every attribute to module `new`."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        target = importlib.import_module(new)
        value = getattr(target, name)  # AttributeError names `new`'s missing attribute
        warnings.warn(
            f"{old}.{name} moved to {new}.{name}; {old} will be removed", DeprecationWarning, stacklevel=2
        )
        return value

    return __getattr__


def package_was_module(package: str, path: list[str], new: str) -> Callable[[str], Any]:
    """The `__getattr__` of a package that replaced a module of the same name (`evaluation`, `cli`):
    the old module's names still resolve, with a warning naming `new`; the package's own submodule
    names are left to the import system."""
    import pkgutil

    submodules = frozenset(m.name for m in pkgutil.iter_modules(path))
    forward = moved_to(package, new)

    def __getattr__(name: str) -> Any:
        if name in submodules:
            raise AttributeError(name)
        return forward(name)

    return __getattr__


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, new: str):
        self.new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        module.__doc__ = f"Deprecated: moved to `{self.new}`."
        module.__getattr__ = moved_to(module.__name__, self.new)  # type: ignore[method-assign]


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Answers the old names of `MOVED_MODULES` with alias modules; every other import passes by."""

    def find_spec(
        self, fullname: str, path: Any = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED_MODULES.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install_aliases() -> None:
    """Put the finder on `sys.meta_path` once (the package root calls it on import)."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())


__all__ = ["MOVED_MODULES", "MovedModuleFinder", "install_aliases", "moved_to", "package_was_module"]
