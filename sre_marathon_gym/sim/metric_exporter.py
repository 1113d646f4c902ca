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

from ..clock import METRIC_STEP_S, TICK_S
from ..metric_store import _normalise_labels
from .cluster import NODE_MONITOR_GRACE_S, POD_MUTATIONS, short_hash
from .span_tree import build_shapes
from .traffic import TickResult, lognormal_cdf

if TYPE_CHECKING:
    from .simulator import Simulator

# about 1.3x apart from 1 ms to 36 s, so that linear interpolation inside a bucket (histogram_quantile)
# stays within a few % of the log-normal's quantiles (p95 +2.5 % on average), and few enough that a
# histogram_quantile over every server span of Train Ticket stays under promtool's 10,000-sample
# limit; the same list is `catalog/metrics.yaml`'s
BUCKETS_MS = np.array(
    [1, 1.3, 1.7, 2.2, 2.9, 3.7, 4.8, 6.3, 8.2, 10.6, 13.8, 18, 23, 30, 39, 51, 66, 86, 112, 145, 190]
    + [245, 320, 415, 540, 700, 910, 1200, 1550, 2000, 2600, 3400, 4400, 5700, 7400, 9600, 12500]
    + [16300, 21000, 27500, 35700],
    dtype=np.float64,
)
LE = [*(f"{b:g}" for b in BUCKETS_MS), "+Inf"]
STATUS = ("STATUS_CODE_UNSET", "STATUS_CODE_ERROR")
PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
SPAN = "traces_span_metrics"
MI = 1024.0 * 1024.0


@dataclass
class _PodLayout:
    """Per-pod inputs of one export, valid while no pod, node or effect changes."""

    static_ids: np.ndarray
    static_vals: np.ndarray
    dynamic_ids: np.ndarray  # 6 per pod below, in pod order
    counts: np.ndarray  # [S] ready pods per service
    slots: np.ndarray  # rows of `_cum` of the started, scheduled pods
    ready_slots: np.ndarray
    ready_svc: np.ndarray  # service of each ready slot
    oom_slots: np.ndarray
    oom_restarts: np.ndarray
    restarts: np.ndarray
    running: np.ndarray  # no waiting reason: memory is reported
    mem_base: np.ndarray  # base + extra memory, MiB
    leak: np.ndarray  # MiB per minute
    started_s: np.ndarray  # container start
    cpu_share: np.ndarray  # per ready slot: 1 / ready pods of its service
    node_vals: np.ndarray  # the node rows of an export
    ids: np.ndarray | None = None  # every series id of an export, in order (see `export`)


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
    onehot: np.ndarray  # [rows, N]


def span_rows(sim: Simulator) -> _SpanRows:
    c = sim.compiled
    R, S = len(c.request_types), len(c.services)
    rows: dict[tuple[str, str, str], int] = {}
    E = len(c.edge_src)
    row, root, rt_root, own, hops, edges = [], [], [], [], [], []
    for r, shape in enumerate(build_shapes(sim.app, c)):
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
    onehot = np.zeros((len(rows), len(row)))
    onehot[row, np.arange(len(row))] = 1.0
    return _SpanRows(
        list(rows),
        np.array(row, dtype=np.intp),
        np.array(root, dtype=np.intp),
        np.array(rt_root, dtype=bool),
        np.array(own).reshape(len(row), S),
        np.array(hops).reshape(len(row), S),
        np.array(edges).reshape(len(row), E),
        onehot,
    )


