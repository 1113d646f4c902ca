"""What an LLM agent is told: the shared instructions and the invocation's context, as text.

Why compact text: the cumulative alert history grows all run long (hundreds of alerts), and every
token is paid for and counted. Labels that repeat on every alert (namespace, alertname, template)
are dropped; ids stay verbatim, because the model must cite them exactly.
"""

from __future__ import annotations

import json
from typing import Any

from ...tools.models import ToolResult

MAX_ALERT_LINES = 300
MAX_RESULT_CHARS = 12_000
_DROP_LABELS = {"alertname", "namespace", "template", "severity"}

INSTRUCTIONS = """\
You are the on-call SRE agent of a live microservice application ({app}) while faults keep being \
injected. You are invoked every {interval:g} s of simulated time with the cumulative alert history; \
the current simulated time is t={now:g} s.

Your job, per underlying fault:
1. correlate: report an incident that groups the alerts sharing one cause (each alert belongs to at \
most one incident; cite alert ids exactly as given);
2. localize: name the culprit service(s) and the responsible artifact, exactly, e.g. \
`cartservice:env/REDIS_ADDR`, `flagd:configmap/flagd-config/adFailure`, `emailservice:logic.py@r6` \
(a source file at a revision), `deployment/frontend:image`, `deployment/adservice:resources.limits.memory`, \
`deployment/frontend:replicas`, `node/node-a1`, `zone/zone-b`;
3. repair: act (rollback, restart, scale, set_config, patch_source, cluster_op). Every action must \
cite an open incident (incident_id) whose alerts point at what it touches; deleting namespaces and \
reading secrets are forbidden. Risky or needless actions are scored against you.
Deploy history, configuration and source diffs often show what changed just before alerts fired.\
"""


def instructions(app: str, interval_s: float, now: float) -> str:
    return INSTRUCTIONS.format(app=app, interval=interval_s, now=now)


def alert_line(a: dict, now: float) -> str:
    """`a0007 firing since t=240 critical ServiceErrorRatioCritical service_name=cartservice`."""
    state = f"resolved at t={a['resolved_at']:g}" if a.get("resolved_at") is not None else "firing"
    labels = " ".join(f"{k}={v}" for k, v in sorted(a.get("labels", {}).items()) if k not in _DROP_LABELS)
    return (
        f"{a['id']} {state}, fired t={a['fired_at']:g} {a.get('severity', '')} {a['rule']} {labels}".rstrip()
    )


def alert_history(alerts: list[dict], now: float, limit: int = MAX_ALERT_LINES) -> str:
    """Every firing alert, then the most recent resolved ones, up to `limit` lines (oldest first)."""
    if not alerts:
        return "(no alerts have fired yet)"
    firing = [a for a in alerts if a.get("resolved_at") is None]
    resolved = [a for a in alerts if a.get("resolved_at") is not None]
    keep = firing[-limit:] + resolved[-max(limit - len(firing), 0) :] if len(alerts) > limit else alerts
    keep_ids = {a["id"] for a in keep}
    lines = [alert_line(a, now) for a in alerts if a["id"] in keep_ids]
    omitted = len(alerts) - len(keep)
    if omitted:
        lines.insert(0, f"({omitted} older resolved alerts omitted)")
    return "\n".join(lines)


def incident_lines(incidents: list[dict]) -> str:
    if not incidents:
        return "(no incidents reported yet)"
    out = []
    for inc in incidents:
        rc = inc.get("root_cause")
        cause = f"root cause {','.join(rc['services'])} / {rc['artifact']}" if rc else "no root cause yet"
        out.append(
            f'{inc["id"]} [{inc["status"]}] opened t={inc["opened_s"]:g} "{inc["title"]}" '
            f"alerts={','.join(inc['alert_ids'])}; {cause}"
        )
    return "\n".join(out)


def render_result(result: ToolResult, limit: int = MAX_RESULT_CHARS) -> str:
    """A tool result as the tool message the model reads (long data truncated, errors verbatim)."""
    text = json.dumps(result.model_dump(exclude_none=True), default=str, separators=(",", ":"))
    if len(text) > limit:
        text = text[:limit] + f"... [truncated {len(text) - limit} characters; narrow the query]"
    return text


def context_view(call: Any) -> tuple[float, list[dict], list[dict]]:
    """(now, cumulative alerts, incidents so far), read through the ordinary tools."""
    res = call({"tool": "get_alerts", "state": "all", "limit": 2000})
    ws = call({"tool": "workspace", "op": "list"})
    now = float(res.data["now"]) if res.ok else 0.0
    return now, (res.data["alerts"] if res.ok else []), (ws.data["incidents"] if ws.ok else [])


__all__ = [
    "INSTRUCTIONS",
    "alert_history",
    "alert_line",
    "context_view",
    "incident_lines",
    "instructions",
    "render_result",
]
