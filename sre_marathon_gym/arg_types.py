"""Argparse types for whole-number options, shared by every subcommand's parser.

Why a module of its own: `cli.py`, `stats_cli.py` and `orca/cli.py` each wrote this parser, with
different messages; and `stats_cli` may not import `cli` (nothing imports the command line).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable


def clip(text: str, n: int = 24) -> str:
    """`text` quoted for an error message, cut to `n` characters (a pasted novel stays one line)."""
    return repr(text) if len(text) <= n else f"{text[:n]!r}... ({len(text)} characters)"


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum], refused in argparse before anything
    loads."""

    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {clip(text)}") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {n}")
        if maximum is not None and n > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {n}")
        return n

    return parse


non_negative_int = whole_number(0)
positive_int = whole_number(1)
