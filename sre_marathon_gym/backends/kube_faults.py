"""Fault injection on a live cluster for the mechanisms that need no code build.

Why snapshots: a fault must be undone exactly. Each injection reads the object first and keeps
that copy; revert restores the saved `spec` (Deployments), `data` (the flagd ConfigMap) and
change-cause annotation, or deletes the NetworkPolicy it created. Like the simulator, revert only
touches what the fault still owns: if the agent already repaired the artifact (the faulted value
is gone), the orchestrator leaves the object alone. Writes are pinned to the resourceVersion read,
so a concurrent change surfaces as a conflict instead of being overwritten.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..catalog.faults import Fault
from ..errors import BackendError
from ..sim.artifacts import parse_artifact
from ..sim.mechanisms import bad_config_value
from . import kube_objects as ko
from .base import ALREADY_REPAIRED
from .kube_api import JSON_PATCH

if TYPE_CHECKING:
    from .kubernetes import KubernetesBackend


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
    def __init__(self, backend: KubernetesBackend):
        self.b = backend

    # ------------------------------------------------------------ inject
    def inject(self, fault: Fault) -> LiveFault:
        if not self.b.supports(fault):
            raise BackendError("unavailable", f"mechanism {fault.mechanism} cannot be injected on a live cluster "
                                              "without a build; only image, limits, env, replicas, NetworkPolicy and "
                                              "flag faults can")
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
        if m == "bad_image_tag":
            h.marker = {"image": str(p["image"])}
            self.b.patch_container(d, svc, {"image": str(p["image"])}, f"kubectl set image {svc}={p['image']}")
        elif m in ("cpu_limit_cut", "memory_limit_cut"):
            res, val = ("cpu", f"{int(p['cpu_limit_m'])}m") if m == "cpu_limit_cut" else ("memory", f"{int(p['mem_limit_mi'])}Mi")
            h.marker = {"limit": res, "value": val}
            self.b.patch_container(d, svc, {"resources": {"limits": {res: val}}}, f"kubectl set resources --limits={res}={val}")
        elif m == "scale_to_zero":
            h.marker = {"replicas": 0}
            self.b.api.patch("deployments", svc, {"metadata": {"resourceVersion": ko.meta(d).get("resourceVersion")},
                                                  "spec": {"replicas": 0}})
        else:  # config_*: the env var of the main container
            ref = parse_artifact(fault.artifact)
            old = next((e.get("value") for e in c.get("env") or [] if e.get("name") == ref.key), None)
            new = bad_config_value(m, ref.key, old, dict(p), fault.change.diff if fault.change else "")
            h.marker = {"env": ref.key, "value": new, "present": old is not None}
            if new is None and old is None:
                raise BackendError("not_found", f"{svc} has no env var {ref.key} to remove")
            msg = fault.change.message if fault.change else f"config: set {ref.key}"
            self.b.set_env(d, svc, ref.key, new, msg)
        return h

    def _flag(self, fault: Fault) -> LiveFault:
        from .kubernetes import FLAGD_CONFIGMAP

        flag = next((f for f in self.b.app.feature_flags if f.name == fault.params["flag"]), None)
        if flag is None:
            raise BackendError("not_found", f"{self.b.app.app} has no feature flag {fault.params['flag']!r}")
        before = self.b.set_flag(flag.name, flag.on_variant)
        return LiveFault(fault.id, fault.mechanism, "configmap", FLAGD_CONFIGMAP, before=copy.deepcopy(before),
                         marker={"flag": flag.name, "variant": flag.on_variant})

    def _partition(self, fault: Fault) -> LiveFault:
        src, dst = fault.target, str(fault.params["downstream"])
        name = f"deny-{src}-to-{dst}"
        sel = ((self.b.deployment(src).get("spec") or {}).get("selector") or {}).get("matchLabels") or {"app": src}
        dsel = ((self.b.deployment(dst).get("spec") or {}).get("selector") or {}).get("matchLabels") or {"app": dst}
        # allow egress to every pod except the downstream's, and to cluster DNS
        not_dst = [{"key": k, "operator": "NotIn", "values": [v]} for k, v in sorted(dsel.items())]
        body = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": name, "namespace": self.b.namespace,
                             "annotations": {"sre-marathon/source": src, "sre-marathon/denies-egress-to": dst}},
                "spec": {"podSelector": {"matchLabels": dict(sel)}, "policyTypes": ["Egress"],
                         "egress": [{"to": [{"podSelector": {"matchExpressions": not_dst}}]},
                                    {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}],
                                     "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}}
        created = self.b.api.call("create", "networkpolicies", body=body)
        return LiveFault(fault.id, fault.mechanism, "networkpolicy", name,
                         marker={"uid": ko.meta(created).get("uid")})

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
        for attempt in range(2):  # one retry when someone wrote in between
            d = self.b.deployment(h.name)
            if not self._still_faulted(h, d):
                return ALREADY_REPAIRED
            before_spec = copy.deepcopy(h.before.get("spec") or {})
            ops = ko.precondition(d) + [{"op": "replace", "path": "/spec", "value": before_spec}]
            ops += ko.annotation_op(d, ko.CHANGE_CAUSE, ko.annotations(h.before).get(ko.CHANGE_CAUSE))
            try:
                self.b.api.patch("deployments", h.name, ops, JSON_PATCH)
                return REVERTED
            except BackendError as exc:
                if exc.code != "conflict" or attempt:
                    raise
        raise AssertionError("unreachable")

    def _still_faulted(self, h: LiveFault, d: dict) -> bool:
        c = ko.main_container(d, h.name)
        mk = h.marker
        if "image" in mk:
            return c.get("image") == mk["image"]
        if "limit" in mk:
            return ((c.get("resources") or {}).get("limits") or {}).get(mk["limit"]) == mk["value"]
        if "replicas" in mk:
            return (d.get("spec") or {}).get("replicas") == 0
        if "env" in mk:
            env = {e.get("name"): e.get("value") for e in c.get("env") or []}
            return (mk["env"] not in env) if mk["value"] is None else env.get(mk["env"]) == mk["value"]
        return False

    def _revert_flag(self, h: LiveFault) -> str:
        from .kubernetes import flagd_flags

        cm = self.b.api.get("configmaps", h.name)
        found = flagd_flags(cm)
        if found is None or str(found[1].get(h.marker["flag"], {}).get("defaultVariant")) != h.marker["variant"]:
            return ALREADY_REPAIRED
        self.b.api.patch("configmaps", h.name, ko.precondition(cm) + [
            {"op": "replace", "path": "/data", "value": copy.deepcopy(h.before.get("data") or {})}], JSON_PATCH)
        return REVERTED


__all__ = ["ALREADY_REPAIRED", "REVERTED", "LiveFault", "LiveFaults"]
