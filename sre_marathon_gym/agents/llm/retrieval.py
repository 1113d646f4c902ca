"""RAG's retrieval: live telemetry summaries, topology and deploy history as documents, ranked
against the alerts' names and labels.

Why lexical ranking and no embeddings: the paper ranks retrieved documents against alert names and
labels; alerts name services, pods, nodes and rules, and documents are written to carry the same
words, so a BM25-style overlap is enough, costs nothing, needs no extra model, and is
deterministic (ties break by document id).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ...catalog.apps import pod_owner
from .calls import CallTool

RECENT_S = 900.0  # deploy history and events this far back
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {
    "the",
    "a",
    "of",
    "to",
    "in",
    "on",
    "and",
    "is",
    "at",
    "for",
    "by",
    "t",
    "s",
    "ms",
    "service",
    "name",
}


@dataclass(frozen=True)
class Document:
    id: str
    kind: str  # service | change | node | events
    text: str


def words(text: str) -> list[str]:
    """Lower-case words, with camelCase and snake/kebab pieces split out (plus the joined forms)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    out = _WORD.findall(spaced.lower()) + [w.lower() for w in re.findall(r"[A-Za-z0-9][A-Za-z0-9_.-]*", text)]
    return [w for w in out if w not in _STOP and len(w) > 1]


def alert_terms(alerts: list[dict]) -> Counter:
    """The query: words of the firing alerts' rule names and label values."""
    q: Counter = Counter()
    for a in alerts:
        if a.get("resolved_at") is not None:
            continue
        q.update(words(a["rule"]))
        for k, v in a.get("labels", {}).items():
            if k not in ("namespace", "alertname", "template"):
                q.update(words(str(v)))
    return q


def rank(docs: list[Document], query: Counter, k: int = 12) -> list[Document]:
    """Top `k` documents by BM25 (k1=1.2, b=0.75) against the query words."""
    if not docs or not query:
        return docs[:k]
    toks = {d.id: Counter(words(d.text)) for d in docs}
    avg = sum(sum(t.values()) for t in toks.values()) / len(docs) or 1.0
    df = Counter(w for t in toks.values() for w in t)
    n = len(docs)

    def score(d: Document) -> float:
        t, length = toks[d.id], sum(toks[d.id].values())
        s = 0.0
        for w, qf in query.items():
            f = t.get(w, 0)
            if f:
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += qf * idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / avg))
        return s

    return sorted(docs, key=lambda d: (-score(d), d.id))[:k]


def collect(call: CallTool, now: float) -> list[Document]:
    """Read topology, deployments, pods, nodes, recent changes and events and one telemetry
    summary (request and error rates, p95 latency per service) through the ordinary tools, as
    documents: one per service, per recent change, per unhealthy node, per object with warnings."""
    since = max(0.0, now - RECENT_S)
    view = _read(call, now, since)
    return (
        _service_docs(view, _traffic(view)) + _change_docs(view) + _node_docs(view) + _event_docs(view, since)
    )


def _read(call: CallTool, now: float, since: float) -> dict[str, Any]:
    """The raw tool data retrieval works from (a tool that fails contributes nothing)."""

    def data(raw: dict) -> dict:
        r = call(raw)
        return r.data if r.ok and isinstance(r.data, dict) else {}

    topology = data({"tool": "get_topology"})
    k8s = {
        res: data({"tool": "get_k8s_state", "resource": res, **({"limit": 2000} if res == "events" else {})})
        for res in ("deployments", "pods", "nodes", "events")
    }
    return {
        "topology": topology,
        **k8s,
        "changes": data({"tool": "get_deploy_history", "since_s": since, "limit": 100}),
        "rates": data(
            {
                "tool": "query_metrics",
                "metric": "traces_span_metrics_calls_total",
                "function": "rate",
                "group_by": ["service_name", "status_code"],
                "start_s": now,
                "end_s": now,
            }
        ),
        "p95": data(
            {
                "tool": "query_metrics",
                "metric": "traces_span_metrics_duration_milliseconds",
                "function": "p95",
                "group_by": ["service_name"],
                "start_s": now,
                "end_s": now,
            }
        ),
    }


