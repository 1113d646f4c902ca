"""Degenerate policies against the holes rules v3 closes: one policy per hole a second adversarial
review found in rules v2 (issue 31), written from the rules' text. Benchmark-health checks, never
leaderboard entries; like `adversarial.py`'s, they read no metric, log, trace, config or source.

- `score_prober`: the running score as an oracle of the ground truth. It keeps one probe incident
  on one alert and reads the score's change at the next invocation: up, the alert matched a fault
  and the probe is kept; otherwise it re-points the probe at the next alert (re-pointing an
  unmatched incident was free). Runners now pass an agent no score (`agents.base.PUBLIC_INFO`), so
  it reads nothing and re-points blindly.
- `class_claimer`: claims judged only at the end. One standing incident per alerting service,
  naming the artifact most of the service's catalog rows accept (its `deployment/<svc>` class),
  re-pointed every invocation at whatever the service fires now: under v2 the claim stopped being
  false as soon as any fault of that class locked it, however late.
- `entry_point_incidents`: non-specific evidence. One incident per alert on the entry point and the
  services nearly as shared (in the scope of at least half of the catalog's rows): one alert is 100%
  of its incident, and those services are in nearly every fault's scope.
- `half_and_half`: an incident pooling two services' alerts one each, eligible for both faults at
  exactly half under v2.
- `late_sweeper`: late matches launder false incidents. One incident per alert while the run goes;
  at the last invocations it re-points each likely duplicate (its workload had an incident before)
  at one of the oldest alerts, so that it takes a fault whose deadline has passed (matched late,
  it cost nothing under v2).
- `licensed_actor`: called-for interventions stay free. `single_guess`'s incidents, and every
  invocation a restart of every service it holds a named incident for, citing that incident: once
  a guess locks, v2 called every later action on that service's scope for, free, and credited it
  with later faults' artifact fixes.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import gymnasium as gym

from .adversarial import SingleGuessAgent, _Guesser


class ScoreProberAgent(_Guesser):
    """One probe incident, kept when the score rose since it was pointed, else re-pointed."""

    name = "score_prober"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        st = self.state
        used: set[str] = st.setdefault("used", set())
        score = info.get("score")  # absent: the runners no longer pass it
        probe, pointed = st.get("probe"), st.get("pointed")
        rose = score is not None and st.get("last") is not None and score > st["last"] + 1e-9
        st["last"] = score
        fresh = [a["id"] for a in self._alerts(call) if a["id"] not in used]
        if probe is not None and rose:
            st["probe"] = probe = None  # it matched: keep it, probe with a new incident
        if not fresh:
            return None
        nxt = fresh[0]
        used.add(nxt)
        if probe is None:
            r = call({"tool": "open_incident", "alert_ids": [nxt], "title": "probe"})
            if r.ok:
                st["probe"], st["pointed"] = r.data["id"], nxt
        else:
            call(
                {
                    "tool": "update_incident",
                    "incident_id": probe,
                    "add_alert_ids": [nxt],
                    "remove_alert_ids": [pointed],
                }
            )
            st["pointed"] = nxt
        return None


def class_name(env: Any, service: str) -> str:
    """The accepted name most of `service`'s catalog rows share (its class), or its deployment."""
    rows = [f for f in env.catalog.faults[env.app.app] if f.target == service]
    names = Counter(n for f in rows for n in {f.artifact, *f.aliases})
    # ties go to the first name in sorted order: a set's order changes with the process's hash seed
    return min(names, key=lambda n: (-names[n], n)) if names else f"deployment/{service}"


class ClassClaimerAgent(_Guesser):
    """Per alerting service, one incident claiming its class, re-pointed at what fires now."""

    name = "class_claimer"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        call = u.call_tool
        incidents: dict[str, tuple[str, list[str]]] = self.state.setdefault("incidents", {})
        services, _ = self._topology(call)
        for wl, ids in self._workloads(call, self._alerts(call, "firing")).items():
            if wl not in services:
                continue
            held = incidents.get(wl)
            if held is None:
                r = call({"tool": "open_incident", "alert_ids": ids, "title": f"class of {wl}"})
                if r.ok:
                    incidents[wl] = (r.data["id"], ids)
                    self._root(call, r.data["id"], wl, class_name(u, wl))
                continue
            inc, before = held
            gone = [i for i in before if i not in ids]
            new = [i for i in ids if i not in before]
            if gone or new:
                call(
                    {
                        "tool": "update_incident",
                        "incident_id": inc,
                        "add_alert_ids": new,
                        "remove_alert_ids": gone,
                    }
                )
                incidents[wl] = (inc, ids)
        return None


