"""Exports simulator state as Prometheus series (names and labels of the real exporters).

Span metrics follow the OpenTelemetry spanmetrics connector over the spans the traces make (one row
per service, span name and kind of `span_tree`'s shapes), pod and node series follow
kube-state-metrics and cAdvisor; see `catalog/metrics.yaml`. Counters are cumulative, sampled
every 15 s, and exported as integers (the floor of the cumulative expectation); histogram buckets
are those of the traces' duration model (per span of a shape, log-normal around its mean).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core import detmath
from ..core.clock import TICK_S
from ..core.detmath import OrderedSums
from ..metrics.labels import normalise_labels
from ..metrics.series_block import SeriesBlock
from .kube_series import KubeSeries
from .scrape import OTEL_JOB, scrape_labels
from .span_tree import shared_shapes
from .traffic import TickResult, lognormal_cdf

if TYPE_CHECKING:
    from .sim_state import SimState
    from .topology import CompiledApp

# about 1.45x apart from 1 ms to 13 s, so that linear interpolation inside a bucket (histogram_quantile)
# stays within a few % of the log-normal's quantiles, and few enough that a
# histogram_quantile over every server span of Train Ticket stays under promtool's 10,000-sample
# limit; the same list is `catalog/metrics.yaml`'s
BUCKETS_MS = np.array(
    [1, 1.4, 2, 3, 4.3, 6.2, 9, 13, 19, 27, 39, 56, 81, 120, 170, 240, 350, 500, 720, 1000]
    + [1450, 2100, 3000, 4300, 6200, 9000, 13000],
    dtype=np.float64,
)
LE = [*(f"{b:g}" for b in BUCKETS_MS), "+Inf"]
STATUS = ("STATUS_CODE_UNSET", "STATUS_CODE_ERROR")
SPAN = "traces_span_metrics"


@dataclass
class _SpanRows:
    """The span metrics' rows and, per span of every shape (an *entry*), what it adds to them."""

    rows: list[tuple[str, str, str]]  # (service, span name, span kind)
    row: np.ndarray  # [N] the row of each entry
    root: np.ndarray  # [N] its root: request type r, or R + s for service s's background work
    rt_root: np.ndarray  # [N] the root span of a request type (its failure share is the request's)
    own: np.ndarray  # [N, S] mean duration = own @ own_ms + hops @ hop_ms
    hops: np.ndarray
    edges: np.ndarray  # [N, E] log success = own @ log own_ok + edges @ log route_ok (see `accumulate`)


def span_rows(c: CompiledApp) -> _SpanRows:
    R, S = len(c.request_types), len(c.services)
    rows: dict[tuple[str, str, str], int] = {}
    E = len(c.edge_src)
    row, root, rt_root, own, hops, edges = [], [], [], [], [], []
    for r, shape in enumerate(shared_shapes(c.app, c)):
        if r >= R and (not shape.nodes or c.background_rps[r - R] <= 0):
            continue
        below = np.zeros((len(shape.nodes), E))  # the calls inside each node's span
        for i in range(len(shape.nodes) - 1, -1, -1):
            for ch in shape.nodes[i].children:
                below[i] += below[ch]
                below[i, shape.nodes[ch].edge] += 1.0
        for n, node in enumerate(shape.nodes):
            svc = c.services[node.svc]
            entries = []
            if node.name:
                kind = shape.root_kind if n == 0 else "SERVER"
                entries.append(
                    ((svc, node.name, kind), n == 0 and r < R, shape.own[n], shape.hops[n], below[n])
                )
            if n > 0:
                caller = c.services[shape.nodes[node.parent].svc]
                h = shape.hops[n].copy()
                h[node.svc] += 1.0
                b = below[n].copy()
                b[node.edge] += 1.0
                entries.append(((caller, node.client, node.client_kind), False, shape.own[n], h, b))
            for key, is_root, o, h, b in entries:
                row.append(rows.setdefault(key, len(rows)))
                root.append(r)
                rt_root.append(is_root)
                own.append(o)
                hops.append(h)
                edges.append(b)
    return _SpanRows(
        list(rows),
        np.array(row, dtype=np.intp),
        np.array(root, dtype=np.intp),
        np.array(rt_root, dtype=bool),
        np.array(own).reshape(len(row), S),
        np.array(hops).reshape(len(row), S),
        np.array(edges).reshape(len(row), E),
    )


@dataclass(frozen=True)
class _SpanSeries:
    """The span metrics' series of an app as one block, and where each sits in it."""

    block: SeriesBlock
    calls: np.ndarray  # [rows, 2 statuses] position in the block
    sums: np.ndarray
    counts: np.ndarray
    buckets: np.ndarray  # [rows, 2, len(LE)]


