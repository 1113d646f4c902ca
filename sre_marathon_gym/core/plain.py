"""Records as plain dicts, exactly as `dataclasses.asdict` makes them, without its generic recursion.

Why: tools hand out log lines and traces as dicts, thousands per call (a trace search, the change
judge's log reads), and `asdict` deep-copies every value one by one (half of a trace search's
time). The records are dataclasses of scalars, flat dicts of scalars and tuples of such records;
anything else falls back to `asdict`, so the result is always `asdict`'s (same keys, same order).
"""

from __future__ import annotations

import dataclasses
from typing import Any

_ATOMIC = (str, int, float, bool, type(None))
_FIELDS: dict[type, tuple[str, ...]] = {}


class _Unusual(Exception):
    """A value `record_dict` does not write itself: `dataclasses.asdict` does."""


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _value(v: Any) -> Any:
    if type(v) in _ATOMIC:
        return v  # `asdict` deep-copies it: the same object
    if type(v) is dict:
        if all(type(k) in _ATOMIC and type(x) in _ATOMIC for k, x in v.items()):
            return dict(v)
        raise _Unusual
    if type(v) in (tuple, list) and all(dataclasses.is_dataclass(x) and not isinstance(x, type) for x in v):
        return type(v)(_record(x) for x in v)
    raise _Unusual


def _record(obj: Any) -> dict:
    return {name: _value(getattr(obj, name)) for name in _field_names(type(obj))}


def record_dict(obj: Any) -> dict:
    """`dataclasses.asdict(obj)` for a dataclass instance."""
    try:
        return _record(obj)
    except _Unusual:
        return dataclasses.asdict(obj)
