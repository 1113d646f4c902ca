"""`ScopedKubeApi`: the only path from the live backend to the Kubernetes API server.

Why one choke point: the benchmark must never touch anything outside its namespace, never read
Secrets, never delete namespaces or nodes. Every request is checked against a fixed allow-list of
(resource, verb) pairs and the benchmark namespace BEFORE the client is called, so a refused
operation never reaches the wire. API failures (403, 404, 409, 422, 5xx, timeouts, connection
errors) become `BackendError`s whose code is the tool error code; nothing else escapes.

Objects travel as plain JSON dicts (camelCase, as the API serves them): responses are read with
`_preload_content=False`, so the backend does not depend on the client's model classes and can
restore an object exactly as it was read. Patch content types are always given explicitly
(recent clients default every PATCH to JSON patch).
"""

from __future__ import annotations

import json
from typing import Any

from ..core.errors import BackendError
from .kube_objects import ZONE_LABEL

SMP = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"

# resource -> (API class, verbs allowed, namespaced). Anything else (secrets, namespaces,
# roles, other kinds) is refused before any request.
ALLOWED: dict[str, tuple[str, frozenset[str], bool]] = {
    "deployments": ("AppsV1Api", frozenset({"get", "list", "patch"}), True),
    "replicasets": ("AppsV1Api", frozenset({"list"}), True),
    "pods": ("CoreV1Api", frozenset({"list"}), True),
    "pods/eviction": ("CoreV1Api", frozenset({"create"}), True),  # drain: honours PodDisruptionBudgets
    "pods/log": ("CoreV1Api", frozenset({"get"}), True),
    "events": ("CoreV1Api", frozenset({"list"}), True),
    "configmaps": ("CoreV1Api", frozenset({"get", "list", "patch"}), True),
    "networkpolicies": ("NetworkingV1Api", frozenset({"get", "list", "create", "delete"}), True),
    "nodes": ("CoreV1Api", frozenset({"get", "list", "patch"}), False),
}

# (resource, verb) -> client method name
_METHODS = {
    ("deployments", "get"): "read_namespaced_deployment",
    ("deployments", "list"): "list_namespaced_deployment",
    ("deployments", "patch"): "patch_namespaced_deployment",
    ("replicasets", "list"): "list_namespaced_replica_set",
    ("pods", "list"): "list_namespaced_pod",
    ("pods/eviction", "create"): "create_namespaced_pod_eviction",
    ("pods/log", "get"): "read_namespaced_pod_log",
    ("events", "list"): "list_namespaced_event",
    ("configmaps", "get"): "read_namespaced_config_map",
    ("configmaps", "list"): "list_namespaced_config_map",
    ("configmaps", "patch"): "patch_namespaced_config_map",
    ("networkpolicies", "get"): "read_namespaced_network_policy",
    ("networkpolicies", "list"): "list_namespaced_network_policy",
    ("networkpolicies", "create"): "create_namespaced_network_policy",
    ("networkpolicies", "delete"): "delete_namespaced_network_policy",
    ("nodes", "get"): "read_node",
    ("nodes", "list"): "list_node",
    ("nodes", "patch"): "patch_node",
}

_STATUS_CODE = {
    400: "invalid_arguments",
    401: "forbidden",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    410: "conflict",
    422: "invalid_arguments",
    429: "unavailable",
}


def scope_refusal(
    resource: str, verb: str, namespace: str | None, benchmark_ns: str, body: Any = None
) -> str | None:
    """Why a request is out of scope (None when it may be sent)."""
    if resource not in ALLOWED:
        return f"{resource} are outside the benchmark's scope (allowed: {sorted(ALLOWED)})"
    _, verbs, namespaced = ALLOWED[resource]
    if verb not in verbs:
        return f"{verb} on {resource} is forbidden (allowed: {sorted(verbs)})"
    if namespaced and namespace != benchmark_ns:
        return f"namespace {namespace!r} is outside the benchmark namespace {benchmark_ns!r}"
    if not namespaced and namespace is not None:
        return f"{resource} are cluster-scoped; a namespace was given"
    if resource == "nodes" and verb == "patch":  # cordon and uncordon only
        spec = body.get("spec") if isinstance(body, dict) else None
        if (
            set(body or {}) != {"spec"}
            or not isinstance(spec, dict)
            or set(spec) != {"unschedulable"}
            or not isinstance(spec["unschedulable"], bool)
        ):
            return "a node may only be cordoned or uncordoned (patch spec.unschedulable)"
    return None


