"""Deprecation aliases for renamed modules: `old.Name` still works, with a DeprecationWarning
that names the new home, so user code keeps running for one release while it migrates."""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any


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


__all__ = ["moved_to"]
