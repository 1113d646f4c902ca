"""A bounded, JSON-safe copy of whatever an agent sent: what the record keeps of an invalid call.

Why: an LLM's output reaches `call_tool` through `json.loads` or worse (a value nested hundreds
deep, non-string keys, bytes, arbitrary objects); the record must still serialize, stay small, and
not change if the caller mutates its dict afterwards. The copy is made at call time.
"""

from __future__ import annotations

import math
from typing import Any

MAX_DEPTH = 12
MAX_ITEMS = 64
MAX_STR = 2000


def json_safe(value: Any, depth: int = 0, max_str: int = MAX_STR) -> Any:
    """`value` as plain JSON data: containers cut at `MAX_DEPTH` levels and `MAX_ITEMS` entries,
    strings at `max_str` characters, anything else rendered as a short description."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if abs(value) < 2**63 else f"<int of {value.bit_length()} bits>"
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _cut(value, max_str)
    if isinstance(value, (bytes, bytearray)):
        return f"<{type(value).__name__} of {len(value)} bytes>"
    if depth >= MAX_DEPTH:
        return f"<{type(value).__name__} nested deeper than {MAX_DEPTH} levels>"
    if isinstance(value, dict):
        items = list(value.items())
        out = {
            _cut(k if isinstance(k, str) else repr_of(k), max_str): json_safe(v, depth + 1, max_str)
            for k, v in items[:MAX_ITEMS]
        }
        if len(items) > MAX_ITEMS:
            out["..."] = f"{len(items) - MAX_ITEMS} more entries"
        return out
    if isinstance(value, (list, tuple)):
        out_list = [json_safe(v, depth + 1, max_str) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            out_list.append(f"... {len(value) - MAX_ITEMS} more items")
        return out_list
    return repr_of(value)


def repr_of(value: Any) -> str:
    """A short description that never runs the object's own code (its __repr__ may raise or hang)."""
    return f"<{type(value).__name__}>"


def _cut(text: str, max_str: int = MAX_STR) -> str:
    return text if len(text) <= max_str else text[:max_str] + f"... ({len(text) - max_str} more characters)"


__all__ = ["MAX_DEPTH", "MAX_ITEMS", "MAX_STR", "json_safe", "repr_of"]