def node_refusal(node: dict, zones: frozenset[str]) -> str | None:
    """Why a node may not be cordoned (None when it may): it must carry a zone label naming one of
    the app's zones, so the control plane and other tenants' nodes are never touched."""
    meta = node.get("metadata") or {}
    zone = (meta.get("labels") or {}).get(ZONE_LABEL)
    if not zone:
        return f"node {meta.get('name')!r} has no {ZONE_LABEL} label: not one of the benchmark's nodes"
    if zone not in zones:
        return f"node {meta.get('name')!r} is in zone {zone!r}, outside the app's zones {sorted(zones)}"
    return None


class ScopedKubeApi:
    """Allow-listed, namespace-bound calls through the official client; JSON in, JSON out."""

    def __init__(self, api_client: Any, namespace: str, timeout_s: float = 10.0, zones: Any = ()):
        from kubernetes import client

        self.namespace = namespace
        self.zones = frozenset(zones)  # the app's zones: the only nodes a patch may touch
        self.timeout_s = timeout_s
        self._apis = {
            name: getattr(client, name)(api_client) for name in ("AppsV1Api", "CoreV1Api", "NetworkingV1Api")
        }

    def call(
        self,
        verb: str,
        resource: str,
        name: str | None = None,
        *,
        namespace: str | None = "",
        body: Any = None,
        patch_type: str | None = None,
        **params: Any,
    ) -> Any:
        """One request. `namespace=""` means the benchmark namespace (for namespaced resources)."""
        if namespace == "":
            namespace = self.namespace if ALLOWED.get(resource, ("", frozenset(), True))[2] else None
        why = scope_refusal(resource, verb, namespace, self.namespace, body)
        if why is not None:
            raise BackendError("forbidden", why)
        if verb == "patch" and patch_type not in (SMP, JSON_PATCH):
            raise BackendError("invalid_arguments", f"unsupported patch type {patch_type!r}")
        if resource == "nodes" and verb == "patch":  # read the node first; patch only the app's own nodes
            why = node_refusal(self.get("nodes", str(name), namespace=None), self.zones)
            if why is not None:
                raise BackendError("forbidden", why)
        api = self._apis[ALLOWED[resource][0]]
        method = getattr(api, _METHODS[(resource, verb)])
        args: list[Any] = [] if name is None else [name]
        if namespace is not None:
            args.append(namespace)
        if body is not None:
            args.append(body)
        kw: dict[str, Any] = dict(params, _preload_content=False, _request_timeout=self.timeout_s)
        if patch_type is not None:
            kw["_content_type"] = patch_type
        try:
            resp = method(*args, **kw)
            raw = resp.data
        except BackendError:
            raise
        except Exception as exc:  # noqa: BLE001 - every client/transport failure becomes a tool error
            raise _translate(exc, verb, resource, name) from None
        if resource == "pods/log":
            return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        try:
            return json.loads(raw) if raw else {}
        except ValueError:
            raise BackendError(
                "unavailable", f"{verb} {resource}: the API server sent a body that is not JSON"
            ) from None

    # ------------------------------------------------------------ conveniences
    def get(self, resource: str, name: str, **kw: Any) -> dict:
        return self.call("get", resource, name, **kw)

    def items(self, resource: str, **kw: Any) -> list[dict]:
        return list(self.call("list", resource, **kw).get("items") or [])

    def patch(self, resource: str, name: str, body: Any, patch_type: str = SMP) -> dict:
        return self.call("patch", resource, name, body=body, patch_type=patch_type)


def _translate(exc: Exception, verb: str, resource: str, name: str | None) -> BackendError:
    what = f"{verb} {resource}{'/' + name if name else ''}"
    status = getattr(exc, "status", None)
    if isinstance(status, int) and status > 0:
        message = ""
        body = getattr(exc, "body", None)
        if body:
            try:
                message = json.loads(body).get("message", "")
            except (ValueError, AttributeError):
                message = str(body)[:300]
        code = _STATUS_CODE.get(status, "unavailable")
        return BackendError(
            code,
            f"{what}: API server answered {status} {getattr(exc, 'reason', '') or ''}"
            f"{': ' + message if message else ''}".strip(),
        )
    text = f"{type(exc).__name__}: {exc}"
    if "timeout" in text.lower() or "timed out" in text.lower():
        return BackendError("unavailable", f"{what}: the API server did not answer in time ({text[:200]})")
    return BackendError("unavailable", f"{what}: the API server is unreachable ({text[:200]})")


__all__ = ["ALLOWED", "JSON_PATCH", "SMP", "ScopedKubeApi", "node_refusal", "scope_refusal"]
