"""Action encodings for policy-gradient methods, with the action mask moved into the observation.

The env's action is a `(action_slots, 5)` `MultiDiscrete` of (verb, service, artifact, incident,
value) slots and its mask lives in ``info["action_mask"]`` (one slot's per-dimension masks,
concatenated). RL libraries want a flat action space and the mask next to the observation, where
a masked policy can read it when it computes logits; these wrappers do exactly that.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..envs.actions import SCALE_CHOICES, VERBS
from ..envs.inputs import InvalidAction, int_action, whole


def _with_mask_space(space: spaces.Space, n: int) -> spaces.Dict:
    if not isinstance(space, spaces.Dict):
        raise TypeError(
            f"expected the env's Dict observation space, got {space}; put action encodings "
            "before FlattenMarathonObservation"
        )
    if "action_mask" in space.spaces:
        raise ValueError("the observation already has an 'action_mask'; use one action encoding")
    return spaces.Dict({**space.spaces, "action_mask": spaces.Box(0.0, 1.0, (n,), np.float32)})


def checked(action: Any, space: spaces.Space) -> np.ndarray | InvalidAction | None:
    """A wrapper's action as ints of its own space, or what the env should receive instead: None
    (end the invocation without acting) passes, and a malformed action becomes an `InvalidAction`
    the env records, as it records its own refused actions (never an IndexError here, and never a
    float truncated or a negative index wrapped around to a real row)."""
    if action is None or isinstance(action, InvalidAction):
        return action
    arr, problem = int_action(action, space)  # type: ignore[arg-type]
    return InvalidAction(problem) if arr is None else arr


class FlattenActions(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Flat `MultiDiscrete` of ``action_slots x 5`` dims; the mask goes into ``obs["action_mask"]``.

    Why: RLlib (and most libraries) want a 1-D `MultiDiscrete` whose logits are the concatenation
    of every dimension's logits; ``obs["action_mask"]`` is laid out the same way (the env's slot
    mask tiled once per slot, as float32 0/1), so ``logits + log(mask)`` masks invalid values.

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> env = FlattenActions(gym.make("SREMarathon/OnlineBoutique-v3", action_slots=2,
        ...                               injection_minutes=4, observation_minutes=2))
        >>> env.action_space.shape
        (10,)
        >>> obs, info = env.reset(seed=1)
        >>> obs["action_mask"].shape == (int(env.action_space.nvec.sum()),)
        True
        >>> _ = env.step(np.zeros(10, dtype=np.int64))   # two noop slots
    """

    def __init__(self, env: gym.Env):
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        nvec = np.asarray(env.action_space.nvec)
        if nvec.ndim != 2 or nvec.shape[1] != 5:
            raise TypeError(f"expected a (slots, 5) MultiDiscrete action space, got {env.action_space}")
        self.slots = nvec.shape[0]
        self.action_space = spaces.MultiDiscrete(nvec.reshape(-1))
        self.observation_space = _with_mask_space(env.observation_space, int(nvec.sum()))

    def _obs(self, obs: dict, info: dict) -> dict:
        return {**obs, "action_mask": np.tile(np.asarray(info["action_mask"], np.float32), self.slots)}

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = self.env.reset(**kwargs)
        return self._obs(obs, info), info

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        arr = checked(action, self.action_space)
        if isinstance(arr, np.ndarray):
            arr = arr.reshape(self.slots, 5)
        obs, reward, terminated, truncated, info = self.env.step(arr)
        return self._obs(obs, info), reward, terminated, truncated, info


