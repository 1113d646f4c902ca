"""Argparse types for whole-number options, shared by every subcommand's parser.

Why a module of its own: `main`, `stats` and `orca` each wrote this parser, with different
messages.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


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


def file_with_suffix(suffix: str) -> Callable[[str], str]:
    """An argparse type: a file path ending in `suffix` (matplotlib picks the format from the suffix,
    and would otherwise append one, so the path printed would not be the file written)."""

    def parse(text: str) -> str:
        path = Path(text)
        if path.suffix.lower() != suffix or text.endswith(("/", "\\")):  # "out/.png" has no suffix
            raise argparse.ArgumentTypeError(f"expected a file name ending in {suffix}, got {clip(text)}")
        return text

    return parse


def name_list(text: str) -> list[str]:
    """An argparse type: comma-separated names, at least one, none empty, none twice (a duplicate
    would run twice and write the same bundle; an empty list would print an empty table)."""
    names = [n.strip() for n in text.split(",")]
    if not any(names):
        raise argparse.ArgumentTypeError("expected at least one name")
    if not all(names):
        raise argparse.ArgumentTypeError(f"an empty name in {clip(text, 60)}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise argparse.ArgumentTypeError(f"named twice: {', '.join(dup)}")
    return names


non_negative_int = whole_number(0)
positive_int = whole_number(1)
