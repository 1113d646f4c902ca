"""Exports simulator state as Prometheus series (names and labels of the real exporters).

Span metrics follow the OpenTelemetry spanmetrics connector, pod and node series follow
kube-state-metrics and cAdvisor; see `catalog/metrics.yaml`. Counters are cumulative, sampled
every 15 s; histogram buckets are expected counts from the log-normal latency model.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

from ..metric_store import _normalise_labels
from .kube_series import KubeSeries, PodLayout
from .traffic import TickResult, lognormal_cdf

if TYPE_CHECKING:
    from .simulator import Simulator

BUCKETS_MS = np.array(
    [5.0, 10.0, 25.0, 50.0, 75.0, 100.0, 250.0, 500.0, 750.0, 1000.0, 1500.0, 2000.0, 5000.0, 10000.0]
)
LE = [*(f"{b:g}" for b in BUCKETS_MS), "+Inf"]
STATUS = ("STATUS_CODE_UNSET", "STATUS_CODE_ERROR")
SPAN = "traces_span_metrics"


def span_name(service: str, protocol: str) -> str:
    camel = "".join(p.capitalize() for p in service.replace("_", "-").split("-"))
    return f"oteldemo.{camel}/Handle" if protocol == "grpc" else f"{service} {protocol.upper()} handler"


class MetricExporter(KubeSeries):
    def __init__(self, sim: Simulator):
        self.sim = sim
        self.store = sim.store
        c = sim.compiled
        ns = sim.app.namespace
        self.ns = ns
        inbound = {c.services[int(d)]: sim.app.edges[e].protocol for e, d in enumerate(c.edge_dst)}
        # span series: rows = (request types at the entry) + (other services); two statuses each
        self.span_rows: list[tuple[str, str]] = []
        for rt in sim.app.request_types:
            self.span_rows.append((sim.app.entry_point, f"{rt.method} {rt.endpoint}"))
        self.svc_rows = [s for i, s in enumerate(c.services) if i != c.entry]
        for s in self.svc_rows:
            self.span_rows.append((s, span_name(s, inbound.get(s, "grpc"))))
        n = len(self.span_rows)
        self.calls_ids = np.zeros((n, 2), dtype=np.int64)
        self.bucket_ids = np.zeros((n, 2, len(LE)), dtype=np.int64)
        self.sum_ids = np.zeros((n, 2), dtype=np.int64)
        self.count_ids = np.zeros((n, 2), dtype=np.int64)
        st = self.store
        calls, dsum, dcount, bucket = (
            f"{SPAN}_calls_total",
            f"{SPAN}_duration_milliseconds_sum",
            f"{SPAN}_duration_milliseconds_count",
            f"{SPAN}_duration_milliseconds_bucket",
        )
        le_items = [(sys.intern("le"), sys.intern(le)) for le in LE]
        for i, (svc, name) in enumerate(self.span_rows):
            for k, status in enumerate(STATUS):
                lab = {
                    "namespace": ns,
                    "service_name": svc,
                    "span_name": name,
                    "span_kind": "SPAN_KIND_SERVER",
                    "status_code": status,
                }
                key = _normalise_labels(lab)
                self.calls_ids[i, k] = st.series_id_normalised(calls, key)
                self.sum_ids[i, k] = st.series_id_normalised(dsum, key)
                self.count_ids[i, k] = st.series_id_normalised(dcount, key)
                le_first = all(item[0] > "le" for item in key)  # then ("le", v) sorts first
                for b, le in enumerate(LE):
                    self.bucket_ids[i, k, b] = (
                        st.series_id_normalised(bucket, (le_items[b], *key))
                        if le_first
                        else st.series_id(bucket, {**lab, "le": le})
                    )
        self.cum_calls = np.zeros((n, 2))
        self.cum_buckets = np.zeros((n, 2, len(LE)))
        self.cum_sum = np.zeros((n, 2))
        self.pending = np.zeros((n, 2))
        self.pending_ms = np.zeros(n)
        self.pending_ticks = 0
        self._slot: dict[str, int] = {}  # pod -> its row of `_cum`: [cpu_s, periods, throttled, oom]
        self._cum = np.zeros((64, 4))
        self._slots_used = 0
        self._free_slots: list[int] = []
        self._layout: PodLayout | None = None
        self._rows: dict[str, tuple] = {}  # pod -> (row key, static series, dynamic inputs or None)
        self._uid: dict[str, str] = {}  # pod -> its uid label
        self._pod_sids: dict[str, dict[tuple, int]] = {}  # pod -> (metric, varying labels) -> series id
        self._layout_key: tuple | None = None
        self.app_extra = sim.app.app == "astronomy_shop"
        self.cum_frontend = np.zeros(2)
        self.cum_payment = 0.0
        self.cum_consumed: dict[int, float] = {}
        self.svc_index = np.array([c.index[s] for s in self.svc_rows], dtype=np.intp)
        self._frac: tuple | None = None  # (rt latency, svc latency, row latency, bucket fractions)
        self._split = np.zeros((n, 2))  # per row: ok, errors of the current tick
        self._static: dict[str, tuple] = {}
        self._dynamic: dict[tuple, np.ndarray] = {}
        self._static_concat: tuple | None = None
        self._static_memo: dict[
            str, dict[tuple, tuple[np.ndarray, np.ndarray]]
        ] = {}  # pod -> state -> series
        self._desired_cache: tuple | None = None
        self._dynamic_concat: tuple | None = None
        self._init_static_rows()

    def accumulate(self, res: TickResult) -> None:
        hit = self._frac
        if hit is None or hit[0] is not res.rt_latency_ms or hit[1] is not res.svc_latency_ms:
            # latencies are expected values: they change only when the traffic model recomputes them
            lat = np.concatenate([res.rt_latency_ms, res.svc_latency_ms[self.svc_index]])
            frac = np.ones((len(lat), len(LE)))
            frac[:, :-1] = lognormal_cdf(BUCKETS_MS, lat)  # [n, 14]
            hit = self._frac = (res.rt_latency_ms, res.svc_latency_ms, lat, frac)
        lat, frac = hit[2], hit[3]
        split, r, idx = self._split, len(res.rt_count), self.svc_index
        split[:r, 0] = res.rt_count
        split[r:, 0] = res.svc_count[idx]
        split[:r, 1] = res.rt_errors
        split[r:, 1] = res.svc_errors[idx]
        split[:, 0] -= split[:, 1]  # ok, errors
        self.pending += split
        self.cum_buckets += split[:, :, None] * frac[:, None, :]
        self.cum_sum += split * lat[:, None]
        self.pending_ticks += 1
        if self.app_extra:
            c = self.sim.compiled
            fe = c.index.get("frontend")
            if fe is not None:
                self.cum_frontend += (res.svc_count[fe] - res.svc_errors[fe], res.svc_errors[fe])
            pay = c.index.get("payment")
            if pay is not None:
                self.cum_payment += res.svc_count[pay] - res.svc_errors[pay]

    def export(self, t: float) -> None:
        st = self.store
        self.cum_calls += self.pending
        self.pending[:] = 0
        lay, kube_vals = self._kube(t)
        if lay.ids is None:  # the ids are a function of the layout
            lay.ids = np.concatenate(
                [
                    self.calls_ids.ravel(),
                    self.bucket_ids.ravel(),
                    self.sum_ids.ravel(),
                    self.count_ids.ravel(),
                    lay.static_ids,
                    lay.dynamic_ids,
                    self._svc_ids.ravel(),
                    self._node_ids.ravel(),
                    *([self._app_ids] if self.app_extra else []),
                ]
            )
        vals = [
            self.cum_calls.ravel(),
            self.cum_buckets.ravel(),
            self.cum_sum.ravel(),
            self.cum_calls.ravel(),
        ]
        st.record(t, lay.ids, np.concatenate([*vals, *kube_vals]))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_layout"] = state["_layout_key"] = None  # keyed by a per-process counter
        state["_rows"] = {}
        return state
