"""Label sets of the metric store: their normal form (the key a series is stored under) and the
per-metric index that matches label selectors against them.

Apart from the store because they are about labels, not samples: the exporters build keys with
them directly (a pod's series extend one normalised key instead of normalising each label set).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

import numpy as np

from ..core.patterns import compile_label_regex

LabelKey = tuple[tuple[str, str], ...]


def normalise_labels(labels: Mapping[str, str] | None) -> LabelKey:
    """Sorted, interned (key, value) tuple; empty values are dropped (Prometheus: empty == absent)."""
    if not labels:
        return ()
    intern = sys.intern
    out = []
    for k, v in labels.items():
        if type(v) is not str:
            v = str(v)
        if v != "":
            out.append((intern(k if type(k) is str else str(k)), intern(v)))
    out.sort()
    return tuple(out)


def extend_labels(base: LabelKey, extra: Mapping[str, str]) -> LabelKey:
    """`normalise_labels({**dict(base), **extra})` for a normalised `base` and string keys, without
    normalising `base` again (a pod's series share its labels and add one or two)."""
    keys = extra.keys()
    out = [item for item in base if item[0] not in keys]
    out.extend(normalise_labels(extra))
    out.sort()
    return tuple(out)


class LabelIndex:
    """Per-metric-name columnar view of label values, extended by the series the name gains (pods
    come and go every few minutes: rebuilding it for each new pod cost more than the queries)."""

    __slots__ = ("n", "_ids", "_values", "_codes", "_arrays")

    def __init__(self) -> None:
        self.n = 0
        self._ids: list[int] = []
        self._values: dict[str, dict[str, int]] = {}  # label -> value -> code ("" = absent)
        self._codes: dict[str, list[int]] = {}  # label -> code per series
        self._arrays: tuple[np.ndarray, dict[str, tuple[list[str], np.ndarray]]] | None = None

    def extend(self, ids: list[int], label_keys: list[LabelKey]) -> None:
        """Add series (in id order) after those already indexed."""
        values, codes = self._values, self._codes
        for key in label_keys:
            row = self.n
            for k, v in key:
                col = codes.get(k)
                if col is None:  # a label new to this name: absent ("") in every earlier series
                    values[k] = {"": 0}
                    col = codes[k] = [0] * row
                col.append(values[k].setdefault(v, len(values[k])))
            self.n = row + 1
            for k, col in codes.items():
                if len(col) < self.n:  # not in this series' labels: absent
                    col.append(values[k].setdefault("", len(values[k])))
        self._ids.extend(ids)
        self._arrays = None

    @property
    def ids(self) -> np.ndarray:
        return self._built()[0]

    @property
    def columns(self) -> dict[str, tuple[list[str], np.ndarray]]:
        """label -> (distinct values, code per series); the code of "" (absent) is its value's index."""
        return self._built()[1]

    def _built(self) -> tuple[np.ndarray, dict[str, tuple[list[str], np.ndarray]]]:
        if self._arrays is None:
            cols = {k: (list(self._values[k]), np.asarray(c, dtype=np.intp)) for k, c in self._codes.items()}
            self._arrays = (np.asarray(self._ids, dtype=np.intp), cols)
        return self._arrays

    def match(self, label: str, op: str, value: str) -> np.ndarray:
        """Boolean mask over this name's series; absent labels compare as "" like Prometheus."""
        if label not in self.columns:
            distinct, codes = [""], np.zeros(self.n, dtype=np.intp)
        else:
            distinct, codes = self.columns[label]
        if op in ("=~", "!~"):
            rx = compile_label_regex(value, f"label {label!r}")  # RE2: linear time, PromQL syntax
            hit = np.fromiter((rx.fullmatch(v) is not None for v in distinct), bool, len(distinct))
        else:
            hit = np.fromiter((v == value for v in distinct), bool, len(distinct))
        if op in ("!=", "!~"):
            hit = ~hit
        return hit[codes]
