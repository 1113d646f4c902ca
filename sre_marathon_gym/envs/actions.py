"""Structured action slots for RL: (verb, service, artifact, incident, value) -> a tool call.

Every dimension is a small integer so the action space is a fixed `MultiDiscrete` per app.
Per-dimension masks go into `info["action_mask"]`; a combination the masks cannot rule out
(e.g. restoring a key that has no baseline) becomes a tool error, recorded like any other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..catalog.apps import DEPLOYMENT_FIELDS, App, config_artifact_id

VERBS = (
    "noop",
    "open_incident",
    "set_root_cause",
    "resolve_incident",
    "rollback",
    "restart",
    "scale",
    "set_config",
    "patch_source",
    "failover",
    "uncordon",
    "delete_network_policy",
)
SCALE_CHOICES = (1, 2, 3, 4, 6)


@dataclass(frozen=True)
class ActionLayout:
    """Index spaces of one app: services, per-service artifacts, infrastructure names."""

    services: tuple[str, ...]
    artifacts: tuple[tuple[str, ...], ...]  # per service: artifact ids a root cause may name
    infra: tuple[str, ...]  # node/<n> and zone/<z> artifacts, shared by all services
    zones: tuple[str, ...]
    nodes: tuple[str, ...]
    max_incidents: int
    max_policies: int = 8

    @classmethod
    def for_app(cls, app: App, max_incidents: int) -> ActionLayout:
        per_service = []
        callees: dict[str, list[str]] = {}
        for e in app.edges:
            callees.setdefault(e.source, []).append(e.target)
        for s in app.services:
            ids = [f"deployment/{s.name}", *(f"deployment/{s.name}:{f}" for f in DEPLOYMENT_FIELDS)]
            ids += [config_artifact_id(s.name, c) for c in s.config]
            ids += [f"{s.name}:{f.path}" for f in s.sources]
            ids += [f"networkpolicy/deny-{s.name}-to-{d}" for d in sorted(set(callees.get(s.name, [])))]
            per_service.append(tuple(ids))
        infra = tuple([f"node/{n}" for n in app.nodes] + [f"zone/{z.name}" for z in app.zones])
        return cls(
            tuple(app.service_names),
            tuple(per_service),
            infra,
            tuple(z.name for z in app.zones),
            tuple(app.nodes),
            max_incidents,
        )

    @property
    def max_artifacts(self) -> int:
        return max(len(a) for a in self.artifacts) + len(self.infra)

    @property
    def max_values(self) -> int:
        return max(len(SCALE_CHOICES), len(self.zones), len(self.nodes), self.max_policies, 1)

    def nvec(self) -> np.ndarray:
        return np.array(
            [len(VERBS), len(self.services), self.max_artifacts, self.max_incidents, self.max_values]
        )

    def artifact(self, service: int, index: int) -> str | None:
        own = self.artifacts[service]
        if index < len(own):
            return own[index]
        index -= len(own)
        return self.infra[index] if index < len(self.infra) else None


def baseline_values(app: App) -> dict[str, str]:
    """The catalog's value of every restorable artifact (what a decoded `set_config` slot restores)."""
    out = {}
    for s in app.services:
        for c in s.config:
            out[config_artifact_id(s.name, c)] = c.value
        r = s.resources
        out[f"deployment/{s.name}:resources.limits.cpu"] = f"{r.cpu_limit_m}m"
        out[f"deployment/{s.name}:resources.limits.memory"] = f"{r.mem_limit_mi}Mi"
    return out


def decode_slot(layout: ActionLayout, slot: np.ndarray, view: dict) -> dict | None:
    """Turn one slot into a tool call dict (None for noop). `view` holds what the env currently
    shows the agent: open incident ids in slot order, alerts per service not yet in an incident,
    baseline config values, network policies."""
    verb_i, svc_i, art_i, inc_i, val_i = (int(x) for x in slot)
    verb = VERBS[verb_i]
    if verb == "noop":
        return None
    service = layout.services[svc_i]
    incidents: list[str | None] = view["incident_ids"]
    incident = incidents[inc_i] if inc_i < len(incidents) and incidents[inc_i] else f"inc-slot-{inc_i}"
    if verb == "open_incident":
        return {
            "tool": "open_incident",
            "alert_ids": view["ungrouped_alerts"].get(service, []) or ["none"],
            "title": f"alerts on {service}",
        }
    if verb == "set_root_cause":
        artifact = layout.artifact(svc_i, art_i) or "unknown"
        return {
            "tool": "set_root_cause",
            "incident_id": incident,
            "services": [service],
            "artifact": artifact,
        }
    if verb == "resolve_incident":
        return {"tool": "resolve_incident", "incident_id": incident}
    if verb in ("rollback", "restart"):
        return {"tool": verb, "incident_id": incident, "service": service}
    if verb == "scale":
        return {
            "tool": "scale",
            "incident_id": incident,
            "service": service,
            "replicas": SCALE_CHOICES[val_i % len(SCALE_CHOICES)],
        }
    artifact = layout.artifact(svc_i, art_i) or ""
    if verb == "set_config":  # restore the artifact's baseline value
        key = artifact.rsplit("/", 1)[-1] if (":env/" in artifact or ":configmap/" in artifact) else artifact
        if artifact.startswith(f"deployment/{service}:resources.limits."):
            key = artifact.split(":", 1)[1]
        value = view["baseline_values"].get(artifact, "")
        return {"tool": "set_config", "incident_id": incident, "service": service, "key": key, "value": value}
    if verb == "patch_source":
        path = artifact.split(":", 1)[1] if artifact.startswith(f"{service}:") else artifact
        return {"tool": "patch_source", "incident_id": incident, "service": service, "path": path}
    if verb == "failover":
        zone = layout.zones[val_i % len(layout.zones)]
        return {"tool": "cluster_op", "incident_id": incident, "operation": "failover", "target": zone}
    if verb == "uncordon":
        node = layout.nodes[val_i % len(layout.nodes)]
        return {"tool": "cluster_op", "incident_id": incident, "operation": "uncordon", "target": node}
    policies: list[str] = view["policies"]
    target = policies[val_i] if val_i < len(policies) else f"policy-slot-{val_i}"
    return {
        "tool": "cluster_op",
        "incident_id": incident,
        "operation": "delete_network_policy",
        "target": target,
    }


def slot_mask(layout: ActionLayout, view: dict) -> np.ndarray:
    """One slot's mask, concatenated over dimensions (the layout of a flat MultiDiscrete mask)."""
    open_slots = np.array(
        [i is not None for i in view["incident_ids"]]
        + [False] * (layout.max_incidents - len(view["incident_ids"]))
    )
    has_incident = bool(open_slots.any())
    verbs = np.ones(len(VERBS), dtype=bool)
    verbs[VERBS.index("open_incident")] = any(view["ungrouped_alerts"].values())
    for v in VERBS[2:]:
        verbs[VERBS.index(v)] = has_incident
    if len(layout.zones) < 2:
        verbs[VERBS.index("failover")] = False
    if not view["policies"]:
        verbs[VERBS.index("delete_network_policy")] = False
    services = np.ones(len(layout.services), dtype=bool)
    artifacts = np.ones(layout.max_artifacts, dtype=bool)
    values = np.ones(layout.max_values, dtype=bool)
    return np.concatenate(
        [
            verbs,
            services,
            artifacts,
            open_slots if has_incident else np.ones(layout.max_incidents, dtype=bool),
            values,
        ]
    )
