"""Range reads of many evaluation times at once: ``at``, ``rate`` and ``increase`` of a `MetricStore`
at every time of a grid, from one `MetricStore.range` read of the union of the windows.

Why: consecutive evaluation times have overlapping windows, so one read of their union answers them
all at a fraction of the per-call work. Two readers use it: the alert engine, which catches up on
several 15 s grid points per call (`alerting.rules.OperandBatch`), and PromQL range queries on the
simulator (`tools.promql.engine`, the dashboards `tools.symptoms.Telemetry` reads every step). Each
result is bit-identical to the store's one-time query (`at`, `rate`, `increase`): the same
elementwise float operations, and the counter-reset sums add the same samples in the same order
(np.bincount, row-major).
"""

from __future__ import annotations

import numpy as np

from .store import _EPS as _GRID_EPS  # the store's slack onto the sample grid
from .store import MetricStore, extrapolated_tail

__all__ = ["at_grid", "extrapolated_grid"]


def _bounds(
    store: MetricStore, times: np.ndarray, window_s: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per time, the first and last sample index of its window (`window_s`: one for all, or one
    per time): `MetricStore.window_bounds` at each time, its float operations on arrays."""
    step = store.step_s
    last = np.floor(times / step + _GRID_EPS)
    start = times - window_s
    first = (
        np.ceil(start / step - _GRID_EPS) if store.prometheus_v2 else np.floor(start / step + _GRID_EPS) + 1
    )
    return np.maximum(first, 0).astype(np.intp), last.astype(np.intp)


def _present_spans(
    present: np.ndarray, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """First and last present column inside columns a..b (per window row) and the count there,
    each [windows, series]; for a window without samples first/last are clipped (never read)."""
    n, m = present.shape
    cols = np.arange(m)
    last = np.maximum.accumulate(np.where(present, cols, -1), axis=1)[:, b].T
    first = np.minimum.accumulate(np.where(present, cols, m)[:, ::-1], axis=1)[:, ::-1][:, a].T
    cum = np.zeros((n, m + 1), dtype=np.intp)
    np.cumsum(present, axis=1, dtype=np.intp, out=cum[:, 1:])
    cnt = (cum[:, b + 1] - cum[:, a]).T
    return np.minimum(first, m - 1), np.maximum(last, 0), cnt


def _interior_gaps(present: np.ndarray) -> bool:
    """Whether some row misses a sample between two it has (a series that started late or stopped
    early has its gap at an end)."""
    m = present.shape[1]
    count = present.sum(axis=1)
    first = present.argmax(axis=1)
    last = m - 1 - present[:, ::-1].argmax(axis=1)
    return bool(((count > 0) & (count < last - first + 1)).any())


def _reset_sums(v: np.ndarray, present: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Sum of the values before each counter reset inside each window [windows, series], and
    whether the window holds any reset. A reset is a present sample lower than the previous
    present sample of its row; the pair belongs to a window when both samples lie in it."""
    n = v.shape[0]
    if present.all() or not _interior_gaps(present):  # consecutive present samples are adjacent
        lower = v[:, 1:] < v[:, :-1]  # NaN compares false: pairs with a missing sample drop out
        if not lower.any():  # counters rarely reset: skip the search
            return np.zeros((a.size, n)), np.zeros(a.size, dtype=bool)
        r, c = np.nonzero(lower)
        p, q, w = c, c + 1, v[r, c]
    else:
        row_of, col_of = np.nonzero(present)
        vv = v[present]
        reset = (row_of[1:] == row_of[:-1]) & (vv[1:] < vv[:-1])
        r, p, q, w = row_of[:-1][reset], col_of[:-1][reset], col_of[1:][reset], vv[:-1][reset]
    inside = (p[None, :] >= a[:, None]) & (q[None, :] <= b[:, None])  # [windows, resets]
    k, j = np.nonzero(inside)  # row-major: per (window, series) in column order, as the store adds
    sums = np.bincount(k * n + r[j], weights=w[j], minlength=a.size * n).reshape(a.size, n)
    return sums, inside.any(axis=1)


def extrapolated_grid(
    store: MetricStore, ids: np.ndarray, times: np.ndarray, window_s: float, is_rate: bool
) -> np.ndarray:
    """``store.rate`` (or ``increase``) of `ids` at every time of `times`: [len(times), len(ids)]."""
    i0, i1 = _bounds(store, times, window_s)
    out = np.full((times.size, ids.size), np.nan)
    live = np.flatnonzero(i1 >= i0)
    if ids.size == 0 or live.size == 0:
        return out
    lo, hi = int(i0[live].min()), int(i1[live].max())
    stamps, v = store.range(ids, lo * store.step_s, hi * store.step_s)
    a, b = i0[live] - lo, i1[live] - lo
    present = ~np.isnan(v)
    out[live] = _extrapolated(stamps, v, present, a, b, times[live], window_s, is_rate, store)
    return out


def _extrapolated(
    stamps: np.ndarray,
    v: np.ndarray,
    present: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    times: np.ndarray,
    window_s: float,
    is_rate: bool,
    store: MetricStore,
) -> np.ndarray:
    """`extrapolated_grid`'s windows a..b (sample columns) of the rows of `v`: [windows, rows].

    Whether a window adds the reset sums is decided over all rows (as the store's one query of
    them does); each row's value is then elementwise, so the rows with every sample (nearly all)
    take the store's fast path and only the others have their sample spans found and their values
    replaced."""
    sums, any_reset = _reset_sums(v, present, a, b)
    gaps = np.concatenate([[0], np.cumsum(~present.all(axis=0))])
    full = gaps[b + 1] == gaps[a]
    add = (b > a) & (~full | any_reset)  # the store adds the reset sums unless nothing to add
    t = times[:, None]
    # every row as if it had every sample (cheap), then the rows with a gap done right over it
    out = tail_whole(stamps, v[:, a].T, v[:, b].T, a, b, t, window_s, is_rate, store, sums, add)
    some, whole = present.any(axis=1), present.all(axis=1)
    if not whole.all():
        out[:, ~some] = np.nan  # no sample in any window (a gone pod's series): no result
    g = np.flatnonzero(some & ~whole)
    if not g.size:
        return out
    rows = np.arange(g.size)[None, :]
    vg = v[g]
    first, last, cnt = _present_spans(present[g], a, b)
    fv = vg[rows, first]
    result = vg[rows, last] - fv
    np.add(result, sums[:, g], out=result, where=add[:, None])  # the windows that add the reset sums
    out[:, g] = extrapolated_tail(
        result, fv, stamps[first], stamps[last], cnt, t, window_s, True, is_rate, store.prometheus_v2
    )
    return out


def tail_whole(
    stamps: np.ndarray,
    fv: np.ndarray,
    lv: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    t: np.ndarray,
    window_s: float | np.ndarray,
    is_rate: bool,
    store: MetricStore,
    sums: np.ndarray,
    add: np.ndarray,
) -> np.ndarray:
    """The rows with every sample: the same sample columns, times and counts in every row (`fv`,
    `lv`: the values at the windows' first and last columns `a`, `b`, [windows, rows]).

    `extrapolated_tail` with everything but the values per window: the extrapolation to the
    window's start is the window's own, so the factor is, unless the zero point of a row's counter
    comes first (a counter near its start) or cannot be told (NaN). So each window's factor is
    computed once, and only the rows clamped to their zero point take the element-wise tail: the
    same operations on the same numbers as `extrapolated_tail`'s, each element."""
    result = lv - fv
    np.add(result, sums, out=result, where=add[:, None])
    cnt = (b - a + 1)[:, None]
    ft, lt = stamps[a][:, None], stamps[b][:, None]
    v2 = store.prometheus_v2
    window_s = np.broadcast_to(window_s, t.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        sampled = lt - ft
        avg = sampled / (cnt - 1)
        threshold = avg * 1.1
        to_start = ft - (t - window_s)
        if not v2:
            to_start = np.where(to_start >= threshold, avg / 2, to_start)
        to_zero = sampled * (fv / result)
        clamped = (result > 0) & (fv >= 0) & ~(to_zero >= to_start)  # min(to_start, to_zero) is to_zero
        to_end = t - lt
        to_end = np.where(to_end >= threshold, avg / 2, to_end)
        start = np.where(to_start >= threshold, avg / 2, to_start) if v2 else to_start
        factor = (sampled + start + to_end) / sampled
        if is_rate:
            factor = factor / window_s
        out = result * factor
        w, r = np.nonzero(clamped)
        if w.size:
            z = np.minimum(to_start[w, 0], to_zero[w, r])
            if v2:
                z = np.where(z >= threshold[w, 0], avg[w, 0] / 2, z)
            f = (sampled[w, 0] + z + to_end[w, 0]) / sampled[w, 0]
            out[w, r] = result[w, r] * (f / window_s[w, 0] if is_rate else f)
    np.copyto(out, np.nan, where=cnt < 2)
    return out


def at_grid(store: MetricStore, ids: np.ndarray, times: np.ndarray) -> np.ndarray:
    """``store.at`` of `ids` at every time of `times` (5 min lookback, staleness): [times, ids]."""
    i0, i1 = _bounds(store, times, store.lookback_s)
    out = np.full((times.size, ids.size), np.nan)
    live = np.flatnonzero(i1 >= i0)
    if ids.size == 0 or live.size == 0:
        return out
    lo, hi = int(i0[live].min()), int(i1[live].max())
    _, v, stale = store.range_with_staleness(ids, lo * store.step_s, hi * store.step_s)
    a, b = i0[live] - lo, i1[live] - lo
    present = ~np.isnan(v) | stale
    cols = np.arange(v.shape[1])
    last = np.maximum.accumulate(np.where(present, cols, -1), axis=1)[:, b].T
    rows = np.arange(ids.size)[None, :]
    at = np.maximum(last, 0)
    vals = v[rows, at]
    vals[(last < a[:, None]) | stale[rows, at]] = np.nan
    out[live] = vals
    return out
