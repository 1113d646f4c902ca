"""Small pure helpers over Kubernetes objects as JSON dicts (no API calls).

Why separate: the backend, the fault injector and the tests all need the same readings of an
object (its main container, its revision, who owns a pod, a timestamp in seconds), and keeping
them pure makes them easy to test and impossible to turn into an unscoped request.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

from ..catalog.apps import pod_owner as owner_by_name

REVISION = "deployment.kubernetes.io/revision"
CHANGE_CAUSE = "kubernetes.io/change-cause"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
ZONE_LABEL = "topology.kubernetes.io/zone"
POD_TEMPLATE_HASH = "pod-template-hash"


def epoch(ts: str | None) -> float | None:
    """RFC 3339 timestamp (`2026-11-30T20:00:00Z`) -> Unix seconds."""
    if not ts:
        return None
    try:  # the API server writes UTC with a `Z` (events may add fractional seconds: dropped)
        return datetime.strptime(ts[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def rfc3339(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def annotations(obj: dict) -> dict:
    return meta(obj).get("annotations") or {}


def revision_of(obj: dict) -> int:
    try:
        return int(annotations(obj).get(REVISION, 0))
    except ValueError:
        return 0


def containers(dep: dict) -> list[dict]:
    return ((((dep.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")) or []


def main_container(dep: dict, service: str) -> dict:
    """The container named like the service, else the first one (Online Boutique names it `server`)."""
    cs = containers(dep)
    if not cs:
        return {}
    return next((c for c in cs if c.get("name") == service), cs[0])


def owned_by(obj: dict, kind: str, name: str) -> bool:
    return any(
        o.get("kind") == kind and o.get("name") == name for o in meta(obj).get("ownerReferences") or []
    )


def pod_owner(pod: dict, services: list[str]) -> str | None:
    """The deployment a pod belongs to: its ReplicaSet owner minus the hash, else the longest name prefix."""
    for o in meta(pod).get("ownerReferences") or []:
        if o.get("kind") == "ReplicaSet":
            dep = o.get("name", "").rsplit("-", 1)[0]
            if dep in services:
                return dep
    name = meta(pod).get("name", "")
    return owner_by_name(name, services)


def pod_status(pod: dict) -> str:
    """What `kubectl get pods` shows in the STATUS column."""
    if meta(pod).get("deletionTimestamp"):
        return "Terminating"
    status = pod.get("status") or {}
    for cs in status.get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting")
        if waiting and waiting.get("reason"):
            return str(waiting["reason"])
    phase = status.get("phase") or "Pending"
    if phase != "Running":
        return phase
    return "Running" if pod_ready(pod) else "NotReady"


def pod_ready(pod: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def template_without_hash(rs: dict) -> dict:
    """A ReplicaSet's pod template as a Deployment would carry it (what `rollout undo` copies)."""
    tpl = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
    labels = (tpl.get("metadata") or {}).get("labels")
    if labels:
        labels.pop(POD_TEMPLATE_HASH, None)
    return tpl


def json_pointer(*parts: str) -> str:
    """RFC 6901 pointer from path segments (`~` -> `~0`, `/` -> `~1`)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)


def precondition(obj: dict) -> list[dict]:
    """A JSON-patch op pinning the object's resourceVersion: the server answers 409 if it changed."""
    return [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": meta(obj).get("resourceVersion", "")}
    ]


def annotation_op(obj: dict, key: str, value: str | None) -> list[dict]:
    """JSON-patch ops setting (or removing, for None) one metadata annotation."""
    ann = annotations(obj)
    if value is None:
        return [{"op": "remove", "path": json_pointer("metadata", "annotations", key)}] if key in ann else []
    if "annotations" not in meta(obj):
        return [{"op": "add", "path": "/metadata/annotations", "value": {key: value}}]
    return [{"op": "add", "path": json_pointer("metadata", "annotations", key), "value": value}]


def quantity(v: Any) -> str | None:
    return None if v in (None, "") else str(v)


FLAGD_CONFIGMAP = "flagd-config"  # the ConfigMap holding flagd's JSON flag file


def flagd_flags(cm: dict) -> tuple[str, dict, dict] | None:
    """(data key, flags dict, whole document) of the flagd ConfigMap's JSON flag file, if it has one."""
    for key, text in sorted((cm.get("data") or {}).items()):
        try:
            doc = json.loads(text)
        except (ValueError, TypeError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("flags"), dict):
            return key, doc["flags"], doc
    return None


__all__ = [
    "CHANGE_CAUSE",
    "FLAGD_CONFIGMAP",
    "RESTARTED_AT",
    "REVISION",
    "ZONE_LABEL",
    "annotation_op",
    "annotations",
    "containers",
    "epoch",
    "flagd_flags",
    "json_pointer",
    "main_container",
    "meta",
    "owned_by",
    "pod_owner",
    "pod_ready",
    "pod_status",
    "precondition",
    "revision_of",
    "rfc3339",
    "template_without_hash",
]
