"""`KubernetesBackend`: a live cluster's benchmark namespace behind the `Backend` protocol.

Why it looks like this: the agent must get the same tools, with the same row shapes, as on the
simulator, while every request stays inside the benchmark namespace (`ScopedKubeApi` refuses
anything else before sending it) and every API failure becomes a structured tool error.

What the live backend can and cannot do:
- reads: deployments with rollout history from their ReplicaSets (`deployment.kubernetes.io/revision`),
  pods (phase, waiting reason, restarts), events, container logs, ConfigMaps, NetworkPolicies,
  nodes; metrics from an optional metric source with the `MetricStore` read interface
  (`PrometheusMetrics`); traces and source code are not served (structured `unavailable`).
- writes: rollback to a ReplicaSet revision, scale, rollout restart, env and resource limits,
  flagd feature flags (the flagd ConfigMap), cordon/uncordon of the app's zoned nodes, drain and
  zone failover through the Eviction API (PodDisruptionBudgets honoured) limited to the
  namespace's pods, NetworkPolicy deletion. Source patches need a build: refused.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..catalog.apps import App
from ..catalog.faults import Fault
from ..core import logquery
from ..core.clock import Clock, WallClock
from ..core.errors import BackendError, ConfigurationError, did_you_mean
from . import kube_objects as ko
from .base import INJECTABLE_LIVE
from .kube_api import JSON_PATCH, ScopedKubeApi
from .kube_faults import LiveFaults
from .kube_objects import FLAGD_CONFIGMAP, flagd_flags

LOG_TAIL_LINES = 2000


class KubernetesBackend:
    """The benchmark namespace of a live cluster, read and changed through the official client.

    `api_client` is a `kubernetes.client.ApiClient` (e.g. from `config.new_client_from_config()`);
    `metrics` any object with the `MetricStore` read interface, or None; `prometheus_url` builds
    one (`PrometheusMetrics`, whose simulated t=0 follows the episode start); `clock` supplies
    wall time (seconds since the episode started are measured from construction or `start()`).
    """

    def __init__(
        self,
        api_client: Any,
        app: App,
        *,
        namespace: str | None = None,
        metrics: Any = None,
        prometheus_url: str | None = None,
        clock: Clock | None = None,
        timeout_s: float = 10.0,
    ):
        self.app = app
        self.namespace = namespace or app.namespace
        self.api = ScopedKubeApi(api_client, self.namespace, timeout_s, zones=(z.name for z in app.zones))
        self.clock: Clock = clock or WallClock()
        self.t0 = self.clock.time()
        if prometheus_url is not None:
            if metrics is not None:
                raise ConfigurationError("give either metrics or prometheus_url, not both")
            from ..prometheus import PrometheusMetrics

            metrics = PrometheusMetrics(prometheus_url, origin_s=self.t0)
        self._metrics = metrics
        self.faults = LiveFaults(self)

    @classmethod
    def from_kubeconfig(
        cls, app: App, context: str | None = None, *, config_file: str | None = None, **kw: Any
    ) -> KubernetesBackend:
        """Build from a kubeconfig (`config_file`, else `$KUBECONFIG`, else `~/.kube/config`).

        A kubeconfig that exists but cannot be used (unreadable, malformed, unknown `context`)
        raises `ConfigurationError` naming the file and the problem; it never silently falls back
        to other credentials. Only when no kubeconfig exists and no `context` was asked for does
        it use the in-cluster service account (running inside a pod).
        """
        from kubernetes import client as k8s
        from kubernetes import config

        source = config_file or os.environ.get("KUBECONFIG") or "~/.kube/config"
        paths = [os.path.expanduser(p) for p in source.split(os.pathsep) if p]
        if any(os.path.exists(p) for p in paths):
            try:
                contexts = [
                    c.get("name", "") for c in config.list_kube_config_contexts(config_file=source)[0]
                ]
            except Exception as exc:  # the client raises ConfigException, yaml and OS errors
                raise ConfigurationError(f"kubeconfig {source}: cannot be read: {exc}") from exc
            if context is not None and context not in contexts:
                raise ConfigurationError(
                    f"kubeconfig {source}: no context {context!r}{did_you_mean(context, contexts)}"
                )
            try:
                client = config.new_client_from_config(config_file=source, context=context)
            except Exception as exc:
                raise ConfigurationError(
                    f"kubeconfig {source}{f' (context {context!r})' if context else ''}: {exc}"
                ) from exc
            return cls(client, app, **kw)
        if context is not None:
            raise ConfigurationError(
                f"context {context!r} was asked for, but there is no kubeconfig at {source}"
            )
        try:
            config.load_incluster_config()
        except Exception as exc:
            raise ConfigurationError(
                f"no kubeconfig at {source} and not running in a pod with a service account ({exc})"
            ) from exc
        return cls(k8s.ApiClient(), app, **kw)

    # ------------------------------------------------------------ time and telemetry
    def start(self) -> None:
        """Start the episode clock now (a Prometheus source's t=0 moves with it)."""
        self.t0 = self.clock.time()
        if hasattr(self._metrics, "origin_s"):
            self._metrics.origin_s = self.t0

    def now(self) -> float:
        return round(self.clock.time() - self.t0, 3)

    def rel(self, ts: str | None) -> float | None:
        t = ko.epoch(ts)
        return None if t is None else round(t - self.t0, 3)

    @property
    def metrics(self) -> Any:
        return self._metrics

    # ------------------------------------------------------------ object access
    def deployment(self, service: str) -> dict:
        return self.api.get("deployments", service)

    def _deployments(self) -> list[dict]:
        return self.api.items("deployments")

    def _pods(self) -> list[dict]:
        return self.api.items("pods")

    def replica_sets(self, service: str) -> list[dict]:
        """The deployment's ReplicaSets, oldest revision first."""
        rss = [rs for rs in self.api.items("replicasets") if ko.owned_by(rs, "Deployment", service)]
        return sorted(rss, key=ko.revision_of)

    def _zones(self, strict: bool = False) -> dict[str, str]:
        """Node -> zone label; empty when nodes cannot be read (no ClusterRole for nodes) unless `strict`."""
        try:
            return {
                ko.meta(n).get("name", ""): (ko.meta(n).get("labels") or {}).get(ko.ZONE_LABEL, "")
                for n in self.api.items("nodes")
            }
        except BackendError:
            if strict:
                raise
            return {}

    # ------------------------------------------------------------ reads
    def service_names(self) -> list[str]:
        return sorted(ko.meta(d).get("name", "") for d in self._deployments())

    def pod_services(self) -> dict[str, str]:
        services = self.service_names()
        out = {}
        for p in self._pods():
            owner = ko.pod_owner(p, services)
            if owner:
                out[ko.meta(p)["name"]] = owner
        return out

    def services_on_node(self, node: str) -> set[str]:
        services = self.service_names()
        return {
            s
            for p in self._pods()
            if (p.get("spec") or {}).get("nodeName") == node
            for s in [ko.pod_owner(p, services)]
            if s
        }

    def policy_source(self, name: str) -> str | None:
        for pol in self.api.items("networkpolicies"):
            if ko.meta(pol).get("name") == name:
                return self._policy_view(pol)["pod_selector"]
        return None

    def _policy_view(self, pol: dict) -> dict:
        ann = ko.annotations(pol)
        labels = ((pol.get("spec") or {}).get("podSelector") or {}).get("matchLabels") or {}
        src = (
            ann.get("sre-marathon/source")
            or labels.get("app")
            or labels.get("app.kubernetes.io/name")
            or ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
            or "(all pods)"
        )
        return {
            "name": ko.meta(pol).get("name"),
            "pod_selector": src,
            "denies_egress_to": ann.get("sre-marathon/denies-egress-to"),
        }

    def k8s_state(self, resource: str, service: str | None, limit: int) -> list[dict]:
        if resource == "pods":
            return self._pod_rows(service)
        if resource == "deployments":
            return self._deployment_rows(service)
        if resource == "events":
            return self._event_rows(service)[-limit:]
        if resource == "nodes":
            return [
                {
                    "name": ko.meta(n).get("name"),
                    "zone": (ko.meta(n).get("labels") or {}).get(ko.ZONE_LABEL),
                    "status": "Ready"
                    if any(
                        c.get("type") == "Ready" and c.get("status") == "True"
                        for c in (n.get("status") or {}).get("conditions") or []
                    )
                    else "NotReady",
                    "schedulable": not (n.get("spec") or {}).get("unschedulable", False),
                }
                for n in self.api.items("nodes")
            ]
        if resource == "networkpolicies":
            return [self._policy_view(p) for p in self.api.items("networkpolicies")]
        if resource == "configmaps":
            return [
                {"name": ko.meta(c).get("name"), "data": dict(c.get("data") or {})}
                for c in self.api.items("configmaps")
            ]
        raise BackendError("forbidden", f"resource {resource!r} is not served by the live backend")

    def _pod_rows(self, service: str | None) -> list[dict]:
        services, zones = self.service_names(), self._zones()
        rs_rev = {ko.meta(rs).get("name"): ko.revision_of(rs) for rs in self.api.items("replicasets")}
        rows = []
        for p in sorted(self._pods(), key=lambda p: ko.meta(p).get("name", "")):
            owner = ko.pod_owner(p, services)
            if service is not None and owner != service:
                continue
            st = p.get("status") or {}
            cstat = st.get("containerStatuses") or []
            node = (p.get("spec") or {}).get("nodeName")
            rs = next(
                (
                    o.get("name")
                    for o in ko.meta(p).get("ownerReferences") or []
                    if o.get("kind") == "ReplicaSet"
                ),
                None,
            )
            last = next(
                (
                    ((c.get("lastState") or {}).get("terminated") or {}).get("reason")
                    for c in cstat
                    if (c.get("lastState") or {}).get("terminated")
                ),
                None,
            )
            created = self.rel(ko.meta(p).get("creationTimestamp"))
            rows.append(
                {
                    "name": ko.meta(p).get("name"),
                    "status": ko.pod_status(p),
                    "ready": f"{sum(bool(c.get('ready')) for c in cstat)}/{max(len(cstat), 1)}",
                    "restarts": sum(int(c.get("restartCount") or 0) for c in cstat),
                    "node": node,
                    "zone": zones.get(node or "") or None,
                    "revision": rs_rev.get(rs),
                    "age_s": None if created is None else round(self.now() - created),
                    "last_terminated_reason": last,
                }
            )
        return rows

    def _deployment_rows(self, service: str | None) -> list[dict]:
        rss = self.api.items("replicasets")
        rows = []
        for d in sorted(self._deployments(), key=lambda d: ko.meta(d).get("name", "")):
            name = ko.meta(d).get("name", "")
            if service is not None and name != service:
                continue
            st, spec = d.get("status") or {}, d.get("spec") or {}
            own = sorted((rs for rs in rss if ko.owned_by(rs, "Deployment", name)), key=ko.revision_of)
            rows.append(
                {
                    "name": name,
                    "ready": f"{st.get('readyReplicas') or 0}/{spec.get('replicas', 1)}",
                    "up_to_date": st.get("updatedReplicas") or 0,
                    "revision": ko.revision_of(d),
                    "image": ko.main_container(d, name).get("image"),
                    "history": [
                        {
                            "revision": ko.revision_of(rs),
                            "time_s": self.rel(ko.meta(rs).get("creationTimestamp")),
                            "cause": ko.annotations(rs).get(ko.CHANGE_CAUSE, ""),
                        }
                        for rs in own[-10:]
                    ],
                }
            )
        return rows

    def _event_rows(self, service: str | None) -> list[dict]:
        rows = []
        for e in self.api.items("events"):
            obj = e.get("involvedObject") or e.get("regarding") or {}
            ref = f"{str(obj.get('kind', '')).lower()}/{obj.get('name', '')}"
            if service is not None and service not in ref:
                continue
            ts = (
                e.get("lastTimestamp")
                or e.get("eventTime")
                or e.get("firstTimestamp")
                or ko.meta(e).get("creationTimestamp")
            )
            rows.append(
                {
                    "time_s": self.rel(ts),
                    "kind": e.get("type", "Normal"),
                    "reason": e.get("reason", ""),
                    "object": ref,
                    "message": e.get("message", ""),
                }
            )
        return sorted(rows, key=lambda r: (r["time_s"] is None, r["time_s"] or 0.0))

    def deploy_history(self, service: str | None, since_s: float | None) -> list[dict]:
        rows = []
        for rs in self.api.items("replicasets"):
            owner = next(
                (
                    o.get("name")
                    for o in ko.meta(rs).get("ownerReferences") or []
                    if o.get("kind") == "Deployment"
                ),
                None,
            )
            if owner is None or (service is not None and owner != service):
                continue
            t = self.rel(ko.meta(rs).get("creationTimestamp"))
            if since_s is not None and (t is None or t < since_s):
                continue
            tpl = (rs.get("spec") or {}).get("template") or {}
            image = next((c.get("image") for c in (tpl.get("spec") or {}).get("containers") or []), None)
            rows.append(
                {
                    "id": ko.meta(rs).get("name"),
                    "service": owner,
                    "kind": "manifest",
                    "message": ko.annotations(rs).get(ko.CHANGE_CAUSE, ""),
                    "diff": f"image: {image}",
                    "author": "",
                    "submitted_s": t,
                    "stages": {"rollout-started": t},
                    "revision": ko.revision_of(rs),
                    "status": "deployed",
                }
            )
        return sorted(rows, key=lambda r: (r["submitted_s"] is None, r["submitted_s"] or 0.0, r["revision"]))

    def service_config(self, service: str) -> dict:
        d = self.deployment(service)
        c = ko.main_container(d, service)
        env = {
            e["name"]: (
                e["value"] if "value" in e else f"<from {min(e['valueFrom'])}>" if e.get("valueFrom") else ""
            )
            for e in c.get("env") or []
            if "name" in e
        }
        limits = (c.get("resources") or {}).get("limits") or {}
        cms = (
            sorted(
                {
                    e.configmap
                    for e in self._catalog_service(service).config
                    if e.source == "configmap" and e.configmap
                }
            )
            if service in self.app.service_names
            else []
        )
        probe = c.get("readinessProbe") or {}
        return {
            "service": service,
            "revision": ko.revision_of(d),
            "image": c.get("image"),
            "env": env,
            "configmaps": {cm: self._configmap_view(cm) for cm in cms},
            "resources": {
                "limits": {"cpu": ko.quantity(limits.get("cpu")), "memory": ko.quantity(limits.get("memory"))}
            },
            "replicas": {"total": int((d.get("spec") or {}).get("replicas", 1))},
            "readiness_probe_path": (probe.get("httpGet") or {}).get("path"),
            "readiness_probe_timeout_s": int(probe.get("timeoutSeconds", 1)),  # Kubernetes' default
        }

    def _catalog_service(self, service: str) -> Any:
        return self.app.service(service)

    def _configmap_view(self, name: str) -> dict:
        try:
            cm = self.api.get("configmaps", name)
        except BackendError as exc:
            if exc.code == "not_found":
                return {}
            raise
        if name == FLAGD_CONFIGMAP:
            flags = flagd_flags(cm)
            if flags is not None:
                return {k: str(v.get("defaultVariant")) for k, v in sorted(flags[1].items())}
        return dict(cm.get("data") or {})

    def source(self, service: str, path: str | None) -> dict:
        raise BackendError(
            "unavailable", "source code is not served by the live backend (it has no build pipeline)"
        )

    def search_logs(
        self,
        service: str | None,
        start_s: float,
        end_s: float,
        query: str | None,
        level: str | None,
        limit: int,
    ) -> list[dict]:
        """Container logs, filtered with the simulator's query semantics (`sre_marathon_gym.core.logquery`):
        `level` is a minimum severity; query terms match the message, attributes or pod name."""
        need = logquery.min_rank(level)
        inc, exc = logquery.parse_query(query)
        services = self.service_names()
        pods = [(p, ko.pod_owner(p, services)) for p in self._pods()]
        since = max(1, int(self.now() - start_s) + 1)
        out: list[dict] = []
        for pod, owner in sorted(pods, key=lambda x: ko.meta(x[0]).get("name", "")):
            if owner is None or (service is not None and owner != service):
                continue
            container = ko.main_container({"spec": {"template": {"spec": pod.get("spec") or {}}}}, owner).get(
                "name"
            )
            text = self.api.call(
                "get",
                "pods/log",
                ko.meta(pod)["name"],
                container=container,
                since_seconds=since,
                tail_lines=LOG_TAIL_LINES,
                timestamps=True,
            )
            for line in text.splitlines():
                ts, _, msg = line.partition(" ")  # `timestamps=True`: RFC 3339 time, a space, the line
                t = self.rel(ts)
                if t is None or not start_s <= t <= end_s:
                    continue
                rec = log_record(msg, t, owner, ko.meta(pod)["name"])
                if logquery.rank(rec["level"]) < need or not logquery.matches(
                    inc, exc, rec["message"], rec["attributes"], rec["pod"]
                ):
                    continue
                out.append(rec)
        out.sort(key=lambda r: (r["timestamp"], r["service"], r["pod"]))
        return out[max(0, len(out) - limit) :] if limit else []

    def traces(
        self,
        trace_id: str | None,
        service: str | None,
        start_s: float,
        end_s: float,
        min_duration_ms: float | None,
        status: str | None,
        limit: int,
    ) -> list[dict]:
        raise BackendError("unavailable", "no trace backend is configured for the live backend")

    # ------------------------------------------------------------ interventions
    def rollback(self, service: str, revision: int | None) -> dict:
        d = self.deployment(service)
        current = ko.revision_of(d)
        rss = self.replica_sets(service)
        known = [ko.revision_of(rs) for rs in rss]
        if revision is None:
            older = [rs for rs in rss if ko.revision_of(rs) < current]
            if not older:
                raise BackendError(
                    "not_found", f"deployment/{service} has no previous revision to roll back to"
                )
            target = older[-1]
        else:
            found = [rs for rs in rss if ko.revision_of(rs) == revision]
            if not found:
                raise BackendError(
                    "not_found", f"deployment/{service} has no revision {revision}; known: {known}"
                )
            target = found[0]
        to = ko.revision_of(target)
        ops = ko.precondition(d) + [
            {"op": "replace", "path": "/spec/template", "value": ko.template_without_hash(target)}
        ]
        ops += ko.annotation_op(d, ko.CHANGE_CAUSE, f"rollout undo to revision {to}")
        self.api.patch("deployments", service, ops, JSON_PATCH)
        return {"service": service, "rolled_back_to": to, "from_revision": current}

    def restart(self, service: str) -> dict:
        when = ko.rfc3339(self.clock.time())
        self.api.patch(
            "deployments",
            service,
            {
                "metadata": {"annotations": {ko.CHANGE_CAUSE: "kubectl rollout restart"}},
                "spec": {"template": {"metadata": {"annotations": {ko.RESTARTED_AT: when}}}},
            },
        )
        return {"service": service, "restarted_at": when}

    def scale(self, service: str, replicas: int) -> dict:
        if not isinstance(replicas, int) or not 0 <= replicas <= 20:
            raise BackendError("invalid_arguments", f"replicas must be an integer in 0..20, got {replicas!r}")
        self.api.patch("deployments", service, {"spec": {"replicas": replicas}})
        return {"service": service, "replicas": replicas}

    def set_config(self, service: str, key: str, value: str) -> dict:
        flags = {f.name: f for f in self.app.feature_flags}
        if service == "flagd" and key in flags:
            if value not in flags[key].variants:
                raise BackendError(
                    "invalid_arguments",
                    f"flag {key} has no variant {value!r}; variants: {sorted(flags[key].variants)}",
                )
            self.set_flag(key, value)
            return {"service": service, "key": key, "value": value}
        d = self.deployment(service)
        c = ko.main_container(d, service)
        env = {e.get("name") for e in c.get("env") or []}
        catalog_keys = (
            {e.key for e in self.app.service(service).config} if service in self.app.service_names else set()
        )
        if key not in env and key not in catalog_keys:
            raise BackendError(
                "not_found", f"{service} has no config key {key!r}{did_you_mean(key, env | catalog_keys)}"
            )
        self.set_env(d, service, key, str(value), f"config: set {key}")
        return {"service": service, "key": key, "value": str(value)}

    def patch_container(self, d: dict, service: str, fields: dict, cause: str | None) -> dict:
        """The one way the backend changes the main container: a strategic-merge patch of `fields`
        (image, env items, resources...), pinned to the resourceVersion of `d` as read and recording
        `cause` as the change-cause (None leaves the annotation as it was, as `kubectl set` without
        ``--record`` does). Returns the object as the server stored it."""
        name = ko.main_container(d, service).get("name")
        meta: dict[str, Any] = {"resourceVersion": ko.meta(d).get("resourceVersion")}
        if cause is not None:
            meta["annotations"] = {ko.CHANGE_CAUSE: cause}
        return self.api.patch(
            "deployments",
            service,
            {"metadata": meta, "spec": {"template": {"spec": {"containers": [{"name": name, **fields}]}}}},
        )

    def set_env(self, d: dict, service: str, key: str, value: str | None, cause: str) -> dict:
        """Set (or, for None, remove) one env var of the main container, pinned to the read version."""
        item: dict[str, Any] = (
            {"name": key, "value": value} if value is not None else {"name": key, "$patch": "delete"}
        )
        return self.patch_container(d, service, {"env": [item]}, cause)

    def set_resources(
        self, service: str, cpu_limit_m: int | None = None, mem_limit_mi: int | None = None
    ) -> dict:
        limits = {}
        if cpu_limit_m is not None:
            limits["cpu"] = f"{cpu_limit_m}m"
        if mem_limit_mi is not None:
            limits["memory"] = f"{mem_limit_mi}Mi"
        self.patch_container(
            self.deployment(service), service, {"resources": {"limits": limits}}, "kubectl set resources"
        )
        return {"service": service, "limits": limits}

    def set_flag(self, flag: str, variant: str) -> dict:
        """Set a flagd flag's defaultVariant in the flagd ConfigMap; returns the ConfigMap as read before."""
        cm = self.api.get("configmaps", FLAGD_CONFIGMAP)
        found = flagd_flags(cm)
        if found is None or flag not in found[1]:
            raise BackendError("not_found", f"configmap/{FLAGD_CONFIGMAP} defines no flag {flag!r}")
        key, flags, doc = found
        flags[flag]["defaultVariant"] = variant
        self.api.patch(
            "configmaps",
            FLAGD_CONFIGMAP,
            {
                "metadata": {"resourceVersion": ko.meta(cm).get("resourceVersion")},
                "data": {key: json.dumps(doc, indent=2)},
            },
        )
        return cm

    def patch_source(self, service: str, path: str, revision: str | None) -> dict:
        raise BackendError(
            "unavailable", "source patches need a build pipeline, which the live backend does not drive"
        )

    def failover(self, zone: str) -> dict:
        """Move the namespace's pods off every other zone: cordon those nodes and evict our pods there."""
        if not self.app.failover:
            raise BackendError(
                "invalid_arguments", f"{self.app.display_name} runs in one zone; failover is not available"
            )
        zones = self._zones(strict=True)
        ours = {z.name for z in self.app.zones}
        if zone not in ours or zone not in set(zones.values()):
            raise BackendError(
                "not_found", f"unknown zone {zone!r}{did_you_mean(zone, ours & set(zones.values()))}"
            )
        # only the app's other zones: never unlabeled nodes (the control plane) or other tenants' zones
        others = sorted(n for n, z in zones.items() if z in ours and z != zone)
        for n in others:
            self.cordon(n)
        evicted, blocked = self._evict(set(others))
        return {
            "zone": zone,
            "cordoned": others,
            "evicted_pods": evicted,
            "blocked_by_disruption_budget": blocked,
        }

    def cordon(self, node: str, unschedulable: bool = True) -> dict:
        self.api.patch("nodes", node, {"spec": {"unschedulable": unschedulable}})
        return {"node": node, "unschedulable": unschedulable}

    def uncordon(self, node: str) -> dict:
        return self.cordon(node, False)

    def drain(self, node: str) -> dict:
        """Cordon, then evict the benchmark namespace's pods from the node (never other namespaces')."""
        self.cordon(node)
        evicted, blocked = self._evict({node})
        return {
            "node": node,
            "drained": not blocked,
            "evicted_pods": evicted,
            "blocked_by_disruption_budget": blocked,
        }

    def _evict(self, nodes: set[str]) -> tuple[list[str], list[str]]:
        """Evict the namespace's pods on `nodes` through the Eviction API (policy/v1), like
        `kubectl drain`: the API server refuses (429) an eviction that would break a
        PodDisruptionBudget; such pods stay and are reported, the others are evicted."""
        names = sorted(
            ko.meta(p)["name"] for p in self._pods() if (p.get("spec") or {}).get("nodeName") in nodes
        )
        evicted, blocked = [], []
        for name in names:
            body = {
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": name, "namespace": self.namespace},
            }
            try:
                self.api.call("create", "pods/eviction", name, body=body)
                evicted.append(name)
            except BackendError as exc:
                if exc.code == "not_found":  # gone already
                    continue
                if "429" in str(exc):  # a disruption budget forbids it now
                    blocked.append(name)
                    continue
                raise
        return evicted, blocked

    def delete_network_policy(self, name: str) -> dict:
        self.api.call("delete", "networkpolicies", name)
        return {"deleted": name}

    # ------------------------------------------------------------ faults
    def supports(self, fault: Fault) -> bool:
        return fault.app == self.app.app and fault.mechanism in INJECTABLE_LIVE

    def inject(self, fault: Fault) -> Any:
        return self.faults.inject(fault)

    def revert(self, handle: Any) -> str:
        """Undo a fault; "reverted", or "already repaired" when the fault no longer owned the object."""
        return self.faults.revert(handle)


def log_record(line: str, t: float, service: str, pod: str) -> dict:
    """One container log line as a `search_logs` row, the same shape as the simulator's `LogRecord`.

    A JSON line (structured logging) gives its `message`/`msg`, its `level`/`severity` and every
    other field as attributes; a plain line gives its first level word (INFO otherwise)."""
    message, attrs, head = line, {}, line[:200].upper()
    try:
        doc = json.loads(line)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        message = str(doc.get("message") or doc.get("msg") or line)
        head = str(doc.get("level") or doc.get("severity") or doc.get("severity_text") or "").upper()
        attrs = {
            k: v
            for k, v in doc.items()
            if k not in ("message", "msg", "level", "severity", "time", "timestamp", "ts")
        }
    level = "INFO"
    for lv, words in (
        ("ERROR", ("ERROR", "FATAL", "PANIC", "SEVERE", "CRITICAL")),
        ("WARN", ("WARN",)),
        ("DEBUG", ("DEBUG", "TRACE")),
    ):
        if any(w in head for w in words):
            level = lv
            break
    trace = attrs.get("trace_id") or attrs.get("traceId")
    return {
        "timestamp": t,
        "service": service,
        "pod": pod,
        "level": level,
        "message": message,
        "trace_id": str(trace) if trace else None,
        "attributes": attrs,
    }


__all__ = ["FLAGD_CONFIGMAP", "KubernetesBackend", "flagd_flags", "log_record"]
