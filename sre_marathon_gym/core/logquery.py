"""`search_logs` query semantics, shared by every backend so one tool call means the same thing
on the simulator and on a live cluster.

- `query`: whitespace-separated terms (double quotes group a phrase); every term must occur,
  case-insensitively, in the message, an attribute value or the pod name; `-term` excludes.
- Terms are substrings, not regexes (bounded cost); a query has at most `MAX_PATTERN_CHARS` characters.
- `level`: the MINIMUM severity (DEBUG < INFO < WARN < ERROR; WARNING is WARN), not an exact match.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from .errors import UnknownNameError
from .patterns import check_pattern_length

LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")
LEVEL_RANK = {"DEBUG": -1, "INFO": 0, "WARN": 1, "WARNING": 1, "ERROR": 2}


def min_rank(level: str | None) -> int:
    """The rank a record needs to pass `level` (every record passes None)."""
    if level is None:
        return LEVEL_RANK["DEBUG"]
    lv = str(level).upper()
    if lv not in LEVEL_RANK:
        raise UnknownNameError("log level", str(level), LEVELS)
    return LEVEL_RANK[lv]


def rank(level: str) -> int:
    """A record's severity rank (unknown levels count as INFO)."""
    return LEVEL_RANK.get(str(level).upper(), 0)


def parse_query(query: str | None) -> tuple[list[str], list[str]]:
    """(terms that must occur, terms that must not), lower-cased. Terms are plain substrings, never
    regexes; the query's length is bounded so one search costs at most lines x that length."""
    if not query:
        return [], []
    check_pattern_length(query, "log query")
    try:
        toks = shlex.split(query)
    except ValueError:  # an unbalanced quote: plain whitespace split
        toks = query.split()
    inc = [t.lower() for t in toks if not t.startswith("-") or len(t) == 1]
    exc = [t[1:].lower() for t in toks if t.startswith("-") and len(t) > 1]
    return inc, exc


def matches(inc: list[str], exc: list[str], message: str, attributes: Mapping[str, object], pod: str) -> bool:
    """Whether a record with this message, these attributes and this pod passes the parsed query."""
    if not inc and not exc:
        return True
    hay = (message + " " + " ".join(str(v) for v in attributes.values()) + " " + pod).lower()
    return all(t in hay for t in inc) and not any(t in hay for t in exc)


__all__ = ["LEVELS", "LEVEL_RANK", "matches", "min_rank", "parse_query", "rank"]
