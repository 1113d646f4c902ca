"""Fault mechanics: every catalog mechanism changes cluster objects, with apply and revert.

Change-driven faults (code, config, flags) go through the pipeline as commits; direct faults
act on pods, manifests, NetworkPolicies and nodes like chaos tooling or an operator would.
Reverting undoes only what the fault still owns: if an agent already fixed the artifact, the
orchestrator leaves it alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..catalog.artifacts import parse_artifact
from ..catalog.faults import Fault

if TYPE_CHECKING:
    from .sim_state import SimState

CODE = {"code_error", "code_latency", "code_crash", "code_retry_storm", "code_memory_leak", "code_cpu_hog"}
POD_RUNTIME = {
    "dependency_unavailable",
    "dependency_slow",
    "cpu_stress",
    "memory_stress",
    "network_delay",
    "network_loss",
}


@dataclass
class AppliedFault:
    fault: Fault
    start_s: float
    undo: dict = field(default_factory=dict)
    reverted_s: float | None = None


def value_from_diff(diff: str) -> str | None:
    """The new value a config change's diff writes (`+ value: "..."`), if it shows one."""
    for line in reversed(diff.splitlines()):
        m = re.match(r'^\+\s*(?:value:|"defaultVariant":)\s*"?([^"]*)"?,?\s*$', line)
        if m:
            return m.group(1)
    return None


def bad_config_value(mechanism: str, key: str, old: str | None, params: dict, diff: str = "") -> str | None:
    """The value a config fault writes: what its diff shows, else derived from its parameters."""
    if mechanism == "config_missing_env":
        return None
    shown = value_from_diff(diff)
    if shown is not None:
        return shown
    if mechanism == "config_timeout":
        return str(int(float(params["timeout_ms"])))
    if mechanism == "config_pool_size":
        return str(int(float(params["threads"])))
    if mechanism == "config_cache_ttl":
        return "0"
    if mechanism == "config_wrong_address":
        port = (old or "").rpartition(":")[2] or "8080"
        return f"{str(params['downstream'])}-legacy:{port}"
    if mechanism == "config_missing_env":
        return None
    return f"{old}-v2" if old else "enabled"


