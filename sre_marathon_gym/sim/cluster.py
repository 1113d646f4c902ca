"""Cluster state modelled on Kubernetes objects: Deployments with revision history, pods, nodes.

Pod lifecycles are event-driven (a heap of timed transitions), so a tick costs nothing unless
something changes. Whether a pod can pull its image, crashes, becomes Ready or runs out of
memory is asked of a `PodRuntime` (the effects layer), so this module knows no fault semantics.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import numpy as np

from ..catalog.apps import App
from ..core.errors import SimulatorError
from . import k8s_events as ev

STARTUP_S = 10.0  # container start until the process listens
NODE_MONITOR_GRACE_S = 40.0  # node NotReady -> its pods NotReady
EVICTION_TIMEOUT_S = 300.0  # node NotReady -> pods evicted and recreated elsewhere
BACKOFF_S = (10.0, 20.0, 40.0, 80.0, 160.0, 300.0)
TERMINATION_GRACE_S = 5.0


@dataclass(frozen=True)
class DeploymentSpec:
    image: str
    env: tuple[tuple[str, str], ...]
    code: tuple[tuple[str, str], ...]  # source path -> revision
    cpu_limit_m: int
    mem_limit_mi: int
    replicas: tuple[tuple[str, int], ...]  # zone -> replicas
    readiness_path: str | None
    restarted_at: float = 0.0
    # probe timing, which the simulated kubelet does not act on (tuning it is harmless); out of the
    # repr, which names pods (`short_hash`): adding it renamed nothing
    readiness_timeout_s: int = field(default=1, repr=False)

    def env_value(self, key: str) -> str | None:
        return dict(self.env).get(key)

    def with_env(self, key: str, value: str | None) -> DeploymentSpec:
        env = {k: v for k, v in self.env if k != key}
        if value is not None:
            env[key] = value
        return replace(self, env=tuple(sorted(env.items())))

    def with_code(self, path: str, rev: str) -> DeploymentSpec:
        code = dict(self.code)
        code[path] = rev
        return replace(self, code=tuple(sorted(code.items())))

    def replicas_in(self, zone: str) -> int:
        return dict(self.replicas).get(zone, 0)


@dataclass
class Revision:
    number: int
    spec: DeploymentSpec
    time_s: float
    cause: str
    rs_hash: str


@dataclass
class Deployment:
    name: str
    revisions: list[Revision]

    @property
    def current(self) -> Revision:
        return self.revisions[-1]

    @property
    def spec(self) -> DeploymentSpec:
        return self.current.spec


POD_MUTATIONS = [0]  # bumps on every attribute write of any Pod (but `generation`): "did any pod change?"


@dataclass
class Pod:
    name: str
    service: str
    zone: str
    revision: int
    created_s: float
    node: str | None = None
    phase: str = "Pending"  # Pending | Running | Failed
    ready: bool = False
    started: bool = False
    restarts: int = 0
    waiting_reason: str | None = "ContainerCreating"
    last_terminated_reason: str | None = None
    container_started_s: float = 0.0
    terminating: bool = False
    injections: dict[str, dict] = field(default_factory=dict)
    generation: int = 0  # bumps on every transition; stale events are ignored
    uid: str = ""  # metadata.uid (`k8s_events.pod_uid`), shown by metrics and events alike

    def __setattr__(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)
        if name != "generation":  # event bookkeeping, not pod state
            POD_MUTATIONS[0] += 1
            object.__setattr__(self, "_stamp", POD_MUTATIONS[0])  # this pod's last change

    def __setstate__(self, state: dict) -> None:
        # a copy (pickle, deepcopy) gets a stamp of this process: stamps never repeat within one
        self.__dict__.update(state)
        POD_MUTATIONS[0] += 1
        self.__dict__["_stamp"] = POD_MUTATIONS[0]


@dataclass
class Node:
    name: str
    zone: str
    allocatable_m: int
    ready: bool = True
    unschedulable: bool = False
    not_ready_since: float | None = None


@dataclass(frozen=True)
class NetworkPolicy:
    name: str
    source: str
    target: str


@dataclass(frozen=True)
class ClusterEvent:
    time_s: float
    kind: str  # Normal | Warning
    reason: str
    object: str
    message: str


class PodRuntime(Protocol):
    def bind(self, cluster: ClusterState) -> None: ...
    def image_pullable(self, service: str, spec: DeploymentSpec) -> bool: ...
    def crashes_on_start(self, pod: Pod, spec: DeploymentSpec) -> str | None: ...
    def readiness_ok(self, service: str, spec: DeploymentSpec) -> bool: ...
    def seconds_until_oom(self, pod: Pod, spec: DeploymentSpec, now: float) -> float: ...
    def seconds_until_crash(self, pod: Pod, spec: DeploymentSpec, now: float) -> float: ...


def short_hash(*parts: object, n: int = 10) -> str:
    digest = hashlib.sha256("/".join(map(str, parts)).encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    value = int(digest, 16)
    return "".join(alphabet[(value >> (5 * i)) % len(alphabet)] for i in range(n))


def initial_spec(app: App, name: str) -> DeploymentSpec:
    s = app.service(name)
    return DeploymentSpec(
        image=s.image,
        env=tuple(sorted((c.key, c.value) for c in s.config if c.source == "env")),
        code=tuple(sorted((f.path, f.revision) for f in s.sources)),
        cpu_limit_m=s.resources.cpu_limit_m,
        mem_limit_mi=s.resources.mem_limit_mi,
        replicas=tuple((z, s.replicas) for z in s.zones),
        readiness_path=s.readiness_probe.path if s.readiness_probe else None,
        readiness_timeout_s=s.readiness_probe.timeout_s if s.readiness_probe else 1,
    )


class ClusterState:
    """Deployments, pods, nodes, ConfigMaps, Secrets and NetworkPolicies of one app namespace."""

    def __init__(
        self,
        app: App,
        runtime: PodRuntime,
        service_index: dict[str, int],
        zones: tuple[str, ...],
        uid_seed: object = "",
    ):
        self.app = app
        self.uid_seed = uid_seed  # keys the pods' UUIDs: another run has other uids
        self.namespace = app.namespace
        self.runtime = runtime
        runtime.bind(self)
        self.index = service_index
        self.zones = zones
        self.now = 0.0
        self._heap: list[tuple[float, int, Callable[..., None], tuple]] = []  # (at, order, method, args)
        self._seq = 0
        self._pod_counter = 0
        self.events: list[ClusterEvent] = []  # what `kubectl get events` lists (`k8s_events`)
        self._rs_replicas: dict[tuple[str, int], int] = {}  # (service, revision) -> its ReplicaSet's scale
        self._images: set[tuple[str, str]] = set()  # (node, image) pulled onto the node
        self._pulls: dict[str, float] = {}  # pod -> seconds its image pull is taking
        self._request_cache: dict[str, int] = {}  # service -> CPU request (m) the scheduler counts
        self._usage: tuple[tuple[int, int], dict[str | None, int]] | None = None  # see `_node_usage`
        self.deployments: dict[str, Deployment] = {}
        self.pods: dict[str, Pod] = {}
        self.network_policies: dict[str, NetworkPolicy] = {}
        self.configmaps: dict[str, dict[str, str]] = {}
        self.secrets: dict[str, dict[str, str]] = {}
        self.ingress_zones: dict[str, float] = {z: 1.0 / len(zones) for z in zones}
        self.ready = np.zeros((len(zones), len(service_index)))  # ready pods per zone and service
        self.desired = np.zeros((len(zones), len(service_index)))
        self.dirty = True  # readiness or specs changed since the last recount
        self.version = 0  # bumps on every recount, so consumers know derived arrays are stale
        allocatable = app.node_allocatable_m
        self.nodes = {n: Node(n, z.name, allocatable_m=allocatable) for z in app.zones for n in z.nodes}
        for s in app.services:
            spec = initial_spec(app, s.name)
            rev = Revision(
                s.deployment_revision,
                spec,
                0.0,
                "initial deployment",
                short_hash(s.name, s.deployment_revision),
            )
            self.deployments[s.name] = Deployment(s.name, [rev])
            for c in s.config:
                if c.source == "configmap" and c.configmap:
                    self.configmaps.setdefault(c.configmap, {})[c.key] = c.value
            self.secrets[f"{s.name}-credentials"] = {"password": short_hash("secret", s.name, n=16)}
        for name in self.deployments:
            self.reconcile(name, warm=True)
        self._recount()

    # ---------------------------------------------------------------- time
    def schedule(self, at: float, fn: Callable[..., None], *args: Any) -> None:
        """Call ``fn(*args)`` at simulated time `at`. `fn` is a method of a simulator part, never a
        closure: a copy of the simulator (`copy.deepcopy`) must call its own parts, and a closure
        would keep calling the original's."""
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, fn, args))

    def advance(self, t: float) -> None:
        while self._heap and self._heap[0][0] <= t:
            at, _, fn, args = heapq.heappop(self._heap)
            self.now = max(self.now, at)
            fn(*args)
        self.now = t
        if self.dirty:
            self._recount()

    def event(self, reason: str, obj: str, message: str, kind: str = "Normal") -> None:
        """Record what a Kubernetes component records; only the reasons in `k8s_events.REASONS`."""
        if reason not in ev.REASONS:
            raise SimulatorError(f"no Kubernetes component records a {reason!r} event")
        self.events.append(ClusterEvent(self.now, kind, reason, obj, message))

    # ---------------------------------------------------------------- deployments
    def pods_of(self, service: str) -> list[Pod]:
        return [p for p in self.pods.values() if p.service == service]

    def new_revision(self, service: str, spec: DeploymentSpec, cause: str | None = None) -> Revision:
        """A new ReplicaSet revision; `cause` None keeps the change-cause annotation as it was (the
        new revision repeats the previous cause), as `kubectl set` without ``--record`` does."""
        dep = self.deployments[service]
        number = dep.current.number + 1
        cause = dep.current.cause if cause is None else cause
        rev = Revision(number, spec, self.now, cause, short_hash(service, number, spec))
        dep.revisions.append(rev)
        self.reconcile(service)
        self.dirty = True
        return rev

    def scale(self, service: str, replicas_per_zone: dict[str, int]) -> None:
        """Scaling changes the current revision's replica count in place (no new ReplicaSet, no new
        change-cause): it shows in the spec and in the ReplicaSet's scaling events."""
        dep = self.deployments[service]
        spec = replace(dep.spec, replicas=tuple(sorted(replicas_per_zone.items())))
        dep.revisions[-1] = replace(dep.current, spec=spec)
        self.reconcile(service)
        self.dirty = True

    def reconcile(self, service: str, warm: bool = False) -> None:
        """Deployment controller: rolling update with maxSurge 1 and maxUnavailable 0 per zone."""
        dep = self.deployments[service]
        cur = dep.current
        mark = len(self.events)  # the controller scales the ReplicaSets before their pods come and go
        for zone in self.zones:
            want = cur.spec.replicas_in(zone)
            pods = [
                p for p in self.pods.values() if p.service == service and p.zone == zone and not p.terminating
            ]
            new = [p for p in pods if p.revision == cur.number]
            old = [p for p in pods if p.revision != cur.number]
            if warm:
                for _ in range(want):
                    self._create_pod(service, zone, cur, warm=True)
                continue
            if len(new) > want:  # scale down newest first
                for p in sorted(new, key=lambda p: (p.ready, p.created_s))[: len(new) - want]:
                    self._terminate(p)
                new = new[:want]
            ready_new = sum(p.ready for p in new)
            if want == 0:
                for p in old:
                    self._terminate(p)
                continue
            # old pods go once enough new ones are ready
            surplus = len(old) + ready_new - want
            for p in sorted(old, key=lambda p: (p.ready, p.created_s))[: max(0, min(len(old), surplus))]:
                self._terminate(p)
            old_left = max(0, len(old) - max(0, surplus))
            unready_new = len(new) - ready_new
            if len(new) < want and (unready_new == 0 or old_left == 0):
                need = want - len(new) if old_left == 0 else 1
                for _ in range(need):
                    self._create_pod(service, zone, cur)
        self._scale_replicasets(dep, warm, mark)

    def _scale_replicasets(self, dep: Deployment, warm: bool, at: int) -> None:
        """The deployment controller's ScalingReplicaSet events: each revision's ReplicaSet is scaled to
        its pods that are not terminating (the new one up first, then the old ones down)."""
        counts: dict[int, int] = {}
        for p in self.pods.values():
            if p.service == dep.name and not p.terminating:
                counts[p.revision] = counts.get(p.revision, 0) + 1
        cur = dep.current
        for rev in [cur, *(r for r in dep.revisions if r.number != cur.number)]:
            key = (dep.name, rev.number)
            n, old = counts.get(rev.number, 0), self._rs_replicas.get(key)
            if old == n or (old is None and n == 0):
                continue
            self._rs_replicas[key] = n
            if warm:  # the cluster's state before t = 0: no events
                continue
            rs = f"{dep.name}-{rev.rs_hash}"
            msg = ev.scaled_up_new(rs, n) if old is None else ev.scaled(rs, n, old)
            self.events.insert(
                at, ClusterEvent(self.now, "Normal", "ScalingReplicaSet", f"deployment/{dep.name}", msg)
            )
            at += 1

    # ---------------------------------------------------------------- pods
    def _create_pod(self, service: str, zone: str, rev: Revision, warm: bool = False) -> Pod:
        self._pod_counter += 1
        name = f"{service}-{rev.rs_hash}-{short_hash(service, rev.number, self._pod_counter, n=5)}"
        pod = Pod(name, service, zone, rev.number, created_s=self.now, uid=ev.pod_uid(name, self.uid_seed))
        self.pods[name] = pod
        if not warm:
            self.event("SuccessfulCreate", f"replicaset/{service}-{rev.rs_hash}", ev.created_pod(name))
        self._place(pod, warm)
        if pod.node is not None:
            if warm:
                pod.phase, pod.started, pod.ready, pod.waiting_reason = "Running", True, True, None
                pod.container_started_s = self.now
                self._images.add((pod.node, rev.spec.image))
                self._arm_oom(pod)
            else:
                self._start_container(pod)
        self.dirty = True
        return pod

    def _request_m(self, service: str) -> int:
        m = self._request_cache.get(service)
        if m is None:
            m = self._request_cache[service] = self.app.service(service).scheduled_cpu_m
        return m

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_usage"] = None  # keyed by a per-process counter: recount after a copy
        return state

    def _node_usage(self) -> dict[str | None, int]:
        """CPU requests (m) of the pods on each node, in one pass over the pods, kept while no pod
        changes (every pending pod asks at every tick when a cluster is full). Do not modify it."""
        key = (POD_MUTATIONS[0], len(self.pods))
        if self._usage is None or self._usage[0] != key:
            used: dict[str | None, int] = {}
            for p in self.pods.values():
                if not p.terminating:
                    used[p.node] = used.get(p.node, 0) + self._request_m(p.service)
            self._usage = (key, used)
        return self._usage[1]

    def _place(self, pod: Pod, warm: bool = False) -> None:
        """Scheduler: the Ready, schedulable node of the pod's zone with the most free CPU requests."""
        best, best_free = None, -1
        used = self._node_usage()
        for node in self.nodes.values():
            if node.zone != pod.zone or not node.ready or node.unschedulable:
                continue
            free = node.allocatable_m - used.get(node.name, 0)
            if free >= self._request_m(pod.service) and free > best_free:
                best, best_free = node.name, free
        if best is None:
            if pod.phase != "Pending" or pod.waiting_reason is not None:  # a write marks the pod changed
                pod.phase, pod.waiting_reason = "Pending", None
            reasons = [
                ev.filter_reason(node.zone == pod.zone, node.ready, node.unschedulable)
                for node in self.nodes.values()
            ]
            msg = ev.no_node_available(reasons, [ev.preemption_reason(r) for r in reasons])
            self.event("FailedScheduling", f"pod/{pod.name}", msg, "Warning")
            return
        pod.node = best
        if not warm:
            self.event("Scheduled", f"pod/{pod.name}", ev.assigned(self.namespace, pod.name, best))

    def room_without(self, name: str) -> bool:
        """Whether the other Ready, schedulable nodes of each zone can take every pod on node `name`
        (their CPU requests, greedily, largest first): maintenance drains only such a node."""
        used = self._node_usage()
        free = {
            n.name: n.allocatable_m - used.get(n.name, 0)
            for n in self.nodes.values()
            if n.name != name and n.ready and not n.unschedulable
        }
        moving = sorted(
            (p for p in self.pods.values() if p.node == name and not p.terminating),
            key=lambda p: (-self._request_m(p.service), p.name),
        )
        for pod in moving:
            fits = [
                n
                for n, f in free.items()
                if self.nodes[n].zone == pod.zone and f >= self._request_m(pod.service)
            ]
            if not fits:
                return False
            best = max(fits, key=lambda n: (free[n], n))
            free[best] -= self._request_m(pod.service)
        return True

    def retry_pending(self) -> None:
        for pod in sorted(self.pods.values(), key=lambda p: p.created_s):
            if pod.node is None and not pod.terminating:
                self._place(pod)
                if pod.node is not None:
                    self._start_container(pod)

    def spec_of(self, pod: Pod) -> DeploymentSpec:
        dep = self.deployments[pod.service]
        if dep.current.number == pod.revision:
            return dep.current.spec
        for rev in reversed(dep.revisions):
            if rev.number == pod.revision:
                return rev.spec
        return dep.spec

    def _start_container(self, pod: Pod) -> None:
        spec = self.spec_of(pod)
        pod.generation += 1
        gen = pod.generation
        pod.phase = "Pending" if not pod.started else "Running"
        obj, image = f"pod/{pod.name}", spec.image
        if not self.runtime.image_pullable(pod.service, spec):
            pod.waiting_reason = "ImagePullBackOff"
            self.event("Pulling", obj, ev.pulling(image))
            self.event("Failed", obj, ev.pull_failed(image), "Warning")
            self.event("Failed", obj, ev.ERR_IMAGE_PULL, "Warning")
            self.event("BackOff", obj, ev.back_off_pulling(image))
            self.event("Failed", obj, ev.ERR_IMAGE_PULL_BACKOFF, "Warning")
            return
        if (pod.node or "", image) not in self._images:
            self._pulls[pod.name] = ev.pull_seconds(pod.name)
            self.event("Pulling", obj, ev.pulling(image))
        pod.waiting_reason = "ContainerCreating" if not pod.started else pod.waiting_reason
        self.schedule(self.now + STARTUP_S, self._container_up, pod, gen)

    def _container_up(self, pod: Pod, gen: int) -> None:
        if pod.generation != gen or pod.terminating or pod.name not in self.pods:
            return
        spec = self.spec_of(pod)
        crash = self.runtime.crashes_on_start(pod, spec)
        pod.phase, pod.started, pod.container_started_s = "Running", True, self.now
        obj, pulled = f"pod/{pod.name}", self._pulls.pop(pod.name, None)
        if pulled is None:
            self.event("Pulled", obj, ev.already_present(spec.image))
        else:
            self._images.add((pod.node or "", spec.image))
            self.event("Pulled", obj, ev.pulled(spec.image, pulled))
        self.event("Created", obj, ev.created_container(pod.service))
        self.event("Started", obj, ev.started_container(pod.service))
        if crash:
            self._container_died(pod, crash)
            return
        pod.waiting_reason = None
        if self.runtime.readiness_ok(pod.service, spec):
            probe = self.app.service(pod.service).readiness_probe
            delay = max(probe.initial_delay_s if probe else 0, 2)
            delay = min(delay, 30)
            pod.generation += 1
            g2 = pod.generation
            self.schedule(self.now + delay, self._mark_ready, pod, g2)
        else:
            self.event("Unhealthy", obj, self._readiness_failure(pod), "Warning")
        self._arm_oom(pod)

    def _readiness_failure(self, pod: Pod) -> str:
        probe = self.app.service(pod.service).readiness_probe
        wrong_path = probe is not None and self.spec_of(pod).readiness_path != probe.path
        return ev.readiness_failed(
            probe.type if probe else None, probe.port if probe else None, pod.name, wrong_path
        )

    def _mark_ready(self, pod: Pod, gen: int) -> None:
        if pod.generation != gen or pod.terminating or pod.name not in self.pods:
            return
        node = self.nodes.get(pod.node or "")
        if node is not None and not node.ready:
            return
        pod.ready = True
        self.dirty = True
        self.reconcile(pod.service)

    def _arm_oom(self, pod: Pod) -> None:
        """Schedule the container's death: the OOM kill when its working set reaches the memory limit,
        or an error exit when a crashing code path is hit, whichever comes first."""
        spec = self.spec_of(pod)
        wait, reason = min(
            (self.runtime.seconds_until_oom(pod, spec, self.now), "OOMKilled"),
            (self.runtime.seconds_until_crash(pod, spec, self.now), "Error"),
        )
        if math.isfinite(wait):
            gen = pod.generation
            self.schedule(self.now + max(wait, 1.0), self._oom, pod, gen, reason)

    def _oom(self, pod: Pod, gen: int, reason: str = "OOMKilled") -> None:
        if pod.generation != gen or pod.terminating or pod.name not in self.pods:
            return
        self._container_died(pod, reason)

    def _container_died(self, pod: Pod, reason: str) -> None:
        pod.restarts += 1
        pod.ready = False
        pod.last_terminated_reason = reason
        pod.waiting_reason = "CrashLoopBackOff"
        pod.generation += 1
        self.dirty = True
        self.event(
            "BackOff",
            f"pod/{pod.name}",
            ev.back_off_restarting(pod.service, pod.name, self.namespace, pod.uid),
            "Warning",
        )
        backoff = BACKOFF_S[min(pod.restarts - 1, len(BACKOFF_S) - 1)]
        gen = pod.generation
        self.schedule(self.now + backoff, self._restart_after_backoff, pod, gen)
        self.reconcile(pod.service)

    def _restart_after_backoff(self, pod: Pod, gen: int) -> None:
        if pod.generation != gen or pod.terminating or pod.name not in self.pods:
            return
        self._start_container(pod)

    def recheck_pods(self, service: str) -> None:
        """After a runtime change: re-arm OOM timers and re-run readiness (probes are periodic)."""
        probe = self.app.service(service).readiness_probe
        for pod in self.pods_of(service):
            if pod.started and not pod.terminating and pod.waiting_reason is None:
                pod.generation += 1
                g = pod.generation
                ok = self.runtime.readiness_ok(pod.service, self.spec_of(pod))
                if not pod.ready and ok and pod.node:
                    self.schedule(self.now + 2, self._mark_ready, pod, g)
                elif pod.ready and not ok and probe is not None:
                    self.schedule(
                        self.now + probe.period_s * probe.failure_threshold,
                        self._mark_unready,
                        pod,
                        g,
                    )
                self._arm_oom(pod)

    def _mark_unready(self, pod: Pod, gen: int) -> None:
        if pod.generation != gen or pod.terminating or pod.name not in self.pods:
            return
        pod.ready = False
        self.event("Unhealthy", f"pod/{pod.name}", self._readiness_failure(pod), "Warning")
        self.dirty = True

    def _terminate(self, pod: Pod) -> None:
        """The ReplicaSet deletes the pod; its kubelet stops the container."""
        if pod.terminating:
            return
        pod.terminating = True
        pod.ready = False
        pod.generation += 1
        self.dirty = True
        rs = pod.name.rsplit("-", 1)[0]  # <service>-<pod-template-hash>-<suffix>
        self.event("SuccessfulDelete", f"replicaset/{rs}", ev.deleted_pod(pod.name))
        if pod.node is not None:  # a pod never scheduled has no kubelet to stop it
            self.event("Killing", f"pod/{pod.name}", ev.stopping_container(pod.service))
        self.schedule(self.now + TERMINATION_GRACE_S, self._remove, pod)

    def _remove(self, pod: Pod) -> None:
        self._pulls.pop(pod.name, None)
        if self.pods.pop(pod.name, None) is not None:
            self.dirty = True
            self.retry_pending()

    # ---------------------------------------------------------------- nodes
    def set_node_ready(self, name: str, ready: bool) -> None:
        node = self.nodes[name]
        if node.ready == ready:
            return
        node.ready = ready
        if not ready:
            node.not_ready_since = self.now
            self.schedule(self.now + NODE_MONITOR_GRACE_S, self._node_pods_unready, name)
            self.schedule(self.now + EVICTION_TIMEOUT_S, self._evict_node, name)
        else:
            node.not_ready_since = None
            self.event("NodeReady", f"node/{name}", ev.node_status(name, "NodeReady"))
            for pod in list(self.pods.values()):
                if pod.node == name and not pod.terminating:
                    self._start_container(pod)
            self.retry_pending()
        self.dirty = True

    def _node_pods_unready(self, name: str) -> None:
        """The node controller, once the kubelet has missed the grace period: the node goes NotReady
        and so do its pods."""
        if self.nodes[name].ready:
            return
        self.event("NodeNotReady", f"node/{name}", ev.node_status(name, "NodeNotReady"))
        for pod in self.pods.values():
            if pod.node == name:
                if pod.ready:
                    self.event("NodeNotReady", f"pod/{pod.name}", ev.NODE_NOT_READY_POD, "Warning")
                pod.ready = False
                pod.generation += 1
        self.dirty = True

    def _evict_node(self, name: str) -> None:
        node = self.nodes[name]
        if (
            node.ready
            or node.not_ready_since is None
            or self.now - node.not_ready_since < EVICTION_TIMEOUT_S - 1e-6
        ):
            return
        for pod in [p for p in self.pods.values() if p.node == name]:
            self.pods.pop(pod.name)
            self._pulls.pop(pod.name, None)
            self.event(
                "TaintManagerEviction", f"pod/{pod.name}", ev.marking_for_deletion(self.namespace, pod.name)
            )
        for svc in self.deployments:
            self.reconcile(svc)
        self.dirty = True

    def cordon(self, name: str, unschedulable: bool = True) -> None:
        if self.nodes[name].unschedulable != unschedulable:  # the kubelet reports a change
            status = "NodeNotSchedulable" if unschedulable else "NodeSchedulable"
            self.event(status, f"node/{name}", ev.node_status(name, status))
        self.nodes[name].unschedulable = unschedulable
        if not unschedulable:
            self.retry_pending()

    def drain(self, name: str) -> None:
        """`kubectl drain`: cordon, then the eviction API deletes each pod (its kubelet stops it)."""
        self.cordon(name)
        for pod in [p for p in self.pods.values() if p.node == name and not p.terminating]:
            self.pods.pop(pod.name)
            self._pulls.pop(pod.name, None)
            self.event("Killing", f"pod/{pod.name}", ev.stopping_container(pod.service))
        for svc in self.deployments:
            self.reconcile(svc)
        self.dirty = True

    # ---------------------------------------------------------------- views
    def _recount(self) -> None:
        # counted in Python ints and written in place (consumers hold these arrays)
        Z, S = self.ready.shape
        zi = {z: i * S for i, z in enumerate(self.zones)}
        index = self.index
        ready = [0] * (Z * S)
        for pod in self.pods.values():
            if pod.ready and not pod.terminating:
                ready[zi[pod.zone] + index[pod.service]] += 1
        desired = [0] * (Z * S)
        for name, dep in self.deployments.items():
            for zone, n in dep.spec.replicas:
                desired[zi[zone] + index[name]] = n
        self.ready[:] = np.array(ready, dtype=np.float64).reshape(Z, S)
        self.desired[:] = np.array(desired, dtype=np.float64).reshape(Z, S)
        self.dirty = False
        self.version += 1

    def pod_status(self, pod: Pod) -> str:
        """What `kubectl get pods` shows in the STATUS column."""
        if pod.terminating:
            return "Terminating"
        if pod.node is None:
            return "Pending"
        node = self.nodes[pod.node]
        if not node.ready and self.now - (node.not_ready_since or self.now) >= NODE_MONITOR_GRACE_S:
            return "Unknown"
        if pod.waiting_reason:
            return pod.waiting_reason
        return "Running" if pod.ready else "NotReady"
