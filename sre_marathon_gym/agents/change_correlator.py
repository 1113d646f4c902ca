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

from collections.abc import Callable
from typing import Any

import gymnasium as gym

from ..catalog.apps import label_place
from ..core.clock import METRIC_STEP_S
from ..core.run_record import Usage
from ..tools.change_judge import AMBIGUOUS_S, ChangeJudge, Verdict, names_peer
from ..tools.change_planes import Change, PlaneReader, undo_call
from ..tools.symptoms import READ_BEFORE_S, Telemetry
from .base import zero_usage


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
        self.judge: ChangeJudge | None = None  # built from the topology at the first look
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
        if self.judge is None:
            topo = call({"tool": "get_topology"})
            if not topo.ok:
                return None
            self.judge = ChangeJudge(topo.data["edges"], topo.data["entry_point"], self.claim_nodes)
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
            verdict = self.judge.judge(call, tel, ch, now, services, until)
            seen.append(head + (verdict.text() if verdict else "no step"))
            if verdict is None:
                continue
            # the alerts of the symptom: its service's and its callers', since the step began
            scope = {verdict.service} | self.judge.callers.get(verdict.service, set())
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
        undo = undo_call(call, ch, verdict.service)
        if undo is None:
            return
        res = call({**undo, "incident_id": inc})
        if res.ok:
            self.planes.note_action(now, undo["tool"], undo.get("service") or undo.get("target", ""))


__all__ = ["ChangeCorrelator", "Verdict", "names_peer"]  # the last two from tools.change_judge