class EntryPointIncidentsAgent(_Guesser):
    """One incident per alert on the entry point and every service nearly as shared: those in the
    scope of at least `min_share` of the app's catalog rows (public data; 0.5 reaches one tier past
    the rules' non-specific services: Astronomy Shop's checkout at 58%, Train Ticket's
    ts-preserve-other-service at 57%)."""

    name = "entry_point_incidents"

    def __init__(self, guesses: int = 3, min_share: float = 0.5):
        super().__init__(guesses)
        self.min_share = min_share

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        call = u.call_tool
        held: set[str] = self.state.setdefault("held", set())
        _, entry = self._topology(call)
        shared = {s for s, x in u.catalog.scope_share(u.app.app).items() if x >= self.min_share} | {entry}
        for wl, ids in self._workloads(call, self._alerts(call)).items():
            if wl not in shared:
                continue
            for aid in ids:
                if aid not in held:
                    call({"tool": "open_incident", "alert_ids": [aid], "title": "entry point"})
                    held.add(aid)
        return None


class HalfAndHalfAgent(_Guesser):
    """Incidents of two alerts from two different services, one each."""

    name = "half_and_half"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        held: set[str] = self.state.setdefault("held", set())
        by_wl = self._workloads(call, self._alerts(call))
        pending = [(wl, i) for wl, ids in by_wl.items() for i in ids if i not in held]
        while len(pending) >= 2:
            wl, first = pending.pop(0)
            k = next((j for j, (w, _) in enumerate(pending) if w != wl), None)
            if k is None:
                break
            _, second = pending.pop(k)
            call({"tool": "open_incident", "alert_ids": [first, second], "title": "pair"})
            held.update((first, second))
        return None


class LateSweeperAgent(_Guesser):
    """One incident per alert; in the last two invocations each incident likely to be a duplicate (its
    workload had an incident before) is re-pointed at one of the oldest alerts, for a late match."""

    name = "late_sweeper"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        call = u.call_tool
        incidents: dict[str, str] = self.state.setdefault("incidents", {})  # incident -> its alert
        alerts = self._alerts(call)
        held = set(incidents.values())
        for a in alerts:
            if a["id"] not in held:
                r = call({"tool": "open_incident", "alert_ids": [a["id"]], "title": a["rule"]})
                if r.ok:
                    incidents[r.data["id"]] = a["id"]
        now = float(info.get("time_s", 0.0))
        if now + 2 * u.interval_s < u.run_s or self.state.get("swept"):
            return None
        self.state["swept"] = True
        workload = {aid: wl for wl, ids in self._workloads(call, alerts).items() for aid in ids}
        seen: set[str] = set()
        duplicates = []
        for inc, aid in incidents.items():  # in the order they were opened
            wl = workload.get(aid, "")
            if wl in seen:
                duplicates.append(inc)
            seen.add(wl)
        oldest = [a["id"] for a in sorted(alerts, key=lambda a: a["fired_at"])]
        for inc, target in zip(duplicates, oldest):
            if target != incidents[inc]:
                call(
                    {
                        "tool": "update_incident",
                        "incident_id": inc,
                        "add_alert_ids": [target],
                        "remove_alert_ids": [incidents[inc]],
                    }
                )
                incidents[inc] = target
        return None


class LicensedActorAgent(SingleGuessAgent):
    """`single_guess`, plus a restart of every service it named, citing that service's incident."""

    name = "licensed_actor"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        super().invoke(env, obs, info)
        call = env.unwrapped.call_tool
        services, _ = self._topology(call)
        for wl, inc in self.state.get("incidents", {}).items():
            if wl in services:
                call({"tool": "restart", "incident_id": inc, "service": wl})
        return None


V3_ADVERSARIAL_AGENTS: dict[str, type] = {
    cls.name: cls
    for cls in (
        ScoreProberAgent,
        ClassClaimerAgent,
        EntryPointIncidentsAgent,
        HalfAndHalfAgent,
        LateSweeperAgent,
        LicensedActorAgent,
    )
}

__all__ = [
    "V3_ADVERSARIAL_AGENTS",
    "ClassClaimerAgent",
    "EntryPointIncidentsAgent",
    "HalfAndHalfAgent",
    "LateSweeperAgent",
    "LicensedActorAgent",
    "ScoreProberAgent",
    "class_name",
]
