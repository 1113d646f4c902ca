"""The `Agent` protocol every baseline implements, and `run_episode`, the loop that drives one.

Why a protocol and not a base class: an agent is anything with a name, a `reset` and an `invoke`
(an RL policy wrapper, an LLM harness, a scripted baseline), and none of them should inherit
simulator knowledge. One `invoke` is one SRE-Marathon invocation (every `interval_s` simulated
seconds): the agent either returns an action array (the structured RL path) or makes its tool
calls through `env.unwrapped.call_tool(...)` and returns None; `run_episode` then calls
`env.step(...)`, which ends the invocation and advances the clock.

What an agent receives (rules v3, "no score before the end"): `run_episode` hands an agent an
`AgentView` of the env (its tools, spaces, app and public catalog: no record, run, schedule, backend
or reward) and the step's `info` stripped to `PUBLIC_INFO` (masks, time, the results of its own
calls). A running score is an oracle of the hidden ground truth: with it, an agent can put alerts in
incidents and read from the score's change which of them matched. Only an agent that declares
``privileged = True`` (the oracle, an upper bound that reads ground truth by design) gets the env.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym

from ..core.run_record import RunRecord, Usage


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


PUBLIC_INFO = frozenset(
    {
        "time_s",
        "invocation",
        "action_mask",
        "verbs",
        "services_with_ungrouped_alerts",
        "tool_results",
        "alert_errors",
        "overrun_s",
    }
)
"""The `info` keys an evaluated agent may read: none carries a score, a reward or ground truth."""

_PUBLIC_ATTRS = frozenset(
    {
        "call_tool",
        "app",
        "action_space",
        "observation_space",
        "interval_s",
        "run_s",
        "injection_s",
        "mode",
        "seed_used",
        "now",
        "spec",
        "np_random",
    }
)


class AgentView:
    """What an evaluated agent may touch of the env: its tools and public facts, nothing scored.

    `unwrapped` is the view itself, so agents written against ``env.unwrapped.call_tool`` run
    unchanged; `catalog` is the public catalog (no fault row's literal change); anything else
    (``record``, ``run``, ``schedule``, ``backend``, ``reward_fn``...) raises AttributeError naming
    what is public."""

    __slots__ = ("_env", "_catalog")

    def __init__(self, env: gym.Env):
        object.__setattr__(self, "_env", env.unwrapped)
        object.__setattr__(self, "_catalog", None)

    @property
    def unwrapped(self) -> AgentView:
        return self

    @property
    def catalog(self) -> Any:
        """The public catalog (`Catalog.public`: fault rows without the changes they ship)."""
        if self._catalog is None:
            object.__setattr__(self, "_catalog", self._env.catalog.public())
        return self._catalog

    @property
    def app(self) -> Any:
        """The env's app as the public catalog has it (no simulator parameters)."""
        return self.catalog.app(self._env.app.app)

    def __getattr__(self, name: str) -> Any:
        if name in _PUBLIC_ATTRS:
            return getattr(object.__getattribute__(self, "_env"), name)
        raise AttributeError(
            f"an agent sees the env's tools and public facts only "
            f"({', '.join(sorted({*_PUBLIC_ATTRS, 'catalog', 'unwrapped'}))}); "
            f"{name!r} is not among them"
        )

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("an agent cannot change the env")

    def __reduce__(self) -> Any:
        raise TypeError("an AgentView is not picklable")


def public_info(info: dict) -> dict:
    """`info` without anything an evaluated agent must not see (see `PUBLIC_INFO`)."""
    return {k: v for k, v in info.items() if k in PUBLIC_INFO}


def agent_side(env: gym.Env, agent: Any) -> Any:
    """The env as `agent` may see it: the env itself for a privileged agent (the oracle), else a view."""
    return env if getattr(agent, "privileged", False) is True else AgentView(env)


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

    The agent gets `agent_side(env, agent)` and `public_info(info)`, never the reward or the record.
    `progress` is called with no arguments after every step (e.g. `tqdm(...).update`); `on_step`
    with the step's reward (for the runner, not the agent), before it
    (`episode_runner.run_scored_episode` sums them: the return the episode paid). The returned
    record carries the agent's `usage`, so scoring reports model calls and cost.
    """
    obs, info = env.reset(seed=seed)
    side = agent_side(env, agent)
    agent.reset(side, seed)
    while True:
        action = agent.invoke(side, obs, public_info(info))
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


__all__ = ["PUBLIC_INFO", "Agent", "AgentView", "agent_side", "public_info", "run_episode", "zero_usage"]
