"""`SampleColumns`: ``rate`` / ``increase`` of one fixed set of series at many evaluation times, from
sample columns kept between calls, bit-identical to `grid.extrapolated_grid`; `ColumnPool`: the
alert engine's reads of one evaluation, through them.

Why: the alert engine evaluates the 8 new 15 s grid points of every 120 s step, and their windows
(up to 300 s) reach back over samples it read at the previous step. `extrapolated_grid` reads the
union of the windows (~28 columns) every time and finds the rows with gaps and the counter resets
over all of it; here each sample column is read once into a ring of contiguous float64 rows (time-
major: a window reads its first and last column whole), with what the windows need of it derived
once: whether every series has a sample there, and the rows whose counter reset from the previous
column. Only columns that can no longer change are kept (`MetricStore.settled_before`: writes never
go back in time). Reads of the same series with other windows (``rate[2m]`` and ``rate[5m]``)
share the columns and are answered in one pass; reads of few series (pods' series, a new set at
almost every step) are cheaper read afresh (`extrapolated_few`).

Same bits as `extrapolated_grid`: a row's value in a window is elementwise in its own samples there
(the same operations; the rows missing a sample somewhere in the union get their sample spans and
the resets between the samples around a gap found time-major), except for one decision the read of
all rows takes per window, whether the reset sums are added at all (``x + 0.0`` turns -0.0 into
0.0), which is taken from the same facts: some row misses a sample in the window, or some row's
counter resets inside it (in a window where none misses one, every pair of samples is adjacent).
"""

from __future__ import annotations

import numpy as np

from .grid import _bounds, extrapolated_grid, tail_whole
from .store import MetricStore, extrapolated_tail

__all__ = ["ColumnPool", "Read", "SampleColumns", "extrapolated_few"]

_Resets = tuple[np.ndarray, np.ndarray]  # rows whose value is below the previous column's, and that value
_NO_RESET: _Resets = (np.empty(0, dtype=np.intp), np.empty(0))
Read = tuple[np.ndarray, np.ndarray, float, bool]  # ids, evaluation times, window (s), rate (else increase)
_FEW = 512  # fewer series than this: `extrapolated_few` costs less than keeping their columns


