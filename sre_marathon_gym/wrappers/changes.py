"""What an SRE looks at to localize, as observation fields: each service's recent changes and what
its telemetry (and its callers') did after each, which incident each alert sits in, and per
incident whether its root cause names a recent change, when it was last acted on and whether its
alerts have cleared.

Why a wrapper and not the env's own fields: every value here is computed from tool outputs only
(`get_deploy_history`, `get_k8s_state`, `read_config`, `query_metrics` through
`tools.change_planes.PlaneReader` and `tools.symptoms.Telemetry`, and the incident store), read
with `ToolRunner.read`, which spends none of the agent's calls and records nothing. So the fields
can carry no ground truth, and an LLM agent could compute each of them itself. The changes are
kept in `change_slots` for `MacroActions`, which acts on "change c of the list".

The changes are one list ranked the way an on-call engineer reads a change dashboard: those their
own telemetry blames first, then those followed by alerts on their service, newest first within
each. Why ranked and not per service: a policy then learns one rule for "the top change" that
holds for every service, from every episode, instead of one per (service, slot) from the few
episodes where that service changed (per service, PPO did not beat masked random in 15,000 steps).
"""

from __future__ import annotations

import math
from statistics import median
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..tools.change_judge import AMBIGUOUS_S, OWN_SIGNALS, ChangeJudge
from ..tools.change_planes import Change, PlaneReader
from ..tools.symptoms import READ_BEFORE_S, Telemetry
from .observation import ALERT_TABLE

CHANGE_PLANES = ("code", "config", "flag", "image", "limits", "probe", "replicas", "netpol", "manifest")
BLAMING_SIGNALS = (*OWN_SIGNALS, "request_rate_drop")
CHANGE_FEATURES = (
    "age_min",  # minutes since the change took effect
    "error_ratio_before",  # the changed service's error ratio, median of the 90 s before the change
    "error_ratio_now",  # ... and of the last minute
    "latency_ms_before",  # mean server latency, the same two windows
    "latency_ms_now",
    "ambiguous",  # 1: another change of the service took effect up to 30 s before it
    "telemetry_blames",  # 1: `tools.change_judge` blames it (the change correlator's verdict)
    *(f"{s}_stepped" for s in BLAMING_SIGNALS),  # the signals of that verdict (quiet, then up)
    "callers_error_stepped",  # 1: a direct caller's error ratio stepped up after the change
    "callers_latency_stepped",
    "alerts_after",  # firing alerts naming the service that fired after the change
    "claimed",  # 1: an incident the agent opened since the change names its artifact as root cause
    "undone",  # 1: the agent has undone it (a successful intervention citing that incident since)
)
INCIDENT_STATE = (
    "names_recent_change",  # its root cause is the artifact of one of the changes shown
    "minutes_since_intervention",  # since the last successful intervention citing it (0: none)
    "intervened",
    "alerts_cleared",  # every alert it holds has resolved
)
WINDOW_S = 900.0  # changes older than this are no longer shown
# what a policy acting through `MacroActions` (on changes and services, not on single alerts or
# artifact ids) can leave out of its flattened input: ~2,500 -> ~1,100 numbers on Online Boutique
UNUSED_BY_MACRO = (*ALERT_TABLE, "change_artifact")


def _median(values: list[float]) -> float:
    """``float(np.median(values))`` (values not empty) by `statistics.median` (sorting): np.median
    costs ~20 µs a call, and every shown change asks for four at every step. Where the two could
    differ, a NaN among the values or a zero result (which zero's sign a partition picks among
    equal values), np.median answers."""
    out = median(values)
    if out == 0.0 or math.isnan(out) or math.isnan(sum(values)):
        return float(np.median(values))
    return out


def _before_now(tel: Telemetry, signal: str, service: str, at_s: float, now: float) -> tuple[float, float]:
    before = [v for _, v in tel.window(signal, service, at_s - 90, at_s - 10)]
    recent = [v for _, v in tel.window(signal, service, now - 60, math.inf, closed=True)]
    return (_median(before) if before else 0.0, _median(recent) if recent else 0.0)


