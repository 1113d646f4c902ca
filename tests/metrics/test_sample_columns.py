"""The alert engine's kept sample columns (`metrics.sample_columns`) and the precision walk of
`bucket_quantile`: the same bits as the reads and loops they replace, whatever the samples."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from sre_marathon_gym.core.errors import RetentionError
from sre_marathon_gym.metrics import sample_columns
from sre_marathon_gym.metrics.grid import _bounds, extrapolated_grid
from sre_marathon_gym.metrics.sample_columns import ColumnPool, SampleColumns, extrapolated_few
from sre_marathon_gym.metrics.store import MetricStore, bucket_quantile

WINDOWS = [(120.0, 0.0), (300.0, 0.0), (600.0, 0.0), (300.0, 900.0)]


def _write(
    st: MetricStore, ids: np.ndarray, k: int, rng: np.random.Generator, level: np.ndarray, gaps: bool
) -> None:
    """Sample k: counters that step, reset, stall on 0.0 / -0.0, end with staleness markers, and
    one that starts at sample 70; with `gaps`, missing samples inside a run and at its ends (else
    most windows have every sample and no reset: whether the reset sums are added shows)."""
    n = ids.size
    level += rng.integers(0, 4, n)
    level[rng.random(n) < (0.04 if gaps else 0.002)] = 0  # resets
    vals = level.astype(float)
    vals[:3] = 0.0  # flat zero counters
    vals[3:6] = -0.0 if k % 2 else 0.0  # a difference of -0.0: the reset sums turn it into 0.0
    vals[6] = np.inf if k % 7 == 0 else vals[6]  # an infinite sample now and then
    keep = rng.random(n) > (0.12 if gaps else 0.0)
    if gaps:
        keep[n // 2 : n // 2 + 4] = 20 <= k < 45  # series that start late and end early
    keep[-1] = k >= 70
    st.record(k * 15, ids[keep], vals[keep])
    st.mark_stale(k * 15, ids[~keep & (rng.random(n) < 0.3)])


def _assert_reads_match(
    st: MetricStore, pool: ColumnPool, ids: np.ndarray, t: float, windows: list = WINDOWS
) -> None:
    """One evaluation round as the engine reads it: the 8 grid points up to `t`, every window of
    the series (and of another set of as many series, which must not share their columns) in one
    call, each read the same bits as the union read of its windows."""
    pool.start()
    times = np.arange(t - 105.0, t + 1.0, 15.0)
    reads = [
        (which, times - offset_s, window_s, is_rate)
        for window_s, offset_s in windows
        for is_rate in (True, False)
        for which in (ids, ids[::-1])
    ]
    with np.errstate(invalid="ignore"):  # (infinite samples)
        for (which, te, window_s, is_rate), got in zip(reads, pool.extrapolated(st, reads)):
            want = extrapolated_grid(st, which, te, window_s, is_rate)
            assert got.tobytes() == want.tobytes(), (t, window_s, te[0], is_rate)


@pytest.mark.parametrize(
    "v2, gaps, n", [(False, True, 49), (True, True, 49), (False, False, 49), (False, True, 700)]
)
@pytest.mark.parametrize("kept", [True, False])
def test_kept_columns_read_as_the_union_of_windows_does(v2, gaps, n, kept, monkeypatch):
    """Evaluation rounds every 120 s as the engine runs them, past reads in between (a rule's
    vector at an earlier time), a latest sample written again after a read, copies and pickles
    that go on apart, and a set of series that grows: every read is the same bits as
    `extrapolated_grid`'s, from kept columns (`SampleColumns`) or read afresh (few series). Many
    series take the row-by-row running counts (`_running`)."""
    monkeypatch.setattr(sample_columns, "_FEW", 0 if kept else 10**9)
    rng = np.random.default_rng(11)
    st = MetricStore(dtype=np.float32, prometheus_v2=v2, chunk_samples=16)
    every = np.array([st.series_id("c", {"i": str(i)}) for i in range(n)])
    level = np.zeros(every.size, dtype=np.int64)
    pool = ColumnPool()
    twins: list[tuple[MetricStore, ColumnPool]] = []
    for k in range(150):
        _write(st, every, k, rng, level, gaps)
        for twin, _ in twins:  # the copies get the same samples as the original
            twin.record(k * 15, every, st.range(every, k * 15, k * 15)[1][:, 0])
        ids = every if k >= 70 else every[:-1]  # from 70 on, another set of series: read afresh
        if k % 8 == 0 and k:
            _assert_reads_match(st, pool, ids, k * 15.0)
            for twin, twin_pool in twins:
                _assert_reads_match(twin, twin_pool, ids, k * 15.0)
        if k == 90:  # a past read, a wider one (a longer ring), the past again, on with the rounds
            _assert_reads_match(st, pool, ids, 400.0)
            _assert_reads_match(st, pool, ids, k * 15.0, [(1200.0, 0.0)])
            _assert_reads_match(st, pool, ids, 400.0)
        if k in (40, 41, 120):  # the latest sample read, then written again (and read again)
            _assert_reads_match(st, pool, ids, k * 15.0)
            st.record(k * 15, every[:10], np.full(10, 1e6 if k != 41 else -0.0))
            _assert_reads_match(st, pool, ids, k * 15.0)
        if k in (56, 104):  # copies mid-run: deepcopy (a shared world's envs) and pickle
            state = (st, pool)
            twins.append(copy.deepcopy(state) if k == 56 else pickle.loads(pickle.dumps(state)))


def test_rows_without_samples_and_one_window_read():
    """A series with no sample in any window is absent; a single time and a window reaching back
    before the first sample read like the union read."""
    st = MetricStore(dtype=np.float32, chunk_samples=16)
    ids = np.array([st.series_id("c", {"i": str(i)}) for i in range(3)])
    for k in range(40):
        st.record(k * 15, ids[:2], np.array([k, 40 - k], dtype=float))
    cols = SampleColumns(ids)
    for times in (np.array([7 * 15.0]), np.arange(0.0, 120.0, 15.0), np.array([590.0, 599.0, -5.0])):
        for window_s in (60.0, 300.0):
            windows = np.full(times.size, window_s)
            want = extrapolated_grid(st, ids, times, window_s, True)
            assert cols.extrapolated(st, times, windows, True).tobytes() == want.tobytes()
            assert extrapolated_few(st, ids, times, windows, True).tobytes() == want.tobytes()
    assert np.isnan(want[:, 2]).all()


def test_kept_columns_outside_retention_raise_as_a_read_does():
    st = MetricStore(dtype=np.float32, chunk_samples=16, retention_s=300.0)
    ids = np.array([st.series_id("c", {"i": str(i)}) for i in range(2)])
    cols = SampleColumns(ids)
    for k in range(30):
        st.record(k * 15, ids, np.array([k, k], dtype=float))
    times, windows = np.arange(330.0, 436.0, 15.0), np.full(8, 120.0)
    cols.extrapolated(st, times, windows, True)
    for k in range(30, 80):
        st.record(k * 15, ids, np.array([k, k], dtype=float))
    with pytest.raises(RetentionError):
        cols.extrapolated(st, times, windows, True)
    with pytest.raises(RetentionError):
        extrapolated_few(st, ids, times, windows, True)


def _walked(counts: np.ndarray) -> np.ndarray:
    """Prometheus' precision correction walked bucket by bucket over every row."""
    c = counts.astype(np.float64, copy=True)
    prev = c[:, 0].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(1, c.shape[1]):
            curr = c[:, i]
            delta = np.abs(curr - prev)
            c[:, i] = np.where((delta != 0) & (delta / curr <= 1e-12), prev, curr)
            prev = c[:, i].copy()
    return c


