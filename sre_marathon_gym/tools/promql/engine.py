"""Evaluates a parsed PromQL expression as a range query over a `MetricStore`.

Why on the store and not a second implementation: every selector and range function is answered
by the store's own PromQL-semantics reads (`at` with the 5 min lookback and staleness, `rate` /
`increase` / `delta` / `*_over_time` with Prometheus 3's windows, `bucket_quantile`), the same
ones the alert engine and the metric tool's `function` path use, so a PromQL query agrees with
``function: rate`` / ``p95`` and with the alerts. This module adds only what PromQL composes on
top: label grouping, vector matching and set operations, evaluated per step of the range query.

A vector is a list of label sets and a [series, steps] array in which NaN means "no sample at
this step" (a departure: a computed NaN, such as 0/0, is indistinguishable from absence, so it is
dropped where Prometheus would return the value NaN); ``time()`` is the simulated time in seconds
(the clock of start_s/end_s), not Unix time; ties in topk/bottomk go to the series read first
(Prometheus leaves their order open). Work is bounded (`Limits`): series per
selector, series x steps over all selectors, and samples read by range functions; a query over a
bound is a `PromQLLimitError` telling the agent how to narrow it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...core.errors import PromQLError, RetentionError
from ...core.patterns import compile_label_regex
from ...metrics.grid import at_grid, extrapolated_grid
from ...metrics.store import MetricStore, bucket_quantile
from .parser import COMPARISON_OPS, RANGE_FUNCTIONS, Aggregate, Binary, Call, Number, Selector, Unary

# the grid reads the union of the steps' windows: only while it is at most this many times their sum
_UNION_MAX = 2.0


def _far_apart(times: list[float], window_s: float) -> bool:
    """Whether one read of the union of the steps' windows would be mostly samples no step reads."""
    return times[-1] - times[0] + window_s > _UNION_MAX * window_s * len(times)


_ELEMENTWISE = {"abs": np.abs, "ceil": np.ceil, "floor": np.floor, "sqrt": np.sqrt}

__all__ = ["Limits", "PromQLLimitError", "evaluate", "Vector"]

LabelSet = tuple[tuple[str, str], ...]  # sorted (name, value) pairs, __name__ included when kept


class PromQLLimitError(PromQLError):
    """The query would do more work than one tool call may; the message says what to narrow."""


@dataclass(frozen=True)
class Limits:
    series_per_selector: int = 20_000
    cells: int = 3_000_000  # series x steps summed over every selector of the query
    samples_read: int = 60_000_000  # samples range functions read (series x steps x window samples)
    metric_names: int = 50  # names one {__name__=~"..."} selector may match


@dataclass
class Vector:
    labels: list[LabelSet]
    values: np.ndarray  # [len(labels), steps]


def evaluate(node: object, store: object, times: np.ndarray, limits: Limits | None = None) -> Vector:
    """`node` at every time of `times` (a scalar result is one series with no labels)."""
    ev = _Evaluator(store, np.asarray(times, dtype=np.float64), limits or Limits())
    out = ev.eval(node)
    if not isinstance(out, Vector):
        out = Vector([()], out[None, :])
    keep = ~np.isnan(out.values).all(axis=1) if out.values.size else np.zeros(len(out.labels), bool)
    return Vector([lab for lab, k in zip(out.labels, keep.tolist()) if k], out.values[keep])


def _drop_name(lab: LabelSet) -> LabelSet:
    return tuple([p for p in lab if p[0] != "__name__"])  # a list first: faster than a generator


