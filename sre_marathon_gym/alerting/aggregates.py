"""`Aggregates`: ``sum`` / ``max`` / ``min by (group_by)`` of every rule operand of an evaluation at
once, each as [times, groups] with NaN where a group has no series with a value.

Why: an evaluation aggregates some 60 operands (the rules' A, B and guards), each a handful of
small numpy calls whose cost is mostly per call. Here the operands with the same aggregation share
one pass: each operand's (time, group) cells are numbered in a range of its own, so one bincount (or
``maximum.at``) takes every cell's series in their order, as the operand alone takes them (the same
bits), and an operand's result is a view of the pass's. An operand with one series per group is
the identity (one scatter for all of them; a sum would turn -0.0 into 0.0). Operands joined with
another metric are left to the engine: their groups depend on the join partners at each time.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .rules import CompiledRule, Operand, OperandBatch

__all__ = ["Aggregates", "reduce_cells"]

_Plan = tuple[str, list, np.ndarray, int, list]  # kind, (batch, positions) reads, cells, width, members


class Aggregates:
    """The aggregation plan of a rule list (which values go to which cells), rebuilt when an
    operand's selection, groups or number of groups changes, and the pass over it. (Checked
    without building anything per evaluation: what the evaluation allocates, the garbage
    collector pays for, in the whole process.)"""

    __slots__ = ("_ops", "_seen", "_plan")

    def __init__(self, rules: Iterable[CompiledRule]):
        self._ops = [  # the operands aggregated here (those of every rule but joined ones)
            (o, r)
            for r in rules
            for o in (None if r.kind == "quantile" else r.a, r.b if r.kind != "value" else None, r.guard)
            if o is not None and o.join is None
        ]
        self._seen: list = [None] * (3 * len(self._ops))  # per operand: positions, groups, width planned
        self._plan: list[_Plan] = []

    def compute(self, cache: dict[OperandBatch, np.ndarray], T: int) -> dict[int, np.ndarray]:
        """Each aggregated operand's [T, groups] (read-only), by id(operand); `cache`: the
        evaluation's values of every batch, [T, series]."""
        seen, stale = self._seen, False
        for i, (o, r) in enumerate(self._ops):  # (the arrays are replaced, never changed)
            j = 3 * i
            if seen[j] is not o.idx or seen[j + 1] is not o.gidx or seen[j + 2] != len(r.groups):
                seen[j], seen[j + 1], seen[j + 2], stale = o.idx, o.gidx, len(r.groups), True
        if stale:
            self._plan = _plan([(o, len(r.groups)) for o, r in self._ops])
        out: dict[int, np.ndarray] = {}
        for kind, reads, cells, width, members in self._plan:
            parts = [cache[b][:, at] for b, at in reads]
            vals = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
            if kind == "identity":  # one series per group: NaN stays absent
                res = np.full((T, width), np.nan)
                res[:, cells] = vals
            else:
                cell = (np.arange(T)[:, None] * width + cells[None, :]).ravel()
                res = reduce_cells(kind, cell, vals.ravel(), T, width)
            res.flags.writeable = False
            for o, start, g in members:
                out[id(o)] = res[:, start : start + g]
        return out


def _plan(ops: list[tuple[Operand, int]]) -> list[_Plan]:
    """Per kind of aggregation, the reads (one per batch: the positions of its operands' series,
    operand after operand) and each series' cell, every operand's cells a range of their own."""
    kinds: dict[str, dict[int, list[tuple[Operand, int]]]] = {}
    for o, g in ops:
        kind = "identity" if o.identity else o.agg
        kinds.setdefault(kind, {}).setdefault(id(o.batch), []).append((o, g))
    plan = []
    for kind, by_batch in kinds.items():
        reads, cells, members, width = [], [], [], 0
        for group in by_batch.values():
            reads.append((group[0][0].batch, np.concatenate([o.idx for o, _ in group])))
            for o, g in group:
                cells.append(o.gidx + width)
                members.append((o, width, g))
                width += g
        plan.append((kind, reads, np.concatenate(cells).astype(np.intp), width, members))
    return plan


def reduce_cells(agg: str, cell: np.ndarray, v: np.ndarray, T: int, G: int) -> np.ndarray:
    """sum / max / min of values `v` into cells ``time * G + group``: [T, G], NaN where no value.
    Values are taken in the given order per cell, as one-time evaluations took them."""
    ok = v == v
    if not ok.all():
        cell, v = cell[ok], v[ok]
    present = np.bincount(cell, minlength=T * G) > 0
    if agg == "sum":
        out = np.bincount(cell, weights=v, minlength=T * G).astype(np.float64)
    elif agg == "max":
        out = np.full(T * G, -np.inf)
        np.maximum.at(out, cell, v)
    else:
        out = np.full(T * G, np.inf)
        np.minimum.at(out, cell, v)
    out[~present] = np.nan
    return out.reshape(T, G)
