"""`episode_runner.run_scored_episode`: the one function every Marathon episode goes through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sre_marathon_gym.agents import NoopAgent, RandomAgent
from sre_marathon_gym.evaluation import episode_runner
from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode
from sre_marathon_gym.recording.bundle import load_bundle

SHORT = {"intensity": 0.5, "injection_minutes": 4, "observation_minutes": 2}  # 2 invocations


def _short_env() -> Any:
    return make_marathon_env("online_boutique", "train", None, **SHORT)


@pytest.fixture
def calls(monkeypatch) -> list[dict]:
    """Records every call of `run_scored_episode` (and still runs it)."""
    seen: list[dict] = []
    real = episode_runner.run_scored_episode

    def spy(env: Any, agent: Any, **kw: Any) -> Any:
        seen.append({"agent": agent, **kw})
        return real(env, agent, **kw)

    monkeypatch.setattr(episode_runner, "run_scored_episode", spy)
    return seen


def test_cli_run_evaluation_and_rllib_all_go_through_it(calls, tmp_path: Path) -> None:
    from sre_marathon_gym.cli.commands import main
    from sre_marathon_gym.evaluation.leaderboard import RunSpec, run_one
    from sre_marathon_gym.rllib import evaluate_policy

    argv = [
        "run",
        "--app",
        "online_boutique",
        "--agent",
        "noop",
        "--mode",
        "train",
        "--seed",
        "5",
        "--intensity",
        "0.5",
        "--injection-minutes",
        "4",
        "--observation-minutes",
        "2",
        "--out",
        str(tmp_path),
    ]
    assert main(argv) == 0
    run_one(RunSpec("online_boutique", "noop", 101, "eval", None))
    (res,) = evaluate_policy("runbook", "online_boutique", [7], num_workers=1, env_config=SHORT)
    # run's own episode, then its context line's baselines on the same seed (noop's own score is reused)
    assert [c["agent"] for c in calls] == ["noop", "runbook", "oracle", "noop", "runbook"]
    assert (tmp_path / "online_boutique-noop-5.bundle").is_file()
    assert res.seed == 7 and res.steps == 2 and res.policy == "runbook"


def test_an_agent_object_is_run_scored_and_sealed_under_its_name(tmp_path: Path) -> None:
    run = run_scored_episode(_short_env, RandomAgent(), seed=9, out=tmp_path)
    assert run.bundle == str(tmp_path / "online_boutique-random-9.bundle") and run.seed == 9
    assert run.steps == 2 and run.episode_return == pytest.approx(run.env_return)
    bundle = load_bundle(run.bundle)  # verified on load
    assert bundle.info.complete and bundle.record.manifest.seed == 9


def test_a_failing_agent_object_leaves_an_incomplete_bundle_and_stays_open(tmp_path: Path) -> None:
    class Crashing(NoopAgent):
        name = "crash:v1/a"
        closed = False

        def invoke(self, env: Any, obs: Any, info: dict) -> None:
            if env.unwrapped.now > 120:  # the second invocation
                raise RuntimeError("agent bug")

        def close(self) -> None:
            self.closed = True

    agent = Crashing()
    with pytest.raises(RuntimeError, match="agent bug"):
        run_scored_episode(_short_env, agent, seed=4, out=tmp_path)
    bundle = load_bundle(tmp_path / "online_boutique-crash-v1_a-4.incomplete.bundle")
    assert bundle.extra["incomplete"] == "RuntimeError: agent bug"
    assert not agent.closed  # the caller's agent: the caller closes it
    assert bundle.info.incomplete.reached_s == 240.0 and not list(tmp_path.glob("*-4.bundle"))