def _traffic(view: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per service: request rate, error rate and p95 latency at the invocation time."""
    req: dict[str, float] = {}
    err: dict[str, float] = {}
    for s in view["rates"].get("series", []):
        v = s["values"][-1][1] if s["values"] else None
        svc = s["labels"].get("service_name", "")
        if v is not None:
            req[svc] = req.get(svc, 0.0) + v
            if s["labels"].get("status_code") == "STATUS_CODE_ERROR":
                err[svc] = err.get(svc, 0.0) + v
    lat = {
        s["labels"].get("service_name", ""): s["values"][-1][1]
        for s in view["p95"].get("series", [])
        if s["values"]
    }
    return {"req": req, "err": err, "p95": lat}


def _service_docs(view: dict[str, Any], traffic: dict[str, dict[str, float]]) -> list[Document]:
    services = [s["name"] for s in view["topology"].get("services", [])]
    edges = view["topology"].get("edges", [])
    dep_by = {d["name"]: d for d in view["deployments"].get("items", [])}
    pods_by: dict[str, list[dict]] = {}
    for p in view["pods"].get("items", []):
        owner = pod_owner(
            p["name"], services
        )  # the longest service prefix: frontend-proxy-x is not frontend's
        if owner is not None:
            pods_by.setdefault(owner, []).append(p)
    req, err, lat = traffic["req"], traffic["err"], traffic["p95"]
    docs = []
    for svc in services:
        calls = [e["to"] for e in edges if e["from"] == svc]
        callers = [e["from"] for e in edges if e["to"] == svc]
        bad = [
            f"{p['name']} {p['status']} ready={p['ready']} restarts={p['restarts']}"
            + (f" last_terminated={p['last_terminated_reason']}" if p.get("last_terminated_reason") else "")
            for p in pods_by.get(svc, [])
            if p["status"] != "Running" or p["ready"] != "1/1" or p["restarts"]
        ]
        d = dep_by.get(svc, {})
        ratio = err.get(svc, 0.0) / req[svc] if req.get(svc) else 0.0
        hist = ", ".join(
            f"r{h['revision']}@t={h['time_s']:g} {h['cause']}" for h in d.get("history", [])[-3:]
        )
        text = (
            f"service {svc}: {req.get(svc, 0.0):.2f} req/s, error ratio {ratio:.1%}, "
            f"p95 {lat.get(svc) or 0:.0f} ms; "
            f"deployment ready {d.get('ready', '?')} revision {d.get('revision', '?')} "
            f"image {d.get('image', '?')}; "
            f"recent revisions: {hist or 'none'}; calls {', '.join(calls) or 'nothing'}; "
            f"called by {', '.join(callers) or 'nobody'}"
            + (f"; unhealthy pods: {'; '.join(bad[:5])}" if bad else "")
        )
        docs.append(Document(f"service/{svc}", "service", text))
    return docs


def _change_docs(view: dict[str, Any]) -> list[Document]:
    return [
        Document(
            f"change/{c['id']}",
            "change",
            f"change {c['id']} to {c['service']} ({c['kind']}, {c['status']}, revision "
            f"{c.get('revision')}) submitted t={c['submitted_s']:g}: {c['message']}\n"
            f"{(c.get('diff') or '')[:800]}",
        )
        for c in view["changes"].get("changes", [])
    ]


def _node_docs(view: dict[str, Any]) -> list[Document]:
    return [
        Document(
            f"node/{n['name']}",
            "node",
            f"node {n['name']} in {n['zone']}: {n['status']}, schedulable={n['schedulable']}",
        )
        for n in view["nodes"].get("items", [])
        if n["status"] != "Ready" or not n["schedulable"]
    ]


def _event_docs(view: dict[str, Any], since: float) -> list[Document]:
    by_obj: dict[str, list[dict]] = {}
    for e in view["events"].get("items", []):
        if e.get("kind") == "Warning" and e.get("time_s", 0) >= since:
            by_obj.setdefault(e["object"], []).append(e)
    return [
        Document(
            f"events/{obj}",
            "events",
            f"{len(evs)} warning event(s) on {obj}, last t={evs[-1]['time_s']:g}: "
            f"{evs[-1]['reason']}: {evs[-1]['message']}",
        )
        for obj, evs in sorted(by_obj.items())
    ]


def render(docs: list[Document]) -> str:
    return "\n".join(f"[{d.id}] {d.text}" for d in docs) or "(nothing retrieved)"


__all__ = ["Document", "alert_terms", "collect", "rank", "render", "words"]
