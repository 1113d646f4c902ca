"""The pod, node and scrape-target series of `MetricExporter`: kube-state-metrics, cAdvisor through
the kubelet, blackbox probes, `up`, and the Astronomy Shop's application gauges.

Why a module of its own: these series follow the cluster (pods, nodes, effects), the span series
follow the traffic model; both are written by one `MetricStore.record` per scrape (`MetricExporter.export`
concatenates the span ids and values with the ones built here). The per-pod layout below is rebuilt only
when a pod, the pod set, the effects or a node changed; a sample is then a few array operations. Label
sets are those of the real exporters plus the scrape labels of their job (`scrape`); values carry
per-pod variation (`pod_signals`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..core.clock import METRIC_STEP_S
from ..metrics.labels import LabelKey, extend_labels, normalise_labels
from . import pod_signals as ps
from .cluster import NODE_MONITOR_GRACE_S, POD_MUTATIONS
from .k8s_events import pod_uid
from .scrape import BLACKBOX_JOB, CADVISOR_JOB, KSM_JOB, OTEL_JOB, scrape_labels

if TYPE_CHECKING:
    from ..metrics.store import MetricStore
    from .sim_state import SimState

PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
MI = 1024.0 * 1024.0


@dataclass
class PodLayout:
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
    mem_base: np.ndarray  # reported idle + extra memory, MiB (`pod_signals.reported_memory`)
    leak: np.ndarray  # reported MiB per minute
    started_s: np.ndarray  # container start
    keys: np.ndarray  # uint64 per slot: the pod's per-sample draws
    saw: np.ndarray  # [4, slots]: GC sawtooth amplitude MiB, period s, phase; noise amplitude MiB
    mem_cap: np.ndarray  # memory limit MiB (inf without one): the working set never exceeds it
    ready_keys: np.ndarray
    cpu_share: np.ndarray  # per ready slot: its weight / the weights of its service's ready pods
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

        def put(name: str, variant: object, extra, value: float) -> None:
            """`extra()`: the labels this series adds to the pod's (a normalised key if it has
            labels of its own, see `container_spec_memory_limit_bytes`)."""
            key = (name, variant)
            sid = sids.get(key)
            if sid is None:
                more = extra()
                labels = more if isinstance(more, tuple) else extend_labels(base(), more)
                sid = sids[key] = st.series_id_normalised(name, labels)
            ids.append(sid)
            vals.append(value)

        uid = self._pod_uid(pod)
        base_key: list[LabelKey] = []

        def base() -> LabelKey:  # normalised once per call, only if a series is new
            if not base_key:
                base_key.append(
                    normalise_labels({**scrape_labels(KSM_JOB), "namespace": ns, "pod": pod.name, "uid": uid})
                )
            return base_key[0]

        phase = "Unknown" if status == "Unknown" else pod.phase
        for ph in PHASES:
            put("kube_pod_status_phase", ph, lambda ph=ph: {"phase": ph}, float(ph == phase))
        for cond, v in (("true", pod.ready), ("false", not pod.ready), ("unknown", False)):
            put("kube_pod_status_ready", cond, lambda cond=cond: {"condition": cond}, float(v))
        node = pod.node or ""
        put(
            "kube_pod_info",
            node,
            lambda: {
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
            put("kube_pod_status_unschedulable", None, lambda: {}, 1.0)
        if pod.waiting_reason and pod.node is not None:
            put(
                "kube_pod_container_status_waiting_reason",
                pod.waiting_reason,
                lambda: {"container": svc, "reason": pod.waiting_reason},
                1.0,
            )
        if pod.last_terminated_reason:
            put(
                "kube_pod_container_status_last_terminated_reason",
                pod.last_terminated_reason,
                lambda: {"container": svc, "reason": pod.last_terminated_reason},
                1.0,
            )
        if spec.cpu_limit_m:
            put(
                "kube_pod_container_resource_limits",
                ("cpu", node),
                lambda: {"container": svc, "node": node, "resource": "cpu", "unit": "core"},
                spec.cpu_limit_m / 1000,
            )
        if spec.mem_limit_mi:
            put(
                "kube_pod_container_resource_limits",
                ("memory", node),
                lambda: {"container": svc, "node": node, "resource": "memory", "unit": "byte"},
                spec.mem_limit_mi * MI,
            )
        req = self.sim.app.service(svc).resources
        put(
            "kube_pod_container_resource_requests",
            node,
            lambda: {"container": svc, "node": node, "resource": "cpu", "unit": "core"},
            req.cpu_request_m / 1000,
        )
        if pod.node is not None and pod.started and spec.mem_limit_mi:
            put(
                "container_spec_memory_limit_bytes",
                (spec.image, node),
                lambda: normalise_labels(
                    {
                        **scrape_labels(CADVISOR_JOB, node),
                        "namespace": ns,
                        "pod": pod.name,
                        "container": svc,
                        "image": spec.image,
                        "node": node,
                    }
                ),
                spec.mem_limit_mi * MI,
            )
        id_arr = np.asarray(ids, dtype=np.int64)
        out = (id_arr, np.stack([id_arr, np.asarray(vals).view(np.int64)]))
        self._static[pod.name] = (sig, out[0], out)
        memo[full] = out
        return out

    def _pod_uid(self, pod) -> str:
        """The pod's metadata.uid (the one its events show)."""
        uid = self._uid.get(pod.name)
        if uid is None:
            uid = self._uid[pod.name] = pod.uid or pod_uid(pod.name, self.sim.seed)
        return uid

    def _pod_dynamic_ids(self, pod) -> np.ndarray:
        key = (pod.name, pod.node)
        hit = self._dynamic.get(key)
        if hit is None:
            spec = self.sim.cluster.spec_of(pod)
            st = self.store
            cbase = {
                **scrape_labels(KSM_JOB),
                "namespace": self.ns,
                "pod": pod.name,
                "uid": self._pod_uid(pod),
                "container": pod.service,
            }
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
                    st.series_id("kube_pod_container_status_restarts_total", cbase),
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
        sample = int(round(t / METRIC_STEP_S))
        if res is not None and len(lay.ready_slots):
            i = lay.ready_svc
            jitter = 1.0 + ps.CPU_JITTER * (2.0 * ps.sample_units(lay.ready_keys, sample, 1) - 1.0)
            cum[:, 0][lay.ready_slots] += res.cpu_cores[i] * lay.cpu_share * (METRIC_STEP_S * jitter)
            cum[:, 1][lay.ready_slots] += METRIC_STEP_S / 0.1
            cum[:, 2][lay.ready_slots] += METRIC_STEP_S / 0.1 * res.throttled_ratio[i]
        if len(lay.oom_slots):
            cum[:, 3][lay.oom_slots] = lay.oom_restarts
        dvals = np.empty((len(lay.slots), 6))
        dvals[:, 0] = lay.restarts
        dvals[:, 1:5] = cum.take(lay.slots, axis=0)
        np.floor(dvals[:, 3], out=dvals[:, 3])  # throttled periods are counted: the expected value, floored
        dvals[:, 5] = self._working_set(lay, t, sample)
        vals = [
            lay.static_vals,
            dvals.ravel() if lay.dynamic_keep is None else dvals.ravel()[lay.dynamic_keep],
        ]
        # deployments and blackbox probes, one row per service
        ready_pods = lay.counts
        up = ready_pods > 0
        lat_s = (res.own_latency_ms / 1000.0) if res is not None else np.full(len(c.services), 0.001)
        rows = np.empty((len(c.services), 5))
        rows[:, 0] = self._desired()
        rows[:, 1] = ready_pods
        rows[:, 2] = up
        rows[:, 3] = np.where(up, lat_s, 1.0)
        rows[:, 4] = 1.0  # the blackbox exporter answered the probe request (`up` of its target)
        vals.append(rows.ravel())
        vals.append(lay.node_vals)
        if self.app_extra:
            vals.append(self._astronomy_app(sim))
        return lay, vals

    @staticmethod
    def _working_set(lay: PodLayout, t: float, sample: int) -> np.ndarray:
        """Bytes per slot: the mapped model memory, the GC sawtooth and sample noise, at most the limit."""
        up_s = np.maximum(0.0, t - lay.started_s)
        amp, period, phase, noise = lay.saw
        cycle = up_s / period + phase
        mem = lay.mem_base + lay.leak * up_s / 60 + amp * (cycle - np.floor(cycle))
        mem += noise * (2.0 * ps.sample_units(lay.keys, sample, 2) - 1.0)
        return np.where(lay.running, np.minimum(mem, lay.mem_cap) * MI, 0.0)

    def _build_layout(self, t: float) -> PodLayout:
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
        keys: list[int] = []
        saw: list[tuple[float, float, float, float]] = []
        mem_cap: list[float] = []
        cpu_w: list[float] = []
        ready_keys: list[int] = []
        down = {name for name, n in cl.nodes.items() if not n.ready}  # their cAdvisor targets fail
        unscraped: list[bool] = []
        unscraped_pods: list[str] = []
        for pod in pods:
            if pod.ready:
                counts[index[pod.service]] += 1
        base_mem = c.base_memory_mi
        pod_effect = sim.effects.pod_effect
        seed = sim.seed
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
                    # Effects.memory_mi: base + extra + leak * max(0, now - started) / 60, reported
                    # through the map that takes the model's base to the runtime baseline
                    eff = pod_effect(pod)
                    i_svc = index[pod.service]
                    limit = float(cl.spec_of(pod).mem_limit_mi or 0)
                    model_base = float(base_mem[i_svc])
                    idle, slope = ps.reported_memory(model_base, float(self._mem_baseline[i_svc]), limit)
                    draws = self._draws.get(pod.name)
                    if draws is None:
                        draws = self._draws[pod.name] = (
                            *ps.pod_static(seed, pod.name),
                            ps.pod_key(seed, pod.name),
                        )
                    weight, factor, period, phase, pod_key = draws
                    idle *= factor
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
                            idle + eff.extra_mem_mi * slope,
                            eff.leak_mi_per_min * slope,
                            pod.container_started_s,
                            pod_key,
                            (float(self._mem_sawtooth[i_svc]) * idle, period, phase, ps.MEM_NOISE * idle),
                            limit or np.inf,
                            weight,
                        ),
                    )
                rows[pod.name] = row
            static.append(row[1])
            d = row[2]
            if d is None:
                continue
            unscraped.append(pod.node in down)
            if unscraped[-1]:
                unscraped_pods.append(pod.name)
            slot = d[0]
            slots.append(slot)
            dyn.append(d[1])
            if d[2] >= 0:
                ready_slots.append(slot)
                ready_svc.append(d[2])
                ready_keys.append(d[9])
                cpu_w.append(d[12])
            if d[3] is not None:
                oom_slots.append(slot)
                oom_restarts.append(d[3])
            restarts.append(d[4])
            running.append(d[5])
            mem_base.append(d[6])
            leak.append(d[7])
            started_s.append(d[8])
            keys.append(d[9])
            saw.append(d[10])
            mem_cap.append(d[11])
        if len(self._static) != len(pods):  # every current pod is in `_static` by now
            self._drop_gone(t)
        s_ids, s_vals = self._concat_static(static)
        dyn_ids = self._concat_dynamic(dyn)
        dynamic_keep = None
        if down or len(self._unscraped):
            s_ids, s_vals, dyn_ids, dynamic_keep = self._scrape_failures(
                t, s_ids, s_vals, dyn_ids, unscraped, unscraped_pods
            )
        f, ix = np.array, np.intp
        counts_a, ready_svc_a = f(counts, dtype=np.float64), f(ready_svc, dtype=ix)
        cpu_w_a = f(cpu_w, dtype=np.float64)
        svc_w = np.bincount(ready_svc_a, weights=cpu_w_a, minlength=len(c.services))
        return PodLayout(
            static_ids=s_ids,
            static_vals=s_vals,
            dynamic_ids=dyn_ids,
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
            keys=f(keys, dtype=np.uint64),
            saw=f(saw, dtype=np.float64).reshape(-1, 4).T.copy(),
            mem_cap=f(mem_cap, dtype=np.float64),
            ready_keys=f(ready_keys, dtype=np.uint64),
            cpu_share=cpu_w_a / svc_w[ready_svc_a],
            node_vals=self._node_values(),
            dynamic_keep=dynamic_keep,
        )

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
        static_bad = np.isin(s_ids, np.asarray(limits, dtype=np.int64))
        dropped = np.concatenate([dyn_ids[~dynamic_keep], s_ids[static_bad]])
        new = np.setdiff1d(dropped, self._unscraped)
        if len(new):
            self.store.mark_stale(t, new)
        self._unscraped = dropped
        keep = None if dynamic_keep.all() else dynamic_keep
        return s_ids[~static_bad], s_vals[~static_bad], dyn_ids[dynamic_keep], keep

    def _node_values(self) -> np.ndarray:
        """Values of `_node_ids`: per node info, Ready true/false/unknown, unschedulable, labels and
        its cAdvisor target's `up`; then the `up` of kube-state-metrics and the OpenTelemetry collector."""
        nodes = self.sim.cluster.nodes.values()
        rows = [[1.0, n.ready, not n.ready, 0.0, n.unschedulable, 1.0, n.ready] for n in nodes]
        return np.concatenate([np.array(rows, dtype=np.float64).ravel(), [1.0, 1.0]])

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
            self._draws.pop(name, None)
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

    def _init_kube_series(self) -> None:
        """This mixin's own state: pod slots and layouts, per-pod series caches, the static rows."""
        self._slot: dict[str, int] = {}  # pod -> its row of `_cum`: [cpu_s, periods, throttled, oom]
        self._cum = np.zeros((64, 4))
        self._slots_used = 0
        self._free_slots: list[int] = []
        self._layout: PodLayout | None = None
        self._rows: dict[str, tuple] = {}  # pod -> (row key, static series, dynamic inputs or None)
        self._uid: dict[str, str] = {}  # pod -> its uid label
        self._pod_sids: dict[str, dict[tuple, int]] = {}  # pod -> (metric, varying labels) -> series id
        self._layout_key: tuple | None = None
        self._static: dict[str, tuple] = {}
        self._dynamic: dict[tuple, np.ndarray] = {}
        self._static_concat: tuple | None = None
        # pod -> state -> series
        self._static_memo: dict[str, dict[tuple, tuple[np.ndarray, np.ndarray]]] = {}
        self._desired_cache: tuple | None = None
        self._dynamic_concat: tuple | None = None
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
