"""PromQL on the embedded simulator: `parse` a practical subset, `evaluate` it as a range query
over a `MetricStore` (see parser.py for the subset, engine.py for the semantics)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .engine import Limits, PromQLLimitError, Vector, evaluate
from .parser import (
    RANGE_FUNCTIONS,
    SUPPORTED,
    PromQLSyntaxError,
    PromQLUnsupportedError,
    Selector,
    parse,
)

__all__ = [
    "Limits",
    "RANGE_FUNCTIONS",
    "PromQLLimitError",
    "PromQLSyntaxError",
    "PromQLUnsupportedError",
    "SUPPORTED",
    "Vector",
    "evaluate",
    "parse",
    "query_range",
    "metric_names",
]


def query_range(
    store: object, expr: str, times: np.ndarray, limits: Limits | None = None
) -> list[tuple[dict[str, str], np.ndarray, np.ndarray]]:
    """[(labels, times, values)] per result series, like `PrometheusMetrics.query_range`: only the
    steps where the series has a sample, series sorted by labels."""
    times = np.asarray(times, dtype=np.float64)
    vec = evaluate(parse(expr), store, times, limits)
    out = []
    for lab, row in sorted(zip(vec.labels, vec.values), key=lambda x: x[0]):
        keep = ~np.isnan(row)
        out.append((dict(lab), times[keep], row[keep]))
    return out


def metric_names(expr: str) -> list[str]:
    """The metric names `expr`'s selectors name (not those only matched by a ``__name__`` regex),
    so that a caller can say which of them the store does not have: PromQL itself answers an
    unknown name with an empty result."""
    return list(_metric_names(expr))


@lru_cache(maxsize=512)
def _metric_names(expr: str) -> tuple[str, ...]:
    """`metric_names`, kept per query string like `parse` (a pure function of the string)."""
    out: list[str] = []
    todo = [parse(expr)]
    while todo:
        node = todo.pop()
        if isinstance(node, Selector):
            names = (
                [node.name]
                if node.name
                else [v for k, op, v in node.matchers if (k, op) == ("__name__", "=")]
            )
            out += [n for n in names if n not in out]
        elif isinstance(node, tuple):
            todo.extend(node)
        elif hasattr(node, "__dataclass_fields__"):
            todo.extend(getattr(node, f) for f in node.__dataclass_fields__)
    return tuple(out)
