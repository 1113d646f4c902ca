"""The oracle: an upper bound that reads the hidden ground truth (tests and calibration only).

Why it exists: it shows what a perfect diagnostician can score under the benchmark's own
constraints -- an alert must fire before a fault can be correlated, actions happen only at
invocations, remedies take simulated time, faults overlap -- so a fault it misses points at the
catalog, the alert pack, the simulator or the fault window, not at diagnosis. Never on the
leaderboard.

Each invocation, for every scheduled fault active now (``start_s <= now < planned_end_s``, not
reverted):

1. correlate + localize: once some alert attributable to the fault has fired (fired at or after
   its start, pointing at a service in its scope or at its target, as scoring attributes them),
   open an incident with those alerts and name the fault's target and artifact as root cause.
   Before that it waits: an incident without an attributable alert cannot correlate.
2. repair: once the fault has actually landed (a change-driven fault spends ~100 s in the build
   pipeline after its start; acting earlier would "fix" the old revision and let the bad one
   ship afterwards), apply the fault's first remedy through the ordinary tools (the next remedy
   if a call errors). A rollback targets the newest revision from before the fault, not "the
   previous one": anything that changed the deployment in between (a restart, a benign change,
   another fault's remedy) would otherwise make `rollout undo` re-deploy a bad spec.
3. housekeeping: after a fault's planned end, replicas it scaled up go back to what they were
   (capacity left scaled up starves later pods), and its incident is resolved.

Everything goes through `call_tool`, so the policy layer, the recorder and the scorer see
exactly what an honest agent's calls would produce; only the *decisions* use ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from ..catalog.apps import label_place
from ..catalog.artifacts import parse_artifact
from ..catalog.faults import Fault, Remedy
from ..core.clock import TICK_S
from ..core.run_record import Usage
from .base import zero_usage


@dataclass
class OracleLog:
    """What the oracle did per fault (tests and miss analysis read it)."""

    incident: dict[str, str] = field(default_factory=dict)  # fault_id -> incident id
    incident_at: dict[str, float] = field(default_factory=dict)
    remedy: dict[str, str] = field(default_factory=dict)  # fault_id -> "<action> ok" or the error
    remedy_at: dict[str, float] = field(default_factory=dict)
    restore: dict[str, tuple[str, int]] = field(default_factory=dict)  # fault_id -> (service, replicas)
    closed: set[str] = field(default_factory=set)


def remedy_call(remedy: Remedy, incident_id: str) -> dict[str, Any]:
    """Translate a catalog `Remedy` into the tool call an agent would make."""
    action, target, artifact, value = remedy.action, remedy.target, remedy.artifact, remedy.value
    ref = parse_artifact(artifact) if artifact else None
    base: dict[str, Any] = {"incident_id": incident_id}
    if action in ("rollback", "restart"):
        return {"tool": action, "service": target, **base}
    if action == "scale":
        return {"tool": "scale", "service": target, "replicas": int(value or 1), **base}
    if action in ("set_config", "set_resources") and ref is not None:
        # env/KEY, configmap/cm/KEY and resources.limits.cpu|memory are all set_config keys
        return {
            "tool": "set_config",
            "service": ref.service or target,
            "key": ref.key,
            "value": value or "",
            **base,
        }
    if action == "patch_source" and ref is not None:
        return {"tool": "patch_source", "service": ref.service or target, "path": ref.key, **base}
    if action in ("failover", "uncordon"):
        return {"tool": "cluster_op", "operation": action, "target": target, **base}
    if action == "delete_network_policy":
        return {
            "tool": "cluster_op",
            "operation": "delete_network_policy",
            "target": ref.key if ref is not None else target,
            **base,
        }
    raise ValueError(f"no tool call for remedy {remedy.action} on {remedy.target} ({remedy.artifact})")


class OracleAgent:
    """Correlates, localizes and repairs each fault from ground truth as soon as the run allows."""

    name = "oracle"
    privileged = True  # reads ground truth by design: `run_episode` hands it the env itself

    def __init__(self) -> None:
        self.usage: Usage = zero_usage()
        self.log = OracleLog()

    def reset(self, env: gym.Env, seed: int | None) -> None:
        self.usage = zero_usage()
        self.log = OracleLog()

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        res = u.call_tool({"tool": "get_alerts", "state": "all", "limit": 2000})
        if not res.ok:
            return None
        now = float(res.data["now"])
        alerts = res.data["alerts"]
        pod_service = u.backend.pod_services()
        places: dict[str, set[str]] = {}
        for a in alerts:  # the same resolution the recorder uses for attribution
            place = label_place(a["labels"])
            named = {place[1]} if place else set()
            places[a["id"]] = u.app.label_services(a["labels"], pod_service) | named
        for sf in u.schedule.faults:
            fid = sf.fault_id
            fault: Fault = u.catalog.fault(fid)
            if now >= sf.planned_end_s or self._reverted(u, fid):
                self._close(u, fid)
                continue
            if now < sf.start_s:
                continue
            if fid not in self.log.incident:
                touched = set(fault.scope) | {fault.target}  # what scoring attributes alerts by
                ids = [
                    a["id"]
                    for a in alerts
                    if sf.start_s <= a["fired_at"] <= now and places[a["id"]] & touched
                ]
                if not ids:
                    continue  # nothing attributable has fired yet
                self._open(u, fault, ids, now)
            if fid in self.log.incident and fid not in self.log.remedy and self._landed(u, fid):
                self._remedy(u, fault, sf.start_s, now)
        return None

    # ------------------------------------------------------------ steps
    def _open(self, u: Any, fault: Fault, alert_ids: list[str], now: float) -> None:
        inc = u.call_tool({"tool": "open_incident", "alert_ids": alert_ids, "title": fault.title[:300]})
        if not inc.ok:
            return
        inc_id = inc.data["id"]
        self.log.incident[fault.id] = inc_id
        self.log.incident_at[fault.id] = now
        u.call_tool(
            {
                "tool": "set_root_cause",
                "incident_id": inc_id,
                "services": [fault.target],
                "artifact": fault.artifact,
                "summary": f"{fault.category}: {fault.mechanism}",
            }
        )

    def _remedy(self, u: Any, fault: Fault, start_s: float, now: float) -> None:
        inc_id = self.log.incident[fault.id]
        outcome = "no remedy succeeded"
        for remedy in fault.remedies:
            try:
                call = remedy_call(remedy, inc_id)
            except ValueError as exc:
                outcome = str(exc)
                continue
            if call["tool"] == "rollback":
                call["revision"] = self._revision_before(u, call["service"], start_s)
            before = None
            if call["tool"] == "scale":
                cfg = u.call_tool({"tool": "read_config", "service": call["service"]})
                before = max(cfg.data["replicas"].values()) if cfg.ok and cfg.data["replicas"] else None
            r = u.call_tool(call)
            if r.ok:
                outcome = f"{remedy.action} ok"
                if before and before < call["replicas"]:  # a temporary scale-up (not scale-to-zero's fix)
                    self.log.restore[fault.id] = (call["service"], int(before))
                break
            outcome = f"{remedy.action}: {r.error.message if r.error else 'failed'}"
        self.log.remedy[fault.id] = outcome
        self.log.remedy_at[fault.id] = now

    def _close(self, u: Any, fid: str) -> None:
        """After the fault: undo a temporary scale-up, resolve the incident."""
        if fid in self.log.closed or fid not in self.log.incident:
            return
        self.log.closed.add(fid)
        inc_id = self.log.incident[fid]
        if fid in self.log.restore:
            service, replicas = self.log.restore[fid]
            u.call_tool({"tool": "scale", "incident_id": inc_id, "service": service, "replicas": replicas})
        u.call_tool({"tool": "resolve_incident", "incident_id": inc_id, "note": "fault window over"})

    # ------------------------------------------------------------ ground truth
    @staticmethod
    def _reverted(u: Any, fid: str) -> bool:
        return u.run.reverted_s(fid) is not None

    @staticmethod
    def _landed(u: Any, fid: str) -> bool:
        """Whether the fault's bad artifact is live (a shipped change may still be in the pipeline)."""
        return u.run.artifact_live(fid)

    @staticmethod
    def _revision_before(u: Any, service: str, start_s: float) -> int | None:
        """The newest revision created before the fault (None: plain `rollout undo`)."""
        revisions, current = u.run.revisions(service)
        before = [
            n for n, t in revisions if t < start_s - TICK_S
        ]  # a revision may predate start_s by one tick
        return max(before) if before and before[-1] != current else None


__all__ = ["OracleAgent", "OracleLog", "remedy_call"]