def test_precision_correction_walks_only_the_rows_that_need_it():
    """Counts within 1e-12 of the bucket before (chains of them too, zeros, -0.0 and inf around)
    give the same quantiles as walking every row (a walked row has no such count left); a q per
    row gives each row what it gives alone."""
    rng = np.random.default_rng(5)
    chains = 0
    for _ in range(400):
        g, nb = int(rng.integers(1, 10)), int(rng.integers(2, 9))
        c = np.cumsum(rng.random((g, nb)) * rng.integers(0, 3, (g, nb)), axis=1)
        for _ in range(int(rng.integers(0, 6))):
            r, i = int(rng.integers(0, g)), int(rng.integers(1, nb))
            c[r, i] = c[r, i - 1] * (1 + rng.choice([1e-13, -1e-13, 6e-13, 2e-12, 0.0]))
        odd = rng.random((g, nb))
        c[odd < 0.02], c[(odd > 0.02) & (odd < 0.03)], c[(odd > 0.03) & (odd < 0.035)] = 0.0, -0.0, np.inf
        with np.errstate(divide="ignore", invalid="ignore"):
            d = np.abs(c[:, 1:] - c[:, :-1])
            near = (d != 0) & (d / c[:, 1:] <= 1e-12)
        chains += bool((near[:, 1:] & near[:, :-1]).any())
        les = np.concatenate([np.sort(rng.random(nb - 1) * 10), [np.inf]])
        for q in (0.0, 0.5, 0.95, 0.99, 1.0):
            with np.errstate(invalid="ignore"):  # inf counts
                got, want = bucket_quantile(q, c, les), bucket_quantile(q, _walked(c), les)
            assert got.tobytes() == want.tobytes(), (q, c, les)
        # one q per row: each row as alone with its q (NaN rows ragged, q outside [0, 1] and NaN)
        c[rng.random((g, nb)) < 0.1] = np.nan
        qs = rng.choice([0.0, 0.5, 0.95, 0.99, 1.0, -0.5, 1.5, np.nan], g)
        with np.errstate(invalid="ignore"):
            got = bucket_quantile(qs, c, les)
            want = np.concatenate([bucket_quantile(float(qs[i]), c[i : i + 1], les) for i in range(g)])
        assert got.tobytes() == want.tobytes(), (qs, c, les)
    assert chains > 10


@pytest.mark.parametrize("v2", [False, True])
def test_window_bounds_of_many_times_are_the_stores(v2):
    """`grid._bounds` (all times at once) gives `MetricStore.window_bounds` of each time: on the
    grid, between grid points, before 0, on and around window edges."""
    st = MetricStore(prometheus_v2=v2)
    rng = np.random.default_rng(3)
    times = np.concatenate([np.arange(-60.0, 2000.0, 7.5), rng.uniform(-100, 5000, 500), [1e-10, 15 - 1e-10]])
    for window_s in (60.0, 120.0, 300.0, 14.999999, 7.5):
        i0, i1 = _bounds(st, times, window_s)
        assert list(zip(i0.tolist(), i1.tolist())) == [st.window_bounds(t, window_s) for t in times.tolist()]
    windows = rng.choice([120.0, 300.0, 600.0], times.size)
    i0, i1 = _bounds(st, times, windows)
    want = [st.window_bounds(t, w) for t, w in zip(times.tolist(), windows.tolist())]
    assert list(zip(i0.tolist(), i1.tolist())) == want
