"""Agent interventions on the simulated cluster, each with the side effects a real one has.

A restart replaces every pod (in-flight requests on the old pods fail, capacity dips while new
pods start); scaling down raises load on the rest; a rollback ships the previous revision's
spec, which can break an unrelated service whose current revision carries a needed fix.
Invalid input raises `SimulatorError` with a message naming the bad value; the tool layer turns
it into a structured error result.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..catalog.artifacts import parse_artifact
from ..core.errors import SimulatorError, did_you_mean
from ..core.quantities import parse_quantity

if TYPE_CHECKING:
    from .sim_state import SimState


def _error(msg: str) -> Exception:
    return SimulatorError(msg)


class Interventions:
    def __init__(self, sim: SimState):
        self.sim = sim

    def _service(self, name: str) -> str:
        if name not in self.sim.cluster.deployments:
            raise _error(f"unknown service {name!r}{did_you_mean(name, self.sim.cluster.deployments)}")
        return name

    def rollback(self, service: str, to_revision: int | None = None) -> dict:
        svc = self._service(service)
        dep = self.sim.cluster.deployments[svc]
        if len(dep.revisions) < 2 and to_revision is None:
            raise _error(f"deployment/{svc} has no previous revision to roll back to")
        if to_revision is None:
            target = dep.revisions[-2]
        else:
            found = [r for r in dep.revisions if r.number == to_revision]
            if not found:
                raise _error(
                    f"deployment/{svc} has no revision {to_revision}; "
                    f"known: {[r.number for r in dep.revisions]}"
                )
            target = found[0]
        spec = replace(target.spec, replicas=dep.spec.replicas)
        rev = self.sim.cluster.new_revision(svc, spec, f"rollback to revision {target.number}")
        self.sim.pipeline.history.append(
            self._record(
                svc, "manifest", f"deployment/{svc}", f"rollout undo to revision {target.number}", rev.number
            )
        )
        return {"service": svc, "revision": rev.number, "rolled_back_to": target.number}

    def restart(self, service: str) -> dict:
        svc = self._service(service)
        cl = self.sim.cluster
        live = [p for p in cl.pods_of(svc) if p.ready]
        if live:  # in-flight requests on the old pods are dropped
            self.sim.drop_in_flight(svc)
        spec = replace(cl.deployments[svc].spec, restarted_at=cl.now)
        rev = cl.new_revision(svc, spec, "kubectl rollout restart")
        return {"service": svc, "revision": rev.number}

    def scale(self, service: str, replicas: int) -> dict:
        svc = self._service(service)
        if not isinstance(replicas, int) or replicas < 0 or replicas > 20:
            raise _error(f"replicas must be an integer in 0..20, got {replicas!r}")
        zones = [z for z, _ in self.sim.cluster.deployments[svc].spec.replicas]
        self.sim.cluster.scale(svc, {z: replicas for z in zones})
        return {"service": svc, "replicas_per_zone": replicas}

    def set_config(self, service: str, key: str, value: str) -> dict:
        svc = self._service(service)
        cl = self.sim.cluster
        if svc == "flagd" and key in cl.configmaps.get("flagd-config", {}):
            flag = next(f for f in self.sim.app.feature_flags if f.name == key)
            if value not in flag.variants:
                raise _error(f"flag {key} has no variant {value!r}; variants: {sorted(flag.variants)}")
            rec = self.sim.ship_flag(key, value, f"flagd: set {key} to {value}", "", author="agent")
            return {"service": svc, "key": key, "value": value, "deploy": rec.id}
        env = dict(cl.deployments[svc].spec.env)
        if key not in env and key not in {c.key for c in self.sim.app.service(svc).config}:
            raise _error(f"{svc} has no config key {key!r}{did_you_mean(key, env)}")
        diff = f"-  {key}: {env.get(key)!r}\n+  {key}: {value!r}"
        rec = self.sim.ship_config(svc, key, str(value), f"config: set {key}", diff, author="agent")
        return {"service": svc, "key": key, "value": str(value), "deploy": rec.id}

    def set_resources(
        self, service: str, cpu_limit_m: int | None = None, mem_limit_mi: int | None = None
    ) -> dict:
        svc = self._service(service)
        cl = self.sim.cluster
        spec = cl.deployments[svc].spec
        for name, v in (("cpu_limit_m", cpu_limit_m), ("mem_limit_mi", mem_limit_mi)):
            if v is not None and (not isinstance(v, int) or v < 0 or v > 64000):
                raise _error(f"{name} must be an integer in 0..64000, got {v!r}")
        spec = replace(
            spec,
            cpu_limit_m=spec.cpu_limit_m if cpu_limit_m is None else cpu_limit_m,
            mem_limit_mi=spec.mem_limit_mi if mem_limit_mi is None else mem_limit_mi,
        )
        rev = cl.new_revision(svc, spec, "kubectl set resources")
        return {"service": svc, "revision": rev.number}

    def patch_source(self, service: str, path: str, revision: str | None = None) -> dict:
        """Ship a source change: by default revert the file to the revision before its latest change."""
        svc = self._service(service)
        cl = self.sim.cluster
        code = dict(cl.deployments[svc].spec.code)
        if path not in code:
            raise _error(f"{svc} has no source file {path!r}{did_you_mean(path, code)}")
        if revision is None:
            history = [dict(r.spec.code).get(path) for r in cl.deployments[svc].revisions]
            older = [r for r in history if r is not None and r != code[path]]
            if not older:
                raise _error(f"{svc}:{path} has no earlier revision to revert to")
            revision = older[-1]
        rec = self.sim.ship_code(
            svc, path, revision, f"fix: revert {path} to {revision}", "(revert)", author="agent"
        )
        return {"service": svc, "path": path, "revision": revision, "deploy": rec.id}

    def failover(self, zone: str) -> dict:
        """Send all ingress traffic to `zone` (the healthy one)."""
        cl = self.sim.cluster
        if zone not in cl.ingress_zones:
            raise _error(f"unknown zone {zone!r}{did_you_mean(zone, cl.ingress_zones)}")
        if not self.sim.app.failover:
            raise _error(f"{self.sim.app.display_name} runs in one zone; failover is not available")
        for z in cl.ingress_zones:
            cl.ingress_zones[z] = 1.0 if z == zone else 0.0  # load-balancer weights: no Kubernetes event
        cl.dirty = True
        return {"ingress": dict(cl.ingress_zones)}

    def cordon(self, node: str, unschedulable: bool = True) -> dict:
        cl = self.sim.cluster
        if node not in cl.nodes:
            raise _error(f"unknown node {node!r}{did_you_mean(node, cl.nodes)}")
        cl.cordon(node, unschedulable)
        return {"node": node, "unschedulable": unschedulable}

    def uncordon(self, node: str) -> dict:
        return self.cordon(node, False)

    def drain(self, node: str) -> dict:
        if node not in self.sim.cluster.nodes:
            raise _error(f"unknown node {node!r}{did_you_mean(node, self.sim.cluster.nodes)}")
        self.sim.cluster.drain(node)
        return {"node": node, "drained": True}

    def delete_network_policy(self, name: str) -> dict:
        cl = self.sim.cluster
        if name not in cl.network_policies:
            raise _error(f"unknown NetworkPolicy {name!r}{did_you_mean(name, cl.network_policies)}")
        del cl.network_policies[name]  # a NetworkPolicy change records no event
        cl.dirty = True
        return {"deleted": name}

    def apply_remedy(self, action: str, target: str, artifact: str | None, value: str | None) -> dict:
        """Apply a catalog `Remedy` (used by the validation harness and the oracle agent)."""
        ref = parse_artifact(artifact) if artifact else None
        if action == "rollback":
            return self.rollback(target)
        if action == "restart":
            return self.restart(target)
        if action == "scale":
            return self.scale(target, int(value or 1))
        if action == "set_config" and ref is not None:
            return self.set_config(ref.service or target, ref.key, value or "")
        if action == "patch_source" and ref is not None:
            return self.patch_source(ref.service or target, ref.key)
        if action == "set_resources" and ref is not None:
            if ref.key.endswith("cpu"):
                return self.set_resources(
                    ref.service or target, cpu_limit_m=parse_quantity(value or "0", "cpu")
                )
            return self.set_resources(
                ref.service or target, mem_limit_mi=parse_quantity(value or "0", "memory")
            )
        if action == "failover":
            return self.failover(target)
        if action == "uncordon":
            return self.uncordon(target)
        if action == "delete_network_policy" and ref is not None:
            return self.delete_network_policy(ref.key)
        raise _error(f"cannot apply remedy {action} to {target} ({artifact})")

    def _record(self, service: str, kind: str, artifact: str, message: str, revision: int):
        from .pipeline import DeployRecord

        now = self.sim.now
        return DeployRecord(
            f"d{len(self.sim.pipeline.history) + 1:04d}",
            service,
            kind,
            artifact,
            message,
            "",
            "agent",
            now,
            {"rollout-started": now},
            revision,
            "deployed",
        )
