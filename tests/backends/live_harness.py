"""Test harness for the live backend: a stub cluster seeded from the catalog, a manual clock that
advances it, and a kube-state-metrics emulator writing the stub's pod states into a MetricStore
(the alert rules then fire exactly as they would over Prometheus)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
from kube_stub import KubeStub

from sre_marathon_gym.backends.kubernetes import KubernetesBackend
from sre_marathon_gym.catalog.apps import App
from sre_marathon_gym.core.clock import ManualClock
from sre_marathon_gym.metrics.store import MetricStore

START = 1_780_000_000.0


def container_of(app: App, name: str) -> dict:
    s = app.service(name)
    c: dict = {
        "name": "server",
        "image": s.image,
        "env": [{"name": e.key, "value": e.value} for e in s.config if e.source == "env"],
        "resources": {"requests": {"cpu": f"{max(s.resources.cpu_request_m, 10)}m"}},
    }
    limits = {}
    if s.resources.cpu_limit_m:
        limits["cpu"] = f"{s.resources.cpu_limit_m}m"
    if s.resources.mem_limit_mi:
        limits["memory"] = f"{s.resources.mem_limit_mi}Mi"
    if limits:
        c["resources"]["limits"] = limits
    if not c["env"]:
        del c["env"]
    return c


def seed_stub(stub: KubeStub, app: App) -> None:
    for z in app.zones:
        for n in z.nodes:
            stub.add_node(n, z.name)
    cms: dict[str, dict[str, str]] = {}
    for s in app.services:
        for e in s.config:
            if e.source == "configmap" and e.configmap and e.configmap != "flagd-config":
                cms.setdefault(e.configmap, {})[e.key] = e.value
    for name, data in cms.items():
        stub.add_configmap(name, data)
    if app.feature_flags:
        doc = {
            "$schema": "https://flagd.dev/schema/v0/flags.json",
            "flags": {
                f.name: {"state": "ENABLED", "variants": dict(f.variants), "defaultVariant": f.default}
                for f in app.feature_flags
            },
        }
        stub.add_configmap("flagd-config", {"demo.flagd.json": json.dumps(doc, indent=2)})
    stub.add_secret("postgres-credentials", {"password": "c2VjcmV0"})
    stub.add_secret("other-secret", {"token": "eA=="}, ns="kube-system")
    stub.add_configmap("coredns", {"Corefile": "."}, ns="kube-system")
    for s in app.services:
        stub.add_deployment(s.name, [container_of(app, s.name)], replicas=1)


class KubeStateMetrics:
    """Writes `kube_pod_container_status_waiting_reason` for the stub's pods on the 15 s grid."""

    def __init__(self, stub: KubeStub, store: MetricStore):
        self.stub, self.store = stub, store
        self.backend: KubernetesBackend | None = None
        self.next_t = 0.0
        self.live: set[int] = set()

    def advance(self, wall: float) -> None:
        if self.backend is None:
            return
        t_rel = wall - self.backend.t0
        while self.next_t <= t_rel + 1e-9:
            self._scrape(self.next_t)
            self.next_t += 15.0

    def _scrape(self, t: float) -> None:
        labels = []
        with self.stub.lock:
            for (res, ns, name), pod in self.stub.objects.items():
                if res != "pods" or ns != self.stub.namespace:
                    continue
                for cs in pod["status"].get("containerStatuses", []):
                    waiting = cs.get("state", {}).get("waiting")
                    if waiting:
                        labels.append(
                            {
                                "namespace": ns,
                                "pod": name,
                                "container": cs["name"],
                                "reason": waiting["reason"],
                            }
                        )
        ids = self.store.register("kube_pod_container_status_waiting_reason", labels)
        if len(ids):
            self.store.record(t, ids, 1.0)
        gone = np.array(sorted(self.live - {int(i) for i in ids}), dtype=np.intp)
        if len(gone):
            self.store.mark_stale(t, gone)
        self.live = {int(i) for i in ids}


@dataclass
class Live:
    stub: KubeStub
    backend: KubernetesBackend
    clock: ManualClock
    store: MetricStore | None
    ksm: KubeStateMetrics | None
    api_client: object = None

    def close(self) -> None:
        """Close the client's connection pool, then stop the stub."""
        if self.api_client is not None:
            self.api_client.close()  # type: ignore[attr-defined]
        self.stub.stop()


def make_live(app: App, *, metrics: bool = True, timeout_s: float = 5.0) -> Live:
    from kubernetes import client

    stub_clock = {"t": START}
    stub = KubeStub(app.namespace, clock=lambda: stub_clock["t"])
    seed_stub(stub, app)
    host = stub.start()
    cfg = client.Configuration(host=host)
    api_client = client.ApiClient(cfg)
    store = MetricStore(step_s=15) if metrics else None
    ksm = KubeStateMetrics(stub, store) if store is not None else None

    def on_advance(t: float) -> None:
        stub_clock["t"] = t
        if ksm is not None:
            ksm.advance(t)

    clock = ManualClock(START, on_advance=on_advance)
    backend = KubernetesBackend(api_client, app, metrics=store, clock=clock, timeout_s=timeout_s)
    if ksm is not None:
        ksm.backend = backend
    return Live(stub, backend, clock, store, ksm, api_client)
