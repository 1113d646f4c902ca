"""Prometheus-like metric storage for the discrete-time simulator.

Why this shape: the simulator samples every series on a fixed 15 s grid of *simulated* time, so a
sample's position is implied by its timestamp and no per-sample timestamps are stored. Values live
in time chunks, each a 2-D array ``[series, chunk_samples]`` prefilled with NaN (NaN means
"no sample": a pod that did not exist yet or any more). Advancing time only allocates a new chunk;
adding series grows the *current* chunk only, so history is never copied. A chunk is a view of the
first rows of a larger reserved buffer, and only the rows of registered series are ever written
(NaN-filled when the series is added): the pages behind the rest are never touched, which matters
where a fresh page costs a fault of microseconds (a microVM: in a fresh process, tens of MB of NaN
prefill of rows no series used took about 12% of a Train Ticket run; a process whose allocator
reuses freed memory pays little of it), and a growing chunk is copied only when it outgrows its
reservation.

The query functions (``rate``, ``increase``, ``delta``, ``*_over_time``, ``histogram_quantile``,
instant ``at``) follow Prometheus 3 semantics (left-open range ``(t - window, t]``, left-open 5 min
lookback, ``extrapolatedRate`` with counter resets and the zero-point clamp, ``bucketQuantile``
interpolation), vectorised over series ids, because the alert engine evaluates real alert rules
with them and their thresholds were tuned against real Prometheus.
"""

from __future__ import annotations

import copy
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from sre_marathon_gym.core.clock import METRIC_STEP_S
from sre_marathon_gym.core.errors import RetentionError, TelemetryError

from .histogram import bucket_quantile
from .labels import LabelIndex, LabelKey, normalise_labels
from .series_block import SeriesBlock

__all__ = ["MetricStore", "TelemetryError", "RetentionError", "LOOKBACK_S", "bucket_quantile"]

LOOKBACK_S = 300.0
"""Prometheus' default instant-vector lookback delta (5 minutes)."""

_EPS = 1e-9  # slack when mapping float seconds onto the sample grid
_MATCH_OPS = ("=", "!=", "=~", "!~")

# A dedicated quiet-NaN payload marks "this series ended here" (Prometheus' staleness marker), so
# that `at()` stops looking back past it, while every other reader just sees NaN (= no sample).
_STALE_BITS = {
    np.dtype(np.float32): (np.uint32, np.uint32(0x7FC00001)),
    np.dtype(np.float64): (np.uint64, np.uint64(0x7FF8000000000001)),
}

Matcher = str | tuple[str, str]


