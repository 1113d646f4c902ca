"""Models of `catalog/apps/<app>.yaml`: services, call graph, request mix, zones and artifacts.

Artifacts are the things agents read and faults touch. Every artifact has a stable id:

- source file:      ``<service>:<path>@<revision>``        e.g. ``cartservice:src/CartStore.cs@r7``
- config key:       ``<service>:env/<KEY>`` or ``<service>:configmap/<name>/<key>``
- workload:         ``deployment/<service>`` (the running workload itself, e.g. a stressed pod)
- deployment field: ``deployment/<service>:<field>`` with field in `DEPLOYMENT_FIELDS`
- infrastructure:   ``node/<name>``, ``zone/<name>``, ``networkpolicy/<name>``
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Literal

from pydantic import Field, model_validator

from .base import CatalogModel

ServiceKind = Literal["entry", "service", "datastore", "queue"]
Protocol = Literal["http", "grpc", "tcp", "redis", "sql", "kafka", "amqp"]
ConfigValueKind = Literal["address", "timeout_ms", "int", "float", "bool", "string", "duration_s", "flag"]
ProbeType = Literal["http", "grpc", "tcp", "exec"]

DEPLOYMENT_FIELDS = (
    "image",
    "replicas",
    "resources.limits.cpu",
    "resources.limits.memory",
    "readinessProbe",
    "livenessProbe",
    "pod-network",
)


class Resources(CatalogModel):
    cpu_request_m: int = Field(ge=0, description="CPU request in millicores (0 = none set)")
    cpu_limit_m: int = Field(ge=0, description="CPU limit in millicores (0 = no limit)")
    mem_request_mi: int = Field(ge=0)
    mem_limit_mi: int = Field(ge=0, description="memory limit in MiB (0 = no limit)")


class HealthProbe(CatalogModel):
    type: ProbeType
    port: int
    path: str | None = None
    initial_delay_s: int = 0
    period_s: int = 10
    timeout_s: int = 1
    failure_threshold: int = 3


class ConfigEntry(CatalogModel):
    key: str
    value: str
    source: Literal["env", "configmap"] = "env"
    configmap: str | None = Field(None, description="ConfigMap name when source is configmap")
    kind: ConfigValueKind = "string"
    revision: str = Field(pattern=r"^r\d+$")
    description: str = ""

    @model_validator(mode="after")
    def _configmap_named(self) -> ConfigEntry:
        if self.source == "configmap" and not self.configmap:
            raise ValueError("a configmap entry needs `configmap` (the ConfigMap's name)")
        return self


class SourceFile(CatalogModel):
    path: str
    revision: str = Field(pattern=r"^r\d+$")
    excerpt: str = Field(min_length=1, description="short plausible excerpt written for this project")


class SimParams(CatalogModel):
    """Per-service parameters of the simulator's traffic model."""

    service_time_ms: float = Field(gt=0, description="mean own processing time of one request")
    cpu_ms_per_request: float = Field(gt=0, description="CPU time one request costs")
    base_memory_mi: float = Field(gt=0, description="resident memory at idle")
    threads: int = Field(ge=1, description="concurrent requests one replica serves (M/M/c servers)")


class Service(CatalogModel):
    name: str
    language: str
    kind: ServiceKind
    port: int
    replicas: int = Field(ge=0, description="replicas per zone the service runs in")
    zones: list[str] = Field(min_length=1)
    image: str
    deployment_revision: int = Field(ge=1)
    resources: Resources
    readiness_probe: HealthProbe | None = None
    liveness_probe: HealthProbe | None = None
    config: list[ConfigEntry] = []
    sources: list[SourceFile] = []
    sim: SimParams

    @property
    def scheduled_cpu_m(self) -> int:
        """The CPU request the scheduler places one pod by: the manifest's, at least 50m."""
        return max(self.resources.cpu_request_m, 50)

    def artifact_ids(self) -> list[str]:
        ids = [f"{self.name}:{s.path}@{s.revision}" for s in self.sources]
        ids += [config_artifact_id(self.name, c) for c in self.config]
        ids += [f"deployment/{self.name}", *(f"deployment/{self.name}:{f}" for f in DEPLOYMENT_FIELDS)]
        return ids


