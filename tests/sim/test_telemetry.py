"""MetricStore: registry, chunked storage, retention and PromQL semantics with hand-computed values."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

from sre_marathon_gym.core.errors import SREMarathonError
from sre_marathon_gym.metrics.store import MetricStore, RetentionError, TelemetryError


def counter_store(values_by_t: dict[float, float], name: str = "c_total") -> tuple[MetricStore, int]:
    """One series with the given samples (absent times stay NaN)."""
    store = MetricStore()
    sid = store.series_id(name, {"service": "cart"})
    for t in sorted(values_by_t):
        store.record(t, np.array([sid]), np.array([values_by_t[t]]))
    return store, sid


# ---------------------------------------------------------------- registry and matchers
def test_series_id_is_get_or_create_and_labels_are_normalised():
    store = MetricStore()
    a = store.series_id("up", {"job": "cart", "zone": "a"})
    b = store.series_id("up", {"zone": "a", "job": "cart"})  # same labels, other order
    c = store.series_id("up", {"job": "cart", "zone": "a", "pod": ""})  # empty value == absent
    d = store.series_id("up", {"job": "cart", "zone": "b"})
    assert a == b == c == 0 and d == 1
    assert store.series_count == 2
    assert store.labels(a) == {"job": "cart", "zone": "a"}
    assert store.name(d) == "up"
    store.labels(a)["job"] = "mutated"  # labels() returns a copy
    assert store.labels(a)["job"] == "cart"
    with pytest.raises(TelemetryError):
        store.name(99)


def test_register_bulk_returns_ids_in_order_and_reuses_existing():
    store = MetricStore()
    first = store.series_id("m", {"pod": "p1"})
    ids = store.register("m", [{"pod": "p0"}, {"pod": "p1"}, {"pod": "p2"}, {"pod": "p0"}])
    assert ids.tolist() == [1, first, 2, 1]
    assert store.series_count == 3
    assert store.names() == ["m"]
    assert store.label_values("m", "pod") == ["p0", "p1", "p2"]
    assert store.label_values("m", "nope") == [] and store.label_values("absent", "pod") == []


def test_a_series_block_registers_as_its_series_one_by_one():
    from sre_marathon_gym.metrics.labels import normalise_labels
    from sre_marathon_gym.metrics.series_block import SeriesBlock

    series = [("m", {"pod": "p1"}), ("n", {"pod": "p1"}), ("m", {"pod": "p0", "zone": "a"}), ("m", {})]
    block = SeriesBlock([name for name, _ in series], [normalise_labels(lab) for _, lab in series])
    one_by_one = MetricStore()
    want = [one_by_one.series_id(name, lab) for name, lab in series]
    fresh = MetricStore()
    assert fresh.register_block(block).tolist() == want and fresh.leading_block is block
    for st in (fresh, one_by_one):
        st.record(0.0, np.arange(4), np.arange(4.0))
    assert fresh.series_count == 4 and fresh.names() == one_by_one.names()
    assert [fresh.labels(i) for i in range(4)] == [one_by_one.labels(i) for i in range(4)]
    assert fresh.select("m", {}).tolist() == one_by_one.select("m", {}).tolist()
    assert fresh.series_id("m", {"pod": "p1"}) == 0 and fresh.series_id("m", {"pod": "p9"}) == 4
    assert block.key_to_id == SeriesBlock(block.names, block.keys).key_to_id, (
        "the store's growth left the block alone"
    )
    # into a store that has series: get-or-create one by one, no leading block
    used = MetricStore()
    used.series_id("n", {"pod": "p1"})
    assert used.register_block(block).tolist() == [1, 0, 2, 3] and used.leading_block is None
    # copies share the block; pickles leave it out (a reader routes the registry again)
    assert copy.deepcopy(fresh).leading_block is block
    assert pickle.loads(pickle.dumps(fresh)).leading_block is None
    with pytest.raises(TelemetryError, match="twice"):
        SeriesBlock(["m", "m"], [(("pod", "p"),), (("pod", "p"),)])


@pytest.fixture
def http_store() -> tuple[MetricStore, dict[tuple[str, str], int]]:
    store = MetricStore()
    ids = {}
    for svc in ("frontend", "cart", "checkout", "cartservice"):
        for code in ("200", "500"):
            ids[svc, code] = store.series_id("http_requests_total", {"service": svc, "code": code})
    ids["nocode", ""] = store.series_id("http_requests_total", {"service": "nocode"})
    store.series_id("other_metric", {"service": "cart"})
    return store, ids


def test_select_matchers_equal_and_not_equal(http_store):
    store, ids = http_store
    assert store.select("http_requests_total", {"service": "cart"}).tolist() == [
        ids["cart", "200"],
        ids["cart", "500"],
    ]
    assert store.select("http_requests_total", {"service": ("=", "cart"), "code": "500"}).tolist() == [
        ids["cart", "500"]
    ]
    # != also matches series lacking the label (absent == "")
    neq = store.select("http_requests_total", {"code": ("!=", "200")}).tolist()
    assert neq == sorted(
        [ids[s, "500"] for s in ("frontend", "cart", "checkout", "cartservice")] + [ids["nocode", ""]]
    )
    # ="" selects series without the label; !="" the ones with it
    assert store.select("http_requests_total", {"code": ""}).tolist() == [ids["nocode", ""]]
    assert len(store.select("http_requests_total", {"code": ("!=", "")})) == 8
    assert store.select("http_requests_total").size == 9
    assert store.select("missing_metric", {"service": "cart"}).size == 0


def test_select_regex_is_fully_anchored(http_store):
    store, ids = http_store
    # "cart" must not match "cartservice" (anchored), "cart.*" matches both
    assert store.select("http_requests_total", {"service": ("=~", "cart"), "code": "200"}).tolist() == [
        ids["cart", "200"]
    ]
    assert store.select("http_requests_total", {"service": ("=~", "cart.*"), "code": "200"}).tolist() == [
        ids["cart", "200"],
        ids["cartservice", "200"],
    ]
    assert store.select("http_requests_total", {"code": ("=~", "5..")}).size == 4
    assert store.select("http_requests_total", {"service": ("=~", "front|check")}).size == 0
    not_re = store.select("http_requests_total", {"service": ("!~", "cart.*|frontend"), "code": "500"})
    assert not_re.tolist() == [ids["checkout", "500"]]
    with pytest.raises(TelemetryError):
        store.select("http_requests_total", {"service": ("==", "cart")})


def test_select_sees_series_added_later(http_store):
    store, _ = http_store
    assert store.select("http_requests_total", {"service": "cart", "code": "200"}).size == 1
    new = store.series_id("http_requests_total", {"service": "cart", "code": "200", "zone": "b"})
    assert new in store.select("http_requests_total", {"service": "cart", "code": "200"}).tolist()


# ---------------------------------------------------------------- storage
def test_absent_samples_are_nan_and_overwrite_works():
    """Series b exists but is only written at t=30; a is written at 0, 15, 30 and overwritten at 30."""
    store = MetricStore()
    a, b = store.register("g", [{"pod": "a"}, {"pod": "b"}])
    store.record(0, np.array([a]), np.array([1.0]))
    store.record(15, np.array([a]), np.array([2.0]))
    store.record(30, np.array([a, b]), np.array([3.0, 7.0]))
    store.record(30, np.array([a]), np.array([4.0]))  # same (id, t): overwrite
    times, vals = store.range(np.array([a, b]), 0, 45)
    assert times.tolist() == [0.0, 15.0, 30.0, 45.0]
    assert vals.dtype == np.float64
    np.testing.assert_array_equal(vals, [[1, 2, 4, np.nan], [np.nan, np.nan, 7, np.nan]])


def test_record_rejects_bad_times_and_ids():
    store = MetricStore()
    sid = store.series_id("g")
    store.record(30, np.array([sid]), np.array([1.0]))
    with pytest.raises(TelemetryError):
        store.record(20, np.array([sid]), np.array([1.0]))  # off the 15 s grid
    with pytest.raises(TelemetryError):
        store.record(15, np.array([sid]), np.array([1.0]))  # goes back in time
    with pytest.raises(TelemetryError):
        store.record(45, np.array([5]), np.array([1.0]))  # unknown id
    with pytest.raises(ValueError):  # TelemetryError is a ValueError and a package error
        store.record(-15, np.array([sid]), np.array([1.0]))
    assert issubclass(TelemetryError, SREMarathonError)


def test_chunk_boundary_crossing_and_capacity_growth():
    """chunk_samples=4 -> 60 s per chunk; 3 series grow to 70 later (past the 4 rows reserved).

    Old chunks keep their smaller row count, so a late series reads NaN there without copying; a
    chunk holds (and `nbytes` counts) one row per series registered when it was last written.
    """
    store = MetricStore(chunk_samples=4, initial_series_capacity=4)
    ids = store.register("g", [{"i": str(i)} for i in range(3)])
    for k in range(10):  # t = 0..135, value = 100*id + k
        store.record(15 * k, ids, 100.0 * ids + k)
    assert store.nbytes == 3 * 3 * 4 * 4  # 3 chunks x 3 series x 4 samples x float32
    more = store.register("g", [{"i": str(i)} for i in range(3, 70)])
    for k in range(10, 14):  # t = 150..195
        store.record(15 * k, np.concatenate([ids, more]), np.full(70, float(k)))
    times, vals = store.range(ids, 45, 165)  # crosses chunks 0|1|2
    assert times.tolist() == [45, 60, 75, 90, 105, 120, 135, 150, 165]
    np.testing.assert_array_equal(vals[1], [103, 104, 105, 106, 107, 108, 109, 10, 11])
    _, late = store.range(more[-1:], 0, 195)
    assert np.isnan(late[0, :10]).all() and late[0, 10:].tolist() == [10, 11, 12, 13]
    # chunk 2 grew from 3 to 70 rows; chunk 3 was born with 70
    assert store.nbytes == (2 * 3 + 2 * 70) * 4 * 4
    assert [store._chunks[k].shape[0] for k in range(4)] == [3, 3, 70, 70]


def test_rows_past_the_registered_series_are_never_read_and_copies_grow_on_their_own():
    """A chunk is a view of a reserved buffer whose rows past the registered series hold whatever
    the allocator gave: a series registered after the last write reads NaN until written, and a
    copy (with a reservation of its own) or a pickled store (compact, without one) takes new
    series and writes as the original does, without touching it."""
    import pickle

    store = MetricStore(chunk_samples=8, initial_series_capacity=2)
    ids = store.register("g", [{"i": str(i)} for i in range(5)])
    store.record(0, ids, np.arange(5.0))
    store._reserved[0][5:] = 7.0  # what an unused reserved row may hold
    late = store.register("g", [{"i": "late"}])
    assert np.isnan(store.range(late, 0, 0)[1]).all() and np.isnan(store.at(late, 0)).all()
    copies = [copy.deepcopy(store), pickle.loads(pickle.dumps(store))]
    assert copies[1]._reserved == {} and len(pickle.dumps(store)) < 5_000  # the reservation is not pickled
    assert not np.shares_memory(copies[0]._reserved[0], store._reserved[0])  # a copy reserves its own
    for s in [store, *copies]:
        more = s.register("g", [{"i": str(i)} for i in range(6, 40)])
        s.record(15, np.concatenate([ids, late, more]), np.arange(40.0))
    for c in copies:
        np.testing.assert_array_equal(c.range(np.arange(40), 0, 15)[1], store.range(np.arange(40), 0, 15)[1])
    vals = store.range(np.arange(40), 0, 15)[1]
    assert np.isnan(vals[5:, 0]).all() and vals[:, 1].tolist() == list(range(40))


def test_storage_dtype_and_large_time_gap_allocates_nothing_between():
    store = MetricStore(chunk_samples=4, dtype=np.float64)
    sid = store.series_id("g")
    store.record(0, np.array([sid]), np.array([1.0]))
    store.record(15 * 4 * 100, np.array([sid]), np.array([2.0]))  # 100 chunks later
    assert len(store._chunks) == 2
    assert store.at([sid], 6000).tolist() == [2.0]
    with pytest.raises(TelemetryError):
        MetricStore(dtype=np.int32)


# ---------------------------------------------------------------- instant vector
def test_at_uses_left_open_five_minute_lookback_and_staleness():
    """Samples every 15 s up to t=300 (value t/15). at(t) returns the newest sample in (t-300, t]."""
    store = MetricStore()
    a, b = store.register("g", [{"p": "a"}, {"p": "b"}])
    for t in range(0, 301, 15):
        store.record(t, np.array([a, b]), np.array([t / 15, t / 15]))
    store.mark_stale(315, np.array([b]))
    assert store.at([a], 300).tolist() == [20.0]
    assert store.at([a], 310).tolist() == [20.0]  # off-grid t: newest sample at or before it
    assert store.at([a], 585).tolist() == [20.0]  # 300 in (285, 585]
    assert math.isnan(store.at([a], 600)[0])  # 300 not in (300, 600]: left-open like Prometheus 3
    assert math.isnan(store.at([b], 330)[0])  # staleness marker ends the series immediately
    assert store.at([b], 300).tolist() == [20.0]
    _, vals = store.range([b], 300, 315)  # the marker itself reads as "no sample"
    assert vals[0, 0] == 20.0 and math.isnan(vals[0, 1])
    out = store.at(np.array([[a, b], [b, a]]), 300)  # shape is preserved
    assert out.shape == (2, 2)


# ---------------------------------------------------------------- rate / increase / delta
def test_rate_on_steady_counter():
    """+30 per 15 s since t=0. At t=600 over 60 s the window (540, 600] holds 555..600 (4 samples).

    raw increase 90 over 45 s; first sample 15 s after the window start (< 1.1 * 15) -> extrapolate
    to the full 60 s: increase = 90 * 60/45 = 120, rate = 120 / 60 = 2.0 per second.
    """
    store, sid = counter_store({15.0 * k: 30.0 * k for k in range(41)})
    assert store.rate([sid], 600, 60)[0] == pytest.approx(2.0)
    assert store.increase([sid], 600, 60)[0] == pytest.approx(120.0)
    assert store.count_over_time([sid], 600, 60)[0] == 4
    assert store.count_over_time([sid], 600, 45)[0] == 3  # (555, 600]: 555 excluded


def test_rate_extrapolates_only_half_an_interval_when_series_starts_inside_window():
    """Samples only at 570, 585, 600 = 100, 130, 160; window (540, 600].

    sampled 30 s, avg 15 s; gap to start 30 s >= 16.5 -> extrapolate avg/2 = 7.5 s; zero point is
    30 * 100/60 = 50 s away (farther, no clamp); gap to end 0. increase = 60 * 37.5/30 = 75.
    """
    store, sid = counter_store({570.0: 100.0, 585.0: 130.0, 600.0: 160.0})
    assert store.increase([sid], 600, 60)[0] == pytest.approx(75.0)
    assert store.rate([sid], 600, 60)[0] == pytest.approx(1.25)


def test_counter_extrapolation_never_goes_below_zero():
    """Samples 570, 585, 600 = 10, 40, 70: start extrapolation 7.5 s would reach 10 - 15 < 0, so it is
    clamped to the zero point 30 * 10/60 = 5 s: increase = 60 * 35/30 = 70.
    """
    store, sid = counter_store({570.0: 10.0, 585.0: 40.0, 600.0: 70.0})
    assert store.increase([sid], 600, 60)[0] == pytest.approx(70.0)


def test_counter_reset_is_handled():
    """555..600 = 100, 130, 10, 40: raw 40 - 100 = -60, reset at 585 adds the previous 130 -> 70.

    start gap 15 s (< 16.5) -> extrapolate fully; zero point 45 * 100/70 = 64.3 s is farther.
    increase = 70 * 60/45 = 93.333..., rate = 93.333/60 = 1.5556.
    """
    store, sid = counter_store({555.0: 100.0, 570.0: 130.0, 585.0: 10.0, 600.0: 40.0})
    assert store.increase([sid], 600, 60)[0] == pytest.approx(70.0 * 60 / 45)
    assert store.rate([sid], 600, 60)[0] == pytest.approx(70.0 / 45)


def test_counter_reset_across_a_gap_compares_with_previous_present_sample():
    """540(out), 555=100, 570=absent, 585=10, 600=40 in (540, 600]: reset 10 < 100 adds 100.

    raw 40 - 100 + 100 = 40 over 45 s with 3 samples (avg 22.5 s, threshold 24.75): start gap 15 s
    and end gap 0 are both inside -> increase = 40 * 60/45 = 53.333...
    """
    store, sid = counter_store({540.0: 90.0, 555.0: 100.0, 585.0: 10.0, 600.0: 40.0})
    assert store.increase([sid], 600, 60)[0] == pytest.approx(40.0 * 60 / 45)


def test_rate_needs_two_samples():
    store, sid = counter_store({600.0: 5.0})
    assert math.isnan(store.rate([sid], 600, 60)[0])
    assert math.isnan(store.increase([sid], 600, 60)[0])
    assert math.isnan(store.rate([sid], 900, 60)[0])  # no samples at all
    assert store.avg_over_time([sid], 600, 60)[0] == 5.0


def test_delta_and_over_time_functions_on_a_gauge():
    """555..600 = 10, 8, 6, 4: delta = -6 * 60/45 = -8 (no zero clamp for gauges); avg 7, max 10."""
    store, sid = counter_store({555.0: 10.0, 570.0: 8.0, 585.0: 6.0, 600.0: 4.0}, name="g")
    assert store.delta([sid], 600, 60)[0] == pytest.approx(-8.0)
    assert store.avg_over_time([sid], 600, 60)[0] == pytest.approx(7.0)
    assert store.max_over_time([sid], 600, 60)[0] == 10.0
    assert store.min_over_time([sid], 600, 60)[0] == 4.0
    assert store.sum_over_time([sid], 600, 60)[0] == 28.0
    assert math.isnan(store.max_over_time([sid], 1200, 60)[0])


def test_rate_is_vectorised_and_keeps_shape():
    """Series i grows by 15*(i+1) per step -> rate i+1; a series without samples gives NaN."""
    store = MetricStore()
    ids = store.register("c_total", [{"i": str(i)} for i in range(5)])
    for k in range(41):
        store.record(15 * k, ids[:4], 15.0 * k * (ids[:4] + 1))
    out = store.rate(ids.reshape(5, 1), 600, 120)
    assert out.shape == (5, 1)
    np.testing.assert_allclose(out[:4, 0], [1, 2, 3, 4])
    assert math.isnan(out[4, 0])


# ---------------------------------------------------------------- histogram_quantile
def histogram_store(rates: list[float], les: list[float]) -> tuple[MetricStore, np.ndarray]:
    """Cumulative bucket counters growing at exactly `rates` per second since t=0, up to t=600."""
    store = MetricStore()
    ids = store.register("latency_bucket", [{"le": str(le)} for le in les])
    r = np.asarray(rates, dtype=np.float64)
    for k in range(41):
        store.record(15 * k, ids, r * 15 * k)
    return store, ids[None, :]


LES = [100.0, 250.0, 500.0, math.inf]


def test_histogram_quantile_interpolates_inside_bucket():
    """Cumulative rates [10, 20, 30, 30] (le 100, 250, 500, +Inf).

    p50: rank 0.5*30 = 15 -> first bucket with count >= 15 is le=250 (20); it spans (100, 250] with
    20 - 10 = 10 observations, rank inside 15 - 10 = 5 -> 100 + 150 * 5/10 = 175.
    p90: rank 27 -> le=500 (30): 250 + 250 * (27-20)/(30-20) = 425.
    p25: rank 7.5 -> lowest bucket, interpolated from 0: 100 * 7.5/10 = 75.
    """
    store, ids = histogram_store([10, 20, 30, 30], LES)
    assert store.histogram_quantile(0.5, ids, LES, 600, 60)[0] == pytest.approx(175.0)
    assert store.histogram_quantile(0.9, ids, LES, 600, 60)[0] == pytest.approx(425.0)
    assert store.histogram_quantile(0.25, ids, LES, 600, 60)[0] == pytest.approx(75.0)


def test_histogram_quantile_in_inf_bucket_returns_highest_finite_bound():
    """Rates [10, 20, 30, 40]: p90 rank 36 > 30 -> falls into +Inf -> upper bound 500."""
    store, ids = histogram_store([10, 20, 30, 40], LES)
    assert store.histogram_quantile(0.9, ids, LES, 600, 60)[0] == 500.0


def test_histogram_quantile_special_cases():
    store, ids = histogram_store([0, 0, 0, 0], LES)  # zero total rate -> NaN
    assert math.isnan(store.histogram_quantile(0.5, ids, LES, 600, 60)[0])
    store, ids = histogram_store([10, 20, 30, 30], LES)
    assert store.histogram_quantile(-0.1, ids, LES, 600, 60)[0] == -math.inf
    assert store.histogram_quantile(1.5, ids, LES, 600, 60)[0] == math.inf
    assert math.isnan(store.histogram_quantile(math.nan, ids, LES, 600, 60)[0])
    # lowest bucket with upper bound <= 0 returns that bound instead of interpolating
    les_neg = [-1.0, 250.0, 500.0, math.inf]
    store, ids = histogram_store([10, 20, 30, 30], les_neg)
    assert store.histogram_quantile(0.2, ids, les_neg, 600, 60)[0] == -1.0
    with pytest.raises(TelemetryError):
        store.histogram_quantile(0.5, ids, [500.0, 250.0, 100.0, math.inf], 600, 60)


def test_histogram_quantile_groups_and_missing_buckets():
    """Group 0: rates [10, 20, 30, 30] -> p50 175. Group 1: le=250 missing (id -1) -> buckets
    (100:10, 500:30, +Inf:30), rank 15 in (100, 500] with 20 obs: 100 + 400 * 5/20 = 200.
    Group 2: +Inf missing -> NaN. Non-monotonic counts are forced monotonic like Prometheus:
    group 3 [10, 5, 30, 30] -> [10, 10, 30, 30], rank 15 -> (250, 500]: 250 + 250 * 5/20 = 312.5.
    """
    store = MetricStore()
    g = store.register("b", [{"g": "0", "le": str(le)} for le in LES])
    h = store.register("b", [{"g": "3", "le": str(le)} for le in LES])
    for k in range(41):
        store.record(15 * k, g, np.array([10.0, 20, 30, 30]) * 15 * k)
        store.record(15 * k, h, np.array([10.0, 5, 30, 30]) * 15 * k)
    groups = np.array([g, [g[0], -1, g[2], g[3]], [g[0], g[1], g[2], -1], h])
    out = store.histogram_quantile(0.5, groups, LES, 600, 60)
    assert out[0] == pytest.approx(175.0)
    assert out[1] == pytest.approx(200.0)
    assert math.isnan(out[2])
    assert out[3] == pytest.approx(312.5)


# ---------------------------------------------------------------- retention and export
def test_retention_drops_whole_old_chunks_and_refuses_old_queries():
    """chunk = 4 samples = 60 s, retention 120 s. At t=600 (chunk 10 starts) the horizon is 480:
    chunks 0..7 (ending <= 480) are dropped, chunks 8, 9, 10 remain, queries before 480 raise.
    """
    store = MetricStore(chunk_samples=4, retention_s=120)
    sid = store.series_id("g")
    for k in range(41):
        store.record(15 * k, np.array([sid]), np.array([float(k)]))
    assert store.retained_from == 480.0
    assert sorted(store._chunks) == [8, 9, 10]
    assert store.nbytes == 3 * 1 * 4 * 4
    times, vals = store.range([sid], 480, 600)
    assert times[0] == 480 and vals[0, 0] == 32.0
    with pytest.raises(RetentionError, match="retention"):
        store.range([sid], 465, 600)
    with pytest.raises(ValueError):
        store.rate([sid], 540, 120)  # needs (420, 540]
    assert store.rate([sid], 600, 60)[0] == pytest.approx(1 / 15)
    assert [s[2][0] for s in store.iter_samples()] == [480.0]


def test_iter_samples_drops_nans_and_skips_empty_series():
    store = MetricStore(chunk_samples=4)
    a, b, c = store.register("g", [{"p": "a"}, {"p": "b"}, {"p": "c"}])
    store.record(0, np.array([a]), np.array([1.0]))
    store.record(75, np.array([a, b]), np.array([2.0, 3.0]))
    out = list(store.iter_samples())
    assert [(n, lab) for n, lab, _, _ in out] == [("g", {"p": "a"}), ("g", {"p": "b"})]
    assert out[0][2].tolist() == [0.0, 75.0] and out[0][3].tolist() == [1.0, 2.0]
    assert out[1][2].tolist() == [75.0] and out[1][3].tolist() == [3.0]
    assert list(store.iter_samples(start_s=15, end_s=60)) == []
    assert list(MetricStore().iter_samples()) == []


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_samples_are_iter_samples_on_one_grid(dtype):
    """What a bundle stores (`RecordedMetrics.from_store` reads `dense_samples` in one pass) is what
    `iter_samples` yields: the same series in id order, each sample in its column, a staleness
    marker, a NaN sample, a gap and a chunk retention dropped as plain NaN."""
    store = MetricStore(chunk_samples=4, dtype=dtype, retention_s=100)
    a, b, c, d = store.register("g", [{"p": "a"}, {"p": "b"}, {"p": "c"}, {"p": "d"}])
    store.record(0, [a], [9.0])  # dropped by retention
    store.record(90, [a, c], [1.5, -0.0])
    store.record(105, [a, b], [2.0, np.nan])
    store.mark_stale(120, [a])
    store.record(195, [c], [3.25])  # a new chunk: the first one is dropped
    store.series_id("late")  # registered, never written
    start, ids, values = store.dense_samples()
    rows = list(store.iter_samples())
    assert ids == [a, c] and [(n, lab) for n, lab, _, _ in rows] == [("g", {"p": "a"}), ("g", {"p": "c"})]
    assert values.dtype == np.dtype(dtype) and start == min(r[2][0] for r in rows) == 90.0
    assert values.shape == (2, (195 - 90) // 15 + 1)
    for row, (_, _, times, vals) in zip(values, rows):
        cols = ((times - start) / 15).astype(int)
        np.testing.assert_array_equal(row[cols], vals.astype(dtype))
        others = np.delete(row, cols)
        assert np.isnan(others).all()
        # a plain NaN, bit for bit: staleness markers are not copied into the matrix
        assert set(others.view(np.uint32 if dtype == np.float32 else np.uint64).tolist()) <= {
            np.array(np.nan, dtype=dtype).view(np.uint32 if dtype == np.float32 else np.uint64).item()
        }
    assert MetricStore().dense_samples()[1] == []


def test_same_input_gives_same_arrays():
    def build() -> MetricStore:
        store = MetricStore(chunk_samples=16)
        ids = store.register("c_total", [{"i": str(i)} for i in range(50)])
        for k in range(100):
            vals = (np.arange(50) * 7 + k * 13) % 97 + k  # deterministic, with resets
            store.record(15 * k, ids[: 25 + k % 25], vals[: 25 + k % 25].astype(float))
        return store

    s1, s2 = build(), build()
    ids = np.arange(50)
    np.testing.assert_array_equal(s1.range(ids, 0, 1500)[1], s2.range(ids, 0, 1500)[1])
    np.testing.assert_array_equal(s1.rate(ids, 1485, 300), s2.rate(ids, 1485, 300))
    assert s1.nbytes == s2.nbytes
    for x, y in zip(s1.iter_samples(), s2.iter_samples(), strict=True):
        assert x[:2] == y[:2]
        np.testing.assert_array_equal(x[3], y[3])


def _reference_extrapolated(
    ts: list[float], vs: list[float], t: float, w: float, is_counter: bool, is_rate: bool
) -> float:
    """Scalar transcription of Prometheus' extrapolatedRate, one series at a time."""
    pts = [(a, b) for a, b in zip(ts, vs, strict=True) if t - w < a <= t and not math.isnan(b)]
    if len(pts) < 2:
        return math.nan
    result = pts[-1][1] - pts[0][1]
    if is_counter:
        for (_, prev), (_, cur) in zip(pts, pts[1:]):
            if cur < prev:
                result += prev
    sampled = pts[-1][0] - pts[0][0]
    avg = sampled / (len(pts) - 1)
    to_start, to_end = pts[0][0] - (t - w), t - pts[-1][0]
    if to_start >= avg * 1.1:
        to_start = avg / 2
    if is_counter and result > 0 and pts[0][1] >= 0:
        to_start = min(to_start, sampled * pts[0][1] / result)
    if to_end >= avg * 1.1:
        to_end = avg / 2
    factor = (sampled + to_start + to_end) / sampled
    return result * factor / (w if is_rate else 1.0)


