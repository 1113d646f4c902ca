"""The change correlator: a baseline that suspects recent changes and blames one only when its own
service's telemetry steps up right after it.

Why it exists: "what changed?" is the first question of most real incident reviews, and reading the
change planes is fair play; but most changes are harmless, and a change says nothing by its
message, diff, author or timing. So each invocation it

1. reads the change planes through the tools (`change_planes.PlaneReader`: pipeline commits,
   hand-made rollout revisions, replicas, nodes, NetworkPolicies) for changes of the last
   `window_s` seconds;
2. reads the telemetry of every service since its last look (`symptoms.Telemetry`: error ratio,
   mean latency, restarts, bad waiting reasons, CPU throttling, running-but-unready pods, request
   rate; nine PromQL range queries, whatever the number of changes), and the error logs of a
   service it is about to blame;
3. for each change not yet decided, asks whether a signal of the changed service was quiet right
   before the change and stepped up within a minute or two after it (restarts: five, leaks take
   a while; requests only once the new pods serve) and still is, and whether that is not
   explained otherwise: by the same rise in a service it calls (a failing dependency moves its
   callers' errors and latency too), by error logs that blame calls to a service the change does
   not name or a backend answering unavailable (`peer.service`, `error.type`), by the service's
   next change (the last change before a step is the suspect; two within 30 s are one suspect
   and neither is blamed), or by being the entry point (whose errors are everyone's);
4. blames such a change once some alert naming its service or a caller has fired since the step
   began: an incident with those alerts, a root cause naming the service and the changed artifact
   in the catalog's artifact-id form, and the natural undo (rollback to the revision before it,
   the old config value or flag variant, delete the policy, the old replica count), once. It never
   acts on anything it has not blamed.

Node changes are read but, by default, not blamed: every service with pods on a cordoned or
failed node loses them, and which one the change broke the telemetry rarely tells. Alerts no
change explains are left alone: without a change to point at, naming an artifact is a guess, and
a wrong name costs what a right one earns. It reads only its `AgentView` (tools and `app`; not
even the public catalog) and keeps its notes in Python, at most `budget` calls an invocation.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from ..catalog.apps import label_place
from ..core.clock import METRIC_STEP_S
from ..core.run_record import Usage
from .base import zero_usage
from .change_planes import Change, PlaneReader
from .symptoms import READ_BEFORE_S, Step, Telemetry

OWN_SIGNALS = ("error_ratio", "latency", "restarts", "waiting", "throttle", "not_ready")
PROPAGATING = ("error_ratio", "latency")  # signals a failing dependency passes up to its callers
# Throttling alone is a capacity note, not a failure: it counts beside a failing signal only.
SUPPORTING = ("throttle",)
# Pods that never get ready, and nothing else, is a rollout that did not finish: a changed probe or
# image (or replicas, or a node) says why; code and config changes that break pods crash them
# (restarts, waiting reasons) or fail requests.
READINESS_PLANES = ("image", "probe", "replicas", "node")
SERVICE_IMPACT = ("error_ratio", "request_rate_drop")  # what a node's change must show (see _judge)
# A service that stops receiving requests is down only if it was taken down (its replicas); with its
# pods up, fewer requests mean its callers fail first.
DROP_PLANES = ("replicas",)
ROLLOUT_PLANES = ("code", "config", "image", "limits", "probe")  # they act once new pods serve
# A rollout's pods show at once (waiting, not ready, restarting); its requests only once they serve.
SERVED = ("error_ratio", "latency", "throttle")
SERVING_S = METRIC_STEP_S
LOG_SHARE = 0.6  # share of error logs that must blame other services' calls to clear a change
AMBIGUOUS_S = 30.0  # the last change before a step is the suspect; two within this long are one


@dataclass(frozen=True)
class Verdict:
    """Why a change is blamed: its service and the steps of that service after it."""

    service: str
    steps: tuple[Step, ...]

    def text(self) -> str:
        return "; ".join(s.text() for s in self.steps)


class ChangeCorrelator:
    """Blames a recent change when its service's telemetry steps up right after it (see module)."""

    name = "change_correlator"

    def __init__(self, window_s: float = 900.0, budget: int = 40, claim_nodes: bool = False) -> None:
        """`claim_nodes`: also blame node changes. Off by default: every service with pods on a
        cordoned or failed node loses them, and which one the change broke the telemetry rarely tells
        (on the leaderboard seeds and two more, 1 of 6 such claims named the right service)."""
        if window_s < 120 or budget < 20:
            raise ValueError("window_s must be at least 120 s and budget at least 20 calls")
        self.window_s, self.budget, self.claim_nodes = float(window_s), int(budget), claim_nodes
        self.usage: Usage = zero_usage()
        self.log: list[tuple[float, str, str]] = []  # (time, change key, why): what it blamed
        self.trace: dict[str, list[str]] = {}  # change key -> its verdicts, one per look (diagnostics)
        self._fresh()

    def _fresh(self) -> None:
        self.planes = PlaneReader()
        self.telemetry = Telemetry(self.window_s + READ_BEFORE_S)
        self.decided: set[str] = set()
        self.used_alerts: set[str] = set()
        self.below: dict[str, set[str]] = {}  # service -> everything it calls, transitively
        self.callers: dict[str, set[str]] = {}  # service -> the services that call it directly
        self.entry = ""
        self.owners: dict[str, str | None] = {}  # pod -> its service
        self.calls = 0

    def reset(self, env: gym.Env, seed: int | None) -> None:
        self.usage = zero_usage()
        self.log = []
        self.trace = {}
        self._fresh()

    # ------------------------------------------------------------ one invocation
    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        self.calls = 0

        def call(c: dict) -> Any:
            self.calls += 1
            return u.call_tool(c)

        res = call({"tool": "get_alerts", "state": "all", "limit": 2000})
        if not res.ok:
            return None
        now = float(res.data["now"])
        since = max(0.0, now - self.window_s)
        if not self.below:
            topo = call({"tool": "get_topology"})
            if topo.ok:
                self.entry = topo.data["entry_point"]
                self.below = _downstream(topo.data["edges"])
                for e in topo.data["edges"]:
                    self.callers.setdefault(e["to"], set()).add(e["from"])
        services = set(u.app.service_names)

        def owner(pod: str) -> str | None:
            if pod not in self.owners:
                found = u.app.label_services({"pod": pod})
                self.owners[pod] = next(iter(found)) if len(found) == 1 else None
            return self.owners[pod]

        start = max(0.0, since - READ_BEFORE_S)
        tel = self.telemetry
        tel.update(call, now, owner)
        changes = self.planes.read(call, u.app, tel, now, since, owner)
        alerts = [a for a in res.data["alerts"] if a["fired_at"] >= start]
        for ch in sorted(changes, key=lambda c: c.at_s):
            if ch.key in self.decided or not ch.artifact or self.calls > self.budget - 5:
                continue
            others = [c for c in changes if c.service == ch.service and c.key != ch.key]
            later = [c for c in others if c.at_s > ch.at_s]
            seen = self.trace.setdefault(ch.key, [])
            head = f"t={now:.0f} {ch.plane} {ch.artifact} at={ch.at_s:.0f}: "
            if any(c.reverts or c.artifact == ch.artifact for c in later):
                seen.append(head + "superseded")
                continue  # reverted or changed again since: it is not what runs now
            if any(c.artifact and ch.at_s - AMBIGUOUS_S <= c.at_s <= ch.at_s for c in others):
                seen.append(head + "ambiguous")
                continue  # another change just before it: a step after both cannot say which
            until = min((c.at_s for c in later), default=now)
            verdict = self._judge(call, tel, ch, now, services, until)
            seen.append(head + (verdict.text() if verdict else "no step"))
            if verdict is None:
                continue
            # the alerts of the symptom: its service's and its callers', since the step began
            scope = {verdict.service} | self.callers.get(verdict.service, set())
            first = max(ch.at_s, min(s.onset_s for s in verdict.steps) - METRIC_STEP_S)
            ids = [
                a["id"]
                for a in alerts
                if first <= a["fired_at"] <= until + 60
                and a["id"] not in self.used_alerts
                and scope & self._named(u.app, a["labels"])
            ]
            if not ids:
                seen[-1] += " (no alert yet)"
                continue  # nothing has alerted on it yet: look again next time
            self._blame(call, ch, verdict, ids, now)
        self.planes.snapshot(call, sorted(services), max(0, self.budget - self.calls))
        return None

    # ------------------------------------------------------------ judging one change
    def _judge(
        self, call: Callable, tel: Telemetry, ch: Change, now: float, services: set[str], until: float
    ) -> Verdict | None:
        """The service whose steps after the change blame it (None: no clear step). A step that
        starts after the service's next change belongs to that one; failed requests whose error logs
        blame calls to a service the change does not name are that service's."""
        if ch.service is None and not self.claim_nodes:
            return None
        candidates = ch.suspects if ch.service is None else (ch.service,)
        drops = ch.plane in DROP_PLANES or ch.service is None
        lag = 1.0 if ch.plane in ROLLOUT_PLANES else -METRIC_STEP_S
        verdicts = [
            v
            for s in candidates
            if s in services and (v := self._steps(tel, s, ch.at_s, now, until, drops, lag))
        ]
        if len(verdicts) != 1:
            return None  # nothing moved, or several services did and the change cannot say which
        v = verdicts[0]
        errors = [s for s in v.steps if s.signal == "error_ratio"]
        if errors and self._calls_elsewhere(call, ch, v.service, errors[0].onset_s, now):
            v = Verdict(v.service, tuple(s for s in v.steps if s.signal != "error_ratio"))
        signals = {s.signal for s in v.steps}
        if not signals:
            return None
        if signals <= set(SUPPORTING) | {"not_ready"} and not (
            "not_ready" in signals and ch.plane in READINESS_PLANES
        ):
            return None
        if ch.service is None and not signals & set(SERVICE_IMPACT):
            return None  # every service on a node restarts its pods: only one that fails requests says which
        if not any(s.ongoing for s in v.steps if s.signal not in SUPPORTING):
            return None  # over already (reverted, or fixed): too late to report it
        return v

    def _steps(
        self, tel: Telemetry, svc: str, at_s: float, now: float, until: float, drops: bool, lag: float
    ) -> Verdict | None:
        steps = [
            s
            for sig in OWN_SIGNALS
            if (s := tel.step(sig, svc, at_s, now, lag + (SERVING_S if sig in SERVED else 0.0))) is not None
        ]
        drop = tel.calls_dropped(svc, at_s, now) if drops else None
        if drop is not None:
            steps.append(drop)
        kept = []
        for s in steps:
            if s.onset_s >= until:
                continue  # it began after the service's next change: it may be that one's
            if s.signal in PROPAGATING and (svc == self.entry or self._downstream_explains(tel, svc, s, now)):
                continue  # the entry point's errors and latency are every service's
            kept.append(s)
        return Verdict(svc, tuple(kept)) if kept else None

    def _calls_elsewhere(self, call: Callable, ch: Change, svc: str, since: float, now: float) -> bool:
        """Most of the service's error logs since `since` are failed calls to services the change
        does not name (`peer.service`), or a backend answering unavailable (`error.type`): a
        dependency failing, whatever changed here. A config key, source file, flag or policy names a
        peer by its words (PRODUCT_CATALOG_ADDR, InsidePaymentClient.java, deny-x-to-cart)."""
        res = call(
            {
                "tool": "search_logs",
                "service": svc,
                "level": "ERROR",
                "start_s": since,
                "end_s": now,
                "limit": 100,
            }
        )
        logs = res.data["logs"] if res.ok else []
        foreign = 0
        for log in logs:
            attrs = log.get("attributes") or {}
            peer = attrs.get("peer.service")
            foreign += (
                bool(peer and not names_peer(ch.artifact, peer)) or attrs.get("error.type") == "unavailable"
            )
        return bool(logs) and foreign >= LOG_SHARE * len(logs)

    def _downstream_explains(self, tel: Telemetry, svc: str, step: Step, now: float) -> bool:
        """A service `svc` calls (directly or not) rose the same way when it did: the failure may be
        theirs, passed up the call chain."""
        return any(tel.rose(step.signal, callee, step.onset_s, now) for callee in self.below.get(svc, ()))

    @staticmethod
    def _named(app: Any, labels: dict[str, str]) -> set[str]:
        place = label_place(labels)
        return app.label_services(labels) | ({place[1]} if place else set())

    # ------------------------------------------------------------ blaming and undoing
    def _blame(self, call: Callable, ch: Change, verdict: Verdict, ids: list[str], now: float) -> None:
        self.decided.add(ch.key)
        opened = call({"tool": "open_incident", "alert_ids": ids, "title": f"after change {ch.artifact}"})
        if not opened.ok:
            return
        inc = opened.data["id"]
        self.used_alerts.update(ids)
        why = f"{ch.plane} change {ch.note} at t={ch.at_s:.0f}s; then {verdict.text()}"
        self.log.append((now, ch.key, why))
        call(
            {
                "tool": "set_root_cause",
                "incident_id": inc,
                "services": [verdict.service],
                "artifact": ch.artifact,
                "summary": why[:2000],
            }
        )
        undo = self._undo_call(call, ch, verdict.service)
        if undo is None:
            return
        res = call({**undo, "incident_id": inc})
        if res.ok:
            self.planes.note_action(now, undo["tool"], undo.get("service") or undo.get("target", ""))

    @staticmethod
    def _undo_call(call: Callable, ch: Change, service: str) -> dict | None:
        """The change's undo as a tool call: a rollback goes to the newest revision before the change
        (None when the deployment is no longer on a revision made since)."""
        undo = dict(ch.remedy)
        if undo["tool"] == "restart":
            return {"tool": "restart", "service": service}
        if undo["tool"] != "rollback":
            return undo
        before = undo.pop("before_s")
        dep = call({"tool": "get_k8s_state", "resource": "deployments", "service": undo["service"]})
        hist = dep.data["items"][0]["history"] if dep.ok and dep.data["items"] else []
        older = [h["revision"] for h in hist if h["time_s"] < before - 1]
        if not older or not hist or hist[-1]["time_s"] < before - 1:
            return None
        return {**undo, "revision": max(older)}


def _words(text: str) -> list[str]:
    """Lower-case words of an identifier: PRODUCT_CATALOG_ADDR, InsidePaymentClient.java, redis-cart."""
    return [w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+", text)]


def names_peer(subject: str, peer: str) -> bool:
    """Whether a change's subject (its artifact id) names service `peer`: the peer's words, less
    Train Ticket's `ts`/`service`, in a row (`productcatalogservice` as one word or as its parts)."""
    words = _words(subject.rpartition(":")[2] or subject)
    core = [w for w in _words(peer) if w not in ("ts", "service")] or _words(peer)
    joined = "".join(_words(peer))
    n = len(core)
    return joined in words or any(words[i : i + n] == core for i in range(len(words) - n + 1))


def _downstream(edges: list[dict]) -> dict[str, set[str]]:
    """Service -> every service its calls reach (transitively), from the topology's edges."""
    calls: dict[str, set[str]] = {}
    for e in edges:
        calls.setdefault(e["from"], set()).add(e["to"])
    out = {}
    for svc in calls:
        seen, stack = set(), [svc]
        while stack:
            for nxt in calls.get(stack.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
        out[svc] = seen - {svc}
    return out


__all__ = ["ChangeCorrelator", "Verdict", "names_peer"]
