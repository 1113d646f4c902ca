"""The random baseline: uniformly random structured action slots (the RL action path).

Why it exists: the floor an RL policy must beat, and a fuzzer of the action decoder and policy
layer over whole episodes. Randomness comes from the agent's own `numpy` Generator seeded at
`reset` (never the global RNG, never the env's `action_space` RNG), so a run is reproducible
from the episode seed alone.

By default each dimension of each slot is drawn uniformly among the values that
`info["action_mask"]` allows (a masked random policy, as RL libraries sample it); with
`masked=False` it samples the raw `MultiDiscrete` space, where most slots become tool errors.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.run_record import Usage
from .base import zero_usage


class RandomAgent:
    """Samples every action slot at random with a private, seeded Generator."""

    name = "random"

    def __init__(self, masked: bool = True, noop_prob: float = 0.0):
        if not 0.0 <= noop_prob <= 1.0:
            raise ValueError(f"noop_prob must be in [0, 1], got {noop_prob}")
        self.masked = masked
        self.noop_prob = noop_prob
        self.rng = np.random.default_rng(0)
        self.usage: Usage = zero_usage()

    def reset(self, env: gym.Env, seed: int | None) -> None:
        """Seed from the episode seed (or, without one, the seed the env actually used)."""
        if seed is None:
            seed = getattr(env.unwrapped, "seed_used", None)
        self.rng = np.random.default_rng([0x5EED, seed] if seed is not None else None)
        self.usage = zero_usage()

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> np.ndarray:
        space = env.action_space
        nvec = np.asarray(space.nvec)  # (slots, 5)
        mask = info.get("action_mask") if self.masked else None
        out = np.zeros_like(nvec, dtype=np.int64)
        for s in range(nvec.shape[0]):
            if self.noop_prob and self.rng.random() < self.noop_prob:
                continue  # verb 0 is noop; the other fields are ignored
            offset = 0
            for d, n in enumerate(nvec[s]):
                allowed = np.flatnonzero(mask[offset : offset + n]) if mask is not None else np.arange(n)
                out[s, d] = int(self.rng.choice(allowed)) if allowed.size else 0
                offset += int(n)
        return out


__all__ = ["RandomAgent"]
