"""The pod, node and scrape-target series of `MetricExporter`: kube-state-metrics, cAdvisor through
the kubelet, blackbox probes, `up`, and the Astronomy Shop's application gauges.

Why a module of its own: these series follow the cluster (pods, nodes, effects), the span series
follow the traffic model; both are written by one `MetricStore.record` per scrape (`MetricExporter.export`
concatenates the span ids and values with the ones built here). The per-pod layout below is rebuilt only
when a pod, the pod set, the effects or a node changed, and then only the rows of the pods that changed
are recomputed (`KubeSeries._build_layout`); a sample is a few array operations. Label sets are those of
the real exporters plus the scrape labels of their job (`scrape`); values carry per-pod variation
(`pod_signals`).
"""

from __future__ import annotations

import bisect
import operator
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.clock import METRIC_STEP_S
from ..metrics.labels import LabelKey, normalise_labels
from . import pod_signals as ps
from .cluster import NODE_MONITOR_GRACE_S, POD_MUTATIONS
from .k8s_events import pod_uid
from .scrape import BLACKBOX_JOB, CADVISOR_JOB, KSM_JOB, OTEL_JOB, scrape_labels

if TYPE_CHECKING:
    from ..metrics.store import MetricStore
    from .sim_state import SimState

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
MI = 1024.0 * 1024.0
_UNITS = {"cpu": "core", "memory": "byte"}
# a pod's series in every state, by metric and the label they add: phase (one per phase) and
# readiness (true, false, unknown)
_FIXED = (
    *(("kube_pod_status_phase", ("phase", ph)) for ph in PHASES),
    *(("kube_pod_status_ready", ("condition", cond)) for cond in ("true", "false", "unknown")),
)
_STATE_VALUES: dict[tuple, tuple[float, ...]] = {}


def _state_values(phase: str, ready: bool) -> tuple[float, ...]:
    """The values of `_FIXED`'s series of a pod in `phase`, ready or not."""
    vals = _STATE_VALUES.get((phase, ready))
    if vals is None:
        vals = (*(float(ph == phase) for ph in PHASES), float(ready), float(not ready), 0.0)
        _STATE_VALUES[(phase, ready)] = vals
    return vals


def _unknown(node, now: float) -> bool:
    """The node has been NotReady for the grace period: its pods' status is Unknown."""
    return not node.ready and now - (node.not_ready_since or now) >= NODE_MONITOR_GRACE_S


def _insert(key: LabelKey, label: tuple[str, str]) -> LabelKey:
    """A normalised label set with one more label (a name it does not have, a value not empty)."""
    i = bisect.bisect_left(key, label)
    return (*key[:i], label, *key[i:])


_STATIC_MAX = 16  # a pod's static series at most (8 + 7 in `_pod_static`)
_PAD = [(-1,) * (_STATIC_MAX - n) for n in range(_STATIC_MAX + 1)]
# rows of `KubeSeries._inputs` (one column per slot): a started pod's per-sample inputs
_RESTARTS, _MEM, _LEAK, _STARTED, _AMP, _PERIOD, _PHASE, _NOISE, _CAP, _WEIGHT, _OOM, _RUNNING = range(12)
# _MEM: reported idle + extra memory, MiB (`pod_signals.reported_memory`); _LEAK: reported MiB per
# minute; _STARTED: container start; _AMP, _PERIOD, _PHASE: GC sawtooth amplitude MiB, period s,
# phase; _NOISE: noise amplitude MiB; _CAP: memory limit MiB (inf without one: the working set never
# exceeds it); _WEIGHT: CPU share weight; _OOM: restarts if OOM-killed last, else NaN; _RUNNING: no
# waiting reason (memory is reported)


