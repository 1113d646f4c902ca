"""Fault injection on a live cluster for the mechanisms that need no code build.

Why snapshots and narrow reverts: a fault must be undone exactly, and only the fault. Each
injection reads the object first and keeps that copy; revert puts back ONLY the value the fault
changed (one container's image, one limit, one env var, the replica count, one flag's
`defaultVariant`, and the change-cause while it is still the fault's), or deletes the
NetworkPolicy it created. Every revert is a JSON patch guarded by `test` ops on the faulted
value, so two faults on one deployment and the agent's own changes (a scale) compose: reverting
one leaves the others in place. Like the simulator, revert only touches what the fault still
owns: if the agent already repaired the artifact (the faulted value is gone, or the server
refuses the `test`), the orchestrator leaves the object alone and says "already repaired".
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..catalog.artifacts import parse_artifact
from ..catalog.faults import Fault
from ..core.errors import BackendError
from ..sim.mechanics import bad_config_value
from . import kube_objects as ko
from .base import ALREADY_REPAIRED
from .kube_api import JSON_PATCH

if TYPE_CHECKING:
    from ..catalog.apps import App
    from .kube_api import ScopedKubeApi


class LiveCluster(Protocol):
    """What the injector uses of `KubernetesBackend`: its scoped API and its one way of changing
    each kind of object (so an injected change is written exactly as an agent's fix is)."""

    api: ScopedKubeApi
    app: App
    namespace: str

    def deployment(self, service: str) -> dict: ...

    def patch_container(self, d: dict, service: str, fields: dict, cause: str | None) -> dict: ...

    def set_env(self, d: dict, service: str, key: str, value: str | None, cause: str) -> dict: ...

    def set_flag(self, flag: str, variant: str) -> dict: ...

    def supports(self, fault: Fault) -> bool: ...


@dataclass
class LiveFault:
    """What an injection changed and the object as it was before (the revert handle)."""

    fault_id: str
    mechanism: str
    kind: str  # deployment | configmap | networkpolicy
    name: str
    before: dict = field(default_factory=dict)  # the object as read before the fault
    marker: dict = field(default_factory=dict)  # what the fault wrote, to tell if it still owns the object
    reverted: bool = False  # True only once the revert went through (or there was nothing left to undo)
    outcome: str = ""  # REVERTED | ALREADY_REPAIRED, once reverted


REVERTED = "reverted"


class LiveFaults:
    def __init__(self, backend: LiveCluster):
        self.b = backend

    # ------------------------------------------------------------ inject
    def inject(self, fault: Fault) -> LiveFault:
        if not self.b.supports(fault):
            raise BackendError(
                "unavailable",
                f"mechanism {fault.mechanism} cannot be injected on a live cluster "
                "without a build; only image, limits, env, replicas, NetworkPolicy and "
                "flag faults can",
            )
        m = fault.mechanism
        if m == "feature_flag":
            return self._flag(fault)
        if m == "network_partition":
            return self._partition(fault)
        svc = fault.target
        if m.startswith("config_"):
            ref = parse_artifact(fault.artifact)
            svc = ref.service or svc
        d = self.b.deployment(svc)
        h = LiveFault(fault.id, m, "deployment", svc, before=copy.deepcopy(d))
        c = ko.main_container(d, svc)
        p = fault.params
        cname = c.get("name")
        cause: str | None  # direct changes record none (`kubectl set` without --record): see mechanics
        if m == "bad_image_tag":
            cause = None
            stored = self.b.patch_container(d, svc, {"image": str(p["image"])}, cause)
            h.marker = {
                "container": cname,
                "image": ko.main_container(stored, svc).get("image", str(p["image"])),
            }
        elif m in ("cpu_limit_cut", "memory_limit_cut"):
            res, val = (
                ("cpu", f"{int(p['cpu_limit_m'])}m")
                if m == "cpu_limit_cut"
                else ("memory", f"{int(p['mem_limit_mi'])}Mi")
            )
            cause = None
            stored = self.b.patch_container(d, svc, {"resources": {"limits": {res: val}}}, cause)
            # the server may normalise the quantity (1000m -> 1): remember what it stored
            val = ((ko.main_container(stored, svc).get("resources") or {}).get("limits") or {}).get(res, val)
            h.marker = {"container": cname, "limit": res, "value": val}
        elif m == "scale_to_zero":
            cause = None
            h.marker = {"replicas": 0}
            self.b.api.patch(
                "deployments",
                svc,
                {"metadata": {"resourceVersion": ko.meta(d).get("resourceVersion")}, "spec": {"replicas": 0}},
            )
        else:  # config_*: the env var of the main container
            ref = parse_artifact(fault.artifact)
            old = next((e.get("value") for e in c.get("env") or [] if e.get("name") == ref.key), None)
            new = bad_config_value(m, ref.key, old, dict(p), fault.change.diff if fault.change else "")
            h.marker = {"container": cname, "env": ref.key, "value": new, "present": old is not None}
            if new is None and old is None:
                raise BackendError("not_found", f"{svc} has no env var {ref.key} to remove")
            cause = fault.change.message if fault.change else f"config: set {ref.key}"
            self.b.set_env(d, svc, ref.key, new, cause)
        h.marker["cause"] = cause
        return h

    def _flag(self, fault: Fault) -> LiveFault:
        flag = next((f for f in self.b.app.feature_flags if f.name == fault.params["flag"]), None)
        if flag is None:
            raise BackendError("not_found", f"{self.b.app.app} has no feature flag {fault.params['flag']!r}")
        before = self.b.set_flag(flag.name, flag.on_variant)
        return LiveFault(
            fault.id,
            fault.mechanism,
            "configmap",
            ko.FLAGD_CONFIGMAP,
            before=copy.deepcopy(before),
            marker={"flag": flag.name, "variant": flag.on_variant},
        )

    def _partition(self, fault: Fault) -> LiveFault:
        src, dst = fault.target, str(fault.params["downstream"])
        name = f"deny-{src}-to-{dst}"
        sel = ((self.b.deployment(src).get("spec") or {}).get("selector") or {}).get("matchLabels") or {
            "app": src
        }
        dsel = ((self.b.deployment(dst).get("spec") or {}).get("selector") or {}).get("matchLabels") or {
            "app": dst
        }
        # allow egress to every pod except the downstream's, and to cluster DNS
        not_dst = [{"key": k, "operator": "NotIn", "values": [v]} for k, v in sorted(dsel.items())]
        body = {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": name,
                "namespace": self.b.namespace,
                "annotations": {"sre-marathon/source": src, "sre-marathon/denies-egress-to": dst},
            },
            "spec": {
                "podSelector": {"matchLabels": dict(sel)},
                "policyTypes": ["Egress"],
                "egress": [
                    {"to": [{"podSelector": {"matchExpressions": not_dst}}]},
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                }
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    },
                ],
            },
        }
        created = self.b.api.call("create", "networkpolicies", body=body)
        return LiveFault(
            fault.id, fault.mechanism, "networkpolicy", name, marker={"uid": ko.meta(created).get("uid")}
        )

    # ------------------------------------------------------------ revert
    def revert(self, h: LiveFault) -> str:
        """Undo `h` if the fault still owns the object; returns REVERTED or ALREADY_REPAIRED.

        The handle is marked reverted only after the write succeeded (or nothing was left to
        undo): a failed revert raises `BackendError` and leaves the handle live, so the caller
        can retry it.
        """
        if h.reverted:
            return h.outcome
        if h.kind == "networkpolicy":
            try:
                self.b.api.call("delete", "networkpolicies", h.name)
                outcome = REVERTED
            except BackendError as exc:
                if exc.code != "not_found":
                    raise
                outcome = ALREADY_REPAIRED  # already deleted by the agent: nothing left to undo
        elif h.kind == "configmap":
            outcome = self._revert_flag(h)
        else:
            outcome = self._revert_deployment(h)
        h.reverted, h.outcome = True, outcome
        return outcome

    def _revert_deployment(self, h: LiveFault) -> str:
        """Put back only the value the fault changed, guarded by a JSON-patch `test` of the faulted
        value: another fault's change or the agent's (a scale, another env var) survives, and an
        object the agent repaired or changed again since is left alone (the server refuses the
        whole patch with 422 when a `test` fails; then the object is read again)."""
        for attempt in range(3):
            d = self.b.deployment(h.name)
            ops = self._revert_ops(h, d)
            if ops is None:
                return ALREADY_REPAIRED
            try:
                self.b.api.patch("deployments", h.name, ops, JSON_PATCH)
                return REVERTED
            except (
                BackendError
            ) as exc:  # 409: a pinned write raced; 422: a `test` failed (changed in between)
                if exc.code not in ("conflict", "invalid_arguments") or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _revert_ops(self, h: LiveFault, d: dict) -> list[dict] | None:
        """The guarded JSON patch undoing `h` on `d` as read now; None when the fault no longer owns it."""
        mk = h.marker
        if "replicas" in mk:
            if (d.get("spec") or {}).get("replicas") != 0:
                return None
            before = int((h.before.get("spec") or {}).get("replicas", 1))
            return [
                {"op": "test", "path": "/spec/replicas", "value": 0},
                {"op": "replace", "path": "/spec/replicas", "value": before},
            ]
        cs = ko.containers(d)
        i = next((k for k, c in enumerate(cs) if c.get("name") == mk["container"]), None)
        if i is None:
            return None
        c, base = cs[i], f"/spec/template/spec/containers/{i}"
        old_c = next((x for x in ko.containers(h.before) if x.get("name") == mk["container"]), {})
        ops: list[dict] = [{"op": "test", "path": f"{base}/name", "value": mk["container"]}]
        if "image" in mk:
            if c.get("image") != mk["image"]:
                return None
            ops += [
                {"op": "test", "path": f"{base}/image", "value": mk["image"]},
                {"op": "replace", "path": f"{base}/image", "value": old_c.get("image")},
            ]
        elif "limit" in mk:
            res = mk["limit"]
            if ((c.get("resources") or {}).get("limits") or {}).get(res) != mk["value"]:
                return None
            path = f"{base}/resources/limits/{res}"
            old = ((old_c.get("resources") or {}).get("limits") or {}).get(res)
            ops += [
                {"op": "test", "path": path, "value": mk["value"]},
                {"op": "remove", "path": path}
                if old is None
                else {"op": "replace", "path": path, "value": old},
            ]
        elif "env" in mk:
            env = c.get("env") or []
            j = next((k for k, e in enumerate(env) if e.get("name") == mk["env"]), None)
            old_env = old_c.get("env") or []
            old_item = next((e for e in old_env if e.get("name") == mk["env"]), None)
            if mk["value"] is not None:  # the fault set a value: put the old item back (or drop the var)
                if j is None or env[j].get("value") != mk["value"]:
                    return None
                path = f"{base}/env/{j}"
                ops += [
                    {"op": "test", "path": f"{path}/name", "value": mk["env"]},
                    {"op": "test", "path": f"{path}/value", "value": mk["value"]},
                ]
                ops.append(
                    {"op": "remove", "path": path}
                    if old_item is None
                    else {"op": "replace", "path": path, "value": copy.deepcopy(old_item)}
                )
            else:  # the fault removed the var: add it back where it was
                if j is not None or old_item is None:
                    return None
                if "env" in c:  # guard on the list as read (absence cannot be tested directly)
                    pos = min(old_env.index(old_item), len(env))
                    ops += [
                        {"op": "test", "path": f"{base}/env", "value": env},
                        {"op": "add", "path": f"{base}/env/{pos}", "value": copy.deepcopy(old_item)},
                    ]
                else:  # no env list at all: pin the write to the version read
                    ops = (
                        ko.precondition(d)
                        + ops
                        + [{"op": "add", "path": f"{base}/env", "value": [copy.deepcopy(old_item)]}]
                    )
        else:
            return None
        # the change-cause goes back only while the fault's is still the latest (a later change keeps its own)
        cause = mk.get("cause")
        if cause is not None and ko.annotations(d).get(ko.CHANGE_CAUSE) == cause:
            ptr = ko.json_pointer("metadata", "annotations", ko.CHANGE_CAUSE)
            old_cause = ko.annotations(h.before).get(ko.CHANGE_CAUSE)
            ops += [
                {"op": "test", "path": ptr, "value": cause},
                {"op": "remove", "path": ptr}
                if old_cause is None
                else {"op": "replace", "path": ptr, "value": old_cause},
            ]
        return ops

    def _revert_flag(self, h: LiveFault) -> str:
        """Put back only the flag's `defaultVariant` (other flags, changed by other faults or the
        agent, keep their values), guarded by a `test` of the flag file as read."""
        flag = h.marker["flag"]
        old_found = ko.flagd_flags(h.before)
        old_variant = old_found[1].get(flag, {}).get("defaultVariant") if old_found else None
        for attempt in range(3):
            cm = self.b.api.get("configmaps", h.name)
            found = ko.flagd_flags(cm)
            if (
                found is None
                or str(found[1].get(flag, {}).get("defaultVariant")) != h.marker["variant"]
                or old_variant is None
            ):
                return ALREADY_REPAIRED
            key, flags, doc = found
            flags[flag]["defaultVariant"] = old_variant
            ptr = ko.json_pointer("data", key)
            try:
                self.b.api.patch(
                    "configmaps",
                    h.name,
                    [
                        {"op": "test", "path": ptr, "value": (cm.get("data") or {})[key]},
                        {"op": "replace", "path": ptr, "value": json.dumps(doc, indent=2)},
                    ],
                    JSON_PATCH,
                )
                return REVERTED
            except BackendError as exc:  # 422: the file changed between read and write
                if exc.code not in ("conflict", "invalid_arguments") or attempt == 2:
                    raise
        raise AssertionError("unreachable")


__all__ = ["ALREADY_REPAIRED", "REVERTED", "LiveFault", "LiveFaults"]
