"""The `Agent` protocol every baseline implements, and `run_episode`, the loop that drives one.

Why a protocol and not a base class: an agent is anything with a name, a `reset` and an `invoke`
(an RL policy wrapper, an LLM harness, a scripted baseline), and none of them should inherit
simulator knowledge. One `invoke` is one SRE-Marathon invocation (every `interval_s` simulated
seconds): the agent either returns an action array (the structured RL path) or makes its tool
calls through `env.unwrapped.call_tool(...)` and returns None; `run_episode` then calls
`env.step(...)`, which ends the invocation and advances the clock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from ..run_record import RunRecord, Usage


@runtime_checkable
class Agent(Protocol):
    """One SRE agent: `reset` once per episode, `invoke` once per invocation."""

    name: str
    usage: Usage

    def reset(self, env: gym.Env, seed: int | None) -> None:
        """Forget the previous episode; seed any private randomness from `seed`."""
        ...

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> Any:
        """Act for one invocation: return an action for `env.step`, or None after tool calls."""
        ...


def zero_usage() -> Usage:
    """Scripted baselines call no model: their cost is zero by construction."""
    return Usage(model_calls=0, input_tokens=0, output_tokens=0, cost_usd=0.0)


def run_episode(
    env: gym.Env,
    agent: Agent,
    seed: int | None = None,
    progress: Callable[[], Any] | None = None,
    on_step: Callable[[float], Any] | None = None,
) -> RunRecord:
    """Run one full episode of `agent` on `env` and return the recorded run (ground truth included).

    `progress` is called with no arguments after every step (e.g. `tqdm(...).update`); `on_step`
    with the step's reward, before it (`episode_runner.run_scored_episode` sums them: the return
    the agent saw). The returned record carries the agent's `usage`, so scoring reports model calls
    and cost.
    """
    obs, info = env.reset(seed=seed)
    agent.reset(env, seed)
    while True:
        action = agent.invoke(env, obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        if on_step is not None:
            on_step(float(reward))
        if progress is not None:
            progress()
        if terminated or truncated:
            break
    record = env.unwrapped.record()
    record.usage = agent.usage.model_copy()
    return record


__all__ = ["Agent", "run_episode", "zero_usage"]
