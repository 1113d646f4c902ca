"""The Runbook baseline (SRE-Marathon App. G): alerts grouped by workload, a fixed rule table.

Why it exists: the paper's scripted floor. It reads only alerts (plus two light reads: the
topology for service names and zones, and pods/config when an action needs a node's services or
a replica count), groups firing alerts by the workload they name, and maps the strongest rule of
each group through a FIXED table to (fault category it reports, artifact it names, action). When
several rules fire for one workload, a rule naming the broken object (waiting reason, OOM, not
ready, unavailable, node) beats a symptom rule (error ratio, latency, throttling): the table's
`tier` orders them (lower wins).

Like an invocation in a fresh process, the agent keeps no Python state between invocations:
its incident store (alert -> incident, workload -> open incident, per-incident last action) is
a JSON note in the workspace, read at the start and written at the end of every invocation.

Choices the paper leaves open, written down:
- Workload of an alert: the service its `pod` (longest service-name prefix), `deployment`,
  `service` or `service_name` label names; node alerts group by `node/<n>`, zone alerts by
  `zone/<z>`; an alert naming nothing (e.g. a namespace-wide business metric) goes to the
  entry point.
- One open incident per workload; new alerts on that workload join it (`update_incident`), and
  each alert joins at most one incident. An incident whose alerts have all resolved is resolved,
  so the next burst on the workload opens a fresh incident with a fresh root cause.
- Root cause: the table row of the strongest rule among ALL of the incident's alerts (evidence is
  sticky: a pod alert that resolved still outranks a lingering latency alert). It is re-set
  whenever that row changes.
- Actions: at most one per WORKLOAD every `cooldown` invocations (default 3, i.e. 6 minutes: a
  rollout, a config change in the pipeline and the alerts' `for:` windows take that long to show
  an effect). The cooldown is per workload rather than per incident because restarts replace pods,
  whose new alerts would otherwise open a new incident and act again at once (a restart storm).
  A rollback happens at most once per incident (a second `rollout undo` re-deploys the revision
  the first one removed); a deployment with a single revision is restarted instead.
- The state note is JSON split over `runbook/state/<i>` notes (a note holds 20000 characters);
  `runbook/state` holds the number of parts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, overload

import gymnasium as gym

from ..catalog.apps import label_place, pod_owner
from ..core.run_record import Usage
from .base import zero_usage

STATE_KEY = "runbook/state"
NOTE_CHARS = 16000


@dataclass(frozen=True)
class RunbookRule:
    """One row of the table: what the runbook reports and does when this alert leads its group."""

    category: str  # the fault category it reports as root cause
    artifact: str  # artifact template: {svc}, {node} or {zone}
    action: str  # rollback | restart | scale_up | uncordon | failover | none
    tier: int  # 0-1 name the broken object, 2 resource saturation, 3 service symptom, 4 entry symptom
    opens: bool = False  # cautious mode: leading a workload's new alerts, it opens an incident
    claims: bool = False  # cautious mode: leading an incident, it names the row's root cause (and acts)


# The fixed rule-to-action table (rule name -> row). Order within a tier breaks ties.
RUNBOOK_TABLE: dict[str, RunbookRule] = {
    # tier 0: the object and the reason it is broken
    "ZoneNodesNotReady": RunbookRule("infrastructure", "zone/{zone}", "failover", 0),
    "NodeNotReady": RunbookRule("infrastructure", "node/{node}", "uncordon", 0, opens=True),
    "NodeUnschedulable": RunbookRule("infrastructure", "node/{node}", "uncordon", 0, opens=True),
    "PodImagePullBackOff": RunbookRule(
        "deployment", "deployment/{svc}:image", "rollback", 0, opens=True, claims=True
    ),
    "PodContainerConfigError": RunbookRule("config", "deployment/{svc}", "rollback", 0, opens=True),
    "ContainerOOMKilled": RunbookRule(
        "resource", "deployment/{svc}:resources.limits.memory", "rollback", 0, opens=True
    ),
    "PodCrashLooping": RunbookRule("code", "deployment/{svc}", "rollback", 0, opens=True),
    # tier 1: the object is broken, reason unknown
    "ContainerRestartingFrequently": RunbookRule("code", "deployment/{svc}", "rollback", 1, opens=True),
    "ContainerRestarting": RunbookRule("code", "deployment/{svc}", "rollback", 1, opens=True),
    "DeploymentUnavailable": RunbookRule("deployment", "deployment/{svc}:readinessProbe", "rollback", 1),
    "PodNotReady": RunbookRule("deployment", "deployment/{svc}:readinessProbe", "rollback", 1),
    "DeploymentDegraded": RunbookRule("deployment", "deployment/{svc}:readinessProbe", "restart", 1),
    "DeploymentReplicasMismatch": RunbookRule("deployment", "deployment/{svc}:readinessProbe", "restart", 1),
    "PodFailed": RunbookRule("deployment", "deployment/{svc}", "restart", 1),
    "PodUnschedulable": RunbookRule("infrastructure", "deployment/{svc}", "none", 1),
    "PodPending": RunbookRule("infrastructure", "deployment/{svc}", "none", 1),
    "EndpointDown": RunbookRule("deployment", "deployment/{svc}", "restart", 1),
    "NodePressure": RunbookRule("infrastructure", "node/{node}", "none", 1),
    # tier 2: resource saturation
    "ContainerMemoryAtLimit": RunbookRule(
        "resource", "deployment/{svc}:resources.limits.memory", "rollback", 2
    ),
    "ContainerOOMEvents": RunbookRule("resource", "deployment/{svc}:resources.limits.memory", "rollback", 2),
    "ContainerMemoryNearLimit": RunbookRule(
        "resource", "deployment/{svc}:resources.limits.memory", "rollback", 2
    ),
    "CPUThrottlingSevere": RunbookRule("resource", "deployment/{svc}:resources.limits.cpu", "scale_up", 2),
    "CPUThrottlingHigh": RunbookRule("resource", "deployment/{svc}:resources.limits.cpu", "scale_up", 2),
    "ContainerCPUNearLimit": RunbookRule("resource", "deployment/{svc}:resources.limits.cpu", "scale_up", 2),
    "KafkaConsumerLagHigh": RunbookRule("load", "deployment/{svc}:replicas", "scale_up", 2),
    # tier 3: symptoms of one service
    "ServiceErrorRatioCritical": RunbookRule("dependency", "deployment/{svc}", "restart", 3),
    "ServiceErrorRatioWarning": RunbookRule("dependency", "deployment/{svc}", "restart", 3),
    "CatalogCartOperationErrors": RunbookRule("dependency", "deployment/{svc}", "restart", 3, opens=True),
    "ServiceLatencyP95Critical": RunbookRule("dependency", "deployment/{svc}", "restart", 3, opens=True),
    "ServiceLatencyP99Critical": RunbookRule("dependency", "deployment/{svc}", "restart", 3),
    "ServiceLatencyP95Warning": RunbookRule("dependency", "deployment/{svc}", "restart", 3),
    # tier 4: user-facing symptoms at the entry point: report, never act
    "EntryEndpointDown": RunbookRule("deployment", "deployment/{svc}", "none", 4),
    "EntryErrorRatioCritical": RunbookRule("code", "deployment/{svc}", "none", 4),
    "EntryErrorRatioWarning": RunbookRule("code", "deployment/{svc}", "none", 4),
    "EntryErrorRatioSustained": RunbookRule("code", "deployment/{svc}", "none", 4),
    "EntryLatencyP95Critical": RunbookRule("dependency", "deployment/{svc}", "none", 4),
    "EntryLatencyP99Critical": RunbookRule("dependency", "deployment/{svc}", "none", 4),
    "EntryLatencyP95Warning": RunbookRule("dependency", "deployment/{svc}", "none", 4),
    "EntryTrafficSpikeCritical": RunbookRule("load", "deployment/{svc}:replicas", "none", 4),
    "EntryTrafficSpikeWarning": RunbookRule("load", "deployment/{svc}:replicas", "none", 4),
    "EntryTrafficDropCritical": RunbookRule("network", "deployment/{svc}", "none", 4),
    "EntryTrafficDropWarning": RunbookRule("network", "deployment/{svc}", "none", 4),
    "FrontendRequestErrorRatio": RunbookRule("code", "deployment/{svc}", "none", 4),
    "PaymentTransactionsDrop": RunbookRule("dependency", "deployment/{svc}", "none", 4),
}
UNKNOWN_RULE = RunbookRule("unknown", "deployment/{svc}", "none", 5)
_ORDER = {name: i for i, name in enumerate(RUNBOOK_TABLE)}
MAX_SCALE_REPLICAS = 4


def strongest(rules: list[str]) -> str:
    """The rule that leads a group: lowest tier, then table order."""
    return min(rules, key=lambda r: (RUNBOOK_TABLE.get(r, UNKNOWN_RULE).tier, _ORDER.get(r, len(_ORDER))))


@overload
def workload_of(labels: dict[str, str], services: list[str], entry: str) -> str: ...
@overload
def workload_of(labels: dict[str, str], services: list[str], entry: None = None) -> str | None: ...


def workload_of(labels: dict[str, str], services: list[str], entry: str | None = None) -> str | None:
    """The workload an alert names: `node/<n>`, `zone/<z>` or a service name; `entry` when the
    labels name none (the runbook blames the entry service; Keep-agent's rules pass None and leave
    such alerts ungrouped)."""
    place = label_place(labels)
    if place:
        return f"{place[0]}/{place[1]}"
    pod = labels.get("pod")
    if pod:
        owner = pod_owner(pod, services)
        if owner:
            return owner
    for key in ("deployment", "service", "service_name", "container"):
        if labels.get(key) in services:
            return labels[key]
    return entry


class RunbookAgent:
    """Groups alerts by workload and applies `RUNBOOK_TABLE`; all state lives in the workspace."""

    name = "runbook"

    def __init__(self, cooldown: int = 3, table: dict[str, RunbookRule] | None = None, cautious: bool = True):
        if cooldown < 1:
            raise ValueError(f"cooldown must be at least one invocation, got {cooldown}")
        self.cooldown = cooldown
        self.cautious = cautious
        self.table = dict(RUNBOOK_TABLE if table is None else table)
        self.usage: Usage = zero_usage()

    def reset(self, env: gym.Env, seed: int | None) -> None:
        self.usage = zero_usage()  # nothing else: the state is in the (fresh) workspace

    # ------------------------------------------------------------ one invocation
    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        state = self._load(call)
        state["invocation"] += 1
        topo = call({"tool": "get_topology"})
        res = call({"tool": "get_alerts", "state": "firing", "limit": 2000})
        if not topo.ok or not res.ok:
            self._save(call, state)
            return None
        services = [s["name"] for s in topo.data["services"]]
        entry, zones = topo.data["entry_point"], topo.data["zones"]
        alerts = {a["id"]: a for a in res.data["alerts"]}  # firing now

        # 1. forget resolved alerts; resolve incidents with no firing alert left
        incidents = state["incidents"]
        for inc in incidents.values():
            inc["alerts"] = [a for a in inc["alerts"] if a in alerts]
        for wl, inc_id in list(state["groups"].items()):
            if not incidents[inc_id]["alerts"]:
                call({"tool": "resolve_incident", "incident_id": inc_id, "note": "all alerts resolved"})
                del state["groups"][wl], incidents[inc_id]

        # 2. group new firing alerts by workload; one open incident per workload, an alert in one incident
        assigned = {a for inc in incidents.values() for a in inc["alerts"]}
        groups: dict[str, list[str]] = {}
        for aid in sorted(set(alerts) - assigned):
            groups.setdefault(workload_of(alerts[aid]["labels"], services, entry), []).append(aid)
        for wl, ids in groups.items():
            inc_id = state["groups"].get(wl)
            lead = self._row(strongest([alerts[a]["rule"] for a in ids]))
            if inc_id is None and self.cautious and not lead.opens:
                continue  # too ambiguous to report yet: the alerts wait, ungrouped
            if inc_id is not None and self.cautious:
                continue  # an incident keeps the evidence it was opened on: grown, it pools other faults
            if inc_id is None:
                r = call({"tool": "open_incident", "alert_ids": ids, "title": f"alerts on {wl}"})
                if not r.ok:
                    continue
                inc_id = r.data["id"]
                state["groups"][wl] = inc_id
                incidents[inc_id] = {"alerts": [], "rule": None, "root": None, "rolled_back": False}
            elif not call({"tool": "update_incident", "incident_id": inc_id, "add_alert_ids": ids}).ok:
                continue
            incidents[inc_id]["alerts"] += ids

        # 3. root cause (the strongest rule the incident has seen) and action, per open incident
        for wl, inc_id in state["groups"].items():
            inc = incidents[inc_id]
            seen = [alerts[a]["rule"] for a in inc["alerts"]] + ([inc["rule"]] if inc["rule"] else [])
            inc["rule"] = strongest(seen)
            row = self._row(inc["rule"])
            root = [row.category, self._fill(row, wl)]
            if self.cautious:  # one claim per incident, from a row right more often than wrong; act on it
                if inc["root"] is None and row.claims:
                    self._set_root_cause(call, inc_id, wl, row, entry, services)
                    inc["root"], inc["claimed"] = root, inc["rule"]
                if inc.get("claimed"):
                    self._act(call, state, inc_id, wl, self._row(inc["claimed"]), zones)
                continue
            if inc["root"] != root:
                self._set_root_cause(call, inc_id, wl, row, entry, services)
                inc["root"] = root
            self._act(call, state, inc_id, wl, row, zones)

        self._save(call, state)
        return None

    # ------------------------------------------------------------ pieces
    def _row(self, rule: str) -> RunbookRule:
        return self.table.get(rule, UNKNOWN_RULE)

    @staticmethod
    def _load(call: Any) -> dict:
        fresh = {"invocation": 0, "groups": {}, "incidents": {}, "last_action": {}}
        head = call({"tool": "workspace", "op": "read", "key": STATE_KEY})
        if not head.ok:
            return fresh
        parts = []
        for i in range(int(head.data["text"] or 0)):
            r = call({"tool": "workspace", "op": "read", "key": f"{STATE_KEY}/{i}"})
            if not r.ok:
                return fresh
            parts.append(r.data["text"])
        try:
            return json.loads("".join(parts))
        except ValueError:  # a damaged note: start over rather than crash the invocation
            return fresh

    @staticmethod
    def _save(call: Any, state: dict) -> None:
        """The state as JSON, split over notes of at most `NOTE_CHARS` (a note holds 20000)."""
        text = json.dumps(state, separators=(",", ":"))
        chunks = [text[i : i + NOTE_CHARS] for i in range(0, len(text), NOTE_CHARS)]
        for i, chunk in enumerate(chunks):
            call({"tool": "workspace", "op": "write", "key": f"{STATE_KEY}/{i}", "text": chunk})
        call({"tool": "workspace", "op": "write", "key": STATE_KEY, "text": str(len(chunks))})

    @staticmethod
    def _fill(row: RunbookRule, wl: str) -> str:
        name = wl.split("/", 1)[1] if "/" in wl else wl
        return row.artifact.format(svc=name, node=name, zone=name)

    @staticmethod
    def _services(call: Any, wl: str, entry: str, services: list[str]) -> list[str]:
        """The services a workload stands for (a node: those with pods on it)."""
        if wl.startswith("node/"):
            pods = call({"tool": "get_k8s_state", "resource": "pods"})
            node = wl.split("/", 1)[1]
            on_node = {
                workload_of({"pod": p["name"]}, services, entry)
                for p in (pods.data["items"] if pods.ok else [])
                if p["node"] == node
            }
            return sorted(on_node) or [entry]
        if wl.startswith("zone/"):
            return [entry]
        return [wl]

    def _set_root_cause(
        self, call: Any, inc_id: str, wl: str, row: RunbookRule, entry: str, services: list[str]
    ) -> None:
        call(
            {
                "tool": "set_root_cause",
                "incident_id": inc_id,
                "services": self._services(call, wl, entry, services),
                "artifact": self._fill(row, wl),
                "summary": f"runbook: {row.category} fault on {wl}",
            }
        )

    def _act(
        self, call: Any, state: dict, inc_id: str, wl: str, row: RunbookRule, zones: dict[str, list[str]]
    ) -> None:
        """At most one action per workload every `cooldown` invocations; one rollback per incident."""
        inc, now = state["incidents"][inc_id], state["invocation"]
        last = state["last_action"].get(wl)
        if row.action == "none" or (last is not None and now - last < self.cooldown):
            return
        kind, _, name = wl.rpartition("/")
        if row.action in ("rollback", "restart", "scale_up") and kind:
            return  # service actions need a service workload
        action = row.action
        if action == "rollback":
            if inc["rolled_back"]:
                return
            dep = call({"tool": "get_k8s_state", "resource": "deployments", "service": name})
            if dep.ok and dep.data["items"] and len(dep.data["items"][0]["history"]) < 2:
                action = "restart"  # nothing to roll back to: the table's fallback
            else:
                call({"tool": "rollback", "incident_id": inc_id, "service": name})
                inc["rolled_back"] = True
        if action == "restart":
            call({"tool": "restart", "incident_id": inc_id, "service": name})
        elif action == "scale_up":
            cfg = call({"tool": "read_config", "service": name})
            current = max(cfg.data["replicas"].values(), default=1) if cfg.ok else 1
            if current >= MAX_SCALE_REPLICAS:
                return
            call({"tool": "scale", "incident_id": inc_id, "service": name, "replicas": current + 1})
        elif action == "uncordon" and kind == "node":
            call({"tool": "cluster_op", "incident_id": inc_id, "operation": "uncordon", "target": name})
        elif action == "failover" and kind == "zone":
            others = [z for z in zones if z != name]
            if not others:
                return
            call({"tool": "cluster_op", "incident_id": inc_id, "operation": "failover", "target": others[0]})
        elif action != "rollback":
            return
        state["last_action"][wl] = now  # an error result counts too: retrying at once would storm


__all__ = ["RUNBOOK_TABLE", "RunbookAgent", "RunbookRule", "strongest", "workload_of"]