class _Evaluator:
    def __init__(self, store: object, times: np.ndarray, limits: Limits):
        self.store = store
        self.times = times
        self.limits = limits
        self.cells = 0
        self.samples = 0

    def eval(self, node: object) -> Vector | np.ndarray:
        if isinstance(node, Number):
            return np.full(self.times.size, node.value)
        if isinstance(node, Selector):
            return self.instant(node)
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, Aggregate):
            return self.aggregate(node)
        if isinstance(node, Unary):
            v = self.eval(node.expr)
            if isinstance(v, Vector):
                return Vector([_drop_name(lab) for lab in v.labels], -v.values)
            return -v
        if isinstance(node, Binary):
            return self.binary(node)
        raise PromQLError(f"cannot evaluate {type(node).__name__}")  # the parser never builds one

    # ------------------------------------------------------------ selectors
    def select(self, sel: Selector, window_s: float = 0.0) -> tuple[np.ndarray, list[LabelSet]]:
        store = self.store
        names = [sel.name] if sel.name else None
        rest = []
        for label, op, value in sel.matchers:
            if label != "__name__":
                rest.append((label, op, value))
                continue
            pool = names if names is not None else store.names()  # type: ignore[attr-defined]
            if op in ("=~", "!~"):
                rx = compile_label_regex(value, "label '__name__'")
                hit = [n for n in pool if (rx.fullmatch(n) is not None) == (op == "=~")]
            else:
                hit = [n for n in pool if (n == value) == (op == "=")]
            names = hit
        if names is None or not names:
            return np.empty(0, dtype=np.intp), []
        if len(names) > self.limits.metric_names:
            raise PromQLLimitError(
                f"a selector matches {len(names)} metric names (at most {self.limits.metric_names}): "
                "name the metric"
            )
        ids_all: list[np.ndarray] = []
        for name in names:
            first: dict[str, tuple[str, str]] = {}
            extra: list[tuple[str, str, str]] = []
            for label, op, value in rest:
                if label in first:
                    extra.append((label, op, value))
                else:
                    first[label] = (op, value)
            ids = store.select(name, first)  # type: ignore[attr-defined]
            for label, op, value in extra:
                ids = np.intersect1d(ids, store.select(name, {label: (op, value)}))  # type: ignore[attr-defined]
            ids_all.append(np.asarray(ids, dtype=np.intp))
        ids = np.concatenate(ids_all)
        lim = self.limits
        if ids.size > lim.series_per_selector:
            raise PromQLLimitError(
                f"selector {_show(sel)} matches {ids.size} series (at most {lim.series_per_selector}): "
                "add label matchers"
            )
        self.cells += ids.size * self.times.size
        steps = max(1.0, (window_s or store.lookback_s) / store.step_s)  # type: ignore[attr-defined]
        self.samples += int(ids.size * self.times.size * steps)
        if self.cells > lim.cells or self.samples > lim.samples_read:
            raise PromQLLimitError(
                f"this query reads too much ({self.cells} series x steps, {self.samples} samples; at most "
                f"{lim.cells} and {lim.samples_read}): narrow start_s/end_s, raise step_s, shorten "
                "ranges, or add label matchers"
            )
        labels = store.named_label_sets(ids.tolist())  # type: ignore[attr-defined]
        return ids, labels

    def instant(self, sel: Selector) -> Vector:
        ids, labels = self.select(sel)
        out = self.grid(ids, sel, "at")
        if out is not None:
            return Vector(labels, out)
        out = np.full((ids.size, self.times.size), np.nan)
        if ids.size:
            for j, t in enumerate(self.times.tolist()):
                out[:, j] = self.store.at(ids, t - sel.offset_s)  # type: ignore[attr-defined]
        return Vector(labels, out)

    def grid(self, ids: np.ndarray, sel: Selector, func: str) -> np.ndarray | None:
        """`func` (at, rate, increase) of `ids` at every step from one read of the windows' union
        (`metrics.grid`'s many-times reads, bit-identical to the store's one-time queries: a query
        range holds several steps whose windows overlap). None: read step by step instead (another
        store, or retention dropped samples a window needs: the one-time reads say which)."""
        if not ids.size or not isinstance(self.store, MetricStore):
            return None
        times = self.times - sel.offset_s
        window = float(self.store.lookback_s if func == "at" else sel.range_s)  # type: ignore[arg-type]
        if _far_apart(times.tolist(), window):
            return None
        try:
            if func == "at":
                out = at_grid(self.store, ids, times)
            else:
                out = extrapolated_grid(self.store, ids, times, float(sel.range_s), func == "rate")  # type: ignore[arg-type]
        except RetentionError:
            return None
        return np.ascontiguousarray(out.T)

    # ------------------------------------------------------------ functions
    def call(self, node: Call) -> Vector | np.ndarray:
        f = node.func
        if f == "histogram_quantile":
            return self.histogram_quantile(node)
        if f in RANGE_FUNCTIONS:
            return self.range_call(node)
        if f == "time":
            return self.times.copy()
        args = [self.eval(a) for a in node.args]
        if f == "vector":
            return Vector([()], np.array(args[0], dtype=np.float64)[None, :])
        vec = args[0]
        assert isinstance(vec, Vector)
        if f == "scalar":  # the one sample of a one-series vector, else NaN (per step)
            one = (~np.isnan(vec.values)).sum(axis=0) == 1
            return np.where(one, np.nansum(vec.values, axis=0), np.nan)
        v = vec.values
        with np.errstate(invalid="ignore", divide="ignore"):
            if f in _ELEMENTWISE:
                out = _ELEMENTWISE[f](v)
            elif f == "round":
                inv = 1.0 / (args[1] if len(args) > 1 else np.ones(self.times.size))
                out = np.floor(v * inv[None, :] + 0.5) / inv[None, :]
            else:  # clamp_min / clamp_max
                out = (np.maximum if f == "clamp_min" else np.minimum)(v, args[1][None, :])
        return Vector([_drop_name(lab) for lab in vec.labels], out)

    def range_call(self, node: Call) -> Vector:
        sel = node.args[0]
        assert isinstance(sel, Selector) and sel.range_s is not None
        ids, labels = self.select(sel, sel.range_s)
        out = np.full((ids.size, self.times.size), np.nan)
        if ids.size:
            if node.func in ("irate", "last_over_time"):
                out = self.from_windows(ids, sel, node.func == "irate")
            elif (
                node.func in ("rate", "increase")
                and sel.range_s > 0
                and (g := self.grid(ids, sel, node.func)) is not None
            ):
                out = g
            else:
                read = getattr(self.store, node.func)
                for j, t in enumerate(self.times.tolist()):
                    out[:, j] = read(ids, t - sel.offset_s, sel.range_s)
        if node.func == "last_over_time":  # Prometheus keeps the metric name here
            return Vector(labels, out)
        return Vector([_drop_name(lab) for lab in labels], out)

    def from_windows(self, ids: np.ndarray, sel: Selector, irate: bool) -> np.ndarray:
        """``irate`` (the last two samples in the range, a drop read as a counter reset) or
        ``last_over_time``, from one read of the query's whole span (or one read per step for
        steps far apart, whose span would be mostly samples no step reads: `_UNION_MAX`)."""
        store = self.store
        w = float(sel.range_s)  # type: ignore[arg-type]
        times = [t - sel.offset_s for t in self.times.tolist()]
        apart = _far_apart(times, w)
        if not apart:
            whole = store.range(ids, max(0.0, times[0] - w), times[-1])  # type: ignore[attr-defined]
        out = np.full((ids.size, self.times.size), np.nan)
        v2 = bool(getattr(store, "prometheus_v2", False))
        need = 2 if irate else 1
        for j, t in enumerate(times):
            grid, vals = store.range(ids, max(0.0, t - w), t) if apart else whole  # type: ignore[attr-defined]
            inside = (grid <= t + 1e-9) & ((grid >= t - w - 1e-9) if v2 else (grid > t - w + 1e-9))
            cols = np.flatnonzero(inside)
            if cols.size < need:
                continue
            win = vals[:, cols]
            present = ~np.isnan(win)
            rows = np.flatnonzero(present.sum(axis=1) >= need)
            if not rows.size:
                continue
            p = present[rows]
            last = p.shape[1] - 1 - np.argmax(p[:, ::-1], axis=1)
            lv = win[rows, last]
            if not irate:
                out[rows, j] = lv
                continue
            p[np.arange(rows.size), last] = False
            prev = p.shape[1] - 1 - np.argmax(p[:, ::-1], axis=1)
            pv = win[rows, prev]
            dv = np.where(lv < pv, lv, lv - pv)
            out[rows, j] = dv / (grid[cols][last] - grid[cols][prev])
        return out

    def histogram_quantile(self, node: Call) -> Vector:
        qv = self.eval(node.args[0])
        vec = self.eval(node.args[1])
        assert isinstance(vec, Vector) and isinstance(qv, np.ndarray)
        groups: dict[LabelSet, list[tuple[float, int]]] = {}
        for row, lab in enumerate(vec.labels):
            le = dict(lab).get("le")
            try:
                bound = float(le) if le is not None else math.nan
            except ValueError:
                bound = math.nan
            if math.isnan(bound):  # series without a parsable `le` are ignored, as Prometheus does
                continue
            key = tuple(p for p in lab if p[0] not in ("le", "__name__"))
            groups.setdefault(key, []).append((bound, row))
        labels, rows = [], []
        for key, members in groups.items():
            les = np.array(sorted({b for b, _ in members}))
            col = {b: i for i, b in enumerate(les.tolist())}
            counts = np.full((self.times.size, les.size), np.nan)
            for b, row in members:
                cur = counts[:, col[b]]
                add = vec.values[row]
                counts[:, col[b]] = np.where(np.isnan(cur), add, cur + np.nan_to_num(add))
            res = np.full(self.times.size, np.nan)
            for q in np.unique(qv).tolist():  # usually one q for every step
                at = qv == q if not math.isnan(q) else np.isnan(qv)
                res[at] = bucket_quantile(float(q), counts[at], les)
            labels.append(key)
            rows.append(res)
        return Vector(labels, np.array(rows).reshape(len(rows), self.times.size))

    # ------------------------------------------------------------ aggregation
    def aggregate(self, node: Aggregate) -> Vector:
        vec = self.eval(node.expr)
        assert isinstance(vec, Vector)
        by = set(node.labels)
        keys: dict[LabelSet, int] = {}
        if node.without:
            by.add("__name__")
            grouped = [tuple([p for p in lab if p[0] not in by]) for lab in vec.labels]
        else:
            grouped = [tuple([p for p in lab if p[0] in by]) for lab in vec.labels]
        codes = np.array([keys.setdefault(key, len(keys)) for key in grouped], dtype=np.intp)
        G, T = len(keys), self.times.size
        v = vec.values
        if node.op in ("topk", "bottomk"):
            k = self.eval(node.param)
            return self.top(vec, codes, G, np.asarray(k), node.op == "topk")
        present = ~np.isnan(v)
        cnt = np.zeros((G, T))
        np.add.at(cnt, codes, present.astype(np.float64))
        if node.op in ("sum", "avg"):
            out = np.zeros((G, T))
            np.add.at(out, codes, np.where(present, v, 0.0))
            if node.op == "avg":
                with np.errstate(invalid="ignore", divide="ignore"):
                    out = out / cnt
        elif node.op == "count":
            out = cnt.copy()
        else:
            out = np.full((G, T), np.nan)
            (np.fmax if node.op == "max" else np.fmin).at(out, codes, v)
        out[cnt == 0] = np.nan
        return Vector(list(keys), out)

    def top(self, vec: Vector, codes: np.ndarray, G: int, k: np.ndarray, largest: bool) -> Vector:
        """topk / bottomk per group and step: the kept series keep their labels."""
        v = vec.values
        out = np.full(v.shape, np.nan)
        kk = np.floor(np.nan_to_num(k, nan=0.0))
        for g in range(G):
            rows = np.flatnonzero(codes == g)
            sub = v[rows]
            key = np.where(np.isnan(sub), np.inf, -sub if largest else sub)
            rank = np.argsort(np.argsort(key, axis=0, kind="stable"), axis=0, kind="stable")
            keep = (rank < kk[None, :]) & ~np.isnan(sub)
            out[rows] = np.where(keep, sub, np.nan)
        return Vector(list(vec.labels), out)

    # ------------------------------------------------------------ binary operators
    def binary(self, node: Binary) -> Vector | np.ndarray:
        lhs, rhs = self.eval(node.lhs), self.eval(node.rhs)
        op = node.op
        if not isinstance(lhs, Vector) and not isinstance(rhs, Vector):
            return _apply(op, lhs, rhs, True, node.bool_mode)
        if not isinstance(lhs, Vector) or not isinstance(rhs, Vector):
            vec, sc = (lhs, rhs) if isinstance(lhs, Vector) else (rhs, lhs)
            a, b = (vec.values, sc[None, :]) if vec is lhs else (sc[None, :], vec.values)
            vals = _apply(op, a, b, vec is lhs, node.bool_mode)
            keep_name = op in COMPARISON_OPS and not node.bool_mode
            labels = vec.labels if keep_name else [_drop_name(lab) for lab in vec.labels]
            return Vector(list(labels), vals)
        if op in ("and", "or", "unless"):
            return self.set_op(node, lhs, rhs)
        return self.vector_binary(node, lhs, rhs)

    @staticmethod
    def signatures(node: Binary, labels: list[LabelSet]) -> list[LabelSet]:
        """The labels each series matches on: `on` names them (absent ones as ""), `ignoring` and
        no modifier all but these and the metric name. Worked out once per call: a set operation
        over every pod ever seen matches a few hundred series per query."""
        if node.on is True:
            names = sorted(set(node.labels))
            if len(names) == 1:
                name = names[0]
                return [((name, dict(lab).get(name, "")),) for lab in labels]
            return [tuple((n, d.get(n, "")) for n in names) for d in map(dict, labels)]
        drop = {"__name__", *(node.labels if node.on is False else ())}
        return [tuple(p for p in lab if p[0] not in drop) for lab in labels]

    def side(self, node: Binary, vec: Vector, which: str) -> tuple[dict[LabelSet, int], np.ndarray]:
        """Signature -> row of a [signatures, steps] array; two series of one signature present at
        one step is PromQL's many-to-many error."""
        sigs: dict[LabelSet, int] = {}
        codes = np.array(
            [sigs.setdefault(sig, len(sigs)) for sig in self.signatures(node, vec.labels)], np.intp
        )
        present = ~np.isnan(vec.values)
        cnt = np.zeros((len(sigs), self.times.size))
        np.add.at(cnt, codes, present.astype(np.float64))
        if (cnt > 1).any():
            g = int(np.argwhere(cnt > 1)[0][0])
            sig = next(s for s, i in sigs.items() if i == g)
            raise PromQLError(
                f"found duplicate series for the match group {dict(sig)} on the {which} hand-side of "
                f"{node.op!r}: many-to-many matching not allowed (use on(...)/ignoring(...) or "
                "aggregate first)"
            )
        merged = np.full((len(sigs), self.times.size), np.nan)
        np.fmax.at(merged, codes, vec.values)
        return sigs, merged

    def vector_binary(self, node: Binary, lhs: Vector, rhs: Vector) -> Vector:
        rsigs, rvals = self.side(node, rhs, "right")
        self.side(node, lhs, "left")
        labels: list[LabelSet] = []
        rows: list[np.ndarray] = []
        keep_name = node.op in COMPARISON_OPS and not node.bool_mode
        for i, (lab, sig) in enumerate(zip(lhs.labels, self.signatures(node, lhs.labels))):
            r = rsigs.get(sig)
            if r is None:
                continue
            vals = _apply(node.op, lhs.values[i], rvals[r], True, node.bool_mode)
            out = lab if keep_name else _drop_name(lab)
            if node.on is True:
                out = tuple(p for p in out if p[0] in node.labels)
            elif node.on is False:
                out = tuple(p for p in out if p[0] not in node.labels)
            labels.append(out)
            rows.append(vals)
        return _merge(labels, rows, self.times.size)

    def set_op(self, node: Binary, lhs: Vector, rhs: Vector) -> Vector:
        rsig = self.signatures(node, rhs.labels)
        none = np.zeros(self.times.size, bool)
        if node.op in ("and", "unless"):  # per left row and step: whether the right has its signature
            groups: dict[LabelSet, int] = {}
            codes = np.array([groups.setdefault(sig, len(groups)) for sig in rsig], np.intp)
            hit = np.zeros((len(groups) + 1, self.times.size), bool)  # the last row: no such signature
            np.logical_or.at(hit, codes, ~np.isnan(rhs.values))
            rows = [groups.get(sig, len(groups)) for sig in self.signatures(node, lhs.labels)]
            keep = hit[np.array(rows, np.intp)]
            out = np.where(keep if node.op == "and" else ~keep, lhs.values, np.nan)
            return Vector(list(lhs.labels), out.reshape(len(rows), self.times.size))
        lpresent: dict[LabelSet, np.ndarray] = {}
        for sig, row in zip(self.signatures(node, lhs.labels), lhs.values):
            lpresent[sig] = lpresent.get(sig, none) | ~np.isnan(row)
        labels = list(lhs.labels)
        out = list(lhs.values)
        for lab, sig, row in zip(rhs.labels, rsig, rhs.values):
            labels.append(lab)
            out.append(np.where(lpresent.get(sig, none), np.nan, row))
        return _merge(labels, out, self.times.size)


