"""No score before the end (rules v3): every runner hands an evaluated agent its observation, the
public part of `info` and a view of the env's tools, and nothing scored or derived from the ground
truth. A spy agent records what it receives through each runner: `run_episode`, the scored episode
of `sre-marathon run`, `evaluate`'s worker (`evaluation.run_one`) and RLlib's evaluation
(`rllib.evaluate.evaluate_one`, which Ray tasks run; called in-process here so the spy is used).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import sre_marathon_gym.agents as agents_module
from sre_marathon_gym.agents.base import PUBLIC_INFO, AgentView, run_episode, zero_usage
from sre_marathon_gym.evaluation.leaderboard import ENV_BY_APP

SHORT = dict(injection_minutes=6, observation_minutes=2)
HIDDEN = ("record", "run", "schedule", "backend", "recorder", "reward_fn", "runner", "sim", "metric_store")
SCORED = ("score", "reward", "reward_terms", "return", "marathon_score", "fault", "ground_truth")


class Spy:
    """Records what each invocation receives; calls one read tool so the episode is not empty."""

    name = "spy"

    def __init__(self) -> None:
        self.usage = zero_usage()
        self.seen: list[dict[str, Any]] = []

    def reset(self, env: Any, seed: int | None) -> None:
        self.seen.append({"reset_env": type(env)})

    def invoke(self, env: Any, obs: Any, info: dict) -> None:
        hidden = {}
        for attr in HIDDEN:
            try:
                getattr(env.unwrapped, attr)
                hidden[attr] = True
            except AttributeError:
                hidden[attr] = False
        res = env.unwrapped.call_tool({"tool": "get_alerts", "limit": 5})
        rows = [f for faults in env.unwrapped.catalog.faults.values() for f in faults]
        self.seen.append(
            {
                "env": type(env),
                "info": dict(info),
                "obs_keys": sorted(obs) if isinstance(obs, dict) else [],
                "hidden": hidden,
                "tool_ok": res.ok,
                "catalog_rows": len(rows),
                "changes_shown": sum(f.change is not None or bool(f.params) for f in rows),
                "sim_params_shown": sum(
                    s.sim is not None
                    for app in (env.unwrapped.app, *env.unwrapped.catalog.apps.values())
                    for s in app.services
                ),
            }
        )
        return None


def _check(spy: Spy) -> None:
    steps = [s for s in spy.seen if "info" in s]
    assert steps, "the spy was never invoked"
    assert spy.seen[0]["reset_env"] is AgentView
    for s in steps:
        assert s["env"] is AgentView and s["tool_ok"]
        assert s["catalog_rows"] == 700 and s["changes_shown"] == 0  # no row's literal faulty commit
        assert s["sim_params_shown"] == 0  # what a pod needs shows in its usage only (telemetry)
        assert not any(s["hidden"].values()), s["hidden"]
        assert set(s["info"]) <= PUBLIC_INFO, set(s["info"]) - PUBLIC_INFO
        for key in s["info"]:
            assert not any(word in key for word in SCORED), key
        for key in s["obs_keys"]:
            assert not any(word in key for word in SCORED), key
    assert any("action_mask" in s["info"] for s in steps)


@pytest.fixture
def spy(monkeypatch):
    """`make_agent` (looked up per call by every runner) builds the spy whatever the name."""
    made = Spy()
    monkeypatch.setattr(agents_module, "make_agent", lambda name, **kw: made)
    return made


def test_run_episode_passes_a_view_and_public_info():
    spy = Spy()
    run_episode(gym.make(ENV_BY_APP["online_boutique"], **SHORT), spy, seed=3)
    _check(spy)


def test_the_scored_episode_of_sre_marathon_run(spy, tmp_path):
    from sre_marathon_gym.evaluation.episode_runner import run_scored_episode

    ep = run_scored_episode(
        lambda: gym.make(ENV_BY_APP["astronomy_shop"], **SHORT), "noop", seed=4, out=str(tmp_path)
    )
    _check(spy)
    assert ep.bundle is not None  # the runner itself still scores and seals the run


def test_the_cli_run_command(spy, tmp_path, capsys):
    from sre_marathon_gym.cli.commands import main

    code = main(["run", "--app", "train_ticket", "--agent", "noop", "--out", str(tmp_path)])
    assert code == 0 and "Marathon-Score" in capsys.readouterr().out
    _check(spy)


def test_the_evaluate_worker(spy, tmp_path):
    from sre_marathon_gym.evaluation.leaderboard import RunSpec, run_one

    run_one(RunSpec(app="online_boutique", agent="noop", seed=11, mode="train", out=str(tmp_path)))
    _check(spy)


def test_the_rllib_evaluation_of_a_baseline(spy):
    from sre_marathon_gym.rllib.evaluate import evaluate_one

    result = evaluate_one(
        "noop", "online_boutique", 5, env_config={"injection_minutes": 6, "observation_minutes": 2}
    )
    _check(spy)
    assert result.steps > 0


def test_the_oracle_alone_is_privileged():
    """The oracle reads ground truth by design (an upper bound, never a leaderboard entry)."""
    from sre_marathon_gym.agents import AGENTS
    from sre_marathon_gym.agents.base import agent_side

    env = gym.make(ENV_BY_APP["online_boutique"], **SHORT)
    privileged = {name for name, cls in AGENTS.items() if getattr(cls, "privileged", False)}
    assert privileged == {"oracle"}
    assert agent_side(env, AGENTS["oracle"]()) is env
    view = agent_side(env, AGENTS["runbook"]())
    with pytest.raises(AttributeError, match="public facts only"):
        view.record  # noqa: B018
    with pytest.raises(AttributeError):
        view.run_s = 1


def test_the_env_info_carries_no_score():
    env = gym.make(ENV_BY_APP["online_boutique"], **SHORT)
    _, info = env.reset(seed=2)
    _, _, _, _, info = env.step(np.zeros(env.action_space.shape, dtype=np.int64))
    assert "score" not in info
