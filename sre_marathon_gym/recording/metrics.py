"""A run's metric series as a bundle stores them: an index of series (name, labels) and one float32
block of values on the metric grid, encoded and decoded deterministically. `RecordedMetrics` reads
like a `MetricStore`, so a sealed bundle can be rescored, queried or exported to Prometheus."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.errors import BundleError
from .archive import canonical_json

if TYPE_CHECKING:
    from ..metrics.store import MetricStore


# ---------------------------------------------------------------------------------------------- telemetry
@dataclass(frozen=True)
class RecordedMetrics:
    """The run's metric series as stored in a bundle: one row per series on the sample grid.

    `values[i, j]` is series i at `times[j]`; NaN means no sample (the pod did not exist, or the
    series had ended). Staleness markers are not kept: they only matter to instant queries.
    """

    step_s: int
    start_s: float
    names: list[str]
    labels: list[dict[str, str]]
    values: np.ndarray

    @property
    def times(self) -> np.ndarray:
        return self.start_s + np.arange(self.values.shape[1], dtype=np.float64) * self.step_s

    def __len__(self) -> int:
        return len(self.names)

    def series(self) -> Iterator[tuple[str, dict[str, str], np.ndarray, np.ndarray]]:
        """Yield (name, labels, times, values) per series, NaNs dropped (like `MetricStore.iter_samples`)."""
        times = self.times
        for name, labels, row in zip(self.names, self.labels, self.values):
            mask = ~np.isnan(row)
            yield name, dict(labels), times[mask], row[mask].astype(np.float64)

    def metric_store(self) -> MetricStore:
        """A `MetricStore` holding the same samples, for PromQL-style queries over a bundle."""
        from ..metrics.store import MetricStore

        store = MetricStore(
            step_s=self.step_s, dtype=self.values.dtype, initial_series_capacity=max(1, len(self.names))
        )
        ids = np.asarray([store.series_id(n, lab) for n, lab in zip(self.names, self.labels)], dtype=np.intp)
        for j, t in enumerate(self.times.tolist()):
            col = self.values[:, j]
            present = ~np.isnan(col)
            if present.any():
                store.record(t, ids[present], col[present])
        return store

    @classmethod
    def from_store(cls, store: MetricStore) -> RecordedMetrics:
        """The store's retained range on the grid (`MetricStore.dense_samples`)."""
        step = int(store.step_s)
        dtype = np.dtype(store.dtype).newbyteorder("<")
        start, ids, values = store.dense_samples()
        if not ids:
            return cls(step, 0.0, [], [], np.empty((0, 0), dtype=dtype))
        names, labels = [store.name(i) for i in ids], [store.labels(i) for i in ids]
        return cls(step, start, names, labels, values.astype(dtype))

    def encode(self) -> tuple[bytes, bytes]:
        """(index JSON, values bytes): canonical, so equal telemetry gives equal bytes."""
        dtype = self.values.dtype.newbyteorder("<")
        index = {
            "dtype": dtype.str,
            "layout": "row-major [series, samples]; NaN = no sample",
            "n_samples": int(self.values.shape[1]),
            "series": [[n, dict(sorted(lab.items()))] for n, lab in zip(self.names, self.labels)],
            "start_s": float(self.start_s),
            "step_s": int(self.step_s),
        }
        values = np.ascontiguousarray(self.values, dtype=dtype)
        return canonical_json(index, "telemetry index"), values.tobytes()

    @classmethod
    def decode(cls, index_bytes: bytes, values_bytes: bytes) -> RecordedMetrics:
        try:
            index = json.loads(index_bytes)
            dtype = np.dtype(index["dtype"])
            if dtype.kind != "f":
                raise ValueError(f"dtype {dtype} is not a float type")
            n_series, n_samples = len(index["series"]), int(index["n_samples"])
            if len(values_bytes) != n_series * n_samples * dtype.itemsize:
                raise ValueError(
                    f"{len(values_bytes)} value bytes for {n_series} series x {n_samples} samples"
                )
            values = np.frombuffer(values_bytes, dtype=dtype).reshape(n_series, n_samples)
            return cls(
                int(index["step_s"]),
                float(index["start_s"]),
                [str(s[0]) for s in index["series"]],
                [dict(s[1]) for s in index["series"]],
                values.astype(dtype.newbyteorder("=")),
            )
        except (
            ValueError,
            KeyError,
            TypeError,
            IndexError,
            AttributeError,
            OverflowError,
            RecursionError,
        ) as exc:  # whatever a forged index holds
            raise BundleError(f"telemetry members are inconsistent: {str(exc)[:200]}") from exc