class SampleColumns:
    """The sample columns of the series `ids` (fixed: another set of series needs another instance)
    in a ring of time-major rows as long as the widest union of windows read, the settled ones kept
    from call to call with the counter resets between them (several readers of the same series
    share an instance: `ColumnPool`)."""

    __slots__ = ("ids", "_top", "_values", "_present", "_slot", "_held", "_resets")

    def __init__(self, ids: np.ndarray):
        self.ids = ids
        self._top = int(ids.max()) if ids.size else -1
        self._values = np.empty((0, ids.size))  # sample column c in row c % len (NaN: no sample)
        self._present = np.empty((0, ids.size), dtype=bool)
        self._slot: list[int] = []  # per ring row, the settled column it holds (-1: none)
        self._held: dict[int, bool] = {}  # settled column in the ring -> whether every id has a sample
        self._resets: dict[int, _Resets] = {}  # column c -> the resets from column c - 1 to c

    def extrapolated(
        self, store: MetricStore, times: np.ndarray, windows: np.ndarray, is_rate: bool
    ) -> np.ndarray:
        """``store.rate`` (or ``increase``) of the ids at each time over the window of the same
        index (seconds): [len(times), len(ids)]."""
        ids = self.ids
        i0, i1 = _bounds(store, times, windows)
        live = np.flatnonzero(i1 >= i0)
        if ids.size == 0 or live.size == 0:
            return np.full((times.size, ids.size), np.nan)
        lo, hi = int(i0[live].min()), int(i1[live].max())
        if lo * store.step_s < store.retained_from or self._top >= store.series_count:
            return _plain(store, ids, times, windows, is_rate)  # raises as a read does
        # the ring holds the union of windows as wide as they are once they no longer start at 0
        width = hi - int((i1[live] - windows[live] // store.step_s).min()) + 1
        rows, complete, resets = self._read(store, lo, hi, width)
        n, m, values = ids.size, hi - lo + 1, self._values
        a, b = i0[live] - lo, i1[live] - lo
        W = a.size
        gaps = np.concatenate([[0], np.cumsum(~complete)])
        full = gaps[b + 1] == gaps[a]
        any_reset = np.zeros(W, dtype=bool)
        sums = np.zeros((W, n))
        hit_at = [j for j in range(1, m) if resets[j][0].size]
        for w, (x, y) in enumerate(zip(a.tolist(), b.tolist()) if hit_at else ()):
            # a row's resets in column order: the bins add them in the order the store adds them
            hits = [resets[j] for j in hit_at if x < j <= y]
            if hits:
                any_reset[w] = True
                r = np.concatenate([h[0] for h in hits])
                sums[w] = np.bincount(r, weights=np.concatenate([h[1] for h in hits]), minlength=n)
        gone = part = None
        if not complete.all():
            count = self._present[rows[~complete]].sum(axis=0) + int(complete.sum())
            gone, part = np.flatnonzero(count == 0), np.flatnonzero((count > 0) & (count < m))
            if part.size:
                spans = _spans(values[np.ix_(rows, part)], self._present[np.ix_(rows, part)], a, b)
        add = (b > a) & (~full | any_reset)  # the store adds the reset sums unless nothing to add
        stamps = np.arange(lo, hi + 1, dtype=np.float64) * store.step_s
        t, window_s = times[live][:, None], windows[live][:, None]
        # every row as if it had every sample, then the rows with a gap done right over it
        fv, lv = values[rows[a]], values[rows[b]]
        res = tail_whole(stamps, fv, lv, a, b, t, window_s, is_rate, store, sums, add)
        if gone is not None and gone.size:
            res[:, gone] = np.nan  # no sample in any window (a gone pod's series): no result
        if part is not None and part.size:
            first, last, cnt, fv, result, sums_p, _ = spans
            np.add(result, sums_p, out=result, where=add[:, None])
            res[:, part] = extrapolated_tail(
                result, fv, stamps[first], stamps[last], cnt, t, window_s, True, is_rate, store.prometheus_v2
            )
        if live.size == times.size:
            return res
        out = np.full((times.size, n), np.nan)
        out[live] = res
        return out

    def _read(
        self, store: MetricStore, lo: int, hi: int, width: int
    ) -> tuple[np.ndarray, np.ndarray, list[_Resets]]:
        """Columns lo..hi into the ring (at least `width` long): their ring rows, whether each has
        every sample, and the resets into each from the column before (from lo + 1 on; index 0 is
        a placeholder). Only the settled columns are kept for later calls."""
        m = hi - lo + 1
        if len(self._slot) < max(m, width):
            self._grow(max(m, width), hi)
        cap, held, slot, settled = len(self._slot), self._held, self._slot, store.settled_before
        rows = np.arange(lo, hi + 1) % cap
        complete: list[bool | None] = [held.get(c) for c in range(lo, hi + 1)]
        j = 0
        while j < m:  # read the runs of columns not held, each at once
            if complete[j] is not None:
                j += 1
                continue
            e = j
            while e + 1 < m and complete[e + 1] is None:
                e += 1
            block = store.columns(self.ids, lo + j, lo + e)
            present = ~np.isnan(block)
            self._values[rows[j : e + 1]] = block
            self._present[rows[j : e + 1]] = present
            for i, whole in enumerate(present.all(axis=1).tolist()):
                c, at = lo + j + i, int(rows[j + i])
                held.pop(slot[at], None)
                slot[at] = c if c < settled else -1
                if c < settled:
                    held[c] = whole
                complete[j + i] = whole
            j = e + 1
        resets = [_NO_RESET] + [self._resets.get(c) for c in range(lo + 1, hi + 1)]  # type: ignore[list-item]
        todo = [j for j in range(1, m) if resets[j] is None]
        if todo:
            at = np.asarray(todo)
            now, before = self._values[rows[at]], self._values[rows[at - 1]]
            lower = now < before  # NaN compares false: a reset needs both samples
            for j in todo:
                resets[j] = _NO_RESET
            if lower.any():
                k, r = np.nonzero(lower)
                cut = np.searchsorted(k, np.arange(len(todo) + 1)).tolist()
                for i, j in enumerate(todo):
                    if cut[i + 1] > cut[i]:
                        hit = r[cut[i] : cut[i + 1]]
                        resets[j] = (hit, before[i, hit])
            for j in todo:
                if lo + j < settled:
                    self._resets[lo + j] = resets[j]
        self._resets = {c: x for c, x in self._resets.items() if c in held}
        return rows, np.array(complete, dtype=bool), resets  # type: ignore[return-value]

    def _grow(self, cap: int, hi: int) -> None:
        """A longer ring for a wider read (up to column `hi`), holding the held columns of the
        last `cap` before it."""
        old, values, present = self._slot, self._values, self._present
        self._values = np.empty((cap, self.ids.size))
        self._present = np.empty((cap, self.ids.size), dtype=bool)
        self._slot = [-1] * cap
        keep = [c for c in self._held if hi - cap < c <= hi]
        for c in keep:
            self._values[c % cap], self._present[c % cap] = values[c % len(old)], present[c % len(old)]
            self._slot[c % cap] = c
        self._held = {c: self._held[c] for c in keep}


def _spans(v: np.ndarray, present: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """For rows that miss a sample somewhere in the columns (`v`, `present`: time-major): per
    window, their first and last sample column inside it (clipped when it has none: never read)
    and the count there, the values at the first sample and the difference last - first, the sums
    of the values before each counter reset inside the window (a pair of consecutive samples of a
    row, which may span a gap, added in column order as the store adds them), and whether the
    window holds a reset."""
    m, k = v.shape
    at = np.arange(m)[:, None]
    last_at = _running(np.maximum, np.where(present, at, -1))  # last sample at or before
    first_at = _running(np.minimum, np.where(present, at, m)[::-1])[::-1]
    cum = np.zeros((m + 1, k), dtype=np.intp)
    cum[1:] = _running(np.add, present.astype(np.intp))
    first, last, cnt = np.minimum(first_at[a], m - 1), np.maximum(last_at[b], 0), cum[b + 1] - cum[a]
    cols_of = np.arange(k)[None, :]
    fv = v[first, cols_of]
    result = v[last, cols_of] - fv
    prev = last_at[:-1]  # per column from the second: the row's previous sample column (-1: none)
    pv = v[np.maximum(prev, 0), cols_of]
    with np.errstate(invalid="ignore"):
        lower = present[1:] & (prev >= 0) & (v[1:] < pv)
    q, r = np.nonzero(lower)  # column order, then rows
    if not q.size:
        return first, last, cnt, fv, result, np.zeros((a.size, k)), np.zeros(a.size, dtype=bool)
    p, w = prev[q, r], pv[q, r]
    inside = (p[None, :] >= a[:, None]) & (q[None, :] + 1 <= b[:, None])  # [windows, resets]
    i, j = np.nonzero(inside)
    sums = np.bincount(i * k + r[j], weights=w[j], minlength=a.size * k).reshape(a.size, k)
    return first, last, cnt, fv, result, sums, inside.any(axis=1)


def extrapolated_few(
    store: MetricStore, ids: np.ndarray, times: np.ndarray, windows: np.ndarray, is_rate: bool
) -> np.ndarray:
    """`SampleColumns.extrapolated` for few series, nothing kept and in fewer (numpy) steps: every
    row through the sample spans (a row with every sample spans its windows whole, a row without
    any has no count), the union of windows read time-major. The same bits: the same operations
    per row and window."""
    i0, i1 = _bounds(store, times, windows)
    live = np.flatnonzero(i1 >= i0)
    if ids.size == 0 or live.size == 0:
        return np.full((times.size, ids.size), np.nan)
    lo, hi = int(i0[live].min()), int(i1[live].max())
    if lo * store.step_s < store.retained_from:
        return _plain(store, ids, times, windows, is_rate)  # raises as a read does
    v = store.columns(ids, lo, hi)
    present = ~np.isnan(v)
    a, b = i0[live] - lo, i1[live] - lo
    first, last, cnt, fv, result, sums, hit = _spans(v, present, a, b)
    gaps = np.concatenate([[0], np.cumsum(~present.all(axis=1))])
    add = (b > a) & ((gaps[b + 1] != gaps[a]) | hit)  # the store adds the reset sums unless nothing to add
    np.add(result, sums, out=result, where=add[:, None])
    stamps = np.arange(lo, hi + 1, dtype=np.float64) * store.step_s
    t, window_s = times[live][:, None], windows[live][:, None]
    res = extrapolated_tail(
        result, fv, stamps[first], stamps[last], cnt, t, window_s, True, is_rate, store.prometheus_v2
    )
    if live.size == times.size:
        return res
    out = np.full((times.size, ids.size), np.nan)
    out[live] = res
    return out


def _plain(
    store: MetricStore, ids: np.ndarray, times: np.ndarray, windows: np.ndarray, is_rate: bool
) -> np.ndarray:
    """`extrapolated_grid` of each distinct window's times."""
    out = np.full((times.size, ids.size), np.nan)
    for w in np.unique(windows).tolist():
        at = windows == w
        out[at] = extrapolated_grid(store, ids, times[at], w, is_rate)
    return out


def _running(op: np.ufunc, x: np.ndarray) -> np.ndarray:
    """``op.accumulate(x, axis=0)`` of integers (the same numbers either way): numpy accumulates
    each column apart (~0.1 us a column), so for many more columns than rows, one vector
    operation per row."""
    if x.shape[1] < 8 * x.shape[0]:
        return op.accumulate(x, axis=0)
    out = x.copy()
    for i in range(1, x.shape[0]):
        op(out[i - 1], out[i], out=out[i])
    return out


class ColumnPool:
    """The `SampleColumns` of the series sets read in one round of reads, one per distinct set:
    readers of the same series with other windows (``rate[2m]`` and ``rate[5m]`` of one union)
    share the columns. A set not read in a round is dropped at the next."""

    __slots__ = ("_last", "_now")

    def __init__(self) -> None:
        self._last: list[SampleColumns] = []
        self._now: list[SampleColumns] = []

    def start(self) -> None:
        """Begin a round of reads."""
        self._last, self._now = self._now, []

    def extrapolated(self, store: MetricStore, reads: list[Read]) -> list[np.ndarray]:
        """``rate`` (or ``increase``) of each read (ids, times, window in seconds, is_rate):
        [len(times), len(ids)]. Reads of the same series and function are answered together,
        in one pass over all their windows."""
        groups: list[tuple[np.ndarray, bool, list[int]]] = []
        for k, (ids, _, _, is_rate) in enumerate(reads):
            for g in groups:
                if g[1] == is_rate and (g[0] is ids or (g[0].size == ids.size and np.array_equal(g[0], ids))):
                    g[2].append(k)
                    break
            else:
                groups.append((ids, is_rate, [k]))
        out: list[np.ndarray] = [np.empty(0)] * len(reads)
        for ids, is_rate, ks in groups:
            times = np.concatenate([reads[k][1] for k in ks])
            windows = np.concatenate([np.full(reads[k][1].size, float(reads[k][2])) for k in ks])
            if ids.size < _FEW:
                res = extrapolated_few(store, ids, times, windows, is_rate)
            else:
                res = self.get(ids).extrapolated(store, times, windows, is_rate)
            at = 0
            for k in ks:
                out[k] = res[at : at + reads[k][1].size]
                at += reads[k][1].size
        return out

    def get(self, ids: np.ndarray) -> SampleColumns:
        """The columns of `ids`: this round's, the previous round's or new ones."""
        for pool in (self._now, self._last):
            for cols in pool:
                if cols.ids is ids or (cols.ids.size == ids.size and np.array_equal(cols.ids, ids)):
                    if pool is self._last:
                        self._now.append(cols)
                        pool.remove(cols)
                    return cols
        cols = SampleColumns(ids)
        self._now.append(cols)
        return cols