class EncodeActionSlots(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """One index per chosen slot: `Discrete(n)` (``slots_per_step=1``) or `MultiDiscrete([n] * k)`.

    Why: a factorised slot samples its five fields independently, so most combinations are
    nonsense (an artifact of another service, a scale choice for a restart). This encoding
    enumerates only meaningful (verb, service, artifact, value) rows, once per app:

    ============================  ===========================================================
    noop                          1 row
    open_incident                 per service
    set_root_cause                per service x (the service's artifacts + node/zone artifacts)
    resolve_incident              1 row
    rollback, restart             per service
    scale                         per service x `SCALE_CHOICES`
    set_config, patch_source      per service x the service's own artifacts
    failover / uncordon           per zone (if >= 2 zones) / per node
    delete_network_policy         per listed policy slot
    ============================  ===========================================================

    Verbs that cite an incident use the NEWEST open incident (the one an agent usually just
    opened). ``obs["action_mask"]`` has one 0/1 entry per row (tiled per chosen slot): a row is
    allowed when the env's per-dimension masks allow each of its fields, and an ``open_incident``
    row only when its service has firing alerts no open incident holds yet. Unused env slots are noop.
    ``self.rows`` is the table (an ``(n, 5)`` int array of env slot values, incident filled at
    decode time) and ``self.describe(i)`` names a row. ``verbs`` keeps only those verbs' rows (plus
    noop): a smaller action set for an easier curriculum stage (e.g. triage only:
    ``("open_incident", "resolve_incident", "rollback", "restart")``), at the cost of the score's
    stages the dropped verbs earn.

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> env = EncodeActionSlots(gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4,
        ...                                  observation_minutes=2))
        >>> isinstance(env.action_space, gym.spaces.Discrete), env.describe(0)
        (True, 'noop')
        >>> obs, info = env.reset(seed=3)
        >>> obs["action_mask"].shape == (env.action_space.n,)
        True
        >>> _ = env.step(0)
    """

    def __init__(self, env: gym.Env, slots_per_step: int = 1, verbs: Sequence[str] | None = None):
        gym.utils.RecordConstructorArgs.__init__(
            self, slots_per_step=slots_per_step, verbs=None if verbs is None else list(verbs)
        )
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        slots_per_step = whole("slots_per_step", slots_per_step, 1, base.action_slots)  # the env's slots
        if verbs is not None:
            unknown = sorted(set(verbs) - set(VERBS))
            if unknown:
                raise ValueError(f"unknown verb(s) {unknown}; choose from {list(VERBS)}")
        self.k = slots_per_step
        lay = base.layout
        rows: list[tuple[int, int, int, int, int]] = [(0, 0, 0, 0, 0)]
        v = VERBS.index
        for s in range(len(lay.services)):
            rows.append((v("open_incident"), s, 0, 0, 0))
        for s in range(len(lay.services)):
            rows += [(v("set_root_cause"), s, a, 0, 0) for a in range(len(lay.artifacts[s]) + len(lay.infra))]
        rows.append((v("resolve_incident"), 0, 0, 0, 0))
        for verb in ("rollback", "restart"):
            rows += [(v(verb), s, 0, 0, 0) for s in range(len(lay.services))]
        rows += [
            (v("scale"), s, 0, 0, c) for s in range(len(lay.services)) for c in range(len(SCALE_CHOICES))
        ]
        for verb in ("set_config", "patch_source"):
            rows += [
                (v(verb), s, a, 0, 0) for s in range(len(lay.services)) for a in range(len(lay.artifacts[s]))
            ]
        if len(lay.zones) >= 2:
            rows += [(v("failover"), 0, 0, 0, z) for z in range(len(lay.zones))]
        rows += [(v("uncordon"), 0, 0, 0, n) for n in range(len(lay.nodes))]
        rows += [(v("delete_network_policy"), 0, 0, 0, p) for p in range(lay.max_policies)]
        if verbs is not None:  # noop stays: a step must always have an allowed row
            keep = {v(x) for x in verbs} | {v("noop")}
            rows = [r for r in rows if r[0] in keep]
        self.rows = np.array(rows, dtype=np.int64)
        self._nvec = np.asarray(base.layout.nvec())
        self._offsets = np.concatenate([[0], np.cumsum(self._nvec)[:-1]])
        n = len(self.rows)
        self.action_space = spaces.Discrete(n) if self.k == 1 else spaces.MultiDiscrete(np.full(self.k, n))
        self.observation_space = _with_mask_space(env.observation_space, n * self.k)
        self._last_mask = np.ones(int(self._nvec.sum()), dtype=bool)

    def describe(self, index: int) -> str:
        """A readable name of row `index` (for logs and tests)."""
        verb, s, a, _, val = (int(x) for x in self.rows[index])
        lay = self.env.unwrapped.layout
        name = VERBS[verb]
        if name in ("noop", "resolve_incident"):
            return name
        if name in ("failover", "uncordon", "delete_network_policy"):
            return f"{name}[{val}]"
        if name == "scale":
            return f"scale {lay.services[s]} to {SCALE_CHOICES[val]}"
        if name in ("set_root_cause", "set_config", "patch_source"):
            return f"{name} {lay.services[s]} {lay.artifact(s, a)}"
        return f"{name} {lay.services[s]}"

    def _row_mask(self, slot_mask: np.ndarray, ungrouped: np.ndarray | None = None) -> np.ndarray:
        m = np.asarray(slot_mask, dtype=bool)
        ok = np.ones(len(self.rows), dtype=bool)
        for d in (0, 1, 2, 4):  # incident is chosen at decode time (newest open)
            ok &= m[self._offsets[d] + self.rows[:, d]]
        if ungrouped is not None:  # open_incident only where that service has alerts to group
            opening = self.rows[:, 0] == VERBS.index("open_incident")
            ok[opening] &= np.asarray(ungrouped, dtype=bool)[self.rows[opening, 1]]
        return ok

    def _obs(self, obs: dict, info: dict) -> dict:
        self._last_mask = np.asarray(info["action_mask"], dtype=bool)
        rows = self._row_mask(self._last_mask, info.get("services_with_ungrouped_alerts"))
        return {**obs, "action_mask": np.tile(rows.astype(np.float32), self.k)}

    def reset(self, **kwargs: Any) -> tuple[dict, dict]:
        obs, info = self.env.reset(**kwargs)
        return self._obs(obs, info), info

    def decode(self, action: Any) -> np.ndarray:
        """The env action (``(action_slots, 5)``) of an encoded action."""
        idx = np.asarray(action, dtype=np.int64).reshape(-1)
        inc = self._last_mask[self._offsets[3] : self._offsets[3] + self._nvec[3]]
        newest = int(np.flatnonzero(inc)[-1]) if inc.any() else 0
        out = np.zeros((self.env.unwrapped.action_slots, 5), dtype=np.int64)
        for j, i in enumerate(idx):
            out[j] = self.rows[int(i)]
            out[j, 3] = newest
        return out

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        arr = checked(action, self.action_space)
        obs, reward, terminated, truncated, info = self.env.step(
            self.decode(arr) if isinstance(arr, np.ndarray) else arr
        )
        return self._obs(obs, info), reward, terminated, truncated, info
