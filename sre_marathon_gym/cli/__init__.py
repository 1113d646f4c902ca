"""The `sre-marathon` command: `commands` (run, evaluate, score, mcp, ... and `main`), the `stats`,
`orca` and `report` subcommands, each in its own module, and their shared argument types
(`arg_types`).

May import: everything. Nothing imports it (tested).
"""

from __future__ import annotations

from ..core.moved import package_was_module
from .commands import main

# `sre_marathon_gym.cli` was the command module before it became this package
__getattr__ = package_was_module(__name__, __path__, "sre_marathon_gym.cli.commands")

__all__ = ["main"]
