"""Speed and scale of the simulator's MetricStore, printed as measured value vs. target (ratio < 1 is good).

Run: python benchmarks/bench_telemetry.py
"""

from __future__ import annotations

import time

import numpy as np

from sre_marathon_gym.metrics.store import MetricStore

STEP = 15


def _median_time(fn, repeats: int) -> float:
    """Median wall time of fn() in seconds (median is robust to a noisy laptop)."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return float(np.median(samples))


def _report(label: str, value: float, target: float, unit: str) -> None:
    print(f"{label:<58} {value:>12.4g} {unit:<4} target < {target:g} {unit:<4} ratio {value / target:6.3f}")


def bench_record_marathon() -> MetricStore:
    """4,000 series every 15 s for 90 simulated minutes (361 scrapes)."""
    store = MetricStore()
    ids = store.register("m", [{"i": str(i)} for i in range(4000)])
    vals = np.arange(4000, dtype=np.float64)
    t0 = time.perf_counter()
    for k in range(90 * 60 // STEP + 1):
        store.record(k * STEP, ids, vals + k)
    _report("record 4000 series x 90 min (total)", time.perf_counter() - t0, 0.1, "s")
    return store


def bench_six_days() -> MetricStore:
    """6 simulated days x 1,500 series in float32 (no retention), plus the same with 1 day retention."""
    for retention in (None, 86400.0):
        store = MetricStore(retention_s=retention)
        ids = store.register("m", [{"i": str(i)} for i in range(1500)])
        vals = np.ones(1500)
        t0 = time.perf_counter()
        for k in range(6 * 86400 // STEP + 1):
            store.record(k * STEP, ids, vals * k)
        elapsed = time.perf_counter() - t0
        tag = "no retention" if retention is None else "retention 1 day"
        _report(f"6 days x 1500 series float32 nbytes ({tag})", store.nbytes / 2**20, 1024, "MiB")
        print(f"{'':<4}(recording those 34,561 scrapes took {elapsed:.2f} s)")
        if retention is None:
            full = store
    return full


def bench_queries(store: MetricStore) -> None:
    """PromQL-style reads at one evaluation time over 1,000 series, as the alert engine does them."""
    ids = np.arange(1000)
    t = store.last_time
    _report(
        "rate over 1000 series, 5 min window (median)",
        _median_time(lambda: store.rate(ids, t, 300), 200) * 1e3,
        1.0,
        "ms",
    )
    _report(
        "rate over 1000 series, 1 h window (median)",
        _median_time(lambda: store.rate(ids, t, 3600), 50) * 1e3,
        10.0,
        "ms",
    )
    _report("at() over 1000 series (median)", _median_time(lambda: store.at(ids, t), 200) * 1e3, 1.0, "ms")
    _report(
        "avg_over_time over 1000 series, 5 min (median)",
        _median_time(lambda: store.avg_over_time(ids, t, 300), 200) * 1e3,
        1.0,
        "ms",
    )
    groups = ids[: 12 * 80].reshape(80, 12)
    les = np.array([5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, np.inf], dtype=float)
    _report(
        "histogram_quantile 80 groups x 12 buckets (median)",
        _median_time(lambda: store.histogram_quantile(0.95, groups, les, t, 300), 200) * 1e3,
        1.0,
        "ms",
    )
    _report(
        "select() with regex matcher, 4000 series (median, cached)",
        _median_time(lambda: store.select("m", {"i": ("=~", "1.*")}), 200) * 1e3,
        1.0,
        "ms",
    )


if __name__ == "__main__":
    marathon = bench_record_marathon()
    bench_queries(marathon)
    bench_six_days()