@dataclass
class PodLayout:
    """Per-pod inputs of one export, valid while no pod, node or effect changes."""

    static_ids: np.ndarray  # every pod's static series, in slot order (`record` pairs ids with values)
    static_vals: np.ndarray
    dynamic_ids: np.ndarray  # 6 per slot below, in pod order
    slots: np.ndarray  # rows of `_cum` of the started, scheduled pods, in pod order
    ready_slots: np.ndarray
    ready_svc: np.ndarray  # service of each ready slot
    cpu_share: np.ndarray  # per ready slot: its weight / the weights of its service's ready pods
    oom_slots: np.ndarray
    oom_restarts: np.ndarray
    inputs: np.ndarray  # [12, slots]: the slots' columns of `KubeSeries._inputs`
    running: np.ndarray | None  # per slot: no waiting reason (memory is reported); None: all
    keys: np.ndarray  # uint64: the ready slots' keys (CPU jitter), then every slot's (memory noise)
    salts: np.ndarray  # uint64 per key: its stream's part of the draw's salt (`pod_signals`)
    dvals: np.ndarray  # [slots, 6] the dynamic series' values but the per-sample ones (restarts)
    up: np.ndarray  # per service: a ready pod
    all_up: bool
    svc_rows: list  # [desired replicas, [S, 5] the service rows but probe durations (`_kube`)]
    node_vals: np.ndarray  # the node rows and the scrape targets' `up` of an export
    dynamic_keep: np.ndarray | None  # mask over the [slots, 6] values: not the cAdvisor series of down nodes
    ids: np.ndarray | None = None  # every series id of an export, in order (see `export`)