SERVICE_LABELS = ("service_name", "deployment", "service", "container")
NODE_LABEL = "node"
ZONE_LABEL = "label_topology_kubernetes_io_zone"  # kube_node_labels' name for topology.kubernetes.io/zone


def label_place(labels: Mapping[str, str]) -> tuple[Literal["node", "zone"], str] | None:
    """The node or zone a series' or alert's labels name, as ``(kind, name)``; None for a workload.

    The one reading of place labels: attribution, the recorder, the intervention policy and the
    agents all use it, so a node or zone alert means the same thing to each of them."""
    if labels.get(NODE_LABEL):
        return "node", labels[NODE_LABEL]
    if labels.get(ZONE_LABEL):
        return "zone", labels[ZONE_LABEL]
    return None


"""Labels that name a workload: OpenTelemetry's service name, kube-state-metrics' deployment and
container, a probe's service."""


def pod_owner(pod: str, services: Iterable[str]) -> str | None:
    """The service owning a pod named ``<service>-<replicaset hash>-<suffix>``: the longest
    service name that prefixes it (service names may contain dashes), or None.

    One definition for every place that maps pod labels to services (alert engine, runbook,
    LLM agents, live backend), so they never disagree.
    """
    names = services if isinstance(services, (set, frozenset, dict)) else set(services)
    # the owner ends where one of the pod name's dashes starts: try them from the right (longest first)
    i = pod.rfind("-")
    while i >= 0:
        if pod[:i] in names:
            return pod[:i]
        i = pod.rfind("-", 0, i)
    return None


def config_artifact_id(service: str, entry: ConfigEntry) -> str:
    if entry.source == "configmap":
        return f"{service}:configmap/{entry.configmap}/{entry.key}"
    return f"{service}:env/{entry.key}"


class Edge(CatalogModel):
    source: str
    target: str
    protocol: Protocol
    timeout_ms: int = Field(gt=0, description="client-side timeout of the caller")
    retries: int = Field(0, ge=0)


class RequestType(CatalogModel):
    name: str
    method: str
    endpoint: str
    weight: float = Field(gt=0)
    services: list[str] = Field(min_length=1, description="services one request touches, entry point first")
    calls_per_request: dict[str, float] = Field(
        default_factory=dict,
        description="calls to a service per request when more than one (service -> count)",
    )


class Zone(CatalogModel):
    name: str
    nodes: list[str] = Field(min_length=1)


class FeatureFlag(CatalogModel):
    name: str
    service: str
    variants: dict[str, bool | int | float | str]
    default: str
    on_variant: str
    effect: str
    user_visible: bool = Field(
        description="whether the flag's effect reaches the frontend's user-visible symptoms"
    )


class LoadProfile(CatalogModel):
    users: int = Field(gt=0)
    requests_per_second: float = Field(gt=0, description="mean entry-point rate the load generator produces")