class Mechanics:
    def __init__(self, sim: SimState):
        self.sim = sim

    def apply(self, fault: Fault) -> AppliedFault:
        applied = AppliedFault(fault, self.sim.now)
        getattr(self, f"_apply_{self._family(fault.mechanism)}")(fault, applied.undo)
        return applied

    def revert(self, applied: AppliedFault) -> None:
        if applied.reverted_s is not None:
            return
        applied.reverted_s = self.sim.now
        getattr(self, f"_revert_{self._family(applied.fault.mechanism)}")(applied.fault, applied.undo)

    def artifact_restored(self, applied: AppliedFault) -> bool:
        """Whether the fault's responsible artifact is back to its good state right now."""
        f, u, cl = applied.fault, applied.undo, self.sim.cluster
        family = self._family(f.mechanism)
        if family == "code":
            return (
                all(
                    dict(cl.spec_of(p).code).get(u["path"]) != u["bad"]
                    for p in cl.pods_of(u["service"])
                    if p.ready
                )
                and dict(cl.deployments[u["service"]].spec.code).get(u["path"]) != u["bad"]
            )
        if family == "config":
            return cl.deployments[u["service"]].spec.env_value(u["key"]) != u["new"]
        if family == "feature_flag":
            return cl.configmaps.get("flagd-config", {}).get(u["flag"]) != u["new"]
        if family == "pod_runtime":
            return not any(f.id in p.injections for p in cl.pods.values() if not p.terminating)
        if "field" in u:
            return getattr(cl.deployments[f.target].spec, u["field"]) != u["new"]
        if f.mechanism == "scale_to_zero":
            return any(n > 0 for _, n in cl.deployments[f.target].spec.replicas)
        if f.mechanism == "network_partition":
            return u["name"] not in cl.network_policies
        if f.mechanism == "node_failure":
            return cl.nodes[u["node"]].ready
        if f.mechanism == "node_cordon_drain":
            return not cl.nodes[u["node"]].unschedulable
        if f.mechanism == "zone_failure":
            return all(cl.nodes[n].ready for n in u["nodes"]) or all(
                cl.ingress_zones.get(cl.nodes[n].zone, 0.0) == 0.0 for n in u["nodes"]
            )
        if f.mechanism == "load_spike":
            return False  # the load itself is external; only the probe can show a repair
        return False

    @staticmethod
    def _family(mechanism: str) -> str:
        if mechanism in CODE:
            return "code"
        if mechanism.startswith("config_"):
            return "config"
        if mechanism in POD_RUNTIME:
            return "pod_runtime"
        return mechanism

    # ------------------------------------------------------------ change-driven
    def _apply_code(self, fault: Fault, undo: dict) -> None:
        ref = parse_artifact(fault.artifact)
        assert fault.change is not None and ref.service is not None
        svc, path, bad = ref.service, ref.key, fault.change.to_revision
        self.sim.effects.register(svc, "code", path, bad, fault.mechanism, dict(fault.params))
        undo.update(service=svc, path=path, bad=bad, good=fault.change.from_revision)
        self.sim.ship_code(svc, path, bad, fault.change.message, fault.change.diff, author="ci")

    def _revert_code(self, fault: Fault, undo: dict) -> None:
        svc, path = undo["service"], undo["path"]
        if dict(self.sim.cluster.deployments[svc].spec.code).get(path) == undo["bad"]:
            self.sim.ship_code(
                svc,
                path,
                undo["good"],
                f'Revert "{fault.change.message}"',  # type: ignore[union-attr]
                "(revert)",
                author="ci",
            )

    def _apply_config(self, fault: Fault, undo: dict) -> None:
        ref = parse_artifact(fault.artifact)
        svc, key = ref.service, ref.key
        assert svc is not None and fault.change is not None
        spec = self.sim.cluster.deployments[svc].spec
        old = spec.env_value(key)
        new = bad_config_value(fault.mechanism, key, old, dict(fault.params), fault.change.diff)
        if fault.mechanism in (
            "config_wrong_address",
            "config_cache_ttl",
            "config_bad_value",
            "config_missing_env",
        ):
            self.sim.effects.register(svc, "env", key, new, fault.mechanism, dict(fault.params))
        undo.update(service=svc, key=key, old=old, new=new)
        self.sim.ship_config(svc, key, new, fault.change.message, fault.change.diff, author="ci")

    def _revert_config(self, fault: Fault, undo: dict) -> None:
        svc, key = undo["service"], undo["key"]
        if self.sim.cluster.deployments[svc].spec.env_value(key) == undo["new"]:
            self.sim.ship_config(
                svc,
                key,
                undo["old"],
                f'Revert "{fault.change.message}"',
                "(revert)",  # type: ignore[union-attr]
                author="ci",
            )

    def _apply_feature_flag(self, fault: Fault, undo: dict) -> None:
        flag = next(f for f in self.sim.app.feature_flags if f.name == fault.params["flag"])
        undo.update(flag=flag.name, old=flag.default, new=flag.on_variant)
        msg = fault.change.message if fault.change else f"flagd: set {flag.name} to {flag.on_variant}"
        diff = fault.change.diff if fault.change else ""
        self.sim.ship_flag(flag.name, flag.on_variant, msg, diff, author="ci")

    def _revert_feature_flag(self, fault: Fault, undo: dict) -> None:
        if self.sim.cluster.configmaps.get("flagd-config", {}).get(undo["flag"]) == undo["new"]:
            self.sim.ship_flag(
                undo["flag"], undo["old"], f"flagd: set {undo['flag']} to {undo['old']}", "", author="ci"
            )

    # ------------------------------------------------------------ pods and manifests
    def _apply_pod_runtime(self, fault: Fault, undo: dict) -> None:
        cl = self.sim.cluster
        pods = [p for p in cl.pods_of(fault.target) if not p.terminating]
        for pod in pods:
            pod.injections[fault.id] = {
                "mechanism": fault.mechanism,
                "params": dict(fault.params),
                "since_s": self.sim.now,
            }
        undo["pods"] = [p.name for p in pods]
        self.sim.effects.invalidate()
        cl.recheck_pods(fault.target)

    def _revert_pod_runtime(self, fault: Fault, undo: dict) -> None:
        for name in undo["pods"]:
            pod = self.sim.cluster.pods.get(name)
            if pod is not None:
                pod.injections.pop(fault.id, None)
        self.sim.effects.invalidate()
        self.sim.cluster.recheck_pods(fault.target)

    def _manifest(self, fault: Fault, undo: dict, field_name: str, value: object) -> None:
        """A direct change of the deployment's spec, as `kubectl set`/`kubectl patch` without
        ``--record`` makes it: the new revision keeps the deployment's change-cause annotation, i.e.
        the previous revision's cause (`kubectl rollout history` repeats it). Why: a cause such as
        ``kubectl set resources --limits=cpu=5m`` named the injected change and its artifact, which
        only faults ever produced (an adversarial review read them off the rollout history)."""
        cl = self.sim.cluster
        spec = cl.deployments[fault.target].spec
        undo.update(field=field_name, old=getattr(spec, field_name), new=value)
        cl.new_revision(fault.target, replace(spec, **{field_name: value}))

    def _revert_manifest(self, fault: Fault, undo: dict) -> None:
        cl = self.sim.cluster
        spec = cl.deployments[fault.target].spec
        if getattr(spec, undo["field"]) == undo["new"]:
            cl.new_revision(fault.target, replace(spec, **{undo["field"]: undo["old"]}))

    def _apply_cpu_limit_cut(self, fault: Fault, undo: dict) -> None:
        self._manifest(fault, undo, "cpu_limit_m", int(fault.params["cpu_limit_m"]))

    _revert_cpu_limit_cut = _revert_manifest

    def _apply_memory_limit_cut(self, fault: Fault, undo: dict) -> None:
        self._manifest(fault, undo, "mem_limit_mi", int(fault.params["mem_limit_mi"]))

    _revert_memory_limit_cut = _revert_manifest

    def _apply_bad_image_tag(self, fault: Fault, undo: dict) -> None:
        image = str(fault.params["image"])
        self.sim.effects.register(fault.target, "image", "image", image, "bad_image_tag", {})
        self._manifest(fault, undo, "image", image)

    _revert_bad_image_tag = _revert_manifest

    def _apply_bad_readiness_probe(self, fault: Fault, undo: dict) -> None:
        self._manifest(fault, undo, "readiness_path", str(fault.params["path"]))

    _revert_bad_readiness_probe = _revert_manifest

    def _apply_scale_to_zero(self, fault: Fault, undo: dict) -> None:
        cl = self.sim.cluster
        old = dict(cl.deployments[fault.target].spec.replicas)
        undo["old"] = old
        cl.scale(fault.target, {z: 0 for z in old})

    def _revert_scale_to_zero(self, fault: Fault, undo: dict) -> None:
        cl = self.sim.cluster
        if all(n == 0 for _, n in cl.deployments[fault.target].spec.replicas):
            cl.scale(fault.target, undo["old"])

    # ------------------------------------------------------------ network and infrastructure
    def _apply_network_partition(self, fault: Fault, undo: dict) -> None:
        from .cluster import NetworkPolicy

        dst = str(fault.params["downstream"])
        name = f"deny-{fault.target}-to-{dst}"
        self.sim.cluster.network_policies[name] = NetworkPolicy(name, fault.target, dst)  # no event
        self.sim.cluster.dirty = True
        undo["name"] = name

    def _revert_network_partition(self, fault: Fault, undo: dict) -> None:
        if self.sim.cluster.network_policies.pop(undo["name"], None) is not None:
            self.sim.cluster.dirty = True

    def _apply_node_failure(self, fault: Fault, undo: dict) -> None:
        undo["node"] = str(fault.params["node"])
        self.sim.cluster.set_node_ready(undo["node"], False)

    def _revert_node_failure(self, fault: Fault, undo: dict) -> None:
        self.sim.cluster.set_node_ready(undo["node"], True)

    def _apply_node_cordon_drain(self, fault: Fault, undo: dict) -> None:
        undo["node"] = str(fault.params["node"])
        self.sim.cluster.drain(undo["node"])

    def _revert_node_cordon_drain(self, fault: Fault, undo: dict) -> None:
        if self.sim.cluster.nodes[undo["node"]].unschedulable:
            self.sim.cluster.cordon(undo["node"], False)

    def _apply_zone_failure(self, fault: Fault, undo: dict) -> None:
        zone = str(fault.params["zone"])
        undo["nodes"] = [n for n, node in self.sim.cluster.nodes.items() if node.zone == zone]
        for n in undo["nodes"]:
            self.sim.cluster.set_node_ready(n, False)

    def _revert_zone_failure(self, fault: Fault, undo: dict) -> None:
        for n in undo["nodes"]:
            self.sim.cluster.set_node_ready(n, True)

    def _apply_load_spike(self, fault: Fault, undo: dict) -> None:
        c = self.sim.compiled
        touched = [
            r for r, rt in enumerate(self.sim.app.request_types) if fault.target in rt.services
        ] or list(range(len(c.request_types)))
        undo["rts"], undo["m"] = touched, float(fault.params["multiplier"])
        self.sim.load_mult[touched] *= undo["m"]

    def _revert_load_spike(self, fault: Fault, undo: dict) -> None:
        self.sim.load_mult[undo["rts"]] /= undo["m"]
