"""The no-op baseline: never calls a tool, never acts. It anchors the Marathon-Score at zero and is
the "matched no-action run" the degradation metric compares against."""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..core.run_record import Usage
from .base import zero_usage


class NoopAgent:
    """Does nothing at every invocation."""

    name = "noop"

    def __init__(self) -> None:
        self.usage: Usage = zero_usage()

    def reset(self, env: gym.Env, seed: int | None) -> None:
        self.usage = zero_usage()

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        return None


__all__ = ["NoopAgent"]
