"""Alert annotations: the subset of Prometheus' Go templates the rule pack uses.

``{{ $labels.x }}``, ``{{ $value }}``, ``| humanize`` and ``| humanizePercentage``, with Go's float
formatting, so rendered annotations equal what Prometheus (and `promtool test rules`) renders.
Apart from `engine` because formatting is its own concept, tested on its own.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal

from ..core.errors import AlertRuleError

_TEMPLATE_RE = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}")
_ACTION_RE = re.compile(r"^(?:\$labels\.([A-Za-z_][A-Za-z0-9_]*)|\$value)(?:\s*\|\s*([A-Za-z]+))?$")
_FILTERS = ("humanize", "humanizePercentage")


def go_float(v: float) -> str:
    """Go's ``fmt.Sprint(float64)`` (``%v`` = shortest ``%g``, exponent form from 1e+06 / below 1e-04)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign, digits, exp = Decimal(repr(float(v))).as_tuple()
    ds = list(digits)
    while len(ds) > 1 and ds[-1] == 0:
        ds.pop()
        exp += 1  # type: ignore[operator]
    while len(ds) > 1 and ds[0] == 0:
        ds.pop(0)
    nd = len(ds)
    dp = nd + int(exp)  # value = 0.d1d2... x 10^dp
    x = dp - 1
    s = "".join(map(str, ds))
    if x < -4 or x >= 6:
        mant = s[0] + ("." + s[1:] if nd > 1 else "")
        out = f"{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    elif dp <= 0:
        out = "0." + "0" * (-dp) + s
    elif dp >= nd:
        out = s + "0" * (dp - nd)
    else:
        out = s[:dp] + "." + s[dp:]
    return ("-" if sign else "") + out


def _go_g4(v: float) -> str:
    """Go's ``%.4g`` (Python's ``%.4g`` agrees except for the spelling of infinities and NaN)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return "%.4g" % v


def humanize(v: float) -> str:
    """Prometheus' ``humanize``: SI prefixes, 4 significant digits (``1.235k``, ``12m``)."""
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _go_g4(v)
    prefix = ""
    if abs(v) >= 1:
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
    else:
        for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
            if abs(v) >= 1:
                break
            prefix = p
            v *= 1000
    return _go_g4(v) + prefix


def humanize_percentage(v: float) -> str:
    """Prometheus' ``humanizePercentage``: ``%.4g%%`` of ``v * 100``."""
    return _go_g4(v * 100) + "%"


def compile_template(text: str, where: str) -> list[_Part]:
    """Split a template into literal text and (label or None for $value, filter) actions."""
    parts: list[_Part] = []
    pos = 0
    for m in _TEMPLATE_RE.finditer(text):
        if m.start() > pos:
            parts.append(text[pos : m.start()])
        action = _ACTION_RE.match(m.group(1))
        if action is None or (action.group(2) is not None and action.group(2) not in _FILTERS):
            raise AlertRuleError(
                f"{where}: unsupported template action {m.group(0)!r}; the engine implements "
                f"$labels.<name>, $value and the filters {', '.join(_FILTERS)}"
            )
        parts.append((action.group(1), action.group(2)))
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
    return parts


_Part = str | tuple[str | None, str | None]  # literal text, or (label or None for $value, filter)


def render_parts(parts: Sequence[_Part], labels: Mapping[str, str], value: float) -> str:
    out: list[str] = []
    for p in parts:
        if isinstance(p, str):
            out.append(p)
            continue
        label, flt = p
        if label is not None:
            out.append(labels.get(label, ""))
        elif flt == "humanize":
            out.append(humanize(value))
        elif flt == "humanizePercentage":
            out.append(humanize_percentage(value))
        else:
            out.append(go_float(value))
    return "".join(out)


def render_template(text: str, labels: Mapping[str, str], value: float) -> str:
    """Render a Prometheus alert template (the subset above) with ``$labels`` and ``$value``."""
    return render_parts(compile_template(text, "template"), labels, value)


__all__ = [
    "compile_template",
    "go_float",
    "humanize",
    "humanize_percentage",
    "render_parts",
    "render_template",
]