class KubeSeries:
    """Mixin of `MetricExporter`: its pod, node and target series (`_init_kube_series` sets up the
    state; the exporter's `__init__` calls it)."""

    sim: SimState
    store: MetricStore
    ns: str
    app_extra: bool

    def _pod_static(self, pod, status: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Series whose values only change when the pod's state does (cached per state): their ids,
        and ids and values as rows of `_static_ids` and `_static_vals` (ids past the pod's are -1)."""
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
        # a series is named by its metric and the label values that vary for this pod (its key
        # below): its id is looked up once, its labels built only then (`_static_labels`); the first
        # eight (phase and readiness) are the same series in every state, created in the first
        name = pod.name
        fixed = self._fixed.get(name)
        if fixed is None:
            base = self._pod_base(pod)
            st = self.store
            fixed = self._fixed[name] = [st.series_id_normalised(m, _insert(base, lab)) for m, lab in _FIXED]
        node = pod.node or ""
        phase = "Unknown" if status == "Unknown" else pod.phase
        keys = [("kube_pod_info", node)]
        vals = [*_state_values(phase, pod.ready), 1.0]
        if pod.node is None:
            keys.append(("kube_pod_status_unschedulable", None))
            vals.append(1.0)
        elif pod.waiting_reason:
            keys.append(("kube_pod_container_status_waiting_reason", pod.waiting_reason))
            vals.append(1.0)
        if pod.last_terminated_reason:
            keys.append(("kube_pod_container_status_last_terminated_reason", pod.last_terminated_reason))
            vals.append(1.0)
        if spec.cpu_limit_m:
            keys.append(("kube_pod_container_resource_limits", ("cpu", node)))
            vals.append(spec.cpu_limit_m / 1000)
        if spec.mem_limit_mi:
            keys.append(("kube_pod_container_resource_limits", ("memory", node)))
            vals.append(spec.mem_limit_mi * MI)
        keys.append(("kube_pod_container_resource_requests", node))
        vals.append(self._cpu_request[pod.service])
        if pod.node is not None and pod.started and spec.mem_limit_mi:
            keys.append(("container_spec_memory_limit_bytes", (spec.image, node)))
            vals.append(spec.mem_limit_mi * MI)
        sids = self._pod_sids.setdefault(name, {})
        ids = [sids.get(k) for k in keys]
        if None in ids:  # new series, created in this order
            base = self._pod_base(pod)
            for j, sid in enumerate(ids):
                if sid is None:
                    key = keys[j]
                    labels = self._static_labels(pod, key, base)
                    ids[j] = sids[key] = self.store.series_id_normalised(key[0], labels)
        pad = _PAD[len(vals)]
        ids_row = np.array([*fixed, *ids, *pad], dtype=np.int64)
        out = (ids_row[: len(vals)], ids_row, np.array([*vals, *pad], dtype=np.float64))
        self._static[name] = (sig, out[0], out)
        memo[full] = out
        return out

    def _static_labels(self, pod, key: tuple, base: LabelKey) -> LabelKey:
        """The labels of a static series of `pod` (`_pod_static`'s key): kube-state-metrics' pod
        labels (`base`) and the series' own, or the cAdvisor labels of `container_spec_memory_limit_bytes`.
        Built in normal form: the series' own label names are not among `base`'s, empty values are
        left out and values interned, so the sorted union is `extend_labels(base, own)`."""
        name, variant = key
        if name == "kube_pod_status_unschedulable":
            return base
        if name == "container_spec_memory_limit_bytes":
            image, node = variant
            return normalise_labels(
                {
                    **scrape_labels(CADVISOR_JOB, node),
                    "namespace": self.ns,
                    "pod": pod.name,
                    "container": pod.service,
                    "image": image,
                    "node": node,
                }
            )
        intern, svc = sys.intern, sys.intern(pod.service)
        if name == "kube_pod_info":
            own: tuple = (
                ("created_by_kind", "ReplicaSet"),
                ("created_by_name", intern(pod.name.rsplit("-", 1)[0])),
                ("host_network", "false"),
            )  # host_ip, pod_ip and priority_class are empty
            node = variant
        elif name == "kube_pod_container_resource_limits":
            resource, node = variant
            own = (("container", svc), ("resource", resource), ("unit", _UNITS[resource]))
        elif name == "kube_pod_container_resource_requests":
            own, node = (("container", svc), ("resource", "cpu"), ("unit", "core")), variant
        else:  # a waiting or last terminated reason
            own, node = (("container", svc), ("reason", intern(variant))), ""
        if node:
            own = (*own, ("node", intern(node)))
        return tuple(sorted((*base, *own)))

    def _pod_base(self, pod) -> LabelKey:
        """The pod's kube-state-metrics labels (its uid is the metadata.uid its events show)."""
        base = self._bases.get(pod.name)
        if base is None:
            uid = pod.uid or pod_uid(pod.name, self.sim.seed)
            base = self._bases[pod.name] = normalise_labels(
                {**scrape_labels(KSM_JOB), "namespace": self.ns, "pod": pod.name, "uid": uid}
            )
        return base

    def _pod_dynamic_ids(self, pod) -> np.ndarray:
        key = (pod.name, pod.node)
        hit = self._dynamic.get(key)
        if hit is None:
            spec = self.sim.cluster.spec_of(pod)
            st = self.store
            # the pod's labels and its container (a label name none of them has)
            restarts = tuple(sorted((*self._pod_base(pod), ("container", sys.intern(pod.service)))))
            adv = {
                **scrape_labels(CADVISOR_JOB, pod.node or ""),
                "namespace": self.ns,
                "pod": pod.name,
                "container": pod.service,
                "image": spec.image,
                "node": pod.node or "",
            }
            adv_key = normalise_labels(adv)  # once for the five cAdvisor series
            hit = np.array(
                [
                    st.series_id_normalised("kube_pod_container_status_restarts_total", restarts),
                    st.series_id_normalised("container_cpu_usage_seconds_total", adv_key),
                    st.series_id_normalised("container_cpu_cfs_periods_total", adv_key),
                    st.series_id_normalised("container_cpu_cfs_throttled_periods_total", adv_key),
                    st.series_id_normalised("container_oom_events_total", adv_key),
                    st.series_id_normalised("container_memory_working_set_bytes", adv_key),
                ],
                dtype=np.int64,
            )
            self._dynamic[key] = hit
        return hit

    def _kube(self, t: float) -> tuple[PodLayout, list[np.ndarray]]:
        """The layout and the values of its series (after the span series, see `export`)."""
        sim = self.sim
        cl = sim.cluster
        res = sim.last
        # the per-pod layout (series, ready counts, memory parameters) is rebuilt only when a pod,
        # the pod set, the effects or a node changed, or a NotReady node's pods turned Unknown
        # (the only clock-dependent part of a pod's status, see `ClusterState.pod_status`)
        now = cl.now
        nodes = tuple(
            [(n.ready, n.unschedulable, n.not_ready_since, _unknown(n, now)) for n in cl.nodes.values()]
        )
        key = (POD_MUTATIONS[0], len(cl.pods), sim.effects.version, nodes)
        lay = self._layout
        if lay is None or key != self._layout_key:
            lay = self._layout = self._build_layout(t)
            self._layout_key = key
        cum = self._cum  # updated through 1-d column views (2-d fancy indexing is much slower)
        sample = int(round(t / METRIC_STEP_S))
        # the ready slots' CPU jitter (stream 1), then every slot's memory noise (stream 2)
        units = ps.sample_units_streams(lay.keys, sample, lay.salts)
        n_ready = len(lay.ready_slots)
        if res is not None and n_ready:
            i = lay.ready_svc
            jitter = 1.0 + ps.CPU_JITTER * (2.0 * units[:n_ready] - 1.0)
            cum[:, 0][lay.ready_slots] += res.cpu_cores[i] * lay.cpu_share * (METRIC_STEP_S * jitter)
            cum[:, 1][lay.ready_slots] += METRIC_STEP_S / 0.1
            cum[:, 2][lay.ready_slots] += METRIC_STEP_S / 0.1 * res.throttled_ratio[i]
        if len(lay.oom_slots):
            cum[:, 3][lay.oom_slots] = lay.oom_restarts
        dvals = lay.dvals.copy()  # the restart counters, then per sample:
        dvals[:, 1:5] = cum.take(lay.slots, axis=0)
        np.floor(dvals[:, 3], out=dvals[:, 3])  # throttled periods are counted: the expected value, floored
        dvals[:, 5] = self._working_set(lay, t, units[n_ready:])
        vals = [
            lay.static_vals,
            dvals.ravel() if lay.dynamic_keep is None else dvals.ravel()[lay.dynamic_keep],
        ]
        # deployments and blackbox probes, one row per service: desired and ready replicas, probe
        # success and duration, the blackbox target's `up`
        desired = self._desired()
        if lay.svc_rows[0] is not desired:
            lay.svc_rows[1][:, 0] = desired
            lay.svc_rows[0] = desired
        rows = lay.svc_rows[1].copy()
        if res is None:
            rows[:, 3] = np.where(lay.up, 0.001, 1.0)
        else:
            if self._latency[0] is not res.own_latency_ms:
                self._latency = (res.own_latency_ms, res.own_latency_ms / 1000.0)
            rows[:, 3] = self._latency[1] if lay.all_up else np.where(lay.up, self._latency[1], 1.0)
        vals.append(rows.ravel())
        vals.append(lay.node_vals)
        if self.app_extra:
            vals.append(self._astronomy_app(sim))
        return lay, vals

    @staticmethod
    def _working_set(lay: PodLayout, t: float, noise_units: np.ndarray) -> np.ndarray:
        """Bytes per slot: the mapped model memory, the GC sawtooth and sample noise, at most the limit.
        In place, in the order of `mem + leak * up_s / 60 + amp * (cycle - floor(cycle)) + noise`."""
        g = lay.inputs
        up_s = t - g[_STARTED]
        np.maximum(0.0, up_s, out=up_s)
        cycle = up_s / g[_PERIOD]
        cycle += g[_PHASE]
        mem = g[_LEAK] * up_s
        mem /= 60
        mem += g[_MEM]
        cycle -= np.floor(cycle)
        cycle *= g[_AMP]
        mem += cycle
        noise = 2.0 * noise_units
        noise -= 1.0
        noise *= g[_NOISE]
        mem += noise
        np.minimum(mem, g[_CAP], out=mem)
        mem *= MI
        return mem if lay.running is None else np.where(lay.running, mem, 0.0)

    def _build_layout(self, t: float) -> PodLayout:
        """The per-pod part of an export. One pass over the pods, in their order (the order their
        series are created in), recomputes the row of each pod written since the last build (its
        `_stamp`) or on a node whose Unknown state flipped, and, when the effects changed, only the
        memory inputs of the other started pods (the rest of a row does not depend on them); the
        layout is then assembled from the rows and the per-slot table `_inputs` by a few array
        operations, or kept when no row changed."""
        sim = self.sim
        cl = sim.cluster
        unknown = {name: _unknown(n, cl.now) for name, n in cl.nodes.items()}
        seen = self._unknown_seen
        moved = {name for name, u in unknown.items() if seen.get(name) != u}
        self._unknown_seen = unknown
        version = sim.effects.version
        effects = version != self._effects_seen
        self._effects_seen = version
        rows = self._rows
        order: list[tuple] = []
        fresh = effects
        for pod in cl.pods.values():
            row = rows.get(pod.name)
            if (
                row is None
                or row[0] != pod.__dict__.get("_stamp")
                or (moved and pod.node in moved)
                or ((pod.injections or row[1]) and tuple(pod.injections) != row[1])
            ):
                row = rows[pod.name] = self._pod_row(pod)
                fresh = True
            elif effects and row[3] >= 0:
                self._pod_memory(pod, row)
            order.append(row)
        if len(self._static) != len(cl.pods):  # every current pod is in `_static` by now
            self._drop_gone(t)
        prev = self._pods_part
        if fresh or prev is None or len(prev[0]) != len(order) or not all(map(operator.is_, prev[0], order)):
            part = self._assemble(order)
            self._pods_part = (order, part)
        else:
            part = prev[1]
        lay = object.__new__(PodLayout)  # a shallow copy
        lay.__dict__.update(part.__dict__)
        lay.node_vals = self._node_values()
        down = {name for name, n in cl.nodes.items() if not n.ready}  # their cAdvisor targets fail
        if down or len(self._unscraped):
            started = [r for r in order if r[3] >= 0]
            lay.static_ids, lay.static_vals, lay.dynamic_ids, lay.dynamic_keep = self._scrape_failures(
                t,
                part.static_ids,
                part.static_vals,
                part.dynamic_ids,
                [r[9] in down for r in started],
                [r[8] for r in started if r[9] in down],
            )
        return lay

    def _pod_row(self, pod) -> tuple:
        """A pod's row: (stamp, injections, static series, its slot if started and scheduled else -1,
        dynamic series ids, service if ready else -1, idle MiB, memory slope, name, node). The pod's
        slot holds its static series in `_static_ids`/`_static_vals` and, once it is started, its
        per-sample inputs in its column of `_inputs` (and its `_ready_svc`, `_keys`, `_dyn_ids`)."""
        sim = self.sim
        cl, c = sim.cluster, sim.compiled
        index = c.index
        stamp = pod.__dict__.get("_stamp")
        out = self._pod_static(pod, cl.pod_status(pod))
        slot = self._slot.get(pod.name)
        if slot is None:
            slot = self._new_slot(pod.name)
        self._static_ids[slot] = out[1]
        self._static_vals[slot] = out[2]
        ready = index[pod.service] if pod.ready else -1
        head = (stamp, tuple(pod.injections), out)
        if not pod.started or pod.node is None:
            return (*head, -1, None, ready, 0.0, 0.0, pod.name, pod.node)
        # Effects.memory_mi: base + extra + leak * max(0, now - started) / 60, reported
        # through the map that takes the model's base to the runtime baseline
        eff = sim.effects.pod_effect(pod)
        i_svc = index[pod.service]
        limit = float(cl.spec_of(pod).mem_limit_mi or 0)
        model_base = float(c.base_memory_mi[i_svc])
        idle, slope = ps.reported_memory(model_base, float(self._mem_baseline[i_svc]), limit)
        draws = self._draws.get(pod.name)
        if draws is None:
            draws = (*ps.pod_static(sim.seed, pod.name), ps.pod_key(sim.seed, pod.name))
            self._draws[pod.name] = draws
        weight, factor, period, phase, pod_key = draws
        idle *= factor
        oom = float(pod.restarts) if pod.last_terminated_reason == "OOMKilled" else np.nan
        self._inputs[:, slot] = (
            pod.restarts,
            idle + eff.extra_mem_mi * slope,
            eff.leak_mi_per_min * slope,
            pod.container_started_s,
            float(self._mem_sawtooth[i_svc]) * idle,
            period,
            phase,
            ps.MEM_NOISE * idle,
            limit or np.inf,
            weight,
            oom,
            pod.waiting_reason is None,
        )
        self._ready_svc[slot] = index[pod.service] if pod.ready else -1
        self._keys[slot] = pod_key
        dyn = self._dyn_ids[slot] = self._pod_dynamic_ids(pod)
        return (*head, slot, dyn, ready, idle, slope, pod.name, pod.node)

    def _pod_memory(self, pod, row: tuple) -> None:
        """The memory inputs of a started pod whose row is kept, after the effects changed."""
        eff = self.sim.effects.pod_effect(pod)
        idle, slope, slot = row[6], row[7], row[3]
        self._inputs[_MEM, slot] = idle + eff.extra_mem_mi * slope
        self._inputs[_LEAK, slot] = eff.leak_mi_per_min * slope

    def _assemble(self, order: list[tuple]) -> PodLayout:
        """The layout's pod arrays from the rows, in pod order (the slots' in the pod order too, so
        the per-service sums of the CPU weights add in the order they always did)."""
        n_svc = len(self.sim.compiled.services)
        # every pod's static series and values (their order is free: `record` pairs ids and values)
        s_ids = self._static_ids[: self._slots_used]
        has = s_ids >= 0
        started = [r for r in order if r[3] >= 0]
        slots = np.array([r[3] for r in started], dtype=np.intp)
        counts = np.bincount(np.array([r[5] for r in order if r[5] >= 0], dtype=np.intp), minlength=n_svc)
        inputs = self._inputs.take(slots, axis=1)
        svc = self._ready_svc[slots]
        is_ready = svc >= 0
        ready_svc = svc[is_ready]
        cpu_w = inputs[_WEIGHT][is_ready]
        svc_w = np.bincount(ready_svc, weights=cpu_w, minlength=n_svc)
        oom = inputs[_OOM]
        has_oom = oom == oom  # not NaN
        keys = self._keys[slots]
        dvals = np.zeros((len(slots), 6))
        dvals[:, 0] = inputs[_RESTARTS]
        up = counts > 0
        rows = np.zeros((n_svc, 5))
        rows[:, 1] = counts
        rows[:, 2] = up
        rows[:, 4] = 1.0  # the blackbox exporter answered the probe request (`up` of its target)
        running = inputs[_RUNNING] != 0.0
        return PodLayout(
            static_ids=s_ids[has],
            static_vals=self._static_vals[: self._slots_used][has],
            dynamic_ids=self._dyn_ids[slots].ravel(),
            slots=slots,
            ready_slots=slots[is_ready],
            ready_svc=ready_svc,
            cpu_share=cpu_w / svc_w[ready_svc],
            oom_slots=slots[has_oom],
            oom_restarts=oom[has_oom],
            inputs=inputs,
            running=None if running.all() else running,
            keys=np.concatenate([keys[is_ready], keys]),
            salts=self._salts(len(ready_svc), len(slots)),
            dvals=dvals,
            up=up,
            all_up=bool(up.all()),
            svc_rows=[None, rows],
            node_vals=self._no_nodes,
            dynamic_keep=None,
        )

    def _salts(self, n_ready: int, n_slots: int) -> np.ndarray:
        """`PodLayout.salts`: the CPU jitter's stream for the ready slots, then the memory noise's."""
        out = self._salt_rows.get((n_ready, n_slots))
        if out is None:
            out = self._salt_rows[n_ready, n_slots] = np.empty(n_ready + n_slots, dtype=np.uint64)
            out[:n_ready] = self._stream_salts[0]
            out[n_ready:] = self._stream_salts[1]
        return out

    def _scrape_failures(
        self,
        t: float,
        s_ids: np.ndarray,
        s_vals: np.ndarray,
        dyn_ids: np.ndarray,
        unscraped: list[bool],
        pods: list[str],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
        """The layout's ids and values without the cAdvisor series of `pods`, on NotReady nodes (their
        kubelet does not answer the scrape: `up` is 0), which get staleness markers when they stop."""
        bad = np.repeat(np.asarray(unscraped, dtype=bool), 6).reshape(-1, 6)
        bad[:, 0] = False  # the restart counter comes from kube-state-metrics
        dynamic_keep = ~bad.ravel()
        limits = [  # the one cAdvisor series among a pod's static ones
            sid
            for name in pods
            for key, sid in self._pod_sids.get(name, {}).items()
            if key[0] == "container_spec_memory_limit_bytes"
        ]
        if limits:
            static_bad = np.isin(s_ids, np.asarray(limits, dtype=np.int64), kind="table")
        else:
            static_bad = np.zeros(len(s_ids), dtype=bool)
        dropped = np.concatenate([dyn_ids[~dynamic_keep], s_ids[static_bad]])
        before = set(self._unscraped.tolist())  # a write per id: their order does not matter
        new = [sid for sid in dropped.tolist() if sid not in before]
        if new:
            self.store.mark_stale(t, new)
        self._unscraped = dropped
        keep = None if dynamic_keep.all() else dynamic_keep
        return s_ids[~static_bad], s_vals[~static_bad], dyn_ids[dynamic_keep], keep

    def _node_values(self) -> np.ndarray:
        """Values of `_node_ids`: per node info, Ready true/false/unknown, unschedulable, labels and
        its cAdvisor target's `up`; then the `up` of kube-state-metrics and the OpenTelemetry collector."""
        nodes = self.sim.cluster.nodes.values()
        key = tuple([(n.ready, n.unschedulable) for n in nodes])
        if self._node_vals[0] != key:
            rows = [[1.0, n.ready, not n.ready, 0.0, n.unschedulable, 1.0, n.ready] for n in nodes]
            self._node_vals = (key, np.concatenate([np.array(rows, dtype=np.float64).ravel(), [1.0, 1.0]]))
        return self._node_vals[1]

    def _new_slot(self, name: str) -> int:
        """A pod's slot (at its first row), its row of `_cum` zeroed: [cpu_s, periods, throttled, oom]."""
        if self._free_slots:
            slot = self._free_slots.pop()
        else:
            slot = self._slots_used
            self._slots_used += 1
            if slot >= len(self._cum):
                n = len(self._cum)
                grown = np.zeros((2 * n, 4))
                grown[:n] = self._cum
                self._cum = grown
                inputs = np.zeros((len(self._inputs), 2 * n))
                inputs[:, :n] = self._inputs
                self._inputs = inputs
                self._ready_svc = np.concatenate([self._ready_svc, np.full(n, -1, dtype=np.intp)])
                self._keys = np.concatenate([self._keys, np.zeros(n, dtype=np.uint64)])
                self._dyn_ids = np.concatenate([self._dyn_ids, np.zeros((n, 6), dtype=np.int64)])
                self._static_ids = np.concatenate(
                    [self._static_ids, np.full((n, _STATIC_MAX), -1, dtype=np.int64)]
                )
                self._static_vals = np.concatenate([self._static_vals, np.zeros((n, _STATIC_MAX))])
        self._cum[slot] = 0.0
        self._slot[name] = slot
        return slot

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
                self._static_ids[slot] = -1
                self._free_slots.append(slot)
            self._static_memo.pop(name, None)
            self._pod_sids.pop(name, None)
            self._draws.pop(name, None)
            self._rows.pop(name, None)
            self._bases.pop(name, None)
            self._fixed.pop(name, None)

    def _desired(self) -> np.ndarray:
        """Desired replicas per service (recomputed only when a deployment's current revision changed)."""
        deps = self.sim.cluster.deployments
        lists = self._revision_lists  # each service's revisions (appended to, last one replaced)
        if lists is None or lists[0] is not deps:
            lists = self._revision_lists = (deps, [deps[s].revisions for s in self.sim.compiled.services])
        revs = [r[-1] for r in lists[1]]
        prev = self._desired_cache
        if prev is not None:
            if all(map(operator.is_, prev[0], revs)):
                return prev[1]
            out = prev[1].copy()  # a new array: a layout's service rows hold the previous one
            for i in [i for i, (a, b) in enumerate(zip(prev[0], revs)) if a is not b]:
                out[i] = float(sum(n for _, n in revs[i].spec.replicas))
        else:
            out = np.array([float(sum(n for _, n in r.spec.replicas)) for r in revs])
        self._desired_cache = (revs, out)
        return out

    def _init_kube_series(self) -> None:
        """This mixin's own state: pod slots and layouts, per-pod series caches, the static rows."""
        self._slot: dict[str, int] = {}  # pod -> its slot: its row of `_cum` and of the tables below
        self._cum = np.zeros((64, 4))
        self._inputs = np.zeros((12, 64))  # per slot: a started pod's inputs (`_RESTARTS` ... `_RUNNING`)
        self._ready_svc = np.full(64, -1, dtype=np.intp)  # per slot: its service if the pod is ready
        self._keys = np.zeros(64, dtype=np.uint64)  # per slot: the pod's sample key
        self._dyn_ids = np.zeros((64, 6), dtype=np.int64)  # per slot: its pod's `_pod_dynamic_ids`
        # per slot: its pod's static series' ids (-1 past them, and for free slots) and values
        self._static_ids = np.full((64, _STATIC_MAX), -1, dtype=np.int64)
        self._static_vals = np.zeros((64, _STATIC_MAX))
        self._stream_salts = ps.stream_salts([1, 2])  # CPU jitter, memory noise
        self._no_nodes = np.zeros(0)
        self._slots_used = 0
        self._free_slots: list[int] = []
        self._layout: PodLayout | None = None
        self._rows: dict[str, tuple] = {}  # pod -> its row (`_pod_row`)
        self._pods_part: tuple | None = None  # (rows, the layout's pod part) of the last build
        self._unknown_seen: dict[str, bool] = {}  # node -> its Unknown state at the last build
        self._effects_seen = -1  # the effects' version at the last build
        self._bases: dict[str, LabelKey] = {}  # pod -> its kube-state-metrics labels (`_pod_base`)
        self._fixed: dict[str, list[int]] = {}  # pod -> its phase and readiness series (`_FIXED`)
        self._pod_sids: dict[str, dict[tuple, int]] = {}  # pod -> (metric, varying labels) -> series id
        self._layout_key: tuple | None = None
        self._static: dict[str, tuple] = {}
        self._dynamic: dict[tuple, np.ndarray] = {}
        # pod -> state -> series
        self._static_memo: dict[str, dict[tuple, tuple]] = {}
        self._desired_cache: tuple | None = None
        self._node_vals: tuple = (None, None)  # (nodes' state, `_node_values`)
        self._salt_rows: dict[tuple[int, int], np.ndarray] = {}  # `_salts` by (ready, all) slots
        self._latency: tuple = (None, None)  # (own latency ms, in s)
        self._revision_lists: tuple | None = None  # (the deployments, their revision lists in service order)
        self._init_static_rows()

    def _init_static_rows(self) -> None:
        st, ns, sim = self.store, self.ns, self.sim
        services = [sim.app.service(name) for name in sim.compiled.services]
        base = sim.compiled.base_memory_mi
        self._mem_baseline = np.array(
            [
                ps.baseline_mi(ns, s.name, s.language, s.resources.mem_limit_mi, float(base[i]))
                for i, s in enumerate(services)
            ]
        )
        self._mem_sawtooth = np.array([ps.sawtooth_share(s.language) for s in services])
        self._cpu_request = {s.name: s.resources.cpu_request_m / 1000 for s in services}  # cores
        self._unscraped = np.zeros(0, dtype=np.int64)  # cAdvisor series of pods on NotReady nodes
        self._draws: dict[str, tuple] = {}  # pod -> `pod_signals.pod_static` and its sample key
        ksm = scrape_labels(KSM_JOB)
        rows = []
        for name in sim.compiled.services:
            lab = {**ksm, "namespace": ns, "deployment": name}
            blab = {
                **scrape_labels(BLACKBOX_JOB, f"{name}:{sim.app.service(name).port}"),
                "namespace": ns,
                "service": name,
            }
            rows.append(
                [
                    st.series_id("kube_deployment_spec_replicas", lab),
                    st.series_id("kube_deployment_status_replicas_available", lab),
                    st.series_id("probe_success", blab),
                    st.series_id("probe_duration_seconds", blab),
                    st.series_id("up", scrape_labels(BLACKBOX_JOB, blab["instance"])),
                ]
            )
        self._svc_ids = np.array(rows, dtype=np.int64)
        nrows = []
        for node in sim.cluster.nodes.values():
            cond = {**ksm, "node": node.name, "condition": "Ready"}
            nrows.append(
                [
                    st.series_id(
                        "kube_node_info",
                        {
                            **ksm,
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
                    st.series_id("kube_node_spec_unschedulable", {**ksm, "node": node.name}),
                    st.series_id(
                        "kube_node_labels",
                        {**ksm, "node": node.name, "label_topology_kubernetes_io_zone": node.zone},
                    ),
                    st.series_id("up", scrape_labels(CADVISOR_JOB, node.name)),
                ]
            )
        targets = [st.series_id("up", ksm), st.series_id("up", scrape_labels(OTEL_JOB))]
        # node rows, then the `up` of the cluster-wide targets (values: `PodLayout.node_vals`)
        self._node_ids = np.concatenate([np.array(nrows, dtype=np.int64).ravel(), targets])
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
            otel = scrape_labels(OTEL_JOB)
            fe = [
                st.series_id(
                    "app_frontend_requests_total",
                    {
                        **otel,
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
                {**otel, "namespace": ns, "service_name": "payment", "app_payment_currency": "USD"},
            )
            lag = [
                st.series_id(
                    "kafka_consumer_records_lag_max",
                    {
                        **otel,
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