def test_vectorised_rate_matches_scalar_reference_with_gaps_and_resets():
    """200 series with random gaps (pods coming and going) and counter resets, several windows."""
    rng = np.random.default_rng(7)
    n, steps = 200, 80
    data = np.cumsum(rng.integers(0, 50, size=(n, steps)).astype(float), axis=1)
    data[rng.random((n, steps)) < 0.05] = 0.0  # resets
    data[rng.random((n, steps)) < 0.2] = np.nan  # absent samples
    data[:10, :] = np.nan  # never present
    data[10:20, :-1] = np.nan  # a single sample
    store = MetricStore(chunk_samples=16)
    ids = store.register("c_total", [{"i": str(i)} for i in range(n)])
    for k in range(steps):
        present = ~np.isnan(data[:, k])
        store.record(15 * k, ids[present], data[present, k])
    ts = [15.0 * k for k in range(steps)]
    for t, w in [(1185, 60), (1185, 300), (1170, 90), (1000, 600), (600, 45), (1190, 120)]:
        for fn, is_counter, is_rate in [
            (store.rate, True, True),
            (store.increase, True, False),
            (store.delta, False, False),
        ]:
            got = fn(ids, t, w)
            want = [_reference_extrapolated(ts, row, t, w, is_counter, is_rate) for row in data.tolist()]
            np.testing.assert_allclose(got, want, rtol=1e-9, equal_nan=True)
