"""`PrometheusMetrics`: the read interface of the simulator's `MetricStore`, answered by a real
Prometheus through `prometheus-api-client`.

Why the same interface: the metrics tool, the alert engine's readers and the live Kubernetes
backend then work unchanged whether the numbers come from the simulator or from Prometheus (a
backfilled simulated run or a live cluster). Simulated seconds map to Prometheus time as
``origin_s + t``; series ids are assigned in order of discovery and stay stable for the object's
life. Every read is one PromQL query per metric name, so reads batch over series.

Beyond the store's interface, `query` / `query_range` take arbitrary PromQL (the metrics tool's
``promql`` argument).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..core.clock import METRIC_STEP_S
from ..core.errors import PrometheusError, PromQLError, TelemetryError
from ..metrics.store import LOOKBACK_S, bucket_quantile
from .openmetrics import DEFAULT_ORIGIN_S

LabelKey = tuple[tuple[str, str], ...]
_METRIC_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_OPS = ("=", "!=", "=~", "!~")


def _key(labels: Mapping[str, str]) -> LabelKey:
    return tuple(sorted((k, v) for k, v in labels.items() if k != "__name__" and v != ""))


def _seconds(window_s: float) -> str:
    if window_s <= 0:
        raise TelemetryError(f"window_s must be positive, got {window_s}")
    return f"{int(window_s * 1000)}ms"


def _range_function(fn: str) -> Any:
    """A `MetricStore`-style method ``(ids, t, window_s) -> values`` answered by PromQL ``fn(x[w])``."""

    def read(
        self: PrometheusMetrics, ids: np.ndarray | Sequence[int], t: float, window_s: float
    ) -> np.ndarray:
        return self._instant(ids, t, fn + "({name}[" + _seconds(window_s) + "])")

    read.__name__ = fn
    read.__doc__ = f"PromQL ``{fn}(x[window])`` at simulated time `t`, per series id."
    return read


class PrometheusMetrics:
    """Read-only metric source over a Prometheus HTTP API (see module docstring).

    Arguments:
        url: base URL, e.g. ``http://127.0.0.1:9090``.
        origin_s: Prometheus timestamp of simulated t=0 (0 for a live cluster: times are then
            Unix seconds).
        step_s: the scrape interval, used as the default grid of range reads.
        timeout_s: per-request timeout.
    """

    def __init__(
        self,
        url: str,
        origin_s: float = DEFAULT_ORIGIN_S,
        step_s: int = METRIC_STEP_S,
        timeout_s: float = 30.0,
        client: Any = None,
    ):
        if not re.match(r"^https?://", url):
            raise PrometheusError(f"Prometheus URL must start with http:// or https://, got {url!r}")
        if client is None:
            from prometheus_api_client import PrometheusConnect

            client = PrometheusConnect(url=url, disable_ssl=True, timeout=timeout_s)
        self.url = url
        self.client = client
        self.origin_s = float(origin_s)
        self.step_s = int(step_s)
        self.lookback_s = LOOKBACK_S
        self._key_to_id: dict[tuple[str, LabelKey], int] = {}
        self._sid_name: list[str] = []
        self._sid_labels: list[LabelKey] = []

    # ------------------------------------------------------------------ HTTP
    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except PrometheusError:
            raise
        except Exception as exc:  # requests / urllib3 / API errors: an outage unless Prometheus said 4xx
            text = str(exc)
            if re.search(r"HTTP Status Code (400|422)", text):
                detail = re.search(r'"error":"((?:[^"\\]|\\.)*)"', text)
                raise PromQLError(
                    f"Prometheus rejected {what}: {detail.group(1) if detail else text}"
                ) from exc
            raise PrometheusError(f"Prometheus at {self.url}: {what} failed: {exc}") from exc

    def _ts(self, t: float) -> float:
        return self.origin_s + float(t)

    def query(self, promql: str, t: float) -> list[tuple[dict[str, str], float]]:
        """Instant PromQL at simulated time `t`: [(labels incl. __name__ if kept, value)]."""
        res = self._call(f"query {promql!r}", self.client.custom_query, promql, params={"time": self._ts(t)})
        out = []
        for item in res:
            if "value" in item:
                out.append((dict(item["metric"]), float(item["value"][1])))
        return out

    def query_range(
        self, promql: str, start_s: float, end_s: float, step_s: float | None = None
    ) -> list[tuple[dict[str, str], np.ndarray, np.ndarray]]:
        """Range PromQL on simulated times: [(labels, times_s, values)] per result series."""
        step = float(step_s or self.step_s)
        if end_s < start_s:
            raise TelemetryError(f"query_range(): end {end_s} is before start {start_s}")
        start = dt.datetime.fromtimestamp(self._ts(start_s), tz=dt.UTC)
        end = dt.datetime.fromtimestamp(self._ts(end_s), tz=dt.UTC)
        res = self._call(
            f"query_range {promql!r}",
            self.client.custom_query_range,
            promql,
            start_time=start,
            end_time=end,
            step=f"{step:g}s",
        )
        out = []
        for item in res:
            pts = item.get("values", [])
            times = np.array([float(p[0]) - self.origin_s for p in pts])
            vals = np.array([float(p[1]) for p in pts])
            out.append((dict(item["metric"]), times, vals))
        return out

    # ------------------------------------------------------------------ registry
    @property
    def series_count(self) -> int:
        return len(self._sid_name)

    def _id(self, name: str, labels: Mapping[str, str]) -> int:
        key = (name, _key(labels))
        sid = self._key_to_id.get(key)
        if sid is None:
            sid = len(self._sid_name)
            self._key_to_id[key] = sid
            self._sid_name.append(name)
            self._sid_labels.append(key[1])
        return sid

    def series_id(self, name: str, labels: Mapping[str, str] | None = None) -> int:
        return self._id(name, labels or {})

    def labels(self, sid: int) -> dict[str, str]:
        return dict(self._sid_labels[self._check(sid)])

    def name(self, sid: int) -> str:
        return self._sid_name[self._check(sid)]

    def named_label_sets(self, ids: Sequence[int]) -> list[tuple[tuple[str, str], ...]]:
        """Per id, its sorted (label, value) pairs with ``("__name__", metric)`` (see `MetricStore`)."""
        return [tuple(sorted([("__name__", self.name(s)), *self.labels(s).items()])) for s in ids]

    def _check(self, sid: int) -> int:
        sid = int(sid)
        if not 0 <= sid < len(self._sid_name):
            raise TelemetryError(f"unknown series id {sid} (series_count={len(self._sid_name)})")
        return sid

    def names(self) -> list[str]:
        return sorted(self._call("list metric names", self.client.all_metrics))

    def label_values(self, name: str, label: str) -> list[str]:
        vals = self._call(
            f"label values of {label}", self.client.get_label_values, label, params={"match[]": name}
        )
        return sorted(v for v in vals if v != "")

    def select(self, name: str, matchers: Mapping[str, str | tuple[str, str]] | None = None) -> np.ndarray:
        """Ids of the series of `name` matching (like `MetricStore.select`), ascending."""
        selector = self._selector(name, matchers)
        res = self._call(
            f"series {selector}",
            self.client.get_series,
            start=dt.datetime.fromtimestamp(0, tz=dt.UTC),
            end=dt.datetime(9999, 1, 1, tzinfo=dt.UTC),
            params={"match[]": selector},
        )
        return np.array(sorted(self._id(name, s) for s in res), dtype=np.intp)

    @staticmethod
    def _selector(name: str, matchers: Mapping[str, str | tuple[str, str]] | None) -> str:
        if not _METRIC_NAME.match(name):
            raise TelemetryError(f"invalid metric name {name!r}")
        parts = []
        for label, m in (matchers or {}).items():
            op, value = ("=", m) if isinstance(m, str) else m
            if op not in _OPS:
                raise TelemetryError(f"unknown matcher op {op!r} for label {label!r}; use one of {_OPS}")
            esc = str(value).replace("\\", "\\\\").replace('"', '\\"')
            parts.append(f'{label}{op}"{esc}"')
        return f"{name}{{{', '.join(parts)}}}" if parts else name

    # ------------------------------------------------------------------ reads by series id
    def _by_name(
        self, ids: np.ndarray | Sequence[int]
    ) -> tuple[tuple[int, ...], np.ndarray, dict[str, list[int]]]:
        arr = np.asarray(ids, dtype=np.intp)
        flat = arr.ravel()
        groups: dict[str, list[int]] = {}
        for pos, sid in enumerate(flat.tolist()):
            groups.setdefault(self.name(sid), []).append(pos)
        return arr.shape, flat, groups

    def _instant(self, ids: np.ndarray | Sequence[int], t: float, template: str) -> np.ndarray:
        """One query per metric name: `template` formatted with the bare name; values by labels."""
        shape, flat, groups = self._by_name(ids)
        out = np.full(flat.size, np.nan)
        for name, positions in groups.items():
            found = {_key(lab): v for lab, v in self.query(template.format(name=name), t)}
            for pos in positions:
                out[pos] = found.get(self._sid_labels[flat[pos]], np.nan)
        return out.reshape(shape)

    def at(self, ids: np.ndarray | Sequence[int], t: float) -> np.ndarray:
        return self._instant(ids, t, "{name}")

    rate = _range_function("rate")
    increase = _range_function("increase")
    delta = _range_function("delta")
    avg_over_time = _range_function("avg_over_time")
    sum_over_time = _range_function("sum_over_time")
    count_over_time = _range_function("count_over_time")
    max_over_time = _range_function("max_over_time")
    min_over_time = _range_function("min_over_time")

    def range(
        self, ids: np.ndarray | Sequence[int], start_s: float, end_s: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Raw samples on the grid in [start_s, end_s] (a range selector, not a range query, so
        there is no lookback filling): (times [n_times], values [n_ids, n_times]), NaN = absent."""
        flat = np.asarray(ids, dtype=np.intp).ravel()
        i0 = int(np.ceil(start_s / self.step_s - 1e-9))
        i1 = int(np.floor(end_s / self.step_s + 1e-9))
        if i1 < i0:
            return np.empty(0), np.empty((flat.size, 0))
        times = np.arange(i0, i1 + 1, dtype=np.float64) * self.step_s
        out = np.full((flat.size, times.size), np.nan)
        _, _, groups = self._by_name(flat)
        window = f"{int(round((i1 - i0 + 1) * self.step_s * 1000))}ms"
        for name, positions in groups.items():
            res = self._call(
                f"range read of {name}",
                self.client.custom_query,
                f"{name}[{window}]",
                params={"time": self._ts(times[-1])},
            )
            found = {_key(item["metric"]): item.get("values", []) for item in res}
            for pos in positions:
                for ts, v in found.get(self._sid_labels[flat[pos]], []):
                    j = int(round((float(ts) - self.origin_s) / self.step_s)) - i0
                    if 0 <= j < times.size:
                        out[pos, j] = float(v)
        return times, out

    def histogram_quantile(
        self, q: float, bucket_ids: np.ndarray, les: np.ndarray | Sequence[float], t: float, window_s: float
    ) -> np.ndarray:
        """Same contract as `MetricStore.histogram_quantile` (bucket rates from Prometheus)."""
        les = np.asarray(les, dtype=np.float64).ravel()
        bucket_ids = np.asarray(bucket_ids, dtype=np.intp)
        if bucket_ids.ndim != 2 or bucket_ids.shape[1] != les.size:
            raise TelemetryError(
                f"histogram_quantile(): bucket_ids must be [n_groups, {les.size}], "
                f"got shape {bucket_ids.shape}"
            )
        rates = np.full(bucket_ids.shape, np.nan)
        present = bucket_ids >= 0
        if present.any():
            rates[present] = self.rate(bucket_ids[present], t, window_s)
        return bucket_quantile(float(q), rates, les)