class MetricExporter:
    def __init__(self, sim: Simulator):
        self.sim = sim
        self.store = sim.store
        c = sim.compiled
        ns = sim.app.namespace
        self.ns = ns
        # span series: one row per (service, span name, kind) of the shapes, two statuses each
        self.spans = span_rows(sim)
        self.span_rows = self.spans.rows
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
        for i, (svc, name, kind) in enumerate(self.span_rows):
            for k, status in enumerate(STATUS):
                lab = {
                    "namespace": ns,
                    "service_name": svc,
                    "span_name": name,
                    "span_kind": f"SPAN_KIND_{kind}",
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
        N = len(self.spans.row)
        self._entry_pending = np.zeros((2, N))  # ok, error spans per entry since the last fold
        self._root_counts = np.zeros(len(c.request_types) + len(c.services))
        self._fail_memo: tuple | None = None
        self._bg_count = c.background_rps * TICK_S
        self._slot: dict[str, int] = {}  # pod -> its row of `_cum`: [cpu_s, periods, throttled, oom]
        self._cum = np.zeros((64, 4))
        self._slots_used = 0
        self._free_slots: list[int] = []
        self._layout: _PodLayout | None = None
        self._rows: dict[str, tuple] = {}  # pod -> (row key, static series, dynamic inputs or None)
        self._uid: dict[str, str] = {}  # pod -> its uid label
        self._pod_sids: dict[str, dict[tuple, int]] = {}  # pod -> (metric, varying labels) -> series id
        self._layout_key: tuple | None = None
        self.app_extra = sim.app.app == "astronomy_shop"
        self.cum_frontend = np.zeros(2)
        self.cum_payment = 0.0
        self.cum_consumed: dict[int, float] = {}
        self._frac: tuple | None = None  # (own latency, effect arrays, entry means, bucket fractions)
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
        sim, sp = self.sim, self.spans
        arrays = getattr(sim, "_arrays", None) or sim.effects.arrays()
        hit = self._frac
        if hit is None or hit[0] is not res.own_latency_ms or hit[1] is not arrays:
            # the means are expected values: they change only when the traffic model recomputes them
            if hit is not None:
                self._fold()
            hop = arrays["inbound_delay_ms"] + arrays["inbound_loss"] * 200.0  # as the traces' hops
            mean = sp.own @ res.own_latency_ms + sp.hops @ hop
            frac = np.ones((len(mean), len(LE)))
            frac[:, :-1] = lognormal_cdf(BUCKETS_MS, mean)
            hit = self._frac = (res.own_latency_ms, arrays, mean, frac)
        R = len(res.rt_count)
        counts = self._root_counts
        counts[:R] = res.rt_count
        counts[R:] = self._bg_count
        n = counts[sp.root]
        fails = self._span_fail(res)
        rt_fail = np.clip(res.rt_errors / np.maximum(res.rt_count, 1e-12), 0.0, 1.0)
        fails = np.where(sp.rt_root, rt_fail[np.minimum(sp.root, R - 1)], fails)
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
        log_edge_ok = np.log(np.maximum(1.0 - res.edge_fail, 1e-12))
        calls_per = res.edge_rate / np.maximum(res.svc_rate[c.edge_src], 1e-12)
        log_span_ok = np.log(np.maximum(1.0 - res.svc_fail, 1e-12))
        calls_log = np.zeros(len(c.services))
        np.add.at(calls_log, c.edge_src, calls_per * log_edge_ok)
        log_own_ok = np.minimum(log_span_ok - calls_log, 0.0)
        log_route_ok = np.minimum(log_edge_ok - log_span_ok[c.edge_dst], 0.0)
        sp = self.spans
        fails = np.clip(1.0 - np.exp(sp.own @ log_own_ok + sp.edges @ log_route_ok), 0.0, 1.0)
        self._fail_memo = (res.svc_fail, res.edge_fail, fails)
        return fails

    def _fold(self) -> None:
        """Add the spans counted since the last fold to the rows, with the bucket fractions they had."""
        pend = self._entry_pending
        if not pend.any():
            return
        _, _, mean, frac = self._frac
        oh = self.spans.onehot
        for k in range(2):
            self.cum_calls[:, k] += oh @ pend[k]
            self.cum_sum[:, k] += oh @ (pend[k] * mean)
            self.cum_buckets[:, k, :] += oh @ (pend[k][:, None] * frac)
        pend[:] = 0.0

    def export(self, t: float) -> None:
        st = self.store
        if self._frac is not None:
            self._fold()
        calls = np.floor(self.cum_calls + 1e-9)
        buckets = np.minimum(np.floor(self.cum_buckets + 1e-9), calls[:, :, None])
        buckets[:, :, -1] = calls
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
        vals = [calls.ravel(), buckets.ravel(), self.cum_sum.ravel(), calls.ravel()]
        st.record(t, lay.ids, np.concatenate([*vals, *kube_vals]))

    # ------------------------------------------------------------ kube-state-metrics, cAdvisor, blackbox
    def _pod_static(self, pod, status: str) -> tuple[np.ndarray, np.ndarray]:
        """Series whose values only change when the pod's state does (cached per state): their ids,
        and ids and values as one [2, n] int64 array (the values' bits), which `_concat_static` joins."""
        cl = self.sim.cluster
        spec = cl.spec_of(pod)
        sig = (
            status,
            pod.phase,
            pod.ready,
            pod.waiting_reason,
            pod.last_terminated_reason,
            pod.node,
            spec.cpu_limit_m,
            spec.mem_limit_mi,
        )
        hit = self._static.get(pod.name)
        if hit is not None and hit[0] == sig:
            return hit[2]
        # a state this pod had before: the series below are a function of `full` alone
        full = (sig, pod.started, spec.image)
        memo = self._static_memo.setdefault(pod.name, {})
        out = memo.get(full)
        if out is not None:
            self._static[pod.name] = (sig, out[0], out)
            return out
        st, ns, svc = self.store, self.ns, pod.service
        ids: list[int] = []
        vals: list[float] = []
        # a series is named by its metric and the label values that vary for this pod: its id is
        # looked up once (labels are built only then; new series are created in this order)
        sids = self._pod_sids.setdefault(pod.name, {})

        def put(name: str, variant: object, labels, value: float) -> None:
            key = (name, variant)
            sid = sids.get(key)
            if sid is None:
                sid = sids[key] = st.series_id(name, labels())
            ids.append(sid)
            vals.append(value)

        uid = self._pod_uid(pod.name)
        base = {"namespace": ns, "pod": pod.name, "uid": uid}
        phase = "Unknown" if status == "Unknown" else pod.phase
        for ph in PHASES:
            put("kube_pod_status_phase", ph, lambda ph=ph: {**base, "phase": ph}, float(ph == phase))
        for cond, v in (("true", pod.ready), ("false", not pod.ready), ("unknown", False)):
            put("kube_pod_status_ready", cond, lambda cond=cond: {**base, "condition": cond}, float(v))
        node = pod.node or ""
        put(
            "kube_pod_info",
            node,
            lambda: {
                **base,
                "node": node,
                "host_ip": "",
                "pod_ip": "",
                "created_by_kind": "ReplicaSet",
                "created_by_name": pod.name.rsplit("-", 1)[0],
                "priority_class": "",
                "host_network": "false",
            },
            1.0,
        )
        if pod.node is None:
            put("kube_pod_status_unschedulable", None, lambda: base, 1.0)
        cbase = {**base, "container": svc}
        if pod.waiting_reason and pod.node is not None:
            put(
                "kube_pod_container_status_waiting_reason",
                pod.waiting_reason,
                lambda: {**cbase, "reason": pod.waiting_reason},
                1.0,
            )
        if pod.last_terminated_reason:
            put(
                "kube_pod_container_status_last_terminated_reason",
                pod.last_terminated_reason,
                lambda: {**cbase, "reason": pod.last_terminated_reason},
                1.0,
            )
        if spec.cpu_limit_m:
            put(
                "kube_pod_container_resource_limits",
                ("cpu", node),
                lambda: {**cbase, "node": node, "resource": "cpu", "unit": "core"},
                spec.cpu_limit_m / 1000,
            )
        if spec.mem_limit_mi:
            put(
                "kube_pod_container_resource_limits",
                ("memory", node),
                lambda: {**cbase, "node": node, "resource": "memory", "unit": "byte"},
                spec.mem_limit_mi * MI,
            )
        req = self.sim.app.service(svc).resources
        put(
            "kube_pod_container_resource_requests",
            node,
            lambda: {**cbase, "node": node, "resource": "cpu", "unit": "core"},
            req.cpu_request_m / 1000,
        )
        if pod.node is not None and pod.started and spec.mem_limit_mi:
            put(
                "container_spec_memory_limit_bytes",
                (spec.image, node),
                lambda: {
                    "namespace": ns,
                    "pod": pod.name,
                    "container": svc,
                    "image": spec.image,
                    "node": node,
                },
                spec.mem_limit_mi * MI,
            )
        id_arr = np.asarray(ids, dtype=np.int64)
        out = (id_arr, np.stack([id_arr, np.asarray(vals).view(np.int64)]))
        self._static[pod.name] = (sig, out[0], out)
        memo[full] = out
        return out

    def _pod_uid(self, name: str) -> str:
        uid = self._uid.get(name)
        if uid is None:
            uid = self._uid[name] = short_hash("uid", name, n=12)
        return uid

    def _pod_dynamic_ids(self, pod) -> np.ndarray:
        key = (pod.name, pod.node)
        hit = self._dynamic.get(key)
        if hit is None:
            spec = self.sim.cluster.spec_of(pod)
            st = self.store
            cbase = {
                "namespace": self.ns,
                "pod": pod.name,
                "uid": self._pod_uid(pod.name),
                "container": pod.service,
            }
            adv = {
                "namespace": self.ns,
                "pod": pod.name,
                "container": pod.service,
                "image": spec.image,
                "node": pod.node or "",
            }
            hit = np.array(
                [
                    st.series_id("kube_pod_container_status_restarts_total", cbase),
                    st.series_id("container_cpu_usage_seconds_total", adv),
                    st.series_id("container_cpu_cfs_periods_total", adv),
                    st.series_id("container_cpu_cfs_throttled_periods_total", adv),
                    st.series_id("container_oom_events_total", adv),
                    st.series_id("container_memory_working_set_bytes", adv),
                ],
                dtype=np.int64,
            )
            self._dynamic[key] = hit
        return hit

    def _kube(self, t: float) -> tuple[_PodLayout, list[np.ndarray]]:
        """The layout and the values of its series (after the span series, see `export`)."""
        sim = self.sim
        cl, c = sim.cluster, sim.compiled
        res = sim.last
        # the per-pod layout (series, ready counts, memory parameters) is rebuilt only when a pod,
        # the pod set, the effects or a node changed, or a NotReady node's pods turned Unknown
        # (the only clock-dependent part of a pod's status, see `ClusterState.pod_status`)
        now = cl.now
        nodes = tuple(
            (
                n.ready,
                n.unschedulable,
                n.not_ready_since,
                not n.ready and now - (n.not_ready_since or now) >= NODE_MONITOR_GRACE_S,
            )
            for n in cl.nodes.values()
        )
        key = (POD_MUTATIONS[0], len(cl.pods), sim.effects.version, nodes)
        lay = self._layout
        if lay is None or key != self._layout_key:
            lay = self._layout = self._build_layout(t)
            self._layout_key = key
        cum = self._cum  # updated through 1-d column views (2-d fancy indexing is much slower)
        if res is not None and len(lay.ready_slots):
            i = lay.ready_svc
            cum[:, 0][lay.ready_slots] += res.cpu_cores[i] * lay.cpu_share * METRIC_STEP_S
            cum[:, 1][lay.ready_slots] += METRIC_STEP_S / 0.1
            cum[:, 2][lay.ready_slots] += METRIC_STEP_S / 0.1 * res.throttled_ratio[i]
        if len(lay.oom_slots):
            cum[:, 3][lay.oom_slots] = lay.oom_restarts
        dvals = np.empty((len(lay.slots), 6))
        dvals[:, 0] = lay.restarts
        dvals[:, 1:5] = cum.take(lay.slots, axis=0)
        dvals[:, 5] = np.where(
            lay.running, (lay.mem_base + lay.leak * np.maximum(0.0, t - lay.started_s) / 60) * MI, 0.0
        )
        vals = [lay.static_vals, dvals.ravel()]
        # deployments and blackbox probes, one row per service
        ready_pods = lay.counts
        up = ready_pods > 0
        lat_s = (res.own_latency_ms / 1000.0) if res is not None else np.full(len(c.services), 0.001)
        rows = np.empty((len(c.services), 4))
        rows[:, 0] = self._desired()
        rows[:, 1] = ready_pods
        rows[:, 2] = up
        rows[:, 3] = np.where(up, lat_s, 1.0)
        vals.append(rows.ravel())
        vals.append(lay.node_vals)
        if self.app_extra:
            vals.append(self._astronomy_app(sim))
        return lay, vals

    def _build_layout(self, t: float) -> _PodLayout:
        """One pass over the pods: their series (created in this order), counter slots and the
        inputs of the per-sample values, as arrays. A pod's row is recomputed only when the pod
        (its last attribute write), the effects or its node's Unknown state changed."""
        sim = self.sim
        cl, c = sim.cluster, sim.compiled
        index = c.index
        pods = list(cl.pods.values())
        version = sim.effects.version
        now = cl.now
        unknown = {
            name: not n.ready and now - (n.not_ready_since or now) >= NODE_MONITOR_GRACE_S
            for name, n in cl.nodes.items()
        }
        rows = self._rows
        counts = [0] * len(c.services)
        static: list[tuple[np.ndarray, np.ndarray]] = []
        dyn: list[np.ndarray] = []
        slots: list[int] = []
        ready_slots: list[int] = []
        ready_svc: list[int] = []
        oom_slots: list[int] = []
        oom_restarts: list[float] = []
        restarts: list[float] = []
        running: list[bool] = []
        mem_base: list[float] = []
        leak: list[float] = []
        started_s: list[float] = []
        for pod in pods:
            if pod.ready:
                counts[index[pod.service]] += 1
        base_mem = c.base_memory_mi
        pod_effect = sim.effects.pod_effect
        for pod in pods:
            row_key = (
                pod.__dict__.get("_stamp"),
                tuple(pod.injections),
                version,
                unknown.get(pod.node) if pod.node is not None else None,
            )
            row = rows.get(pod.name)
            if row is None or row[0] != row_key:
                out = self._pod_static(pod, cl.pod_status(pod))
                if not pod.started or pod.node is None:
                    row = (row_key, out, None)
                else:
                    slot = self._slot.get(pod.name)
                    if slot is None:
                        slot = self._new_slot(pod.name)
                    # Effects.memory_mi: base + extra + leak * max(0, now - started) / 60
                    eff = pod_effect(pod)
                    row = (
                        row_key,
                        out,
                        (
                            slot,
                            self._pod_dynamic_ids(pod),
                            index[pod.service] if pod.ready else -1,
                            float(pod.restarts) if pod.last_terminated_reason == "OOMKilled" else None,
                            pod.restarts,
                            pod.waiting_reason is None,
                            float(base_mem[index[pod.service]]) + eff.extra_mem_mi,
                            eff.leak_mi_per_min,
                            pod.container_started_s,
                        ),
                    )
                rows[pod.name] = row
            static.append(row[1])
            d = row[2]
            if d is None:
                continue
            slot = d[0]
            slots.append(slot)
            dyn.append(d[1])
            if d[2] >= 0:
                ready_slots.append(slot)
                ready_svc.append(d[2])
            if d[3] is not None:
                oom_slots.append(slot)
                oom_restarts.append(d[3])
            restarts.append(d[4])
            running.append(d[5])
            mem_base.append(d[6])
            leak.append(d[7])
            started_s.append(d[8])
        if len(self._static) != len(pods):  # every current pod is in `_static` by now
            self._drop_gone(t)
        s_ids, s_vals = self._concat_static(static)
        f, ix = np.array, np.intp
        counts_a, ready_svc_a = f(counts, dtype=np.float64), f(ready_svc, dtype=ix)
        return _PodLayout(
            static_ids=s_ids,
            static_vals=s_vals,
            dynamic_ids=self._concat_dynamic(dyn),
            counts=counts_a,
            slots=f(slots, dtype=ix),
            ready_slots=f(ready_slots, dtype=ix),
            ready_svc=ready_svc_a,
            oom_slots=f(oom_slots, dtype=ix),
            oom_restarts=f(oom_restarts, dtype=np.float64),
            restarts=f(restarts, dtype=np.float64),
            running=f(running, dtype=bool),
            mem_base=f(mem_base, dtype=np.float64),
            leak=f(leak, dtype=np.float64),
            started_s=f(started_s, dtype=np.float64),
            cpu_share=(1.0 / np.maximum(counts_a, 1.0))[ready_svc_a],
            node_vals=f(
                [[1.0, n.ready, not n.ready, 0.0, n.unschedulable, 1.0] for n in cl.nodes.values()]
            ).ravel(),
        )

    def _new_slot(self, name: str) -> int:
        """A zeroed row of `_cum` for a pod's counters [cpu_s, periods, throttled, oom]."""
        if self._free_slots:
            slot = self._free_slots.pop()
        else:
            slot = self._slots_used
            self._slots_used += 1
            if slot >= len(self._cum):
                grown = np.zeros((2 * len(self._cum), 4))
                grown[: len(self._cum)] = self._cum
                self._cum = grown
        self._cum[slot] = 0.0
        self._slot[name] = slot
        return slot

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_layout"] = state["_layout_key"] = None  # keyed by a per-process counter
        state["_rows"] = {}
        return state

    def _drop_gone(self, t: float) -> None:
        """Staleness markers for the series of pods that no longer exist."""
        pods = self.sim.cluster.pods
        gone = [name for name in self._static if name not in pods]
        # one write for all of them: every marker has the same value, so order and repeats don't matter
        stale = [self._static.pop(name)[1] for name in gone]
        gone_set = set(gone)
        for k in [k for k in self._dynamic if k[0] in gone_set]:
            stale.append(self._dynamic.pop(k))
        self.store.mark_stale(t, np.concatenate(stale))
        for name in gone:
            slot = self._slot.pop(name, None)
            if slot is not None:
                self._free_slots.append(slot)
            self._static_memo.pop(name, None)
            self._pod_sids.pop(name, None)
            self._rows.pop(name, None)
            self._uid.pop(name, None)

    def _concat_static(self, parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
        """Concatenated static ids and values, reused while every pod's cached arrays are the same objects."""
        prev = self._static_concat
        if prev is not None and len(prev[0]) == len(parts) and all(a is b for a, b in zip(prev[0], parts)):
            return prev[1], prev[2]
        both = np.concatenate([p[1] for p in parts], axis=1) if parts else np.zeros((2, 0), dtype=np.int64)
        ids, vals = both[0], both[1].view(np.float64)
        self._static_concat = (parts, ids, vals)
        return ids, vals

    def _concat_dynamic(self, parts: list[np.ndarray]) -> np.ndarray:
        prev = self._dynamic_concat
        if prev is not None and len(prev[0]) == len(parts) and all(a is b for a, b in zip(prev[0], parts)):
            return prev[1]
        ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        self._dynamic_concat = (parts, ids)
        return ids

    def _desired(self) -> np.ndarray:
        """Desired replicas per service (recomputed only when a deployment's current revision changed)."""
        deps = self.sim.cluster.deployments
        revs = [deps[s].revisions[-1] for s in self.sim.compiled.services]
        prev = self._desired_cache
        if prev is not None and all(a is b for a, b in zip(prev[0], revs)):
            return prev[1]
        out = np.array([float(sum(n for _, n in r.spec.replicas)) for r in revs])
        self._desired_cache = (revs, out)
        return out

    def _init_static_rows(self) -> None:
        st, ns, sim = self.store, self.ns, self.sim
        rows = []
        for name in sim.compiled.services:
            lab = {"namespace": ns, "deployment": name}
            blab = {
                "job": "blackbox",
                "instance": f"{name}:{sim.app.service(name).port}",
                "namespace": ns,
                "service": name,
            }
            rows.append(
                [
                    st.series_id("kube_deployment_spec_replicas", lab),
                    st.series_id("kube_deployment_status_replicas_available", lab),
                    st.series_id("probe_success", blab),
                    st.series_id("probe_duration_seconds", blab),
                ]
            )
        self._svc_ids = np.array(rows, dtype=np.int64)
        nrows = []
        for node in sim.cluster.nodes.values():
            cond = {"node": node.name, "condition": "Ready"}
            nrows.append(
                [
                    st.series_id(
                        "kube_node_info",
                        {
                            "node": node.name,
                            "kernel_version": "6.1.0",
                            "kubelet_version": "v1.31.0",
                            "container_runtime_version": "containerd://1.7.20",
                            "internal_ip": "",
                        },
                    ),
                    st.series_id("kube_node_status_condition", {**cond, "status": "true"}),
                    st.series_id("kube_node_status_condition", {**cond, "status": "false"}),
                    st.series_id("kube_node_status_condition", {**cond, "status": "unknown"}),
                    st.series_id("kube_node_spec_unschedulable", {"node": node.name}),
                    st.series_id(
                        "kube_node_labels",
                        {"node": node.name, "label_topology_kubernetes_io_zone": node.zone},
                    ),
                ]
            )
        self._node_ids = np.array(nrows, dtype=np.int64)
        c = sim.compiled
        self._consumers = [
            i
            for i in range(len(c.services))
            if sim.app.services[i].kind != "queue"
            and c.background_rps[i] > 0
            and any(
                sim.app.services[int(c.edge_dst[e])].kind == "queue" for e in np.nonzero(c.edge_src == i)[0]
            )
        ]
        if self.app_extra:
            fe = [
                st.series_id(
                    "app_frontend_requests_total",
                    {
                        "namespace": ns,
                        "service_name": "frontend",
                        "method": "GET",
                        "target": "/api",
                        "status": code,
                    },
                )
                for code in ("200", "500")
            ]
            pay = st.series_id(
                "app_payment_transactions_total",
                {"namespace": ns, "service_name": "payment", "app_payment_currency": "USD"},
            )
            lag = [
                st.series_id(
                    "kafka_consumer_records_lag_max",
                    {
                        "namespace": ns,
                        "service_name": c.services[i],
                        "client_id": f"{c.services[i]}-0",
                        "topic": "orders",
                    },
                )
                for i in self._consumers
            ]
            self._app_ids = np.array([*fe, pay, *lag], dtype=np.int64)

    def _astronomy_app(self, sim) -> np.ndarray:
        """Values of the `_app_ids` series."""
        lag = [float(sim.kafka_lag[i]) for i in self._consumers]
        return np.array([self.cum_frontend[0], self.cum_frontend[1], self.cum_payment, *lag])