class ChangeObservation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Adds ``change_service``, ``change_plane``, ``change_artifact``, ``change_features``,
    ``alert_incident`` and ``incident_state`` to the env's `Dict` observation (put it right on the
    env, before any action encoding or flattening).

    - ``change_service`` ``(N,)``: 0 none, else 1 + the changed service's index in
      `layout.services` (the ``services`` rows);
    - ``change_plane`` ``(N,)``: 0 none, else 1 + the index in `CHANGE_PLANES`;
    - ``change_artifact`` ``(N,)``: 0 none or not an action row, else 1 + the changed artifact's
      index among the service's action rows (`ActionLayout.artifacts`);
    - ``change_features`` ``(N, len(CHANGE_FEATURES))``: see `CHANGE_FEATURES`;
    - ``alert_incident`` ``(max_alerts,)``: 0, or 1 + the slot of the open incident holding the
      alert in the ``alert_*`` table (the same rows);
    - ``incident_state`` ``(max_incidents, len(INCIDENT_STATE))``: rows as ``incidents``.

    N (``changes_shown``, default 8) changes of the last `WINDOW_S` seconds, ranked (module
    docstring) from the three most recent of each service; a change a later one of the same
    artifact (or a revert) superseded is not shown, nor are node changes (they name no service).
    """

    def __init__(self, env: gym.Env, changes_shown: int = 8):
        gym.utils.RecordConstructorArgs.__init__(self, changes_shown=changes_shown)
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        if (
            not isinstance(env.observation_space, spaces.Dict)
            or "change_plane" in env.observation_space.spaces
        ):
            raise TypeError("ChangeObservation goes right on a Marathon env (its Dict observation), once")
        if not isinstance(changes_shown, int) or not 1 <= changes_shown <= 64:
            raise ValueError(f"changes_shown must be an int in [1, 64], got {changes_shown!r}")
        self.n = changes_shown
        lay = base.layout
        n_s, n_art = len(lay.services), max(len(a) for a in lay.artifacts)
        self.artifact_index = [{a: i for i, a in enumerate(arts)} for arts in lay.artifacts]
        self.observation_space = spaces.Dict(
            {
                **env.observation_space.spaces,
                "change_service": spaces.MultiDiscrete(np.full(self.n, n_s + 1)),
                "change_plane": spaces.MultiDiscrete(np.full(self.n, len(CHANGE_PLANES) + 1)),
                "change_artifact": spaces.MultiDiscrete(np.full(self.n, n_art + 1)),
                "change_features": spaces.Box(0.0, 1e6, (self.n, len(CHANGE_FEATURES)), np.float32),
                "alert_incident": spaces.MultiDiscrete(np.full(base.max_alerts, base.max_incidents + 1)),
                "incident_state": spaces.Box(0.0, 1e4, (base.max_incidents, len(INCIDENT_STATE)), np.float32),
            }
        )
        # the app's topology, which no episode changes: the judge's and `MacroActions`' callers
        self._judge = ChangeJudge(
            [{"from": e.source, "to": e.target} for e in base.app.edges], base.app.entry_point
        )
        self.callers = self._judge.callers  # service -> the services that call it directly
        self.change_slots: list[Change | None] = [None] * self.n
        self.slot_service: list[int] = [-1] * self.n  # the service index of each shown change
        self.incident_slots: list[str | None] = []

    # ------------------------------------------------------------ gymnasium API
    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = self.env.reset(**kwargs)
        self._planes = PlaneReader()
        self._tel = Telemetry(WINDOW_S + READ_BEFORE_S)
        self._known: dict[str, Change] = {}
        self._actions_read = 0
        self._owners: dict[str, str | None] = {}
        return self._extend(obs), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._extend(obs), reward, terminated, truncated, info

    # ------------------------------------------------------------ reading
    def _owner(self, pod: str) -> str | None:
        if pod not in self._owners:
            found = self.env.unwrapped.app.label_services({"pod": pod})
            self._owners[pod] = next(iter(found)) if len(found) == 1 else None
        return self._owners[pod]

    def _read_changes(self, now: float) -> None:
        base = self.env.unwrapped
        runner = base.runner
        for a in runner.actions[self._actions_read :]:  # own interventions are not changes to suspect
            if a.kind == "intervention" and a.ok:
                self._planes.note_action(
                    a.time_s, a.tool, a.args.get("service") or a.args.get("target") or ""
                )
        self._actions_read = len(runner.actions)
        self._tel.update(runner.read, now, self._owner)
        since = max(0.0, now - WINDOW_S)
        for ch in self._planes.read(runner.read, base.app, self._tel, now, since, self._owner):
            self._known.setdefault(ch.key, ch)
        self._planes.snapshot(runner.read, list(base.app.service_names), 8)
        self._known = {k: c for k, c in self._known.items() if c.at_s >= since}

    def _current(self, service: str) -> list[Change]:
        """The service's changes still in effect, newest first."""
        mine = sorted((c for c in self._known.values() if c.service == service), key=lambda c: -c.at_s)
        out = []
        for i, ch in enumerate(mine):
            later = mine[:i]
            if not ch.artifact or ch.plane not in CHANGE_PLANES:
                continue
            if any(c.reverts or c.artifact == ch.artifact for c in later):
                continue
            out.append(ch)
        return out

    # ------------------------------------------------------------ the fields
    def _extend(self, obs: dict) -> dict:
        base = self.env.unwrapped
        now = base.now
        self._read_changes(now)
        lay = base.layout
        incidents = base.runner.incidents.incidents
        all_incs = list(incidents.values())[-base.max_incidents :]  # the rows of obs["incidents"]
        claimed = {i.artifact: i.id for i in incidents.values() if i.artifact}  # the newest naming each
        acted: dict[str, float] = {}
        for a in base.runner.actions:
            if a.kind == "intervention" and a.ok and a.incident_id:
                acted[a.incident_id] = a.time_s
        history = base.alert_engine.history()
        fired = {a.id: a for a in history}
        col = {f: i for i, f in enumerate(CHANGE_FEATURES)}
        pod_service = base.backend.pod_services()
        firing_by_service: dict[str, list[float]] = {}
        for a in history:
            if a.resolved_at is None:
                for s in base.app.label_services(a.labels, pod_service):
                    firing_by_service.setdefault(s, []).append(a.fired_at)
        tel = self._tel
        services = set(lay.services)
        candidates: list[tuple[int, Change, np.ndarray]] = []
        for si, svc in enumerate(lay.services):
            current = self._current(svc)
            for k, ch in enumerate(current[:3]):
                f = np.zeros(len(CHANGE_FEATURES), np.float32)
                f[col["age_min"]] = max(now - ch.at_s, 0.0) / 60.0
                f[col["error_ratio_before"]], f[col["error_ratio_now"]] = _before_now(
                    tel, "error_ratio", svc, ch.at_s, now
                )
                f[col["latency_ms_before"]], f[col["latency_ms_now"]] = _before_now(
                    tel, "latency", svc, ch.at_s, now
                )
                until = current[k - 1].at_s if k > 0 else now  # the service's next change
                f[col["ambiguous"]] = any(
                    ch.at_s - AMBIGUOUS_S <= c.at_s <= ch.at_s for c in current[k + 1 :]
                )
                verdict = self._judge.judge(base.runner.read, tel, ch, now, services, until)
                f[col["telemetry_blames"]] = verdict is not None
                for step in verdict.steps if verdict is not None else ():
                    f[col[f"{step.signal}_stepped"]] = 1.0
                callers = self.callers.get(svc, set())
                f[col["callers_error_stepped"]] = any(
                    tel.step("error_ratio", c, ch.at_s, now) is not None for c in callers
                )
                f[col["callers_latency_stepped"]] = any(
                    tel.step("latency", c, ch.at_s, now) is not None for c in callers
                )
                f[col["alerts_after"]] = sum(t >= ch.at_s for t in firing_by_service.get(svc, []))
                inc_id = claimed.get(ch.artifact)
                if inc_id is not None and incidents[inc_id].opened_s < ch.at_s:
                    inc_id = None  # it named an earlier change of the same artifact
                f[col["claimed"]] = inc_id is not None
                f[col["undone"]] = inc_id is not None and inc_id in acted
                candidates.append((si, ch, f))
        candidates.sort(
            key=lambda c: (
                -c[2][col["telemetry_blames"]],
                -min(c[2][col["alerts_after"]], 1.0),
                -c[1].at_s,
                c[1].key,
            )
        )
        service = np.zeros(self.n, np.int64)
        plane = np.zeros(self.n, np.int64)
        artifact = np.zeros(self.n, np.int64)
        feats = np.zeros((self.n, len(CHANGE_FEATURES)), np.float32)
        self.change_slots = [None] * self.n
        self.slot_service = [-1] * self.n
        for c, (si, ch, f) in enumerate(candidates[: self.n]):
            self.change_slots[c], self.slot_service[c] = ch, si
            service[c] = si + 1
            plane[c] = CHANGE_PLANES.index(ch.plane) + 1
            artifact[c] = self.artifact_index[si].get(ch.artifact, -1) + 1
            feats[c] = f
        slot_of = {inc.id: j for j, inc in enumerate(all_incs) if inc.resolved_s is None}
        holder = {aid: slot_of[inc.id] for inc in all_incs if inc.id in slot_of for aid in inc.alert_ids}
        alert_incident = np.zeros(base.max_alerts, np.int64)
        for j, a in enumerate(history[-base.max_alerts :]):
            alert_incident[j] = holder.get(a.id, -1) + 1
        shown = {c.artifact for c in self.change_slots if c is not None}
        state = np.zeros((base.max_incidents, len(INCIDENT_STATE)), np.float32)
        for j, inc in enumerate(all_incs):
            last = acted.get(inc.id)
            alerts = [fired[a] for a in inc.alert_ids if a in fired]
            state[j] = (
                inc.artifact in shown,
                0.0 if last is None else min(max(now - last, 0.0) / 60.0, 1e4),
                last is not None,
                bool(alerts) and all(a.resolved_at is not None for a in alerts),
            )
        self.incident_slots = [inc.id if inc.resolved_s is None else None for inc in all_incs]
        return {
            **obs,
            "change_service": service,
            "change_plane": plane,
            "change_artifact": artifact,
            "change_features": np.minimum(feats, 1e6),
            "alert_incident": alert_incident,
            "incident_state": state,
        }
