"""Macro actions: the few moves an SRE makes with what `ChangeObservation` shows, as one `Discrete`
space whose mask is valid jointly (a masked row is a call the tools accept).

Why: localizing means naming one artifact among hundreds of action rows, and a factorised
`MultiDiscrete` samples its fields independently (half of its masked samples are refused). Here a
row is a whole move on a change the observation shows:

=====================  ==========================================================================
``noop``               end the invocation without acting
``group s``            open an incident with the firing alerts of service ``s`` no incident holds
``claim c``            open an incident with the alerts on the service of change ``c`` (of the
                       ranked list `ChangeObservation` shows) and on its direct callers that
                       fired since the change (and no incident held), its root cause the
                       artifact of that change; once per change
``fix c``              claim, then undo, in one move (what the change correlator does)
``undo c``             undo change ``c`` (roll back to the revision before it, restore the
                       old config value or flag variant, delete the policy, set replicas back),
                       citing the incident that names it
``resolve``            resolve every open incident whose alerts have all cleared
=====================  ==========================================================================

Each step makes ``moves_per_step`` moves (default 2; a `Discrete` space for 1, else a
`MultiDiscrete` of one row index per move), in order, then ends the invocation; a move the moves
before it made invalid (the same change claimed twice) is skipped without a call. The rows act
through `call_tool`, exactly as an LLM agent would (recorded and scored the same way).
``action_masks()`` (the name sb3-contrib's `MaskablePPO` calls) and ``obs["action_mask"]`` give
the mask; ``describe(i)`` names a row. Masked rows are refused
only when the world changed between the observation and the call, which it cannot within one
invocation; a test measures the refused share of masked-random calls.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..envs.inputs import InvalidAction
from ..tools.change_planes import Change, undo_call
from .actions import checked
from .changes import ChangeObservation


class MacroActions(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Macro rows over `ChangeObservation`'s changes (see the module docstring).

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> from sre_marathon_gym.wrappers import ChangeObservation
        >>> env = MacroActions(ChangeObservation(gym.make("SREMarathon/OnlineBoutique-v3",
        ...     injection_minutes=4, observation_minutes=2)), moves_per_step=1)
        >>> obs, info = env.reset(seed=1)
        >>> env.describe(0), bool(env.action_masks()[0])
        ('noop', True)
        >>> _ = env.step(0)
    """

    def __init__(self, env: gym.Env, moves_per_step: int = 2):
        gym.utils.RecordConstructorArgs.__init__(self, moves_per_step=moves_per_step)
        gym.Wrapper.__init__(self, env)
        inner = env
        while not isinstance(inner, ChangeObservation):
            if not isinstance(inner, gym.Wrapper):
                raise TypeError("MacroActions needs a ChangeObservation beneath it (it acts on its changes)")
            inner = inner.env
        self.changes = inner
        base = env.unwrapped
        self.services = base.layout.services
        n_s, n_c = len(self.services), inner.n
        rows: list[tuple[str, int]] = [("noop", 0)]  # (verb, service) or (verb, change slot)
        rows += [("group", s) for s in range(n_s)]
        rows += [(verb, c) for verb in ("claim", "fix", "undo") for c in range(n_c)]
        rows.append(("resolve", 0))
        self.rows = rows
        if not isinstance(moves_per_step, int) or not 1 <= moves_per_step <= 16:
            raise ValueError(f"moves_per_step must be an int in [1, 16], got {moves_per_step!r}")
        self.m = moves_per_step
        n = len(rows)
        self.action_space = spaces.Discrete(n) if self.m == 1 else spaces.MultiDiscrete(np.full(self.m, n))
        self.observation_space = spaces.Dict(
            {**env.observation_space.spaces, "action_mask": spaces.Box(0.0, 1.0, (n * self.m,), np.float32)}
        )
        self._mask = np.zeros(len(rows), dtype=bool)
        self._mask[0] = True

    def describe(self, index: int) -> str:
        verb, i = self.rows[int(index)]
        if verb in ("noop", "resolve"):
            return verb
        if verb == "group":
            return f"group {self.services[i]}"
        ch = self.changes.change_slots[i]
        what = f" ({ch.plane} {ch.artifact})" if ch is not None else ""
        return f"{verb} change {i}{what}"

    def action_masks(self) -> np.ndarray:
        """The rows allowed now (bool, one per row; tiled once per move, as `MaskablePPO` expects
        for a `MultiDiscrete` space)."""
        return np.tile(self._mask, self.m)

    # ------------------------------------------------------------ state the masks and moves read
    def _state(self) -> dict[str, Any]:
        base = self.env.unwrapped
        view = base._view()
        incidents = base.runner.incidents.incidents
        pod_service = base.backend.pod_services()
        history = base.alert_engine.history()
        alerts = {a.id: a for a in history}
        used = {a for inc in incidents.values() for a in inc.alert_ids}  # each alert is evidence once
        named: dict[str, str] = {}  # artifact -> the newest open incident naming it
        ever: dict[str, float] = {}  # artifact -> when the newest incident naming it was opened
        for inc in incidents.values():
            if inc.artifact:
                ever[inc.artifact] = inc.opened_s
                if inc.resolved_s is None:
                    named[inc.artifact] = inc.id
        # per service: (fired at, id) of the alerts no open incident holds, naming it or a caller of it
        loose: dict[str, list[tuple[float, str]]] = {}
        for a in history:
            if a.id in used:
                continue
            for s in base.app.label_services(a.labels, pod_service):
                for t in {s} | self.changes.callers.get(s, set()):
                    loose.setdefault(t, []).append((a.fired_at, a.id))
        undone = {a.incident_id for a in base.runner.actions if a.kind == "intervention" and a.ok}
        cleared = [
            inc.id
            for inc in incidents.values()
            if inc.resolved_s is None
            and inc.alert_ids
            and all(alerts[a].resolved_at is not None for a in inc.alert_ids if a in alerts)
        ]
        return {
            "ungrouped": view["ungrouped_alerts"],
            "loose": loose,
            "named": named,
            "ever": ever,
            "undone": undone,
            "cleared": cleared,
        }

    @staticmethod
    def _evidence(st: dict, svc: str, ch: Change) -> list[str]:
        """The alerts that fired since the change on the service or a caller (no incident held)."""
        return sorted({aid for t, aid in st["loose"].get(svc, []) if t >= ch.at_s})

    def _undo_call(self, ch: Change) -> dict | None:
        """The change's undo as a tool call (None when it cannot be undone from here)."""
        return undo_call(self.env.unwrapped.runner.read, ch, ch.service or "")

    def _compute_mask(self) -> np.ndarray:
        st = self._state()
        slots = self.changes.change_slots
        mask = np.zeros(len(self.rows), dtype=bool)
        for i, (verb, a) in enumerate(self.rows):
            if verb == "noop":
                mask[i] = True
            elif verb == "group":
                mask[i] = bool(st["ungrouped"].get(self.services[a]))
            elif verb == "resolve":
                mask[i] = bool(st["cleared"])
            else:
                ch = slots[a]
                if ch is None:
                    continue
                svc = self.services[self.changes.slot_service[a]]
                inc = st["named"].get(ch.artifact)
                if verb in ("claim", "fix"):  # once per change: an incident opened since names it
                    mask[i] = st["ever"].get(ch.artifact, -1.0) < ch.at_s and bool(
                        self._evidence(st, svc, ch)
                    )
                else:
                    mask[i] = inc is not None and inc not in st["undone"] and self._undo_call(ch) is not None
        return mask

    # ------------------------------------------------------------ acting
    def _act(self, index: int) -> None:
        verb, a = self.rows[index]
        base = self.env.unwrapped
        st = self._state()
        if verb == "fix":
            self._act(self.rows.index(("claim", a)))
            self._act(self.rows.index(("undo", a)))
            return
        ch = self.changes.change_slots[a] if verb in ("claim", "undo") else None
        svc = self.services[a] if verb == "group" else self.services[self.changes.slot_service[a]]
        if verb == "group":
            base.call_tool(
                {"tool": "open_incident", "alert_ids": st["ungrouped"][svc], "title": f"alerts on {svc}"}
            )
        elif verb == "resolve":
            for inc in st["cleared"]:
                base.call_tool({"tool": "resolve_incident", "incident_id": inc})
        elif verb == "claim":
            opened = base.call_tool(
                {
                    "tool": "open_incident",
                    "alert_ids": self._evidence(st, svc, ch),
                    "title": f"after {ch.artifact}",
                }
            )
            if not opened.ok:
                return
            inc = opened.data["id"]
            base.call_tool(
                {
                    "tool": "set_root_cause",
                    "incident_id": inc,
                    "services": [svc],
                    "artifact": ch.artifact,
                    "summary": f"{ch.plane} change at t={ch.at_s:.0f}s: {ch.note}"[:2000],
                }
            )
        elif verb == "undo":
            call = self._undo_call(ch)
            if call is not None:
                base.call_tool({**call, "incident_id": st["named"][ch.artifact]})

    def _obs(self, obs: dict) -> dict:
        self._mask = self._compute_mask()
        return {**obs, "action_mask": np.tile(self._mask.astype(np.float32), self.m)}

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = self.env.reset(**kwargs)
        return self._obs(obs), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        arr = checked(action, self.action_space)
        if isinstance(arr, np.ndarray):
            masked = [int(i) for i in arr.reshape(-1) if not self._mask[int(i)]]
            if masked:  # recorded as the env records any refused action; no move is made
                arr = InvalidAction(f"macro row(s) {masked} masked out now ({self.describe(masked[0])})")
            else:
                for j, index in enumerate(int(i) for i in arr.reshape(-1)):
                    if j == 0 or self._compute_mask()[index]:  # the moves before may have used it
                        self._act(index)
                arr = None  # the moves are made; the step ends the invocation
        obs, reward, terminated, truncated, info = self.env.step(arr)
        return self._obs(obs), reward, terminated, truncated, info