def span_series(c: CompiledApp) -> tuple[_SpanRows, _SpanSeries]:
    """The span rows of the app and their series (calls, sum, count, buckets per row and status),
    in the order the exporter has always registered them (series ids stay what they were). A
    function of the compiled app alone: every simulator of the app shares it (`CompiledApp.derive`)."""
    spans = span_rows(c)
    n = len(spans.rows)
    calls = np.zeros((n, 2), dtype=np.intp)
    sums, counts = np.zeros_like(calls), np.zeros_like(calls)
    buckets = np.zeros((n, 2, len(LE)), dtype=np.intp)
    names: list[str] = []
    keys: list[tuple] = []

    def add(name: str, key: tuple) -> int:
        names.append(name)
        keys.append(key)
        return len(names) - 1

    calls_m, dsum, dcount, bucket = (
        f"{SPAN}_calls_total",
        f"{SPAN}_duration_milliseconds_sum",
        f"{SPAN}_duration_milliseconds_count",
        f"{SPAN}_duration_milliseconds_bucket",
    )
    le_items = [(sys.intern("le"), sys.intern(le)) for le in LE]
    otel = scrape_labels(OTEL_JOB)  # the collector's exporter is the scrape target of these series
    ns = c.app.namespace
    for i, (svc, name, kind) in enumerate(spans.rows):
        for k, status in enumerate(STATUS):
            lab = {
                **otel,
                "namespace": ns,
                "service_name": svc,
                "span_name": name,
                "span_kind": f"SPAN_KIND_{kind}",
                "status_code": status,
            }
            key = normalise_labels(lab)
            calls[i, k] = add(calls_m, key)
            sums[i, k] = add(dsum, key)
            counts[i, k] = add(dcount, key)
            # ("le", v) goes where it sorts (no other label is named "le"): the key stays normalised
            at = sum(1 for item in key if item[0] < "le")
            head, tail = key[:at], key[at:]
            for b in range(len(LE)):
                buckets[i, k, b] = add(bucket, (*head, le_items[b], *tail))
    for a in (calls, sums, counts, buckets, *vars(spans).values()):
        if isinstance(a, np.ndarray):
            a.flags.writeable = False  # shared by every simulator of the app
    return spans, _SpanSeries(SeriesBlock(names, keys), calls, sums, counts, buckets)


