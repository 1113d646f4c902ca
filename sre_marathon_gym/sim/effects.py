"""What the running system does, derived from cluster state: the bridge from objects to numbers.

Faults change objects (a source revision, an env value, an image tag, a pod's runtime, a
NetworkPolicy, a node); `Effects` turns the *running* pods' specs and runtime into per-service
and per-edge arrays the traffic model uses. A change's behaviour is registered by the artifact
state it is attached to (e.g. ``cart`` file ``src/CartStore.cs`` at ``r8``), so rolling back,
reverting or fixing the artifact removes the behaviour without special cases.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..catalog.flag_behaviour import FLAG_BEHAVIOUR, resolve_variant  # the flags' data, re-exported
from .cluster import ClusterState, DeploymentSpec, Pod
from .topology import CompiledApp, env_prefix

# a container starts at this share of its steady working set (or of its memory limit, if lower) and
# grows to the steady size over WARMUP_S while it initialises (see `Effects._fit_memory`)
STARTUP_MEMORY_SHARE = 0.4
WARMUP_S = 60.0


@dataclass
class Behaviour:
    mechanism: str
    params: dict


@dataclass
class ServiceEffect:
    """Effect of one running pod (revision behaviours plus pod runtime injections)."""

    own_error: float = 0.0
    added_ms: float = 0.0
    cpu_mult: float = 1.0
    extra_cores: float = 0.0
    extra_mem_mi: float = 0.0
    leak_mi_per_min: float = 0.0
    crash_ratio: float = 0.0
    consumer_delay_s: float = 0.0
    inbound_delay_ms: float = 0.0
    inbound_loss: float = 0.0
    edge_fail: dict[str, float] = field(default_factory=dict)
    edge_mult: dict[str, float] = field(default_factory=dict)
    load_mult: dict[str, float] = field(default_factory=dict)

    def add(self, mech: str, p: dict) -> None:
        if mech in ("code_error", "config_bad_value", "dependency_unavailable"):
            self.own_error = 1 - (1 - self.own_error) * (1 - float(p["error_ratio"]))
        elif mech in ("code_latency", "dependency_slow"):
            self.added_ms += float(p["added_ms"])
        elif mech == "code_cpu_hog":
            self.cpu_mult *= float(p["cpu_multiplier"])
        elif mech == "cpu_stress":
            self.extra_cores += float(p["cores"])
        elif mech == "memory_stress":
            self.extra_mem_mi += float(p["mi"])
        elif mech == "code_memory_leak":
            self.leak_mi_per_min += float(p["leak_mi_per_min"])
        elif mech == "code_crash":
            self.crash_ratio = max(self.crash_ratio, float(p["crash_ratio"]))
        elif mech in ("code_retry_storm", "config_cache_ttl"):
            d = str(p["downstream"])
            self.edge_mult[d] = self.edge_mult.get(d, 1.0) * float(p["multiplier"])
        elif mech == "config_wrong_address":
            d = str(p["downstream"])
            self.edge_fail[d] = 1 - (1 - self.edge_fail.get(d, 0.0)) * (1 - float(p["error_ratio"]))
        elif mech == "network_delay":
            self.inbound_delay_ms += float(p["delay_ms"])
        elif mech == "network_loss":
            self.inbound_loss = 1 - (1 - self.inbound_loss) * (1 - float(p["loss_ratio"]))
        elif mech == "consumer_delay":
            self.consumer_delay_s += float(p["seconds_per_record"])
        elif mech == "load_spike":
            rt = str(p.get("request_type", "*"))
            self.load_mult[rt] = self.load_mult.get(rt, 1.0) * float(p["multiplier"])


class Effects:
    """Registry of change behaviours plus the per-tick arrays derived from the running pods."""

    def __init__(self, compiled: CompiledApp):
        self.c = compiled
        self.app = compiled.app
        # what each flag does; a benchmark may swap in its own intensities (ORCA: `orca.intensity`)
        self.flag_table: dict[str, list[tuple[str, str, dict]]] = FLAG_BEHAVIOUR
        # (service, kind, key, state) -> behaviours; kind: code | env | image | readiness | flag
        self.behaviours: dict[tuple[str, str, str, str | None], list[Behaviour]] = {}
        self.cluster: ClusterState | None = None
        # (service, revision) -> (inputs, effect): an entry is reused while the inputs it was computed
        # from hold (the service's behaviours, the flag values, the spec fields that select them)
        self._spec_cache: dict[tuple[str, int], tuple[tuple, ServiceEffect]] = {}
        self._generation: dict[str, int] = {}  # service -> bumps when its behaviours change
        self._flags: tuple = ()
        self._flags_version = -1
        # (service, revision, injection ids) -> effect; an injection id always carries the same
        # params, and the cache is cleared with every invalidation, so a hit is what `pod_effect`
        # would compute again
        self._pod_cache: dict[tuple, ServiceEffect] = {}
        self._arrays_cache: dict[tuple, tuple[bytes, dict[str, np.ndarray]]] = {}  # key -> (bytes, arrays)
        # the bytes and arrays of the last answer (None: no answer yet)
        self._last_arrays: tuple[bytes | None, dict[str, np.ndarray] | None] = (None, None)
        self._service_memo: dict[str, tuple[list, tuple]] = {}  # service -> (pod groups, `_service_values`)
        self.version = 0
        self._original_readiness = {
            s.name: (s.readiness_probe.path if s.readiness_probe else None) for s in self.app.services
        }
        self._original_images = {s.name: s.image for s in self.app.services}
        self._numbers_cache: dict[tuple, tuple[float, float, np.ndarray]] = {}
        S = len(compiled.services)
        self._out_edges = [np.nonzero(compiled.edge_src == i)[0] for i in range(S)]
        self._out_dsts = [
            [compiled.services[compiled.edge_dst[e]] for e in self._out_edges[i]] for i in range(S)
        ]
        self._timeout_keys = [[env_prefix(d) + "_TIMEOUT_MS" for d in self._out_dsts[i]] for i in range(S)]
        self._out_edge_list = [e.tolist() for e in self._out_edges]
        self._base_threads = compiled.threads.tolist()
        self._rt_index = {n: i for i, n in enumerate(compiled.request_types)}

    def bind(self, cluster: ClusterState) -> None:
        self.cluster = cluster

    # ------------------------------------------------------------ registry
    def register(
        self, service: str, kind: str, key: str, state: str | None, mechanism: str, params: dict
    ) -> None:
        self.behaviours.setdefault((service, kind, key, state), []).append(Behaviour(mechanism, dict(params)))
        self._generation[service] = self._generation.get(service, 0) + 1
        self.invalidate()

    def unregister(self, service: str, kind: str, key: str, state: str | None) -> None:
        self.behaviours.pop((service, kind, key, state), None)
        self._generation[service] = self._generation.get(service, 0) + 1
        self.invalidate()

    def generation(self, service: str) -> int:
        """Changes whenever a behaviour of `service` is registered or unregistered."""
        return self._generation.get(service, 0)

    def flag_values(self) -> tuple:
        """flagd's ConfigMap as (flag, variant) pairs, read once per `version` (flags change through
        `Simulator.ship_flag`, which invalidates)."""
        if self._flags_version != self.version:
            values = self.cluster.configmaps.get("flagd-config", {}) if self.cluster is not None else {}
            self._flags = tuple(values.items())
            self._flags_version = self.version
        return self._flags

    def invalidate(self) -> None:
        self._pod_cache.clear()
        self.version += 1
        if self.cluster is not None:
            self.cluster.dirty = True

    def _spec_behaviours(self, service: str, spec: DeploymentSpec) -> list[Behaviour]:
        out: list[Behaviour] = []
        get = self.behaviours.get
        for path, rev in spec.code:
            out += get((service, "code", path, rev), [])
        env = dict(spec.env)
        for (svc, kind, key, state), bs in self.behaviours.items():
            if svc == service and kind == "env" and env.get(key) == state:
                out += bs
        out += get((service, "image", "image", spec.image), [])
        return out

    def revision_effect(self, service: str, revision: int, spec: DeploymentSpec) -> ServiceEffect:
        key = (service, revision)
        inputs = (self._generation.get(service, 0), self.flag_values(), spec.code, spec.env, spec.image)
        hit = self._spec_cache.get(key)
        if hit is not None and hit[0] == inputs:
            return hit[1]
        eff = ServiceEffect()
        for b in self._spec_behaviours(service, spec):
            eff.add(b.mechanism, b.params)
        for b in self.flag_behaviours(service):
            eff.add(b.mechanism, b.params)
        self._spec_cache[key] = (inputs, eff)
        return eff

    def flag_behaviours(self, service: str) -> list[Behaviour]:
        """Flags are read at request time from flagd's ConfigMap, so they act on every pod at once."""
        if self.cluster is None or not self.app.feature_flags:
            return []
        values = self.cluster.configmaps.get("flagd-config", {})
        out = []
        for flag in self.app.feature_flags:
            variant = values.get(flag.name, flag.default)
            if variant == flag.default or variant not in flag.variants:
                continue
            for svc, mech, params in self.flag_table.get(flag.name, []):
                if svc == service:
                    out.append(Behaviour(mech, resolve_variant(params, flag.variants[variant])))
        return out

    def pod_effect(self, pod: Pod) -> ServiceEffect:
        """The effect of one pod (shared and cached: callers must not mutate it)."""
        # the container's start is in the key: an over-limit working set grows from it (`_fit_memory`)
        key = (pod.service, pod.revision, tuple(pod.injections), pod.container_started_s)
        eff = self._pod_cache.get(key)
        if eff is not None:
            return eff
        assert self.cluster is not None
        base = self.revision_effect(pod.service, pod.revision, self.cluster.spec_of(pod))
        if not pod.injections:
            eff = base
        else:
            eff = ServiceEffect(
                **{k: (dict(v) if isinstance(v, dict) else v) for k, v in base.__dict__.items()}
            )
            for inj in pod.injections.values():
                eff.add(inj["mechanism"], inj["params"])
        eff = self._fit_memory(pod, eff, base)
        self._pod_cache[key] = eff
        return eff

    # ------------------------------------------------------------ PodRuntime protocol
    def image_pullable(self, service: str, spec: DeploymentSpec) -> bool:
        return (
            not self.behaviours.get((service, "image", "image", spec.image))
            or spec.image == self._original_images[service]
        )

    def readiness_ok(self, service: str, spec: DeploymentSpec) -> bool:
        if spec.readiness_path != self._original_readiness[service]:
            return False
        return not any(b.mechanism == "bad_readiness_probe" for b in self.flag_behaviours(service))

    def crashes_on_start(self, pod: Pod, spec: DeploymentSpec) -> str | None:
        for b in self._spec_behaviours(pod.service, spec):
            if b.mechanism == "config_missing_env":
                return "Error"
        return None

    def seconds_until_oom(self, pod: Pod, spec: DeploymentSpec, now: float) -> float:
        """Seconds until the container's working set reaches its memory limit (the kernel's OOM kill):
        it grows along `pod_effect`'s line (start + leak per minute since the container started)."""
        eff = self.pod_effect(pod)
        limit = spec.mem_limit_mi
        if not limit or eff.leak_mi_per_min <= 0:
            start = float(self.c.base_memory_mi[self.c.index[pod.service]]) + eff.extra_mem_mi
            return 1.0 if limit and start >= limit else math.inf
        return max(1.0, (limit - self.memory_mi(pod, now)) / eff.leak_mi_per_min * 60)

    def seconds_until_crash(self, pod: Pod, spec: DeploymentSpec, now: float) -> float:
        """Seconds until a crashing code path kills the process (an unhandled exception or a panic: the
        container exits with an error, not an OOM kill); infinite without one."""
        eff = self.pod_effect(pod)
        if eff.crash_ratio > 0:  # a crashing code path is hit after a while under load
            return 20.0 + 100.0 * (1.0 - eff.crash_ratio)
        return math.inf

    def memory_mi(self, pod: Pod, now: float) -> float:
        """The container's working set: the line `metric_exporter` samples (`pod_effect`)."""
        eff = self.pod_effect(pod)
        base = float(self.c.base_memory_mi[self.c.index[pod.service]])
        return base + eff.extra_mem_mi + eff.leak_mi_per_min * max(0.0, now - pod.container_started_s) / 60

    def _fit_memory(self, pod: Pod, eff: ServiceEffect, before: ServiceEffect) -> ServiceEffect:
        """A container whose working set would not fit its memory limit is not killed at once: its
        working set grows to the limit first, and the kernel kills it there. From the container's start
        it grows from its startup footprint toward the steady size while it initialises (heap, caches);
        when a runtime injection pushes a running container over (a memory stressor), from the
        injection on, from what the container used `before` it. The growth is one line (start level at
        the origin, `leak_mi_per_min`), the one the exporter samples and `seconds_until_oom` extends to
        the limit; it reaches the steady size after WARMUP_S."""
        assert self.cluster is not None
        limit = self.cluster.spec_of(pod).mem_limit_mi
        base = float(self.c.base_memory_mi[self.c.index[pod.service]])
        steady = base + eff.extra_mem_mi
        if not limit or steady < limit:
            return eff
        started = pod.container_started_s
        since = max((float(i.get("since_s", 0.0)) for i in pod.injections.values()), default=0.0)
        if since > started:
            origin, level = since, min(base + before.extra_mem_mi, STARTUP_MEMORY_SHARE * limit)
        else:
            origin, level = started, STARTUP_MEMORY_SHARE * min(steady, limit)
        out = ServiceEffect(**{k: (dict(v) if isinstance(v, dict) else v) for k, v in eff.__dict__.items()})
        out.leak_mi_per_min = eff.leak_mi_per_min + max(steady - level, 0.0) / WARMUP_S * 60
        out.extra_mem_mi = level - base - out.leak_mi_per_min * (origin - started) / 60
        return out

    # ------------------------------------------------------------ arrays for the traffic model
    def _spec_numbers(
        self, service: str, revision: int, spec: DeploymentSpec
    ) -> tuple[float, float, np.ndarray]:
        """(worker threads, CPU limit in cores, timeouts of the service's out-edges) of one revision."""
        key = ("numbers", service, revision)
        hit = self._numbers_cache.get(key)
        if hit is None:
            c, i = self.c, self.c.index[service]
            env = dict(spec.env)
            edges = self._out_edges[i]
            timeouts = np.array(
                [_num(env.get(k), c.edge_timeout_ms[e]) for e, k in zip(edges, self._timeout_keys[i])]
            )
            hit = (_num(env.get("WORKER_THREADS"), c.threads[i]), spec.cpu_limit_m / 1000.0, timeouts)
            self._numbers_cache[key] = hit
        return hit

    def arrays(self) -> dict[str, np.ndarray]:
        """Per-service and per-edge arrays, weighted over each service's ready pods.

        Pods are grouped by (revision, runtime injections): the effect of a group is computed once.
        The result depends only on what the key below names (behaviours per service, flag values,
        the ready pods' revisions and injections, current revisions, network policies), so an
        unchanged key returns the arrays computed before (shared: read-only). The object of the last
        call comes back exactly when the values are the same.
        """
        assert self.cluster is not None
        cl = self.cluster
        key = (
            self.flag_values(),
            tuple(self._generation.items()),
            tuple(
                [
                    (p.service, p.revision, tuple(p.injections))
                    for p in cl.pods.values()
                    if p.ready and not p.terminating
                ]
            ),
            tuple([d.revisions[-1].number for d in cl.deployments.values()]),
            tuple([(pol.source, pol.target) for pol in cl.network_policies.values()]),
        )
        cache = self._arrays_cache
        hit = cache.get(key)
        if hit is None:
            if len(cache) >= 64:
                cache.clear()
            out = self._compute_arrays()
            hit = cache[key] = (
                np.concatenate(list(out.values())).tobytes(),
                out,
            )  # same keys and sizes always
        content, out = hit
        if content == self._last_arrays[0]:
            # bit-identical to the last answer: the same object, so that "a new object" means "new
            # values" to identity-keyed callers (the traffic model recomputes on new values only)
            return self._last_arrays[1]
        self._last_arrays = hit
        return out

    def _compute_arrays(self) -> dict[str, np.ndarray]:
        # Python floats per element: the same IEEE operations, in the same order, as numpy scalars
        assert self.cluster is not None
        c, cl = self.c, self.cluster
        S, E = len(c.services), len(c.edge_src)
        own_error, added_ms = [0.0] * S, [0.0] * S
        cpu_mult, extra_cores = [1.0] * S, [0.0] * S
        base_threads = self._base_threads
        threads, cpu_limit = list(base_threads), [0.0] * S
        consumer_delay = [0.0] * S
        in_delay, in_loss = [0.0] * S, [0.0] * S
        edge_timeout = c.edge_timeout_ms.copy()
        edge_fail, edge_mult = [0.0] * E, [1.0] * E
        load_mult = [1.0] * len(c.request_types)
        groups: dict[str, dict[tuple, list]] = {}
        for pod in cl.pods.values():
            if pod.ready and not pod.terminating:
                key = (pod.revision, tuple(sorted(pod.injections)))
                g = groups.setdefault(pod.service, {}).setdefault(key, [pod, 0])
                g[1] += 1
        numbers = self._numbers_cache
        memo = self._service_memo
        for name, dep in cl.deployments.items():
            i = c.index[name]
            members = groups.get(name)
            if members:
                weighted = []
                for p, n in members.values():
                    eff = self.pod_effect(p)
                    num = numbers.get(("numbers", name, p.revision))
                    if num is None:
                        num = self._spec_numbers(name, p.revision, cl.spec_of(p))
                    weighted.append((eff, num, n))
            else:
                weighted = [
                    (
                        self.revision_effect(name, dep.current.number, dep.spec),
                        self._spec_numbers(name, dep.current.number, dep.spec),
                        1,
                    )
                ]
            # a service's values are a function of its groups' effects, spec numbers and pod counts
            # alone: reused while those are the same objects (both are cached and never mutated)
            hit = memo.get(name)
            if hit is None or not _same_groups(hit[0], weighted):
                hit = memo[name] = (weighted, self._service_values(i, weighted))
            (
                own_error[i],
                added_ms[i],
                cpu_mult[i],
                extra_cores[i],
                consumer_delay[i],
                in_delay[i],
                in_loss[i],
                threads[i],
                cpu_limit[i],
                t_acc,
                edge_values,
                load_factors,
            ) = hit[1]
            if t_acc is not None:
                edge_timeout[self._out_edges[i]] = t_acc
            for e, fail, mult in edge_values:
                edge_fail[e], edge_mult[e] = fail, mult
            for r, factor in load_factors:  # in the order of the services, as one running product
                load_mult[r] *= factor
        for pol in cl.network_policies.values():
            e_idx = c.edge_index.get((pol.source, pol.target))
            if e_idx is not None:
                edge_fail[e_idx] = 1.0
        f = np.array
        return {
            "own_error": f(own_error),
            "added_ms": f(added_ms),
            "cpu_mult": f(cpu_mult),
            "extra_cores": f(extra_cores),
            "threads": np.maximum(f(threads), 1.0),
            "cpu_limit": f(cpu_limit),
            "consumer_delay_s": f(consumer_delay),
            "inbound_delay_ms": f(in_delay),
            "inbound_loss": f(in_loss),
            "edge_timeout_ms": np.maximum(edge_timeout, 1.0),
            "edge_fail": f(edge_fail),
            "edge_mult": f(edge_mult),
            "load_mult": f(load_mult),
        }

    def _service_values(self, i: int, weighted: list) -> tuple:
        """One service's entries of the `_compute_arrays` lists (accumulated from their initial values
        over its pod groups), its out-edges' timeouts, (edge, fail, mult) of the out-edges its effects
        touch, and its (request type, factor) products of the load multipliers, in order."""
        own_error = added_ms = extra_cores = consumer_delay = in_delay = in_loss = cpu_limit = 0.0
        cpu_mult = 1.0
        base_threads = self._base_threads[i]
        threads = base_threads
        rt_index = self._rt_index
        total = float(sum(n for _, _, n in weighted))
        edges = self._out_edge_list[i]
        dsts = self._out_dsts[i]
        t_acc = None
        edge_fail: dict[int, float] = {}
        edge_mult: dict[int, float] = {}
        load_factors = []
        for eff, (thr, cpu, timeouts), n in weighted:
            w = n / total  # requests are spread evenly over ready pods
            own_error += eff.own_error * w
            added_ms += eff.added_ms * w
            cpu_mult += (eff.cpu_mult - 1.0) * w
            extra_cores += eff.extra_cores * n
            consumer_delay += eff.consumer_delay_s * w
            in_delay += eff.inbound_delay_ms * w
            in_loss += eff.inbound_loss * w
            threads += (thr - base_threads) * w
            cpu_limit += cpu * w
            if edges:
                # the first term alone (0 + x == x up to the sign of zero, which the clip to 1 ms
                # hides; x * 1.0 == x)
                if t_acc is None:
                    t_acc = timeouts if w == 1.0 else timeouts * w
                else:
                    t_acc = t_acc + timeouts * w
            if eff.edge_fail:
                for e, dst in zip(edges, dsts):
                    edge_fail[e] = edge_fail.get(e, 0.0) + eff.edge_fail.get(dst, 0.0) * w
            if eff.edge_mult:
                for e, dst in zip(edges, dsts):
                    edge_mult[e] = edge_mult.get(e, 1.0) + (eff.edge_mult.get(dst, 1.0) - 1.0) * w
            for rt, m in eff.load_mult.items():
                all_types = range(len(self.c.request_types))
                targets = all_types if rt == "*" else [rt_index[rt]] if rt in rt_index else []
                for r in targets:
                    load_factors.append((r, m**w))
        edge_values = [
            (e, edge_fail.get(e, 0.0), edge_mult.get(e, 1.0))
            for e in edges
            if e in edge_fail or e in edge_mult
        ]
        return (
            own_error,
            added_ms,
            cpu_mult,
            extra_cores,
            consumer_delay,
            in_delay,
            in_loss,
            threads,
            cpu_limit,
            t_acc,
            edge_values,
            load_factors,
        )


def _same_groups(a: list, b: list) -> bool:
    """The same (effect, spec numbers) objects with the same pod counts, group for group."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x[0] is not y[0] or x[1] is not y[1] or x[2] != y[2]:
            return False
    return True


def _num(value: str | None, default: float) -> float:
    try:
        return float(value) if value is not None else float(default)
    except ValueError:
        return float(default)
