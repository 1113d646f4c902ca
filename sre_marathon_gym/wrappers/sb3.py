"""The one call that gives Stable-Baselines3 (and sb3-contrib's `MaskablePPO`) a Marathon env it can
train: SB3 cannot build a policy for the env's own ``(slots, 5)`` `MultiDiscrete` (a 2-D space
ends in its ``TypeError: empty(): argument 'size'``), and its masked PPO needs a joint mask."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .changes import UNUSED_BY_MACRO, ChangeObservation
from .macro import MacroActions
from .observation import FlattenMarathonObservation


def for_sb3(env: gym.Env, changes_shown: int = 8, moves_per_step: int = 2) -> gym.Env:
    """`ChangeObservation` + `MacroActions` + `FlattenMarathonObservation` (the mask appended to the
    features): a flat float32 `Box` observation, a 1-D action space (`Discrete` for one move,
    `MultiDiscrete` otherwise) and ``action_masks()``, reachable through SB3's `VecEnv`.

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> env = for_sb3(gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4,
        ...                        observation_minutes=2))
        >>> env.action_space.shape, env.observation_space.dtype
        ((2,), dtype('float32'))
    """
    space = env.action_space
    if not (isinstance(space, spaces.MultiDiscrete) and np.ndim(space.nvec) == 2):
        raise TypeError(
            "for_sb3 wraps a Marathon env as gym.make returns it (its (slots, 5) MultiDiscrete "
            f"action space), got an action space {space}: apply for_sb3 first, and no action encoding"
        )
    wrapped = MacroActions(ChangeObservation(env, changes_shown), moves_per_step=moves_per_step)
    return FlattenMarathonObservation(wrapped, keep_mask=False, exclude=UNUSED_BY_MACRO)