class App(CatalogModel):
    schema_version: int
    app: str
    display_name: str
    namespace: str
    upstream: str
    version: str
    entry_point: str
    zones: list[Zone] = Field(min_length=1)
    cross_zone_latency_ms: float = Field(0.0, ge=0, description="one-way latency between zones")
    failover: bool = False
    load: LoadProfile
    services: list[Service] = Field(min_length=1)
    edges: list[Edge]
    request_types: list[RequestType] = Field(min_length=1)
    feature_flags: list[FeatureFlag] = []

    @cached_property
    def service_names(self) -> list[str]:
        return [s.name for s in self.services]

    @cached_property
    def _services_by_name(self) -> dict[str, Service]:
        return {s.name: s for s in self.services}

    def service(self, name: str) -> Service:
        found = self._services_by_name.get(name)
        if found is None:
            from ..core.errors import UnknownNameError

            raise UnknownNameError(f"service of {self.app}", name, self.service_names)
        return found

    def label_services(
        self, labels: Mapping[str, str], pod_service: Mapping[str, str] | None = None
    ) -> set[str]:
        """The services a series' or alert's labels name: a workload label (`SERVICE_LABELS`) that is
        a service of the app, and the owner of the `pod` label: from the live pod list when the pod is
        in it, else by name (`pod_owner`). The one pod-to-service mapping of the package: alert
        attribution, scoring, intervention scope and every agent use it, so they never disagree."""
        names = self._services_by_name
        out = {labels[k] for k in SERVICE_LABELS if labels.get(k) in names}
        pod = labels.get("pod")
        if pod:
            owner = (pod_service or {}).get(pod) or pod_owner(pod, names)
            if owner:
                out.add(owner)
        return out

    @cached_property
    def nodes(self) -> list[str]:
        return [n for z in self.zones for n in z.nodes]

    @cached_property
    def node_allocatable_m(self) -> int:
        """CPU millicores each node can allocate: enough that every zone keeps room for its pods'
        requests, plus 25%, with any one of its nodes gone (N-1 capacity), at least 1000.

        Why N-1: the paper's venue is a Kind cluster on one 16-vCPU host, where every node
        advertises the host's CPUs, so its scheduler never runs out of room when a node fails.
        Sized tighter (the pods' requests plus 25% spread over all nodes, as before), a change
        had to be frozen around every node fault on Astronomy Shop and Train Ticket, and that
        freeze told faults from harmless changes (issue 32)."""
        requests = sum(s.scheduled_cpu_m * s.replicas for s in self.services)
        per_node = [1.25 * requests / max(len(self.nodes), 1)]
        per_node += [1.25 * self.zone_requests_m[z.name] / max(len(z.nodes) - 1, 1) for z in self.zones]
        return max(int(math.ceil(max(per_node))), 1000)

    @cached_property
    def zone_requests_m(self) -> dict[str, int]:
        """Per zone, the CPU requests (m) of all of its pods."""
        return {
            z.name: sum(s.scheduled_cpu_m * s.replicas for s in self.services if z.name in s.zones)
            for z in self.zones
        }

    @cached_property
    def spare_with_node_lost_m(self) -> dict[str, int]:
        """Per zone, the CPU requests (m) its other nodes could still take beyond all of its pods'
        with one node gone: what changes that add pods may use without risking Pending pods when a
        fault takes a node (negative: the zone has no N-1 capacity)."""
        return {
            z.name: self.node_allocatable_m * (len(z.nodes) - 1) - self.zone_requests_m[z.name]
            for z in self.zones
        }

    @cached_property
    def survives_node_loss(self) -> bool:
        """Whether every zone keeps room for all of its pods' requests with its largest node gone
        (N-1 capacity): only then can a change add pods or drain a node without risking Pending
        pods when a fault takes a node."""
        return all(spare >= 0 for spare in self.spare_with_node_lost_m.values())

    def artifact_ids(self) -> set[str]:
        ids = {a for s in self.services for a in s.artifact_ids()}
        ids |= {f"node/{n}" for n in self.nodes}
        ids |= {f"zone/{z.name}" for z in self.zones}
        ids |= {f"networkpolicy/deny-{e.source}-to-{e.target}" for e in self.edges}
        return ids

    def downstream_closure(self, service: str) -> set[str]:
        """Services whose calls transitively reach `service` (they can show its symptoms)."""
        return self.closure({service}, callers=True)

    def closure(self, services: set[str], callers: bool) -> set[str]:
        """`services` plus everything that transitively calls them (`callers`) or that they call."""
        step: dict[str, set[str]] = {}
        for e in self.edges:
            a, b = (e.target, e.source) if callers else (e.source, e.target)
            step.setdefault(a, set()).add(b)
        seen, stack = set(services), list(services)
        while stack:
            for nxt in step.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        return seen