def _apply(op: str, a: np.ndarray, b: np.ndarray, vector_left: bool, bool_mode: bool) -> np.ndarray:
    """`a op b` elementwise; a comparison filters (keeps the vector side's value) unless bool."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "%":
            return np.fmod(a, b)
        if op == "^":
            return np.power(a, b)
        cmp = {
            "==": np.equal,
            "!=": np.not_equal,
            "<": np.less,
            "<=": np.less_equal,
            ">": np.greater,
            ">=": np.greater_equal,
        }[op]
        hold = cmp(a, b)
        both = ~np.isnan(a) & ~np.isnan(b)
        if bool_mode:
            return np.where(both, hold.astype(np.float64), np.nan)
        kept = a if vector_left else b
        return np.where(hold & both, kept, np.nan) * np.ones_like(a + b)


def _merge(labels: list[LabelSet], rows: list[np.ndarray], steps: int) -> Vector:
    """Rows with the same labels become one series (they never overlap in time)."""
    index: dict[LabelSet, int] = {}
    out: list[np.ndarray] = []
    for lab, row in zip(labels, rows):
        i = index.get(lab)
        if i is None:
            index[lab] = len(out)
            out.append(np.array(row, dtype=np.float64, copy=True))
        else:
            if (~np.isnan(out[i]) & ~np.isnan(row)).any():
                raise PromQLError(
                    f"multiple matches for labels {dict(lab)}: many-to-one matching must be explicit "
                    "(group_left/group_right are not supported: aggregate one side first)"
                )
            out[i] = np.fmax(out[i], row)
    return Vector(list(index), np.array(out).reshape(len(out), steps))


def _show(sel: Selector) -> str:
    inner = ",".join(f'{k}{op}"{v}"' for k, op, v in sel.matchers)
    return f"{sel.name or ''}{{{inner}}}"
