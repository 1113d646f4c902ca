"""Degenerate policies that diagnose nothing: benchmark-health checks, never leaderboard entries.

Why they exist: a benchmark is an adversarial setting, and every agent (an RL policy first of all)
finds what a rule lets it get away with. Each policy here is the cheapest way to satisfy one
scoring rule without looking at telemetry; under Marathon-Score rules v2 every one of them must
score near zero (tests/scoring/test_adversarial.py), while under rules v1 several beat the paper's
best method. They read only the alert list, the topology, the deploy history and the public fault
catalog (the strongest guesser a catalog reader can build), and keep Python state between
invocations (they are not trying to be realistic agents).

- `one_incident`: every alert ever seen goes into ONE incident.
- `incident_per_alert`: one incident per alert.
- `shotgun`: one incident per guessed root cause (every service x its first `guesses` catalog
  names, deploy-history names first), each holding every alert.
- `cycle_guesses`: one incident per alerting workload, naming the next guess every invocation.
- `guess_per_incident`: per alerting workload, one incident per guess, each holding its alerts.
- `act_on_everything`: `guess_per_incident`, and every invocation rolls back and restarts every
  service with a firing alert.
- `single_guess`: one incident per alerting workload, named once with the workload's most frequent
  catalog row (the best guess a catalog prior gives, never revised).
- `revert_watcher`: reads the change log after the fact. A code or config change the orchestrator
  reverted (`Revert "<message>"`) was a fault, so it opens an incident per reverted change holding
  the service's alerts and names the file or key read off the diff. What it knows arrives at the
  fault's deadline, so under v2 (correlation and localization before the deadline) it earns nothing;
  without that rule it scored 30-36 on the leaderboard seeds, and 22-31 acting once at the end.

ORCA-bench has the same hole in its published metrics (accuracy: every plausible flag named;
hallucination: no plausible flag named), so the suite holds degenerate RCA reports too
(`ORCA_ADVERSARIAL_AGENTS`, run with `sre-marathon orca evaluate --agent NAME`); each must score 0
on the sound accuracy and on depth over all tasks:

- `every_flag`: names all 18 feature flags (each with its catalog mechanism), no investigation.
- `every_flag_with_signals`: the same, each dated 30 minutes before "now" and citing the flag's
  public signal series as evidence (the most a reader of the flag table can put in a report).
- `every_service`: names every service of the Astronomy Shop as a root cause.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import gymnasium as gym

from ..catalog.flag_behaviour import FLAG_BEHAVIOUR
from ..core.run_record import Usage
from ..orca.evidence import DURATION, flag_signals
from ..orca.flags import flag_mechanisms, flag_services
from ..orca.report import MetricRef, RcaReport, RootCause
from .base import zero_usage
from .orca_baselines import Call, OrcaAgent, TaskView
from .runbook import workload_of


def catalog_guesses(env: Any, service: str) -> list[str]:
    """Distinct names a catalog reader would try for `service`, one per catalog row (its shortest
    accepted name, which also matches every revision of a changed file), in catalog order."""
    out: list[str] = []
    for f in env.catalog.faults[env.app.app]:
        if f.target == service:
            name = min((f.artifact, *f.aliases), key=lambda n: (len(n), n))
            if name not in out:
                out.append(name)
    return out or [f"deployment/{service}"]


class _Guesser:
    """Shared pieces: alerts by workload, and guesses ordered deploy-history first."""

    name = "adversarial"

    def __init__(self, guesses: int = 3):
        if guesses < 1:
            raise ValueError(f"guesses must be at least 1, got {guesses}")
        self.guesses = guesses
        self.usage: Usage = zero_usage()
        self.state: dict[str, Any] = {}

    def reset(self, env: gym.Env, seed: int | None) -> None:
        self.usage = zero_usage()
        self.state = {}

    @staticmethod
    def _alerts(call: Any, state: str = "all") -> list[dict]:
        res = call({"tool": "get_alerts", "state": state, "limit": 2000})
        return res.data["alerts"] if res.ok else []

    def _topology(self, call: Any) -> tuple[list[str], str]:
        if "services" not in self.state:
            topo = call({"tool": "get_topology"})
            self.state["services"] = [s["name"] for s in topo.data["services"]] if topo.ok else []
            self.state["entry"] = topo.data["entry_point"] if topo.ok else ""
        return self.state["services"], self.state["entry"]

    def _workloads(self, call: Any, alerts: list[dict]) -> dict[str, list[str]]:
        services, entry = self._topology(call)
        out: dict[str, list[str]] = {}
        for a in alerts:
            out.setdefault(workload_of(a["labels"], services, entry), []).append(a["id"])
        return out

    def _guesses(self, env: Any, call: Any, workload: str) -> list[str]:
        """Names to try for a workload: a node or zone names itself; a service its recently changed
        artifacts (mined from the deploy history's messages and diffs) first, then its catalog rows."""
        if workload.startswith(("node/", "zone/")):
            return [workload]
        names = catalog_guesses(env, workload)
        hist = call({"tool": "get_deploy_history", "service": workload})
        changes = hist.data["changes"] if hist.ok else []
        text = " ".join(f"{c.get('message', '')} {c.get('diff', '')}" for c in changes)
        mined = [n for n in names if n.rsplit(":", 1)[-1].split("@")[0].rsplit("/", 1)[-1] in text]
        return [*mined, *(n for n in names if n not in mined)]

    @staticmethod
    def _services(workload: str, entry: str) -> list[str]:
        return [entry] if workload.startswith(("node/", "zone/")) else [workload]

    @staticmethod
    def _hold(
        call: Any, incidents: dict, key: Any, ids: list[str], new: list[str], title: str
    ) -> tuple[str | None, bool]:
        """The incident kept under `key`, opened with `ids` if there is none yet, else given the `new`
        alerts; returns (its id or None if opening failed, whether it was opened now)."""
        inc = incidents.get(key)
        if inc is None:
            r = call({"tool": "open_incident", "alert_ids": ids, "title": title})
            if not r.ok:
                return None, False
            incidents[key] = r.data["id"]
            return r.data["id"], True
        if new:
            call({"tool": "update_incident", "incident_id": inc, "add_alert_ids": new})
        return inc, False

    def _workload_incidents(self, call: Any, state: str = "all") -> list[tuple[str, str, bool]]:
        """One incident per alerting workload, opened or given its new alerts:
        [(workload, incident id, opened now)]."""
        incidents: dict[str, str] = self.state.setdefault("incidents", {})
        held: set[str] = self.state.setdefault("held", set())
        out = []
        for wl, ids in self._workloads(call, self._alerts(call, state)).items():
            new = [i for i in ids if i not in held]
            inc, fresh = self._hold(call, incidents, wl, ids, new, f"alerts on {wl}")
            if inc is not None:
                held.update(ids)
                out.append((wl, inc, fresh))
        return out

    def _root(self, call: Any, inc_id: str, workload: str, guess: str) -> None:
        services = self._services(workload, self.state["entry"])
        call(
            {
                "tool": "set_root_cause",
                "incident_id": inc_id,
                "services": services,
                "artifact": guess,
                "summary": "guess",
            }
        )


class OneIncidentAgent(_Guesser):
    """Every alert ever seen in one incident."""

    name = "one_incident"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        ids = [a["id"] for a in self._alerts(call)]
        if not ids:
            return None
        inc = self.state.get("incident")
        if inc is None:
            r = call({"tool": "open_incident", "alert_ids": ids, "title": "everything"})
            if r.ok:
                self.state["incident"], self.state["held"] = r.data["id"], set(ids)
            return None
        new = [i for i in ids if i not in self.state["held"]]
        if new:
            call({"tool": "update_incident", "incident_id": inc, "add_alert_ids": new})
            self.state["held"].update(new)
        return None


class IncidentPerAlertAgent(_Guesser):
    """One incident per alert."""

    name = "incident_per_alert"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        held = self.state.setdefault("held", set())
        for a in self._alerts(call):
            if a["id"] not in held:
                call({"tool": "open_incident", "alert_ids": [a["id"]], "title": a["rule"]})
                held.add(a["id"])
        return None


class ShotgunAgent(_Guesser):
    """One incident per guessed root cause of every service, each holding every alert."""

    name = "shotgun"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        call = u.call_tool
        ids = [a["id"] for a in self._alerts(call)]
        if not ids:
            return None
        services, _ = self._topology(call)
        incidents: dict[tuple[str, str], str] = self.state.setdefault("incidents", {})
        held: set[str] = self.state.setdefault("held", set())
        new = [i for i in ids if i not in held]
        for svc in services:
            for guess in self._guesses(u, call, svc)[: self.guesses]:
                inc, fresh = self._hold(call, incidents, (svc, guess), ids, new, f"{svc}: {guess}")
                if fresh:
                    self._root(call, inc, svc, guess)
        held.update(ids)
        return None


class CycleGuessesAgent(_Guesser):
    """One incident per alerting workload; a different guessed root cause every invocation."""

    name = "cycle_guesses"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        turn = self.state["turn"] = self.state.get("turn", -1) + 1
        for wl, inc, _ in self._workload_incidents(u.call_tool):
            guesses = self._guesses(u, u.call_tool, wl)
            self._root(u.call_tool, inc, wl, guesses[turn % len(guesses)])
        return None


class GuessPerIncidentAgent(_Guesser):
    """Per alerting workload, one incident per guess, each holding the workload's alerts."""

    name = "guess_per_incident"

    def _spread(self, env: gym.Env) -> dict[str, list[str]]:
        """Open/extend the guess incidents; returns workload -> its incident ids."""
        u = env.unwrapped
        call = u.call_tool
        incidents: dict[tuple[str, str], str] = self.state.setdefault("incidents", {})
        held: dict[str, set[str]] = self.state.setdefault("held", {})
        by_workload: dict[str, list[str]] = {}
        for wl, ids in self._workloads(call, self._alerts(call)).items():
            seen = held.setdefault(wl, set())
            new = [i for i in ids if i not in seen]
            for guess in self._guesses(u, call, wl)[: self.guesses]:
                inc, fresh = self._hold(call, incidents, (wl, guess), ids, new, f"{wl}: {guess}")
                if inc is None:
                    continue
                if fresh:
                    self._root(call, inc, wl, guess)
                by_workload.setdefault(wl, []).append(inc)
            seen.update(ids)
        return by_workload

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        self._spread(env)
        return None


class ActOnEverythingAgent(GuessPerIncidentAgent):
    """`guess_per_incident`, plus a rollback and a restart of every service with a firing alert."""

    name = "act_on_everything"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        by_workload = self._spread(env)
        services, entry = self._topology(call)
        firing = self._workloads(call, self._alerts(call, "firing"))
        for wl in firing:
            if wl not in services or not by_workload.get(wl):
                continue
            for i, tool in enumerate(("rollback", "restart")):
                incs = by_workload[wl]
                call({"tool": tool, "incident_id": incs[i % len(incs)], "service": wl})
        return None


class SingleGuessAgent(_Guesser):
    """One incident per alerting workload, named once with its most frequent catalog artifact."""

    name = "single_guess"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        u = env.unwrapped
        for wl, inc, fresh in self._workload_incidents(u.call_tool, "firing"):
            if fresh:
                self._root(u.call_tool, inc, wl, self._most_frequent(u, wl))
        return None

    @staticmethod
    def _most_frequent(env: Any, workload: str) -> str:
        if workload.startswith(("node/", "zone/")):
            return workload
        rows = Counter(
            min((f.artifact, *f.aliases), key=lambda n: (len(n), n))
            for f in env.catalog.faults[env.app.app]
            if f.target == workload
        )
        return rows.most_common(1)[0][0] if rows else f"deployment/{workload}"


# ---------------------------------------------------------------- ORCA-bench: degenerate reports
class EveryFlagReport(OrcaAgent):
    """Names every feature flag with its catalog mechanism; calls no tool."""

    name = "every_flag"

    def investigate(self, view: TaskView, call: Call) -> RcaReport:
        start = max(0.0, float(view.current_s) - 1800.0)
        return RcaReport(
            summary="one of the feature flags",
            root_causes=[
                RootCause(
                    flag=f,
                    service=flag_services(f)[0],
                    mechanism=flag_mechanisms(f)[0],
                    incident_start_s=start,
                )
                for f in FLAG_BEHAVIOUR
            ],
        )


class EveryFlagWithSignalsReport(OrcaAgent):
    """Every flag, dated 30 minutes before now, citing its public signal series as evidence."""

    name = "every_flag_with_signals"

    def investigate(self, view: TaskView, call: Call) -> RcaReport:
        start = max(0.0, float(view.current_s) - 1800.0)
        causes = []
        for f in FLAG_BEHAVIOUR:
            refs = [
                MetricRef(
                    metric=DURATION + "_sum" if sig.kind == "latency" else sig.family,
                    matchers=dict(sig.labels),
                )
                for sig in flag_signals(f)
            ][:20]
            causes.append(
                RootCause(
                    flag=f,
                    service=flag_services(f)[0],
                    mechanism=flag_mechanisms(f)[0],
                    incident_start_s=start,
                    evidence=refs,
                )
            )
        return RcaReport(summary="every flag, with its signals", root_causes=causes)


class EveryServiceReport(OrcaAgent):
    """Names every service of the app as a root cause (up to the report's 20 root causes)."""

    name = "every_service"

    def investigate(self, view: TaskView, call: Call) -> RcaReport:
        topo = call({"tool": "get_topology"})
        services = [s["name"] for s in topo.data["services"]] if topo.ok else []
        start = max(0.0, float(view.current_s) - 1800.0)
        return RcaReport(
            summary="every service",
            root_causes=[
                RootCause(service=s, mechanism="errors", incident_start_s=start) for s in services[:20]
            ],
        )


def changed_artifact(change: dict) -> str | None:
    """The catalog name of what a code or config change of the deploy history touched, read off its
    diff ("<service>:<path>" for code, "<service>:env/<KEY>" for config), or None."""
    diff = change.get("diff") or ""
    if change.get("kind") == "code":
        m = re.search(r"^--- a/(\S+)", diff, re.M)
        return f"{change['service']}:{m.group(1)}" if m else None
    if change.get("kind") == "config":
        m = re.search(r"name: (\w+)", diff)
        return f"{change['service']}:env/{m.group(1)}" if m else None
    return None


class RevertWatcherAgent(_Guesser):
    """An incident per change the orchestrator reverted, naming the changed file or key (see the
    module docstring): the change log read after the fact."""

    name = "revert_watcher"

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        call = env.unwrapped.call_tool
        hist = call({"tool": "get_deploy_history", "limit": 500})
        changes = hist.data["changes"] if hist.ok else []
        prefix = 'Revert "'
        reverted = {c["message"][len(prefix) : -1] for c in changes if c["message"].startswith(prefix)}
        done: set[str] = self.state.setdefault("done", set())
        workloads = self._workloads(call, self._alerts(call))
        for c in changes:
            artifact = changed_artifact(c)
            ids = workloads.get(c["service"])
            if c["id"] in done or c["message"] not in reverted or artifact is None or not ids:
                continue
            r = call({"tool": "open_incident", "alert_ids": ids, "title": c["message"]})
            if r.ok:
                done.add(c["id"])
                self._root(call, r.data["id"], c["service"], artifact)
        return None


ADVERSARIAL_AGENTS: dict[str, type] = {
    cls.name: cls
    for cls in (
        OneIncidentAgent,
        IncidentPerAlertAgent,
        ShotgunAgent,
        CycleGuessesAgent,
        GuessPerIncidentAgent,
        ActOnEverythingAgent,
        SingleGuessAgent,
        RevertWatcherAgent,
    )
}
ORCA_ADVERSARIAL_AGENTS: dict[str, type[OrcaAgent]] = {
    cls.name: cls for cls in (EveryFlagReport, EveryFlagWithSignalsReport, EveryServiceReport)
}

__all__ = [
    "ADVERSARIAL_AGENTS",
    "ORCA_ADVERSARIAL_AGENTS",
    "ActOnEverythingAgent",
    "CycleGuessesAgent",
    "EveryFlagReport",
    "EveryFlagWithSignalsReport",
    "EveryServiceReport",
    "GuessPerIncidentAgent",
    "IncidentPerAlertAgent",
    "OneIncidentAgent",
    "RevertWatcherAgent",
    "ShotgunAgent",
    "SingleGuessAgent",
    "catalog_guesses",
    "changed_artifact",
]
