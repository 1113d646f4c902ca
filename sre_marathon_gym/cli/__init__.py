"""The `sre-marathon` command: `main` (run, evaluate, score, mcp, ...), `stats`, `orca` and
`report` subcommands, each in its own module.

May import: everything. Nothing imports it (tested).
"""

from __future__ import annotations

from .main import main

__all__ = ["main"]
