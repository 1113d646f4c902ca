"""The Gymnasium environments: checker, determinism, pickling, episode end, eval protocol."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sre_marathon_gym  # noqa: F401  (registers the ids)
from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.envs import ENV_IDS

SHORT = dict(injection_minutes=6, observation_minutes=4, intensity=0.5)


@pytest.mark.parametrize("env_id", sorted(ENV_IDS))
def test_env_checker_passes(env_id):
    env = gym.make(env_id, **SHORT)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def rollout(env_id: str, seed: int, steps: int = 5):
    env = gym.make(env_id, **SHORT)
    obs, info = env.reset(seed=seed)
    env.action_space.seed(seed)
    traj = [obs]
    rewards = []
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        traj.append(obs)
        rewards.append(r)
        if term:
            break
    return traj, rewards, env


def test_same_seed_and_actions_give_identical_trajectories():
    a, ra, _ = rollout("SREMarathon/OnlineBoutique-v3", 3)
    b, rb, _ = rollout("SREMarathon/OnlineBoutique-v3", 3)
    assert ra == rb
    for x, y in zip(a, b):
        for k in x:
            np.testing.assert_array_equal(x[k], y[k])


def run_noop(env) -> tuple[int, float, dict]:
    """Steps a noop agent to the end: (steps, return, last info); never truncated."""
    steps, total, term = 0, 0.0, False
    while not term:
        _, r, term, trunc, info = env.step(np.zeros(env.action_space.shape, dtype=np.int64))
        steps, total = steps + 1, total + r
        assert not trunc
    return steps, total, info


def test_episode_ends_after_injection_plus_observation():
    env = gym.make("SREMarathon/TrainTicket-v3", **SHORT)
    env.reset(seed=1)
    steps, _, info = run_noop(env)
    assert info["time_s"] == 600 and steps == 600 // 120 - 1  # invoked at 120, 240, 360 and 480 s
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(env.action_space.shape, dtype=np.int64))


def test_the_no_action_run_is_simulated_only_when_the_record_is_read():
    """The last step's reward does not need the no-action run (only the card's degradation reads
    it), so stepping never pays for it; the record computes it on first request, and for a run
    where nobody acts it is the run's own traffic, interval by interval."""
    env = gym.make("SREMarathon/OnlineBoutique-v3", **SHORT)
    env.reset(seed=4)
    run_noop(env)
    degradation = env.unwrapped.recorder.degradation
    assert degradation.times and not degradation.baseline_requests
    d = env.unwrapped.record().degradation
    assert d.baseline_requests == d.requests and d.baseline_degraded == d.degraded
    assert sum(d.requests) > 0 and len(d.requests) == len(d.times)


def test_env_pickles_mid_episode_and_continues_identically():
    _, _, env = rollout("SREMarathon/AstronomyShop-v3", 5, steps=2)
    clone = pickle.loads(pickle.dumps(env))
    act = np.zeros(env.action_space.shape, dtype=np.int64)
    o1 = env.step(act)[0]
    o2 = clone.step(act)[0]
    for k in o1:
        np.testing.assert_array_equal(o1[k], o2[k])


def test_eval_mode_fixes_the_protocol():
    env = gym.make("SREMarathon/OnlineBoutique-v3", mode="eval")
    with pytest.raises(ConfigurationError, match="leaderboard seed"):
        env.reset(seed=12345)
    with pytest.raises(ConfigurationError, match="fixes the leaderboard protocol"):
        gym.make("SREMarathon/OnlineBoutique-v3", mode="eval", interval_s=60)
    with pytest.raises(ConfigurationError, match="mode must be"):
        gym.make("SREMarathon/OnlineBoutique-v3", mode="race")


def test_reward_sums_to_score_and_noop_scores_zero():
    env = gym.make("SREMarathon/OnlineBoutique-v3", **SHORT)
    env.reset(seed=2)
    _, total, info = run_noop(env)
    assert total == 0.0 and env.unwrapped.reward_fn.value == 0.0
    assert "score" not in info  # the running score is an oracle of the ground truth: never in info
    assert len(env.unwrapped.record().faults) > 0


@pytest.mark.parametrize(
    "agent",
    ["noop", "random", "runbook", "oracle", "incident_per_alert", "cycle_guesses", "act_on_everything"],
)
def test_rewards_sum_to_the_unclipped_score_for_every_baseline(agent):
    """Whole episodes under rules v3 (penalties included, so rewards can be negative): the env's
    per-step rewards, fed only each step's new evidence, sum to the recorded run's unclipped score."""
    import math

    from sre_marathon_gym.agents import make_agent
    from sre_marathon_gym.scoring import score_run

    env = gym.make("SREMarathon/AstronomyShop-v3", injection_minutes=20, observation_minutes=10)
    obs, info = env.reset(seed=6)
    pilot = make_agent(agent)
    pilot.reset(env, 6)
    rewards, done = [], False
    while not done:
        obs, r, term, trunc, info = env.step(pilot.invoke(env, obs, info))
        rewards.append(r)
        done = term or trunc
    u = env.unwrapped
    card = score_run(u.record(), u.catalog.scoring)
    assert card.rules_version == 3
    assert math.fsum(rewards) == pytest.approx(card.marathon_score_unclipped, abs=1e-9)
    if agent in ("incident_per_alert", "cycle_guesses", "act_on_everything"):
        assert min(rewards) < 0  # guessing is paid for as it happens


def test_older_ids_keep_their_rules_for_reproducing_old_results():
    """`-v0` pays rules v1 (the paper read literally), `-v1` rules v2, `-v2` rules v3, all on the
    curated change stream; `-v3` (the default) rules v3 on the production change stream."""
    from sre_marathon_gym.core.errors import ConfigurationError

    for suffix, rules, changes in (
        ("-v0", 1, "curated"),
        ("-v1", 2, "curated"),
        ("-v2", 3, "curated"),
        ("-v3", 3, "production"),
    ):
        env = gym.make("SREMarathon/OnlineBoutique" + suffix, **SHORT).unwrapped
        assert env.scoring.rules_version == rules and env.config()["rules"] == rules
        env.reset(seed=3)
        assert env.schedule.changes == changes
        planes = {b.plane for b in env.schedule.benign}
        if changes == "curated":
            assert planes <= {"pipeline"} and env.config()["change_failure_rate"] is None
        else:  # a short run: few faulty changes, each with its twins
            assert env.schedule.change_failure_rate == env.config()["change_failure_rate"] == 0.15
            assert env.schedule.measured_change_failure_rate() < 0.5
    with pytest.raises(ConfigurationError, match="unknown rules version"):
        gym.make("SREMarathon/OnlineBoutique-v3", rules=9)
