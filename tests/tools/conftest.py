"""Shared by the tool tests: a short Online Boutique episode to call tools on."""

from __future__ import annotations

import gymnasium as gym
import pytest

import sre_marathon_gym  # noqa: F401

SHORT = dict(injection_minutes=6, observation_minutes=4, intensity=0.5)


@pytest.fixture(scope="module")
def env():
    """The env two steps in (module-scoped: each test module gets its own episode)."""
    e = gym.make("SREMarathon/OnlineBoutique-v3", **SHORT).unwrapped
    e.reset(seed=11)
    for _ in range(2):
        e.step(None)
    return e
