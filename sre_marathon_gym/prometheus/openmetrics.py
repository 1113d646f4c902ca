"""Write a run's metric series as an OpenMetrics text file that `promtool tsdb create-blocks-from
openmetrics` accepts.

Pitfalls this module handles (each silently loses data if done wrong):
- timestamps are **seconds** (a millisecond timestamp lands in the year 50,000 and is dropped);
- all samples of a metric family must be contiguous, and each series' samples in time order
  (promtool drops out-of-order samples without an error);
- the file must end with ``# EOF``;
- simulated time starts at 0, so samples are shifted by `origin_s` (default 2026-01-01T00:00:00Z):
  old data needs ``--storage.tsdb.retention.time`` long enough, or Prometheus deletes the blocks.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..core.clock import DEFAULT_ORIGIN_S, MAX_ORIGIN_S
from ..core.errors import TelemetryError

SeriesRows = Iterable[tuple[str, dict[str, str], np.ndarray, np.ndarray]]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def series_selector(name: str, labels: dict[str, str]) -> str:
    """`name{a="x",b="y"}` (OpenMetrics allows no space after the comma) with labels sorted and values
    escaped (also promtool's series syntax)."""
    if not labels:
        return name
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return f"{name}{{{body}}}"


def format_value(v: float) -> str:
    """Shortest text that reads back as the same float64 (float32 samples widen exactly)."""
    if np.isnan(v):
        return "NaN"
    if np.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(float(v))


def _rows_by_name(source: Any) -> Iterator[tuple[str, dict[str, str], np.ndarray, np.ndarray]]:
    """Rows grouped by metric name (stable), from a `MetricStore`, a bundle `RecordedMetrics` or rows."""
    if hasattr(source, "iter_samples"):
        rows = list(source.iter_samples())
    elif hasattr(source, "series"):
        rows = list(source.series())
    else:
        rows = list(source)
    order = sorted(range(len(rows)), key=lambda i: rows[i][0])
    for i in order:
        yield rows[i]


def write_openmetrics(
    source: Any, path: str | os.PathLike[str], origin_s: int = DEFAULT_ORIGIN_S
) -> dict[str, int]:
    """Write every series of `source` (MetricStore, bundle RecordedMetrics, or (name, labels, times,
    values) rows) to `path`; return counts of series and samples written."""
    numeric = isinstance(origin_s, (int, float, np.integer, np.floating)) and not isinstance(origin_s, bool)
    if (
        not numeric
        or not math.isfinite(origin_s)
        or origin_s != int(origin_s)
        or not 0 <= origin_s <= MAX_ORIGIN_S
    ):
        raise TelemetryError(
            f"origin_s must be a whole number of seconds in [0, {MAX_ORIGIN_S}] "
            f"(Prometheus ends in year 9999), got {origin_s}"
        )
    path = Path(path)
    n_series = n_samples = 0
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for name, labels, times, values in _rows_by_name(source):
            if len(times) == 0:
                continue
            if np.any(np.diff(times) <= 0):
                raise TelemetryError(f"{series_selector(name, labels)}: sample times are not increasing")
            sel = series_selector(name, labels)
            stamps = (np.asarray(times, dtype=np.float64) + origin_s).astype(np.int64)
            fh.writelines(
                f"{sel} {format_value(v)} {ts}\n"
                for ts, v in zip(stamps.tolist(), np.asarray(values, dtype=np.float64).tolist())
            )
            n_series += 1
            n_samples += len(times)
        fh.write("# EOF\n")
    return {"series": n_series, "samples": n_samples}
