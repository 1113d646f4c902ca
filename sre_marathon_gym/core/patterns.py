"""Regular expressions from outside the package, compiled so that matching has bounded cost.

Why RE2 (`google-re2`): Python's `re` backtracks, so an agent's matcher like `(.*.*)*z` takes
exponential time inside one tool call, and `a{4294967296}` raises OverflowError. RE2 matches in
time linear in the input and its syntax is the one Prometheus itself uses (Go's `regexp`), so
label matchers mean what they mean in PromQL: fully anchored (`=~` must match the whole value),
and `.` matches a newline (Prometheus 3 compiles `^(?s:pattern)$`). What RE2 cannot run in linear
time (backreferences, lookaround) is rejected, never emulated. Every refusal is a `PatternError`
that names the pattern; tools report it as `invalid_arguments`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import re2

from .errors import PatternError

__all__ = ["MAX_PATTERN_CHARS", "MAX_REPEAT", "compile_label_regex", "check_pattern_length"]

MAX_PATTERN_CHARS = 1000
"""Longest pattern (label regex or log query) accepted from outside."""
MAX_REPEAT = 1000
"""Largest `{n,m}` count, as in RE2 and Go (RE2 reads an overflowing count as literal text; Go refuses it)."""
_MAX_MEM = 1 << 20  # bytes for one compiled pattern (program + DFA cache); the NFA takes over past it

_REPEAT = re.compile(r"\{(\d+)(?:,(\d*))?\}")  # fixed and trusted: a `{n}`, `{n,}` or `{n,m}` operator


def _options() -> Any:
    opts = re2.Options()
    opts.dot_nl = True  # Prometheus 3: `.` matches "\n" too
    opts.log_errors = False  # errors come back as PatternError, not as lines on stderr
    opts.max_mem = _MAX_MEM
    return opts


_OPTIONS = _options()


def _shown(pattern: str) -> str:
    """The pattern as an error message quotes it (long ones cut, so the message stays readable)."""
    return repr(pattern if len(pattern) <= 80 else pattern[:77] + "...")


def check_pattern_length(pattern: str, what: str = "pattern", of: str = "") -> None:
    """Refuse over-long patterns before any work is spent on them."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(
            f"invalid {what} {_shown(pattern)}{of}: {len(pattern)} characters (at most {MAX_PATTERN_CHARS})"
        )


def _class_end(p: str, i: int) -> int:
    """Index just past the character class opening at `p[i] == "["` (or len(p) if unclosed)."""
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":  # a leading "]" is a literal member
        j += 1
    while j < len(p):
        if p[j] == "\\":
            j += 2
        elif p.startswith("[:", j) and ":]" in p[j + 2 :]:
            j = p.index(":]", j + 2) + 2
        elif p[j] == "]":
            return j + 1
        else:
            j += 1
    return len(p)


def _escape_end(p: str, i: int) -> int:
    """Index just past the escape at `p[i] == "\\"`: `\\Q...\\E`, `\\p{..}` and `\\x{..}` whole."""
    nxt = p[i + 1 : i + 2]
    if nxt == "Q":
        end = p.find("\\E", i + 2)
        return len(p) if end < 0 else end + 2
    if nxt in ("p", "P", "x") and p[i + 2 : i + 3] == "{":
        end = p.find("}", i + 3)
        return len(p) if end < 0 else end + 1
    return i + 2


def _repeat_counts(p: str) -> Iterator[str]:
    """The digit strings of every `{n,m}` repetition operator (not those in classes or escapes)."""
    i = 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            i = _escape_end(p, i)
        elif c == "[":
            i = _class_end(p, i)
        elif c == "{" and (m := _REPEAT.match(p, i)):
            yield from (g for g in m.groups() if g)
            i = m.end()
        else:
            i += 1


def compile_label_regex(pattern: str, where: str = "") -> Any:
    """`pattern` compiled with RE2 for `fullmatch` (PromQL `=~` / `!~`); `where` says whose pattern
    it is in error messages (e.g. "label 'pod'"). Raises `PatternError` for anything refused."""
    pattern = str(pattern)
    of = f" for {where}" if where else ""
    check_pattern_length(pattern, "regex", of)
    for digits in _repeat_counts(pattern):
        if len(digits.lstrip("0")) > 4 or int(digits) > MAX_REPEAT:
            raise PatternError(
                f"invalid regex {_shown(pattern)}{of}: repetition count {digits[:12]} exceeds {MAX_REPEAT}"
            )
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        arg = exc.args[0] if exc.args else ""
        reason = arg.decode("utf-8", "replace") if isinstance(arg, bytes) else str(exc)
        raise PatternError(
            f"invalid regex {_shown(pattern)}{of}: {reason} (RE2 syntax, as in "
            "PromQL: no backreferences or lookaround)"
        ) from None