class MetricExporter(KubeSeries):
    def __init__(self, sim: SimState):
        self.sim = sim
        self.store = sim.store
        c = sim.compiled
        ns = sim.app.namespace
        self.ns = ns
        # span series: one row per (service, span name, kind) of the shapes, two statuses each
        self.spans, series = c.derive("span_series", lambda: span_series(c))
        self.span_rows = self.spans.rows
        n = len(self.span_rows)
        ids = self.store.register_block(series.block)
        self.calls_ids, self.sum_ids = ids[series.calls], ids[series.sums]
        self.count_ids, self.bucket_ids = ids[series.counts], ids[series.buckets]
        self.cum_calls = np.zeros((n, 2))
        self.cum_buckets = np.zeros((n, 2, len(LE)))
        self.cum_sum = np.zeros((n, 2))
        N = len(self.spans.row)
        self._entry_pending = np.zeros((2, N))  # ok, error spans per entry since the last fold
        self._root_counts = np.zeros(len(c.request_types) + len(c.services))
        self._fail_memo: tuple | None = None
        # products with the entries' matrices in a fixed order (BLAS's order depends on the CPU)
        sp = self.spans
        self._own, self._hops, self._edges = OrderedSums(sp.own), OrderedSums(sp.hops), OrderedSums(sp.edges)
        self._bg_count = c.background_rps * TICK_S
        self.app_extra = sim.app.app == "astronomy_shop"
        self.cum_frontend = np.zeros(2)
        self.cum_payment = 0.0
        self._frac: tuple | None = None  # (own latency, effect arrays, entry means, bucket fractions)
        self._fold_bins: tuple | None = None  # `_fold`'s bins of the entries' rows and (row, le) cells
        # the root span's request type of each entry (an entry that is no request's root reads any)
        self._rt_root_of = np.minimum(sp.root, len(c.request_types) - 1)
        self._ids: tuple | None = None  # (static ids, dynamic ids, every id) of the last export
        self._init_kube_series()

    def accumulate(self, res: TickResult) -> None:
        sim, sp = self.sim, self.spans
        arrays = getattr(sim, "_arrays", None) or sim.effects.arrays()
        hit = self._frac
        if hit is None or hit[0] is not res.own_latency_ms or hit[1] is not arrays:
            # the means are expected values: they change only when the traffic model recomputes them
            hop = arrays["inbound_delay_ms"] + arrays["inbound_loss"] * 200.0  # as the traces' hops
            mean = self._own.matvec(res.own_latency_ms) + self._hops.matvec(hop)
            if hit is None:
                frac = np.ones((len(mean), len(LE)))
                frac[:, :-1] = lognormal_cdf(BUCKETS_MS, mean)
            else:
                self._fold()
                # the fractions of the entries whose mean changed (a few services' latencies at a
                # time), in place: the distribution's CDF is elementwise, the others' are the same
                frac = hit[3]
                changed = np.flatnonzero(mean != hit[2])
                if len(changed):
                    frac[changed, :-1] = lognormal_cdf(BUCKETS_MS, mean[changed])
            hit = self._frac = (res.own_latency_ms, arrays, mean, frac)
        R = len(res.rt_count)
        counts = self._root_counts
        counts[:R] = res.rt_count
        counts[R:] = self._bg_count
        n = counts[sp.root]
        fails = self._span_fail(res)
        # np.clip(.., 0, 1)'s bits without its dispatch: sampled counts, so >= +0.0 and never NaN
        rt_fail = res.rt_errors / np.maximum(res.rt_count, 1e-12)
        np.minimum(np.maximum(rt_fail, 0.0, out=rt_fail), 1.0, out=rt_fail)
        fails = np.where(sp.rt_root, rt_fail[self._rt_root_of], fails)
        err = n * fails
        pend = self._entry_pending
        pend[0] += n - err
        pend[1] += err
        if self.app_extra:
            c = self.sim.compiled
            fe = c.index.get("frontend")
            if fe is not None:
                self.cum_frontend += (res.svc_count[fe] - res.svc_errors[fe], res.svc_errors[fe])
            pay = c.index.get("payment")
            if pay is not None:
                self.cum_payment += res.svc_count[pay] - res.svc_errors[pay]

    def _span_fail(self, res: TickResult) -> np.ndarray:
        """Failure share of each entry's span along its own request's path: the traffic model's span
        failures split into a service's own part and each call's part beyond its callee
        (`traffic`: span ok = own ok x prod over calls of call ok ^ calls per request), recombined
        over the calls inside the span, so a route's spans fail only with what that route calls."""
        memo = self._fail_memo
        if memo is not None and memo[0] is res.svc_fail and memo[1] is res.edge_fail:
            return memo[2]
        c = self.sim.compiled
        log_edge_ok = detmath.log(np.maximum(1.0 - res.edge_fail, 1e-12))
        calls_per = res.edge_rate / np.maximum(res.svc_rate[c.edge_src], 1e-12)
        log_span_ok = detmath.log(np.maximum(1.0 - res.svc_fail, 1e-12))
        calls_log = np.zeros(len(c.services))
        np.add.at(calls_log, c.edge_src, calls_per * log_edge_ok)
        log_own_ok = np.minimum(log_span_ok - calls_log, 0.0)
        log_route_ok = np.minimum(log_edge_ok - log_span_ok[c.edge_dst], 0.0)
        log_ok = self._own.matvec(log_own_ok) + self._edges.matvec(log_route_ok)
        fails = np.clip(1.0 - detmath.exp(log_ok), 0.0, 1.0)
        self._fail_memo = (res.svc_fail, res.edge_fail, fails)
        return fails

    def _fold(self) -> None:
        """Add the spans counted since the last fold to the rows, with the bucket fractions they had.
        Both statuses in one np.bincount each: status k's bins follow status 0's, and np.bincount
        adds in entry order (the same bits on every CPU) into bins of one status only."""
        pend = self._entry_pending
        if not pend.any():
            return
        _, _, mean, frac = self._frac
        n = len(self.span_rows)
        L = frac.shape[1]
        if self._fold_bins is None:
            row = self.spans.row
            cell = (row[:, None] * L + np.arange(L)).ravel()  # (row, le) of each (entry, le)
            self._fold_bins = (np.concatenate([row, row + n]), np.concatenate([cell, cell + n * L]))
        rows, cells = self._fold_bins
        self.cum_calls += np.bincount(rows, weights=pend.ravel(), minlength=2 * n).reshape(2, n).T
        self.cum_sum += np.bincount(rows, weights=(pend * mean).ravel(), minlength=2 * n).reshape(2, n).T
        w = (pend[:, :, None] * frac).ravel()
        self.cum_buckets += (
            np.bincount(cells, weights=w, minlength=2 * n * L).reshape(2, n, L).transpose(1, 0, 2)
        )
        pend[:] = 0.0

    def export(self, t: float) -> None:
        st = self.store
        if self._frac is not None:
            self._fold()
        calls = self.cum_calls + 1e-9
        np.floor(calls, out=calls)
        buckets = self.cum_buckets + 1e-9
        np.floor(buckets, out=buckets)
        np.minimum(buckets, calls[:, :, None], out=buckets)
        buckets[:, :, -1] = calls
        # the connector creates a series with its first span: no span of a row and status yet, no
        # series (an ERROR series appears with the first error, as the real ones do)
        absent = calls == 0
        span_sum = np.where(absent, np.nan, self.cum_sum)
        buckets[absent] = np.nan
        calls[absent] = np.nan
        lay, kube_vals = self._kube(t)
        if lay.ids is None:  # the ids are a function of the layout's static and dynamic ids
            prev = self._ids
            if prev is not None and prev[0] is lay.static_ids and prev[1] is lay.dynamic_ids:
                lay.ids = prev[2]
        if lay.ids is None:
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
            self._ids = (lay.static_ids, lay.dynamic_ids, lay.ids)
        vals = [calls.ravel(), buckets.ravel(), span_sum.ravel(), calls.ravel()]
        st.record(t, lay.ids, np.concatenate([*vals, *kube_vals]))

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_layout"] = state["_layout_key"] = None  # keyed by a per-process counter
        state["_rows"] = {}
        state["_pods_part"] = None  # rows of the last build: every row is recomputed after a copy
        return state
