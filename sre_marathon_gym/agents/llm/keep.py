"""Keep-agent-style adapter (SRE-Marathon App. G): rule-based alert grouping in a persistent
incident store, plus RAG's retrieval and a model-written diagnosis and repair plan.

The rules (modelled on Keep's correlation rules, which group alerts by a fingerprint of labels):
every alert not yet in an incident, firing or resolved since the previous invocation (an alert
can fire and resolve between two invocations, and it still belongs to its fault), is keyed by
the workload its labels name (`runbook.workload_of`, the rule table's own grouping: zone, node,
the service of its pod, or its deployment/service label); it joins the open rule-made incident
of that key, or opens one. Each alert goes into at most one incident; an incident whose alerts
have all resolved is resolved at the next invocation, so the next burst opens a fresh one.
Alerts whose labels name no workload are left ungrouped: they are the only alerts the model may
place. The model then writes root causes and repairs for the incidents (one call,
`plan.PLAN_FORMAT`), only when something changed or lacks a diagnosis.

The store is the environment's incident store, read back through `workspace list` every
invocation (rule-made incidents are titled `keep: <key>`), so nothing depends on Python state
surviving between invocations except the feedback shown to the model.
"""

from __future__ import annotations

from typing import Any

from ..runbook import workload_of
from .budget import Deadline
from .context import context_view, incident_lines, instructions
from .rag import RAGAgent

TITLE_PREFIX = "keep: "


class KeepAgent(RAGAgent):
    """Rules group; the model diagnoses, repairs, and places only what the rules left ungrouped."""

    name = "keep"

    def act(self, env: Any, deadline: Deadline, invocation: int) -> None:
        call = env.call_tool
        now, alerts, incidents = context_view(call)
        topo = call({"tool": "get_topology"})
        services = [s["name"] for s in topo.data["services"]] if topo.ok else []
        firing = {a["id"] for a in alerts if a["resolved_at"] is None}
        since = now - env.interval_s  # the previous invocation
        changed = False

        # 1. resolve open incidents none of whose alerts still fires
        for inc in incidents:
            if (
                inc["status"] == "open"
                and inc["alert_ids"]
                and not firing & set(inc["alert_ids"])
                and call(
                    {"tool": "resolve_incident", "incident_id": inc["id"], "note": "all alerts resolved"}
                ).ok
            ):
                inc["status"] = "resolved"
        # 2. the rules: group every alert not yet in an incident (firing, or resolved since the
        #    previous invocation) by workload key into one open incident per key
        assigned = {a for inc in incidents for a in inc["alert_ids"]}
        open_by_key = {
            inc["title"][len(TITLE_PREFIX) :]: inc
            for inc in incidents
            if inc["status"] == "open" and inc["title"].startswith(TITLE_PREFIX)
        }
        groups: dict[str, list[str]] = {}
        placeable: set[str] = set()
        for a in sorted(alerts, key=lambda a: a["id"]):
            if a["id"] in assigned or (a["resolved_at"] is not None and a["resolved_at"] <= since):
                continue
            key = workload_of(a["labels"], services)
            if key is None:
                placeable.add(a["id"])
            else:
                groups.setdefault(key, []).append(a["id"])
        for key, ids in groups.items():
            inc = open_by_key.get(key)
            if inc is None:
                r = call({"tool": "open_incident", "alert_ids": ids, "title": TITLE_PREFIX + key})
            else:
                r = call({"tool": "update_incident", "incident_id": inc["id"], "add_alert_ids": ids})
            changed = changed or r.ok
        # 3. the model: diagnosis and repairs (and placing ungrouped alerts), when there is news
        now, alerts, incidents = context_view(call)
        open_incs = [i for i in incidents if i["status"] == "open"]
        if not (changed or placeable or any(i["root_cause"] is None for i in open_incs)):
            return
        if not open_incs and not placeable:
            return
        user = self._planning_prompt(
            call,
            now,
            alerts,
            (
                "Open incidents (grouped by correlation rules; "
                "give each a root cause, and repairs if sure):\n"
                f"{incident_lines(open_incs)}\n\n"
                "Alerts the rules left ungrouped (the only alert ids you may place, "
                "into an incident above or a "
                f"new one): {', '.join(sorted(placeable)) or 'none'}"
            ),
        )
        self._plan_and_execute(
            call, instructions(env.app.display_name, env.interval_s, now), user, deadline, placeable=placeable
        )


__all__ = ["TITLE_PREFIX", "KeepAgent"]