class MetricStore:
    """Chunked, NaN-prefilled metric storage on a fixed sample grid, with PromQL-style reads.

    Arguments:
        step_s: sample interval in simulated seconds (every write time must be a multiple).
        chunk_samples: samples per time chunk; memory grows one chunk at a time.
        dtype: value dtype of the stored arrays (float32 is enough for the simulator).
        retention_s: if set, whole chunks ending before ``last_time - retention_s`` are dropped
            (checked when a new chunk starts, so at least `retention_s` of history stays queryable).
        initial_series_capacity: rows reserved for the first chunk at least (it grows as series are
            added; reserved rows cost address space, not memory, until a series uses them).
        lookback_s: instant-vector lookback of ``at()`` (Prometheus default 5 min).
        prometheus_v2: read like Prometheus 2.42 (Debian's, and its promtool) instead of Prometheus
            3: ranges include a sample exactly at ``t - window`` (and at ``t - lookback``), and
            counter extrapolation clamps to the zero point *before* the extrapolation threshold.
            Only samples on a range boundary and counters near their start are affected, but on a
            shared 15 s grid that is every evaluation: use True to compare with promtool 2.x.
    """

    leading_block: SeriesBlock | None = None  # (stores pickled before there was one have none)

    def __init__(
        self,
        step_s: int = METRIC_STEP_S,
        chunk_samples: int = 240,
        dtype: Any = np.float32,
        retention_s: float | None = None,
        lookback_s: float = LOOKBACK_S,
        initial_series_capacity: int = 64,
        prometheus_v2: bool = False,
    ):
        if step_s <= 0 or chunk_samples <= 0:
            raise TelemetryError(f"step_s and chunk_samples must be positive, got {step_s}, {chunk_samples}")
        self.dtype = np.dtype(dtype)
        if self.dtype not in _STALE_BITS:
            raise TelemetryError(f"dtype must be float32 or float64, got {self.dtype}")
        if retention_s is not None and retention_s <= 0:
            raise TelemetryError(f"retention_s must be positive or None, got {retention_s}")
        self.step_s = step_s
        self.chunk_samples = chunk_samples
        self.retention_s = retention_s
        self.lookback_s = float(lookback_s)
        self.prometheus_v2 = bool(prometheus_v2)
        self._bits_dtype, self._stale_bits = _STALE_BITS[self.dtype]
        self._stale_value = np.array([self._stale_bits], dtype=self._bits_dtype).view(self.dtype)[0]
        # registry
        self._key_to_id: dict[tuple[str, LabelKey], int] = {}
        self._sid_name: list[str] = []
        self._sid_labels: list[LabelKey] = []
        self._by_name: dict[str, list[int]] = {}
        self._name_index: dict[str, LabelIndex] = {}
        self._select_cache: dict[tuple[str, tuple], tuple[int, np.ndarray]] = {}
        self._named: list[LabelKey | None] = []  # per series: its labels with __name__ (`named_label_sets`)
        # the block the series start with (ids 0..len-1), if one was registered into the empty store:
        # what follows the registry (the alert engine) can start from what it derived from the block
        self.leading_block: SeriesBlock | None = None
        # storage
        self._capacity = max(1, int(initial_series_capacity))
        self._chunks: dict[int, np.ndarray] = {}  # chunk -> its rows of registered series (a view)
        self._reserved: dict[int, np.ndarray] = {}  # chunk -> the buffer its view starts (not pickled)
        self._last_index = -1  # sample index of the latest write
        self._retained_from = 0  # first sample index still stored
        self.revision = 0  # bumps on every write and every new series: a key for what reads it all

    # ------------------------------------------------------------------ registry
    @property
    def series_count(self) -> int:
        """Number of registered series (ids are 0..series_count-1)."""
        return len(self._sid_name)

    def series_id(self, name: str, labels: Mapping[str, str] | None = None) -> int:
        """Return the id of (name, labels), creating the series on first use."""
        key = (sys.intern(name), normalise_labels(labels))
        sid = self._key_to_id.get(key)
        if sid is None:
            sid = self._add(key)
        return sid

    def series_id_normalised(self, name: str, key: LabelKey) -> int:
        """`series_id` for labels already in `normalise_labels` form (sorted, interned, no empty value)."""
        k = (sys.intern(name), key)
        sid = self._key_to_id.get(k)
        if sid is None:
            sid = self._add(k)
        return sid

    def register(self, name: str, label_dicts: Sequence[Mapping[str, str]]) -> np.ndarray:
        """Get-or-create many series of one metric at once; returns their ids in input order."""
        name = sys.intern(name)
        out = np.empty(len(label_dicts), dtype=np.intp)
        get = self._key_to_id.get
        for i, labels in enumerate(label_dicts):
            key = (name, normalise_labels(labels))
            sid = get(key)
            out[i] = self._add(key) if sid is None else sid
        return out

    def register_block(self, block: SeriesBlock) -> np.ndarray:
        """Get-or-create the series of `block`; returns their ids in block order. Into a store with
        no series yet the block's registry is copied (ids are the block's positions)."""
        if self._sid_name:
            get = self.series_id_normalised
            return np.array([get(n, k) for n, k in zip(block.names, block.keys)], dtype=np.intp)
        self.revision += len(block)
        self._key_to_id = block.key_to_id.copy()
        self._sid_name = list(block.names)
        self._sid_labels = list(block.keys)
        self._by_name = {name: list(ids) for name, ids in block.by_name.items()}
        self.leading_block = block
        return np.arange(len(block), dtype=np.intp)

    def _add(self, key: tuple[str, LabelKey]) -> int:
        self.revision += 1
        sid = len(self._sid_name)
        self._key_to_id[key] = sid
        self._sid_name.append(key[0])
        self._sid_labels.append(key[1])
        self._by_name.setdefault(key[0], []).append(sid)
        return sid

    def __deepcopy__(self, memo: dict) -> MetricStore:
        """A copy whose samples and registry are its own; the label keys (tuples of interned
        strings, never modified) are shared instead of rebuilt one by one (`envs.shared_world`
        copies a store of tens of thousands of series when an env leaves a shared world)."""
        new = object.__new__(type(self))
        memo[id(self)] = new
        shallow = ("_key_to_id", "_sid_name", "_sid_labels", "_named")  # immutable items
        for k, v in self.__dict__.items():
            if k in shallow:
                v2 = type(v)(v)
                memo[id(v)] = v2
            elif k == "_by_name":  # name -> ids
                v2 = memo[id(v)] = {key: list(ids) for key, ids in v.items()}
            elif k in ("_chunks", "_reserved"):
                continue  # below: they go together
            else:
                v2 = copy.deepcopy(v, memo)
            new.__dict__[k] = v2
        # chunk -> samples: old chunks as compact copies; the current one keeps its room to grow
        # (only its rows are copied: the copy touches no more memory than a compact one)
        chunks: dict[int, np.ndarray] = {}
        reserved: dict[int, np.ndarray] = {}
        current = max(self._chunks, default=None)
        for key, part in self._chunks.items():
            buf = self._reserved.get(key) if key == current else None
            if buf is None:
                chunks[key] = part.copy()
            else:
                reserved[key] = np.empty_like(buf)
                reserved[key][: part.shape[0]] = part
                chunks[key] = reserved[key][: part.shape[0]]
            memo[id(part)] = chunks[key]
        new._chunks = memo[id(self._chunks)] = chunks
        new._reserved = memo[id(self._reserved)] = reserved
        return new

    def __getstate__(self) -> dict:
        """Pickled without the reserved buffers: each chunk pickles as its own rows."""
        state = dict(self.__dict__)
        state["_reserved"] = {}
        state["leading_block"] = None  # a pickle carries the registry once (readers route it again)
        return state

    def named_label_sets(self, ids: Sequence[int]) -> list[LabelKey]:
        """Per id, its sorted (label, value) pairs with ``("__name__", metric)``: the label set a
        PromQL selector returns, built once per series (a query reads the same series every step)."""
        named = self._named
        if len(named) < len(self._sid_name):
            named.extend([None] * (len(self._sid_name) - len(named)))
        out = []
        for sid in ids:
            key = named[self._check_sid(sid)]
            if key is None:
                key = named[sid] = tuple(sorted([("__name__", self._sid_name[sid]), *self._sid_labels[sid]]))
            out.append(key)
        return out

    def labels(self, sid: int) -> dict[str, str]:
        """Labels of a series as a fresh dict (without the metric name)."""
        return dict(self._sid_labels[self._check_sid(sid)])

    def series_since(self, start: int) -> tuple[list[str], list[LabelKey]]:
        """Metric names and normalised label keys of the series with ids from `start` on, in id
        order (what a consumer that follows the registry, like the alert engine, has not seen)."""
        return self._sid_name[start:], self._sid_labels[start:]

    def name(self, sid: int) -> str:
        """Metric name of a series."""
        return self._sid_name[self._check_sid(sid)]

    def names(self) -> list[str]:
        """All metric names, sorted."""
        return sorted(self._by_name)

    def label_values(self, name: str, label: str) -> list[str]:
        """Sorted distinct non-empty values of `label` among the series of metric `name`."""
        idx = self._index(name)
        if idx is None or label not in idx.columns:
            return []
        return sorted(v for v in idx.columns[label][0] if v != "")

    def _check_sid(self, sid: int) -> int:
        sid = int(sid)
        if not 0 <= sid < len(self._sid_name):
            raise TelemetryError(f"unknown series id {sid} (series_count={len(self._sid_name)})")
        return sid

    def _index(self, name: str) -> LabelIndex | None:
        ids = self._by_name.get(name)
        if ids is None:
            return None
        idx = self._name_index.get(name)
        if idx is None:
            idx = self._name_index[name] = LabelIndex()
        if idx.n != len(ids):
            new = ids[idx.n :]
            idx.extend(new, [self._sid_labels[s] for s in new])
        return idx

    def select(self, name: str, matchers: Mapping[str, Matcher] | None = None) -> np.ndarray:
        """Ids of series of `name` whose labels satisfy all matchers (ascending ids).

        A matcher value is an exact string (``=``) or ``(op, value)`` with op in ``=``, ``!=``,
        ``=~``, ``!~``; regexes are fully anchored and absent labels compare as "" (Prometheus).
        """
        idx = self._index(name)
        if idx is None:
            return np.empty(0, dtype=np.intp)
        norm: list[tuple[str, str, str]] = []
        for label, m in (matchers or {}).items():
            if isinstance(m, str):
                op, value = "=", m
            else:
                op, value = m
            if op not in _MATCH_OPS:
                raise TelemetryError(
                    f"unknown matcher op {op!r} for label {label!r}; use one of {_MATCH_OPS}"
                )
            norm.append((label, op, str(value)))
        cache_key = (name, tuple(sorted(norm)))
        hit = self._select_cache.get(cache_key)
        if hit is not None and hit[0] == idx.n:
            return hit[1].copy()
        mask = np.ones(idx.n, dtype=bool)
        for label, op, value in norm:
            mask &= idx.match(label, op, value)
        ids = idx.ids[mask]
        self._select_cache[cache_key] = (idx.n, ids)
        return ids.copy()

    # ------------------------------------------------------------------ writing
    def _time_index(self, t: float) -> int:
        k = round(t / self.step_s)
        if abs(k * self.step_s - t) > 1e-6 or k < 0:
            raise TelemetryError(f"sample time {t!r} is not a non-negative multiple of step_s={self.step_s}")
        return int(k)

    def _chunk_for_write(self, k: int) -> np.ndarray:
        """Chunk `k` with a NaN row for every registered series (only the current chunk ever grows;
        old chunks keep their rows, and reads treat the rows they lack as missing)."""
        n = len(self._sid_name)
        chunk = self._chunks.get(k)
        rows = 0 if chunk is None else chunk.shape[0]
        if rows >= n and chunk is not None:
            return chunk
        buf = self._reserved.get(k)
        if buf is None or buf.shape[0] < n:
            while self._capacity < 2 * n:  # room to grow without a copy; unused rows stay untouched
                self._capacity *= 2
            buf = np.empty((self._capacity, self.chunk_samples), dtype=self.dtype)
            if rows:
                buf[:rows] = chunk
            self._reserved[k] = buf
        buf[rows:n] = np.nan
        chunk = self._chunks[k] = buf[:n]
        return chunk

    def _prepare_write(self, t: float, ids: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
        self.revision += 1
        i = self._time_index(t)
        if i < self._last_index:
            raise TelemetryError(
                f"sample time {t!r} is before the latest written time {self._last_index * self.step_s}; "
                "writes must be non-decreasing in time"
            )
        ids = np.asarray(ids, dtype=np.intp).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= len(self._sid_name)):
            raise TelemetryError(
                f"series ids must be in [0, {len(self._sid_name)}), got {ids.min()}..{ids.max()}"
            )
        if i > self._last_index:
            new_chunk = i // self.chunk_samples != self._last_index // self.chunk_samples
            self._last_index = i
            if new_chunk:
                self._apply_retention()
        chunk = self._chunk_for_write(i // self.chunk_samples)
        return chunk, i % self.chunk_samples, ids

    def record(self, t: float, ids: np.ndarray, values: np.ndarray | float) -> None:
        """Write samples of series `ids` at simulated time `t` (same (id, t) again overwrites)."""
        chunk, col, ids = self._prepare_write(t, ids)
        values = np.asarray(values, dtype=self.dtype)
        if values.ndim and values.size != ids.size:
            raise TelemetryError(f"record(): {ids.size} ids but {values.size} values")
        chunk[:, col][ids] = values.ravel() if values.ndim else values  # 1-d fancy indexing: faster than 2-d

    def mark_stale(self, t: float, ids: np.ndarray) -> None:
        """Write Prometheus staleness markers: the series ended at `t`, so `at()` stops seeing it.

        Without a marker an instant query keeps returning the last value for up to 5 minutes after a
        series stops, exactly like Prometheus without staleness handling.
        """
        chunk, col, ids = self._prepare_write(t, ids)
        chunk[:, col][ids] = self._stale_value

    def _apply_retention(self) -> None:
        if self.retention_s is None:
            return
        horizon = self._last_index * self.step_s - self.retention_s
        cs = self.chunk_samples
        for k in sorted(self._chunks):
            if (k + 1) * cs * self.step_s <= horizon:
                del self._chunks[k]
                self._reserved.pop(k, None)
                self._retained_from = max(self._retained_from, (k + 1) * cs)
            else:
                break

    # ------------------------------------------------------------------ storage introspection
    @property
    def nbytes(self) -> int:
        """Bytes held by the value arrays (all stored chunks)."""
        return sum(c.nbytes for c in self._chunks.values())

    @property
    def last_time(self) -> float | None:
        """Simulated time of the latest write, or None before the first one."""
        return None if self._last_index < 0 else float(self._last_index * self.step_s)

    @property
    def settled_before(self) -> int:
        """Sample index before which samples never change (writes never go back in time)."""
        return self._last_index

    @property
    def retained_from(self) -> float:
        """Earliest simulated time still queryable (moves forward when retention drops chunks)."""
        return float(self._retained_from * self.step_s)

    # ------------------------------------------------------------------ raw reads
    def _read_ids(self, ids: np.ndarray | Sequence[int]) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.intp)
        if ids.size and ids.max() >= len(self._sid_name):
            raise TelemetryError(f"unknown series id {int(ids.max())} (series_count={len(self._sid_name)})")
        return ids

    def _gather(self, ids: np.ndarray, i0: int, i1: int, what: str) -> np.ndarray:
        """Native-dtype values [len(ids), i1-i0+1] for sample indices i0..i1; id -1 means missing."""
        if i0 < self._retained_from:
            raise RetentionError(
                f"{what} needs samples from t={i0 * self.step_s}s but retention (retention_s="
                f"{self.retention_s}) keeps only t >= {self.retained_from}s"
            )
        m = i1 - i0 + 1
        out = np.full((ids.size, max(m, 0)), np.nan, dtype=self.dtype)
        if m <= 0 or ids.size == 0:
            return out
        cs = self.chunk_samples
        lo = int(ids.min())
        hi = int(ids.max())
        for k in range(i0 // cs, i1 // cs + 1):
            chunk = self._chunks.get(k)
            if chunk is None:
                continue
            s = max(i0, k * cs)
            e = min(i1, (k + 1) * cs - 1)
            a, b = s - i0, e - i0 + 1
            cols = slice(s - k * cs, e - k * cs + 1)
            if lo >= 0 and hi < chunk.shape[0]:
                out[:, a:b] = chunk[ids, cols]
            else:
                ok = (ids >= 0) & (ids < chunk.shape[0])
                out[ok, a:b] = chunk[ids[ok], cols]
        return out

    def _grid_floor(self, t: float) -> int:
        return math.floor(t / self.step_s + _EPS)

    def _range_first(self, range_start: float) -> int:
        """First sample index inside a range that starts at `range_start` (see `prometheus_v2`)."""
        if self.prometheus_v2:
            return math.ceil(range_start / self.step_s - _EPS)
        return self._grid_floor(range_start) + 1

    def window_bounds(self, t: float, window_s: float) -> tuple[int, int]:
        """Sample indices (i0, i1) that the range (t - window_s, t] reads (empty if i1 < i0); public
        so that readers answering many evaluation times from one `range` read use the same grid."""
        return max(0, self._range_first(t - window_s)), self._grid_floor(t)

    def range(
        self, ids: np.ndarray | Sequence[int], start_s: float, end_s: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Samples of `ids` on the grid in [start_s, end_s] (both inclusive), NaN where absent.

        Returns (times float64 [n_times], values float64 [n_ids, n_times]).
        """
        ids = self._read_ids(ids).ravel()
        i0 = max(0, math.ceil(start_s / self.step_s - _EPS))
        i1 = self._grid_floor(end_s)
        if i1 < i0:
            return np.empty(0), np.empty((ids.size, 0))
        vals = self._gather(ids, i0, i1, "range()").astype(np.float64)
        times = np.arange(i0, i1 + 1, dtype=np.float64) * self.step_s
        return times, vals

    def columns(self, ids: np.ndarray, i0: int, i1: int) -> np.ndarray:
        """`range` of `ids` over sample indices i0..i1, time-major: float64 [i1 - i0 + 1, len(ids)]."""
        raw = self._gather(self._read_ids(ids).ravel(), i0, i1, "range()")
        return np.ascontiguousarray(raw.T, dtype=np.float64)

    def range_with_staleness(
        self, ids: np.ndarray | Sequence[int], start_s: float, end_s: float
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Like `range`, plus a bool mask [n_ids, n_times] of staleness markers (which `range`
        shows as NaN), for exporters that can write them (``stale`` in promtool test series)."""
        ids = self._read_ids(ids).ravel()
        i0 = max(0, math.ceil(start_s / self.step_s - _EPS))
        i1 = self._grid_floor(end_s)
        if i1 < i0:
            return np.empty(0), np.empty((ids.size, 0)), np.zeros((ids.size, 0), dtype=bool)
        raw = self._gather(ids, i0, i1, "range_with_staleness()")
        stale = raw.view(self._bits_dtype) == self._stale_bits
        return np.arange(i0, i1 + 1, dtype=np.float64) * self.step_s, raw.astype(np.float64), stale

    def _window(self, ids: np.ndarray, t: float, window_s: float, what: str) -> tuple[np.ndarray, np.ndarray]:
        """Samples in the range (t - window_s, t] (closed on the left with `prometheus_v2`),
        as (times [m], float64 values [n, m])."""
        if window_s <= 0:
            raise TelemetryError(f"{what}: window_s must be positive, got {window_s}")
        i0, i1 = self.window_bounds(t, window_s)
        if i1 < i0:
            return np.empty(0), np.full((ids.size, 0), np.nan)
        vals = self._gather(ids, i0, i1, what).astype(np.float64)
        return np.arange(i0, i1 + 1, dtype=np.float64) * self.step_s, vals

    # ------------------------------------------------------------------ instant vector
    def at(self, ids: np.ndarray | Sequence[int], t: float) -> np.ndarray:
        """Latest sample at or before `t` within the lookback (t - 5 min, t]; NaN if none or stale."""
        ids = self._read_ids(ids)
        shape = ids.shape
        flat = ids.ravel()
        i0, i1 = self.window_bounds(t, self.lookback_s)
        if i1 < i0 or flat.size == 0:
            return np.full(shape, np.nan)
        raw = self._gather(flat, i0, i1, "at()")
        stale = raw.view(self._bits_dtype) == self._stale_bits
        present = ~np.isnan(raw) | stale
        m = raw.shape[1]
        last = m - 1 - np.argmax(present[:, ::-1], axis=1)
        rows = np.arange(flat.size)
        out = raw[rows, last].astype(np.float64)
        out[~present.any(axis=1) | stale[rows, last]] = np.nan
        return out.reshape(shape)

    # ------------------------------------------------------------------ range functions
    def _extrapolated(
        self,
        ids: np.ndarray | Sequence[int],
        t: float,
        window_s: float,
        is_counter: bool,
        is_rate: bool,
        what: str,
    ) -> np.ndarray:
        """Vectorised port of Prometheus' extrapolatedRate (promql/functions.go)."""
        ids = self._read_ids(ids)
        shape = ids.shape
        times, v = self._window(ids.ravel(), t, window_s, what)
        n, m = v.shape
        if m == 0 or n == 0:
            return np.full(shape, np.nan)
        missing = np.isnan(v)
        all_valid = not missing.any()
        if all_valid:
            cnt = np.full(n, m, dtype=np.intp)
        else:
            valid = ~missing
            cnt = valid.sum(axis=1)
        if all_valid:  # common case: every series has every sample in the window
            first = np.zeros(n, dtype=np.intp)
            last = np.full(n, m - 1, dtype=np.intp)
            fv = v[:, 0]
            result = v[:, -1] - fv
        else:
            rows = np.arange(n)
            first = np.argmax(valid, axis=1)
            last = m - 1 - np.argmax(valid[:, ::-1], axis=1)
            fv = v[rows, first]
            result = v[rows, last] - fv
        if is_counter and m > 1:
            # a sample lower than the previous *present* sample is a reset: add the previous value
            if all_valid:
                dec = v[:, 1:] < v[:, :-1]
                if dec.any():  # counters rarely reset: only pay for the rows that did
                    r, c = np.nonzero(dec)
                    result = result + np.bincount(r, weights=v[r, c], minlength=n)
            else:  # compact the present samples row-major; pairs must stay within one row
                row_of, _ = np.nonzero(valid)
                vv = v[valid]
                reset = (row_of[1:] == row_of[:-1]) & (vv[1:] < vv[:-1])
                result = result + np.bincount(row_of[:-1][reset], weights=vv[:-1][reset], minlength=n)
        out = extrapolated_tail(
            result, fv, times[first], times[last], cnt, t, window_s, is_counter, is_rate, self.prometheus_v2
        )
        return out.reshape(shape)

    def rate(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``rate(x[window])`` at `t` (per second; counter resets; NaN with < 2 samples)."""
        return self._extrapolated(ids, t, window_s, True, True, "rate()")

    def increase(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``increase(x[window])`` at `t` (= rate * window)."""
        return self._extrapolated(ids, t, window_s, True, False, "increase()")

    def delta(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``delta(x[window])`` for gauges (extrapolated, no reset handling, may be < 0)."""
        return self._extrapolated(ids, t, window_s, False, False, "delta()")

    def _over_time(
        self, ids: np.ndarray | Sequence[int], t: float, window_s: float, what: str
    ) -> tuple[tuple[int, ...], np.ndarray, np.ndarray, np.ndarray]:
        ids = self._read_ids(ids)
        _, v = self._window(ids.ravel(), t, window_s, what)
        valid = ~np.isnan(v)
        return ids.shape, v, valid, valid.sum(axis=1)

    def avg_over_time(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``avg_over_time`` over (t - window, t]; NaN when the window has no sample."""
        shape, v, valid, cnt = self._over_time(ids, t, window_s, "avg_over_time()")
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(valid, v, 0.0).sum(axis=1) / cnt
        out[cnt == 0] = np.nan
        return out.reshape(shape)

    def sum_over_time(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``sum_over_time``; NaN when the window has no sample."""
        shape, v, valid, cnt = self._over_time(ids, t, window_s, "sum_over_time()")
        out = np.where(valid, v, 0.0).sum(axis=1)
        out[cnt == 0] = np.nan
        return out.reshape(shape)

    def count_over_time(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``count_over_time``; NaN (no result) when the window has no sample."""
        shape, _, _, cnt = self._over_time(ids, t, window_s, "count_over_time()")
        out = cnt.astype(np.float64)
        out[cnt == 0] = np.nan
        return out.reshape(shape)

    def max_over_time(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``max_over_time``; NaN when the window has no sample."""
        shape, v, valid, cnt = self._over_time(ids, t, window_s, "max_over_time()")
        out = np.where(valid, v, -np.inf).max(axis=1, initial=-np.inf)
        out[cnt == 0] = np.nan
        return out.reshape(shape)

    def min_over_time(self, ids: np.ndarray | Sequence[int], t: float, window_s: float) -> np.ndarray:
        """PromQL ``min_over_time``; NaN when the window has no sample."""
        shape, v, valid, cnt = self._over_time(ids, t, window_s, "min_over_time()")
        out = np.where(valid, v, np.inf).min(axis=1, initial=np.inf)
        out[cnt == 0] = np.nan
        return out.reshape(shape)

    # ------------------------------------------------------------------ histograms
    def histogram_quantile(
        self,
        q: float,
        bucket_ids: np.ndarray,
        les: np.ndarray | Sequence[float],
        t: float,
        window_s: float,
    ) -> np.ndarray:
        """PromQL ``histogram_quantile(q, rate(x_bucket[window]))`` per group of classic buckets.

        `bucket_ids` is [n_groups, n_buckets] (id -1 = bucket series missing), `les` the ascending
        upper bounds with the last one +Inf. A group whose bucket rates are partly NaN is computed
        from its present buckets only, as Prometheus does with the series it finds.
        """
        les = np.asarray(les, dtype=np.float64).ravel()
        bucket_ids = self._read_ids(bucket_ids)
        if bucket_ids.ndim != 2 or bucket_ids.shape[1] != les.size:
            raise TelemetryError(
                f"histogram_quantile(): bucket_ids must be [n_groups, {les.size}], "
                f"got shape {bucket_ids.shape}"
            )
        if les.size > 1 and not np.all(np.diff(les) > 0):
            raise TelemetryError(f"histogram_quantile(): les must be strictly ascending, got {les.tolist()}")
        rates = self.rate(bucket_ids, t, window_s)
        return bucket_quantile(float(q), rates, les)

    # ------------------------------------------------------------------ export
    def dense_samples(self) -> tuple[float, list[int], np.ndarray]:
        """The retained samples as one matrix: (time of its first column, the ids of the series with
        a sample, their values [series, samples] in the native dtype, NaN (canonical) where a series
        has no sample or a staleness marker). The columns span the first to the last sample of any
        series; what `iter_samples` yields, densified in one read."""
        if self._last_index < 0 or not self._sid_name:
            return 0.0, [], np.empty((0, 0), dtype=self.dtype)
        i0 = max(0, math.ceil(self.retained_from / self.step_s - _EPS))
        ids = np.arange(len(self._sid_name), dtype=np.intp)
        values = self._gather(ids, i0, self._last_index, "dense_samples()")
        missing = np.isnan(values)
        kept = np.flatnonzero(~missing.all(axis=1))
        if not kept.size:
            return 0.0, [], np.empty((0, 0), dtype=self.dtype)
        columns = np.flatnonzero(~missing[kept].all(axis=0))
        first, last = int(columns[0]), int(columns[-1])
        values = values[kept, first : last + 1]
        values[missing[kept, first : last + 1]] = np.nan  # staleness markers as plain NaN
        return (i0 + first) * float(self.step_s), kept.tolist(), values

    def iter_samples(
        self, start_s: float | None = None, end_s: float | None = None
    ) -> Iterator[tuple[str, dict[str, str], np.ndarray, np.ndarray]]:
        """Yield (name, labels, times, values) per series with NaNs dropped, for Prometheus backfill.

        Series with no sample in the range are skipped. Reads in blocks of series to bound memory.
        """
        if self._last_index < 0 or not self._sid_name:
            return
        start = self.retained_from if start_s is None else start_s
        end = self._last_index * self.step_s if end_s is None else end_s
        i0 = max(0, math.ceil(start / self.step_s - _EPS))
        i1 = self._grid_floor(end)
        if i1 < i0:
            return
        n_times = i1 - i0 + 1
        block = max(1, (1 << 23) // n_times)  # ~64 MiB of float64 per block
        n = len(self._sid_name)
        for b0 in range(0, n, block):
            ids = np.arange(b0, min(n, b0 + block), dtype=np.intp)
            times, vals = self.range(ids, i0 * self.step_s, i1 * self.step_s)
            present = ~np.isnan(vals)
            for row, sid in enumerate(ids.tolist()):
                mask = present[row]
                if mask.any():
                    yield self._sid_name[sid], dict(self._sid_labels[sid]), times[mask], vals[row, mask]


def extrapolated_tail(
    result: np.ndarray,
    fv: np.ndarray,
    ft: np.ndarray,
    lt: np.ndarray,
    cnt: np.ndarray,
    t: float | np.ndarray,
    window_s: float | np.ndarray,
    is_counter: bool,
    is_rate: bool,
    prometheus_v2: bool,
) -> np.ndarray:
    """The tail of Prometheus' extrapolatedRate: `result` (the window's increase) scaled to the
    window from the first and last sample times `ft`, `lt`, the first value `fv` and the sample
    count `cnt`. Elementwise, so `t` may be a column of times against rows of series (the alert
    engine's grid): one sequence of operations, so both callers get the same bits."""
    sampled = lt - ft
    with np.errstate(divide="ignore", invalid="ignore"):
        avg = sampled / (cnt - 1)
        threshold = avg * 1.1
        to_start = ft - (t - window_s)
        to_end = t - lt
        if not prometheus_v2:
            to_start = np.where(to_start >= threshold, avg / 2, to_start)
        if is_counter:
            # counters cannot go below zero: do not extrapolate past the zero point
            to_zero = np.where((result > 0) & (fv >= 0), sampled * (fv / result), to_start)
            to_start = np.minimum(to_start, to_zero)
        if prometheus_v2:  # 2.x clamps to the zero point first, then applies the threshold
            to_start = np.where(to_start >= threshold, avg / 2, to_start)
        to_end = np.where(to_end >= threshold, avg / 2, to_end)
        factor = (sampled + to_start + to_end) / sampled
        if is_rate:
            factor = factor / window_s
        out = result * factor
    np.copyto(out, np.nan, where=cnt < 2)  # `cnt` may be one column of windows
    return out
