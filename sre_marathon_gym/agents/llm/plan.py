"""The plan RAG and Keep-agent ask for in one model call, validated with pydantic, then executed.

Why a schema: the model's answer is untrusted text. It is parsed and validated at this boundary;
whatever survives is executed through the ordinary tools (so the policy layer and the recorder
see every call), and every problem, from invalid JSON to an id the model made up, becomes a line
of feedback that the next invocation's prompt shows the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...tools.models import TOOL_KIND, ToolResult
from .budget import Deadline
from .calls import CallTool, extract_json

PLAN_FORMAT = """\
Answer with ONE JSON object and nothing else:
{"incidents": [
  {"incident_id": "inc-001 to extend an incident you reported before, or null for a new one",
   "alert_ids": ["alert ids to add (new incident: at least one)"],
   "title": "short description",
   "root_cause": {"services": ["culprit service"], "artifact": "exact artifact", "summary": "why"} or null,
   "repairs": [{"tool": "rollback|restart|scale|set_config|patch_source|cluster_op", ...its arguments}]}
]}
Each alert may belong to at most one incident. Omit repairs when unsure. An empty list is fine.\
"""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RootCause(_Strict):
    services: list[str] = Field(min_length=1)
    artifact: str = Field(min_length=1)
    summary: str = ""


class PlannedIncident(_Strict):
    incident_id: str | None = None
    alert_ids: list[str] = Field(default_factory=list)
    title: str = Field("", max_length=300)
    root_cause: RootCause | None = None
    repairs: list[dict[str, Any]] = Field(default_factory=list)


class Plan(_Strict):
    incidents: list[PlannedIncident] = Field(default_factory=list)


def parse_plan(text: str | None) -> tuple[Plan | None, str | None]:
    """(plan, None), or (None, what was wrong) for invalid JSON or a schema violation."""
    try:
        data = extract_json(text)
    except ValueError as exc:
        return None, f"your plan was not valid JSON: {exc}"
    if isinstance(data, list):
        data = {"incidents": data}
    try:
        return Plan.model_validate(data), None
    except ValidationError as exc:
        errs = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        return None, f"your plan did not match the format: {errs}"


@dataclass
class PlanRun:
    """What became of a plan: the results of the calls made, and the calls never made because the
    invocation's budget ran out (checked before every call), as `tool(incident)` lines."""

    results: list[ToolResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def execute_plan(
    call: CallTool,
    plan: Plan,
    feedback: list[str],
    placeable: set[str] | None = None,
    deadline: Deadline | None = None,
) -> PlanRun:
    """Run the plan through the tools. `placeable` (Keep-agent): the only alert ids the model may
    place. `deadline`: checked before each call; once it has passed, the rest of the plan is
    recorded in `PlanRun.skipped` instead of being executed."""
    out = PlanRun()
    used: set[str] = set()

    def run(raw: dict) -> ToolResult | None:
        if deadline is not None and deadline.expired:
            out.skipped.append(f"{raw['tool']}({raw.get('incident_id') or 'new incident'})")
            return None
        r = call(raw)
        out.results.append(r)
        if not r.ok and r.error is not None:
            feedback.append(f"{r.tool}: {r.error.code}: {r.error.message}")
        return r

    for item in plan.incidents:
        ids = [a for a in dict.fromkeys(item.alert_ids) if a not in used]
        if placeable is not None:
            refused = [a for a in ids if a not in placeable]
            if refused:
                feedback.append(
                    f"alerts {refused} were already grouped by the rules; only ungrouped alerts may be placed"
                )
            ids = [a for a in ids if a in placeable]
        used.update(ids)
        inc_id = item.incident_id
        if inc_id:
            r = run({"tool": "update_incident", "incident_id": inc_id, "add_alert_ids": ids}) if ids else None
            if r is not None and not r.ok:
                continue
        elif ids:
            r = run({"tool": "open_incident", "alert_ids": ids, "title": item.title or "incident"})
            if r is not None and not r.ok:
                continue
            inc_id = r.data["id"] if r is not None else None  # None: skipped, and so is the rest
        else:
            if item.root_cause or item.repairs:
                feedback.append("an incident entry without incident_id or alert_ids was skipped")
            continue
        if item.root_cause is not None:
            rc = item.root_cause
            run(
                {
                    "tool": "set_root_cause",
                    "incident_id": inc_id,
                    "services": rc.services,
                    "artifact": rc.artifact,
                    "summary": rc.summary[:2000],
                }
            )
        for repair in item.repairs:
            tool = repair.get("tool")
            if TOOL_KIND.get(str(tool)) != "intervention":
                feedback.append(
                    f"repair {tool!r} skipped: repairs use rollback, restart, scale, set_config, "
                    "patch_source or cluster_op"
                )
                continue
            run({**repair, "incident_id": inc_id})
    if out.skipped:
        feedback.append(
            f"the invocation's time ran out before {len(out.skipped)} planned call(s): "
            + ", ".join(out.skipped)
        )
    return out


__all__ = ["PLAN_FORMAT", "Plan", "PlanRun", "PlannedIncident", "RootCause", "execute_plan", "parse_plan"]
