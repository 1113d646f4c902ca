"""Reward shaping: Marathon-Score increments, plus optional dense penalties."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.errors import ConfigurationError
from ..envs.inputs import real
from ..scoring import intervention_risk


class ShapeMarathonReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Pays the Marathon-Score's increments, optionally minus dense per-interval penalties.

    Why: the score's increments are sparse (a fault pays only when it is correlated, localized,
    repaired); the dense terms give a learner a gradient toward "hurt users less, act safely" early
    in training. With the defaults every weight is zero and the episode's return equals its
    Marathon-Score before clipping exactly: the env pays the unclipped score's increments, and
    under rules v2 false incidents, false claims and needless interventions make them negative.
    `clip=True` adds ``clip(score, 0, 100) - score`` on the last step so the return equals the
    published, clipped score; it is off by default because it hands every penalty back at the end
    (a policy that guesses all episode long would then look as good as one that does nothing).

    Terms (per step, i.e. per invocation interval), all reported in ``info["reward_terms"]``:

    - ``score``: the env's reward (Marathon-Score increment), always with weight 1.
    - ``degradation``: the degraded-request fraction of the interval just simulated,
      ``min(degraded, requests) / requests`` from ``env.unwrapped.interval_traffic()``; the reward
      subtracts ``degradation_weight x`` it. Note that faults the agent did not cause also
      degrade, so this term is only comparable between policies on the same seed.
    - ``risky_attempts``: risky attempts among the tool calls of this step (policy violations or
      out-of-scope interventions, as `scoring.intervention_risk` counts them) from
      ``env.unwrapped.runner.actions``; the reward subtracts ``risk_weight x`` their number.

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> env = ShapeMarathonReward(gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4,
        ...                                    observation_minutes=2), degradation_weight=1.0)
        >>> _ = env.reset(seed=7)
        >>> _, r, *_ , info = env.step(env.action_space.sample() * 0)   # all slots noop
        >>> sorted(info["reward_terms"])
        ['degradation', 'risky_attempts', 'score']
        >>> abs(r - (info["reward_terms"]["score"] - info["reward_terms"]["degradation"])) < 1e-9
        True
    """

    def __init__(
        self, env: gym.Env, degradation_weight: float = 0.0, risk_weight: float = 0.0, clip: bool = False
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self, degradation_weight=degradation_weight, risk_weight=risk_weight, clip=clip
        )
        gym.Wrapper.__init__(self, env)
        # penalties: finite and >= 0 (a NaN weight would turn every reward into NaN)
        self.degradation_weight = real("degradation_weight", degradation_weight, 0.0, 1e6)
        self.risk_weight = real("risk_weight", risk_weight, 0.0, 1e6)
        if not isinstance(clip, (bool, np.bool_)):
            raise ConfigurationError(f"clip must be True or False, got {type(clip).__name__} {clip!r:.40}")
        self.clip = bool(clip)
        self._actions_seen = 0

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        obs, info = self.env.reset(**kwargs)
        self._actions_seen = len(self.env.unwrapped.runner.actions)
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        base = self.env.unwrapped
        requests, degraded = base.interval_traffic()
        degradation = float(min(degraded, requests) / requests) if requests > 0 else 0.0
        new_actions = base.runner.actions[self._actions_seen :]
        self._actions_seen = len(base.runner.actions)
        _, risky, _ = intervention_risk(new_actions)
        shaped = float(reward) - self.degradation_weight * degradation - self.risk_weight * risky
        if self.clip and terminated:
            score = float(base.reward_fn.value)
            shaped += min(max(score, 0.0), 100.0) - score
        info = dict(info)
        info["reward_terms"] = {
            "score": float(reward),
            "degradation": float(degradation),
            "risky_attempts": int(risky),
        }
        return obs, float(shaped), terminated, truncated, info
