"""A local Kubernetes API stub: the subset of the REST API `KubernetesBackend` uses.

Why it exists: no API server can run on the test machine, so the live backend is tested against
this server through the real `kubernetes` client. It is faithful where it matters for the
backend's correctness:
- resourceVersion on every object, bumped on every write; a PUT or a patch carrying a stale
  `metadata.resourceVersion` is refused with 409 Conflict (a Status object, like the API server);
- strategic-merge patches (lists merged by key: containers, env, ports, volumes; `$patch: delete`;
  null deletes a key) and RFC 6902 JSON patches (add, replace, remove, test; `~0`/`~1` escapes);
- a deployment controller: a changed pod template creates a ReplicaSet (or re-adopts the one with
  the same template, bumping its revision, as `rollout undo` does) with the revision annotation
  `deployment.kubernetes.io/revision` and the deployment's change-cause; old ReplicaSets keep
  their pods until the new ones are ready (a bad image stalls the rollout);
- a kubelet: images not in the registry stay waiting in ImagePullBackOff with a Failed event;
- the Eviction API (`pods/{name}/eviction`, policy/v1): 429 when a PodDisruptionBudget
  (minAvailable or maxUnavailable over matchLabels) has no disruption left, else the pod goes;
- RBAC like the benchmark's Role: 403 for any namespace but the benchmark's and for Secrets;
  404 for unknown objects and routes; 409 for conflicts and creating an existing object.
Tests can also make the next matching request fail with a status or hang past the client's
timeout, and inspect every request the stub received.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "env": "name",
    "ports": "containerPort",
    "volumes": "name",
    "volumeMounts": "mountPath",
}
KINDS = {  # resource -> (kind, apiVersion, namespaced)
    "deployments": ("Deployment", "apps/v1", True),
    "replicasets": ("ReplicaSet", "apps/v1", True),
    "pods": ("Pod", "v1", True),
    "events": ("Event", "v1", True),
    "configmaps": ("ConfigMap", "v1", True),
    "secrets": ("Secret", "v1", True),
    "networkpolicies": ("NetworkPolicy", "networking.k8s.io/v1", True),
    "nodes": ("Node", "v1", False),
    "namespaces": ("Namespace", "v1", False),
    "poddisruptionbudgets": ("PodDisruptionBudget", "policy/v1", True),
}
REV = "deployment.kubernetes.io/revision"
CAUSE = "kubernetes.io/change-cause"


class StubError(Exception):
    def __init__(self, code: int, reason: str, message: str):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def ts(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------- patches
def strategic_merge(obj: object, patch: object) -> object:
    if not isinstance(patch, dict) or not isinstance(obj, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(obj)
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        elif isinstance(v, list) and k in MERGE_KEYS and isinstance(out.get(k), list):
            out[k] = _merge_list(out[k], v, MERGE_KEYS[k])
        elif isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = strategic_merge(out[k], v)
        elif isinstance(v, list) and k in MERGE_KEYS:
            out[k] = [
                x for x in copy.deepcopy(v) if not (isinstance(x, dict) and x.get("$patch") == "delete")
            ]
        else:
            out[k] = copy.deepcopy(v)
    return out


def _merge_list(current: list, patch: list, key: str) -> list:
    out = copy.deepcopy(current)
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise StubError(400, "BadRequest", f"strategic merge: list item without merge key {key!r}")
        idx = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
        elif idx is None:
            out.append(copy.deepcopy(item))
        else:
            out[idx] = strategic_merge(out[idx], item)
    return out


def _pointer(path: str) -> list[str]:
    if not path.startswith("/"):
        raise StubError(422, "Invalid", f"json patch: bad path {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def json_patch(obj: dict, ops: list) -> dict:
    doc = copy.deepcopy(obj)
    for op in ops:
        parts = _pointer(op["path"])
        parent = doc
        for p in parts[:-1]:
            parent = (
                parent[int(p)]
                if isinstance(parent, list)
                else parent.get(p)
                if isinstance(parent, dict)
                else None
            )
            if parent is None:
                raise StubError(422, "Invalid", f"json patch: {op['path']} has no parent")
        last, kind = parts[-1], op["op"]
        if isinstance(parent, list):
            i = len(parent) if last == "-" else int(last)
            if kind == "add":
                parent.insert(i, copy.deepcopy(op["value"]))
            elif kind == "replace":
                parent[i] = copy.deepcopy(op["value"])
            elif kind == "remove":
                parent.pop(i)
            elif kind == "test" and parent[i] != op["value"]:
                raise StubError(422, "Invalid", f"json patch: test failed at {op['path']}")
            continue
        if kind in ("replace", "remove", "test") and last not in parent:
            raise StubError(422, "Invalid", f"json patch: {op['path']} does not exist")
        if kind in ("add", "replace"):
            parent[last] = copy.deepcopy(op["value"])
        elif kind == "remove":
            del parent[last]
        elif kind == "test":
            if parent[last] != op["value"]:
                raise StubError(422, "Invalid", f"json patch: test failed at {op['path']}")
        else:
            raise StubError(422, "Invalid", f"json patch: unsupported op {kind!r}")
    return doc


# ---------------------------------------------------------------- the cluster
class KubeStub:
    """State and HTTP front of the stub. Start with `start()`, point the client at `host`."""

    def __init__(self, namespace: str, clock: Callable[[], float] | None = None):
        self.namespace = namespace
        self.clock = clock or time.time
        self.objects: dict[tuple[str, str | None, str], dict] = {}
        self.rv = 100
        self.registry: set[str] = set()  # pullable images
        self.requests: list[dict] = []
        self.failures: list[dict] = []  # {method, path_re, status | hang_s, times}
        self.log_lines = ["INFO serving requests", "ERROR upstream connect error"]  # every container's log
        self.lock = threading.RLock()
        self._uid = 0
        self._server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------ setup helpers
    def _meta(self, name: str, ns: str | None, **extra: object) -> dict:
        self._uid += 1
        m = {"name": name, "uid": f"uid-{self._uid:05d}", "creationTimestamp": ts(self.clock()), **extra}
        if ns is not None:
            m["namespace"] = ns
        return m

    def _store(self, res: str, obj: dict) -> dict:
        kind, api, namespaced = KINDS[res]
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", api)
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.objects[
            (res, obj["metadata"].get("namespace") if namespaced else None, obj["metadata"]["name"])
        ] = obj
        return obj

    def add_node(self, name: str, zone: str) -> None:
        self._store(
            "nodes",
            {
                "metadata": self._meta(name, None, labels={"topology.kubernetes.io/zone": zone}),
                "spec": {},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            },
        )

    def add_configmap(self, name: str, data: dict[str, str], ns: str | None = None) -> None:
        self._store("configmaps", {"metadata": self._meta(name, ns or self.namespace), "data": dict(data)})

    def add_secret(self, name: str, data: dict[str, str], ns: str | None = None) -> None:
        self._store("secrets", {"metadata": self._meta(name, ns or self.namespace), "data": dict(data)})

    def add_deployment(
        self,
        name: str,
        containers: list[dict],
        replicas: int = 1,
        ns: str | None = None,
        cause: str = "initial deployment",
    ) -> None:
        ns = ns or self.namespace
        for c in containers:
            self.registry.add(c["image"])
        dep = {
            "metadata": self._meta(name, ns, labels={"app": name}, annotations={CAUSE: cause}),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": name}},
                "revisionHistoryLimit": 10,
                "strategy": {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                },
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": copy.deepcopy(containers)},
                },
            },
            "status": {},
        }
        self._store("deployments", dep)
        self.reconcile()

    # ------------------------------------------------------------ controllers
    def _list(self, res: str, ns: str | None) -> list[dict]:
        return [
            o
            for (r, n, _), o in sorted(self.objects.items(), key=lambda kv: kv[0][2])
            if r == res and n == ns
        ]

    def _event(self, ns: str, kind: str, name: str, reason: str, message: str, type_: str = "Normal") -> None:
        self._uid += 1
        self._store(
            "events",
            {
                "metadata": self._meta(f"{name}.{self._uid:x}", ns),
                "involvedObject": {"kind": kind, "name": name, "namespace": ns},
                "reason": reason,
                "message": message,
                "type": type_,
                "lastTimestamp": ts(self.clock()),
            },
        )

    @staticmethod
    def _hash(template: dict) -> str:
        return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]

    def reconcile(self) -> None:
        """Deployment controller + ReplicaSet controller + scheduler + kubelet, run to a fixed point."""
        for (res, ns, name), dep in list(self.objects.items()):
            if res == "deployments":
                self._reconcile_deployment(ns, name, dep)

    def _owned_rs(self, ns: str, dep_name: str) -> list[dict]:
        return [
            rs
            for rs in self._list("replicasets", ns)
            if any(
                o["kind"] == "Deployment" and o["name"] == dep_name
                for o in rs["metadata"].get("ownerReferences", [])
            )
        ]

    def _reconcile_deployment(self, ns: str, name: str, dep: dict) -> None:
        tpl = dep["spec"]["template"]
        h = self._hash(tpl)
        rss = self._owned_rs(ns, name)
        revs = [int(rs["metadata"]["annotations"].get(REV, 0)) for rs in rss]
        current = next((rs for rs in rss if rs["metadata"]["labels"]["pod-template-hash"] == h), None)
        top = max(revs, default=0)
        if current is None:
            labels = dict(tpl.get("metadata", {}).get("labels", {}), **{"pod-template-hash": h})
            rs_tpl = copy.deepcopy(tpl)
            rs_tpl.setdefault("metadata", {})["labels"] = labels
            ann = {REV: str(top + 1)}
            if CAUSE in dep["metadata"].get("annotations", {}):
                ann[CAUSE] = dep["metadata"]["annotations"][CAUSE]
            current = self._store(
                "replicasets",
                {
                    "metadata": self._meta(
                        f"{name}-{h}",
                        ns,
                        labels=labels,
                        annotations=ann,
                        ownerReferences=[{"kind": "Deployment", "name": name, "apiVersion": "apps/v1"}],
                    ),
                    "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": rs_tpl},
                    "status": {},
                },
            )
            self._event(ns, "Deployment", name, "ScalingReplicaSet", f"Scaled up replica set {name}-{h}")
        elif int(current["metadata"]["annotations"].get(REV, 0)) != top:
            current["metadata"]["annotations"][REV] = str(top + 1)  # re-adopted template: newest revision
            if CAUSE in dep["metadata"].get("annotations", {}):
                current["metadata"]["annotations"][CAUSE] = dep["metadata"]["annotations"][CAUSE]
            self._bump(current)
        want = int(dep["spec"].get("replicas", 1))
        if current["spec"]["replicas"] != want:
            current["spec"]["replicas"] = want
            self._bump(current)
        self._sync_pods(ns, current)
        new_ready = sum(self._pod_ready(p) for p in self._pods_of(ns, current))
        for rs in self._owned_rs(ns, name):
            if rs is current:
                continue
            keep = rs["spec"]["replicas"] if new_ready < want else 0
            if want == 0:
                keep = 0
            if rs["spec"]["replicas"] != keep:
                rs["spec"]["replicas"] = keep
                self._bump(rs)
            self._sync_pods(ns, rs)
        old = sorted(self._owned_rs(ns, name), key=lambda r: int(r["metadata"]["annotations"].get(REV, 0)))
        spare = [r for r in old if r is not current and r["spec"]["replicas"] == 0]
        for r in spare[: max(0, len(spare) - int(dep["spec"].get("revisionHistoryLimit", 10)))]:
            del self.objects[("replicasets", ns, r["metadata"]["name"])]
        pods = [p for rs in self._owned_rs(ns, name) for p in self._pods_of(ns, rs)]
        cur_rev = current["metadata"]["annotations"][REV]
        status = {
            "replicas": len(pods),
            "readyReplicas": sum(self._pod_ready(p) for p in pods),
            "updatedReplicas": len(self._pods_of(ns, current)),
            "observedGeneration": 1,
        }
        status["availableReplicas"] = status["readyReplicas"]
        if dep["metadata"].setdefault("annotations", {}).get(REV) != cur_rev or dep.get("status") != status:
            dep["metadata"]["annotations"][REV] = cur_rev
            dep["status"] = status
            self._bump(dep)

    def _bump(self, obj: dict) -> None:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)

    def _pods_of(self, ns: str, rs: dict) -> list[dict]:
        return [
            p
            for p in self._list("pods", ns)
            if any(
                o["kind"] == "ReplicaSet" and o["name"] == rs["metadata"]["name"]
                for o in p["metadata"].get("ownerReferences", [])
            )
        ]

    @staticmethod
    def _pod_ready(pod: dict) -> bool:
        return any(
            c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions", [])
        )

    def _sync_pods(self, ns: str, rs: dict) -> None:
        pods = self._pods_of(ns, rs)
        want = rs["spec"]["replicas"]
        for p in pods[want:]:
            del self.objects[("pods", ns, p["metadata"]["name"])]
            self._event(ns, "Pod", p["metadata"]["name"], "Killing", "Stopping container")
        for i in range(len(pods), want):
            self._uid += 1
            pname = f"{rs['metadata']['name']}-{hashlib.sha256(str(self._uid).encode()).hexdigest()[:5]}"
            spec = copy.deepcopy(rs["spec"]["template"]["spec"])
            node = self._schedule()
            if node:
                spec["nodeName"] = node
            pod = {
                "metadata": self._meta(
                    pname,
                    ns,
                    labels=dict(rs["spec"]["template"]["metadata"]["labels"]),
                    ownerReferences=[
                        {"kind": "ReplicaSet", "name": rs["metadata"]["name"], "apiVersion": "apps/v1"}
                    ],
                ),
                "spec": spec,
                "status": {},
            }
            self._kubelet(ns, pod)
            self._store("pods", pod)

    def _schedule(self) -> str | None:
        nodes = [n for n in self._list("nodes", None) if not n["spec"].get("unschedulable")]
        if not nodes:
            return None
        load = {n["metadata"]["name"]: 0 for n in nodes}
        for (r, _, _), p in self.objects.items():
            if r == "pods" and p["spec"].get("nodeName") in load:
                load[p["spec"]["nodeName"]] += 1
        return min(load, key=lambda k: (load[k], k))

    def _kubelet(self, ns: str, pod: dict) -> None:
        if not pod["spec"].get("nodeName"):
            pod["status"] = {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False"}]}
            return
        statuses, ready = [], True
        for c in pod["spec"]["containers"]:
            if c["image"] in self.registry:
                statuses.append(
                    {
                        "name": c["name"],
                        "image": c["image"],
                        "ready": True,
                        "restartCount": 0,
                        "state": {"running": {"startedAt": ts(self.clock())}},
                    }
                )
            else:
                ready = False
                statuses.append(
                    {
                        "name": c["name"],
                        "image": c["image"],
                        "ready": False,
                        "restartCount": 0,
                        "state": {
                            "waiting": {
                                "reason": "ImagePullBackOff",
                                "message": f'Back-off pulling image "{c["image"]}"',
                            }
                        },
                    }
                )
                self._event(
                    ns,
                    "Pod",
                    pod["metadata"]["name"],
                    "Failed",
                    f'Failed to pull image "{c["image"]}": manifest unknown',
                    "Warning",
                )
        pod["status"] = {
            "phase": "Running" if ready else "Pending",
            "containerStatuses": statuses,
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        }

    # ------------------------------------------------------------ request handling
    def handle(self, method: str, raw_path: str, headers: dict, body: bytes) -> tuple[int, object]:
        url = urlparse(raw_path)
        query = parse_qs(url.query)
        parsed = json.loads(body) if body else None
        with self.lock:
            self.requests.append(
                {
                    "method": method,
                    "path": url.path,
                    "query": query,
                    "body": parsed,
                    "content_type": headers.get("Content-Type"),
                }
            )
            for f in self.failures:
                if f["times"] > 0 and f["method"] in (method, "*") and re.search(f["path_re"], url.path):
                    f["times"] -= 1
                    if "hang_s" in f:
                        hang = f["hang_s"]
                        break
                    return f["status"], self._status(
                        f["status"], f.get("reason", "Injected"), f.get("message", "injected failure")
                    )
            else:
                hang = 0.0
        if hang:
            time.sleep(hang)
        with self.lock:
            try:
                return self._route(method, url.path, query, headers.get("Content-Type", ""), parsed)
            except StubError as e:
                return e.code, self._status(e.code, e.reason, e.message)

    @staticmethod
    def _status(code: int, reason: str, message: str) -> dict:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "code": code,
        }

    def _route(self, method: str, path: str, query: dict, ctype: str, body: object) -> tuple[int, object]:
        m = re.fullmatch(r"/api/v1/(nodes|namespaces)(?:/([^/]+))?", path)
        if m:
            res, ns, name, sub = m.group(1), None, m.group(2), None
        else:
            m = re.fullmatch(
                r"/(?:api/v1|apis/[^/]+/v1)/namespaces/([^/]+)/([^/]+)(?:/([^/]+))?(?:/([^/]+))?", path
            )
            if not m:
                raise StubError(404, "NotFound", f"the server could not find the requested resource ({path})")
            ns, res, name, sub = m.groups()
        if res not in KINDS:
            raise StubError(404, "NotFound", f"the server could not find the requested resource ({res})")
        who = "system:serviceaccount:" + self.namespace + ":sre-marathon-agent"
        if (
            res in ("secrets", "namespaces")
            or (ns is not None and ns != self.namespace)
            or (res == "nodes" and method in ("DELETE", "POST", "PUT"))
        ):
            raise StubError(
                403,
                "Forbidden",
                f'{res} is forbidden: User "{who}" cannot {method.lower()} resource '
                f'"{res}" in namespace "{ns}"',
            )
        key = (res, ns, name)
        if method == "GET" and name is None:
            kind, api, _ = KINDS[res]
            return 200, {
                "kind": kind + "List",
                "apiVersion": api,
                "metadata": {"resourceVersion": str(self.rv)},
                "items": copy.deepcopy(self._list(res, ns)),
            }
        if method == "POST" and name is None:
            assert isinstance(body, dict)
            bname = body.get("metadata", {}).get("name")
            if (res, ns, bname) in self.objects:
                raise StubError(409, "AlreadyExists", f'{res} "{bname}" already exists')
            obj = copy.deepcopy(body)
            obj["metadata"] = dict(
                self._meta(bname, ns),
                **{k: v for k, v in obj["metadata"].items() if k not in ("uid", "resourceVersion")},
            )
            return 201, copy.deepcopy(self._store(res, obj))
        if key not in self.objects:
            raise StubError(404, "NotFound", f'{res} "{name}" not found')
        obj = self.objects[key]
        if method == "POST" and sub == "eviction" and res == "pods":
            return self._evict(ns, name, obj)
        if sub is not None and not (method == "GET" and sub == "log" and res == "pods"):
            raise StubError(
                404, "NotFound", f"the server could not find the requested resource ({res}/{sub})"
            )
        if method == "GET" and sub == "log" and res == "pods":
            lines = [f"{ts(self.clock())} {line}" for line in self.log_lines]
            return 200, "\n".join(lines) + "\n"
        if method == "GET":
            return 200, copy.deepcopy(obj)
        if method == "DELETE":
            del self.objects[key]
            self.reconcile()
            return 200, self._status(200, "", "deleted") | {"status": "Success"}
        if method in ("PUT", "PATCH"):
            if method == "PUT":
                new = copy.deepcopy(body)
            elif "json-patch" in ctype:
                if not isinstance(body, list):
                    raise StubError(400, "BadRequest", "json patch body must be a list")
                new = json_patch(obj, body)
            elif "strategic-merge-patch" in ctype:
                new = strategic_merge(obj, body)
            else:
                raise StubError(415, "UnsupportedMediaType", f"unsupported patch type {ctype!r}")
            assert isinstance(new, dict)
            rv = new.get("metadata", {}).get("resourceVersion")
            if (rv or method == "PUT") and rv != obj["metadata"]["resourceVersion"]:
                raise StubError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {res} "{name}": the object has '
                    "been modified; please apply your changes to the latest version and try again",
                )
            if new.get("metadata", {}).get("name") != name:
                raise StubError(400, "BadRequest", "metadata.name cannot change")
            self._store(res, new)
            self.reconcile()
            return 200, copy.deepcopy(self.objects[key])
        raise StubError(405, "MethodNotAllowed", f"{method} not allowed")

    def _evict(self, ns: str, name: str, pod: dict) -> tuple[int, object]:
        """policy/v1 Eviction: refused with 429 when a PodDisruptionBudget selecting the pod has no
        disruption left (healthy pods minus minAvailable, or maxUnavailable minus unhealthy ones)."""
        labels = pod["metadata"].get("labels", {})
        if self._pod_ready(pod):
            for pdb in self._list("poddisruptionbudgets", ns):
                sel = pdb["spec"].get("selector", {}).get("matchLabels", {})
                if not sel or any(labels.get(k) != v for k, v in sel.items()):
                    continue
                pods = [
                    p
                    for p in self._list("pods", ns)
                    if all(p["metadata"].get("labels", {}).get(k) == v for k, v in sel.items())
                ]
                healthy = sum(self._pod_ready(p) for p in pods)
                if "minAvailable" in pdb["spec"]:
                    allowed = healthy - int(pdb["spec"]["minAvailable"])
                else:
                    allowed = int(pdb["spec"].get("maxUnavailable", 0)) - (len(pods) - healthy)
                if allowed <= 0:
                    raise StubError(
                        429,
                        "TooManyRequests",
                        "Cannot evict pod as it would violate the pod's disruption budget.",
                    )
        del self.objects[("pods", ns, name)]
        self._event(ns, "Pod", name, "Evicted", "Evicted by the eviction API")
        self.reconcile()
        return 201, self._status(201, "", "evicted") | {"status": "Success"}

    def add_pdb(self, name: str, match_labels: dict[str, str], min_available: int) -> None:
        self._store(
            "poddisruptionbudgets",
            {
                "metadata": self._meta(name, self.namespace),
                "spec": {"minAvailable": min_available, "selector": {"matchLabels": dict(match_labels)}},
            },
        )

    # ------------------------------------------------------------ test controls
    def fail_next(
        self,
        method: str,
        path_re: str,
        status: int,
        times: int = 1,
        reason: str = "Injected",
        message: str = "injected failure",
    ) -> None:
        with self.lock:
            self.failures.append(
                {
                    "method": method,
                    "path_re": path_re,
                    "status": status,
                    "times": times,
                    "reason": reason,
                    "message": message,
                }
            )

    def hang_next(self, method: str, path_re: str, seconds: float, times: int = 1) -> None:
        with self.lock:
            self.failures.append({"method": method, "path_re": path_re, "hang_s": seconds, "times": times})

    def obj(self, res: str, name: str, ns: str | None = "") -> dict:
        with self.lock:
            return copy.deepcopy(self.objects[(res, self.namespace if ns == "" else ns, name)])

    # ------------------------------------------------------------ server
    def start(self) -> str:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _do(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                code, payload = stub.handle(self.command, self.path, dict(self.headers), body)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header(
                        "Content-Type", "text/plain" if isinstance(payload, str) else "application/json"
                    )
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _do

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
