"""Constructor arguments, wrappers and checkpoints given the wrong thing (stop 29's fuzzing): a
clear `ConfigurationError` (or a recorded invalid result for an action), never a TypeError from a
comparison inside, a numpy allocation of gigabytes, or an env whose first step is already too late."""

from __future__ import annotations

import json
import pickle

import gymnasium as gym
import numpy as np
import pytest

import sre_marathon_gym  # noqa: F401  (registers the env ids)
from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.wrappers import (
    EncodeActionSlots,
    FlattenActions,
    ScheduleCurriculum,
    ShapeMarathonReward,
)

ENV = "SREMarathon/OnlineBoutique-v3"
SHORT = dict(injection_minutes=6, observation_minutes=2)


@pytest.mark.parametrize(
    "kwargs, says",
    [
        (dict(max_alerts=10**9), r"max_alerts must be in \[1, 4096\]"),
        (dict(max_incidents=0), r"max_incidents must be in \[1, 4096\]"),
        (dict(action_slots=10**7), r"action_slots must be in \[1, 64\]"),
        (dict(action_slots=2.5), "action_slots must be a whole number, got float"),
        (dict(intensity="x"), "intensity must be a number, got str"),
        (dict(intensity=None), "intensity must be a number, got NoneType"),
        (dict(intensity=float("nan")), r"intensity must be in \(0, 4\]"),
        (dict(injection_minutes="60"), "injection_minutes must be a whole number, got str"),
        (dict(injection_minutes=2.5), "injection_minutes must be a whole number, got float"),
        (dict(injection_minutes=True), "injection_minutes must be a whole number, got bool"),
        (dict(interval_s="120"), "interval_s must be a whole number, got str"),
        (dict(interval_s=10**9), r"interval_s must be in \[1, 86400\]"),
        (dict(rules="v2"), "rules must be a whole number, got str"),
        (dict(rules=4), r"unknown rules version 4; known: v1, v2, v3 \(pass one of 1, 2, 3\)"),
    ],
)
def test_bad_constructor_arguments_are_refused_by_name(kwargs, says):
    with pytest.raises(ConfigurationError, match=says):
        gym.make(ENV, mode="train", **kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(injection_minutes=1, observation_minutes=1),  # 120 s run, 120 s cadence
        dict(injection_minutes=20, observation_minutes=0, interval_s=3600),
    ],
)
def test_a_run_no_longer_than_one_interval_is_refused(kwargs):
    """reset() simulates the first interval: such a run was over before the first step (the CLI
    crashed with ResetNeeded; interval_s=10**9 hung in reset)."""
    with pytest.raises(ConfigurationError, match="must be longer than one invocation interval"):
        gym.make(ENV, mode="train", **kwargs)
    env = gym.make(ENV, mode="train", injection_minutes=1, observation_minutes=2)  # 180 s: one step
    env.reset(seed=1)
    assert env.step(None)[2] is True


def test_record_before_reset_says_reset():
    with pytest.raises(gym.error.ResetNeeded, match="call reset"):
        gym.make(ENV).unwrapped.record()


def _refused(info) -> str:
    (res,) = info["tool_results"]
    assert not res["ok"] and res["error"]["code"] == "invalid_arguments"
    return res["error"]["message"]


@pytest.mark.parametrize("action", [-1, 1.5, 10**9, "x", np.int64(-3), [0, 1]])
def test_encoded_actions_outside_the_table_are_refused_not_wrapped_around(action):
    """-1 used to pick the table's last row and act on it, 1.5 was truncated to row 1, 10**9 raised
    IndexError: each is now the env's own invalid result, and nothing acts."""
    env = EncodeActionSlots(gym.make(ENV, mode="train", **SHORT))
    env.reset(seed=1)
    base = env.unwrapped
    before = len(base.runner.actions)
    _, _, _, _, info = env.step(action)
    assert f"Discrete({env.action_space.n})" in _refused(info)
    assert len(base.runner.actions) == before
    again = pickle.loads(pickle.dumps(base))  # a refused action replays as refused
    assert again.record().model_dump_json() == base.record().model_dump_json()


@pytest.mark.parametrize("action", [np.full(20, 0.9), np.zeros(3, np.int64), "x"])
def test_flattened_actions_of_the_wrong_type_or_size_are_refused(action):
    env = FlattenActions(gym.make(ENV, mode="train", **SHORT))
    env.reset(seed=1)
    _, _, _, _, info = env.step(action)
    assert "action must be an integer array of shape (20,)" in _refused(info)
    assert env.step(None)[4]["tool_results"] == []  # None still ends the invocation quietly


@pytest.mark.parametrize(
    "make, says",
    [
        (lambda e: ScheduleCurriculum(e, intensity="x"), r"intensity must be a \(start, end\) pair"),
        (lambda e: ScheduleCurriculum(e, intensity=(0.5, "x")), "intensity must be a number"),
        (lambda e: ScheduleCurriculum(e, injection_minutes=(1.5, 3)), "injection_minutes must be a whole"),
        (lambda e: ScheduleCurriculum(e, ramp_episodes=0), r"ramp_episodes must be in \[1,"),
        (lambda e: ShapeMarathonReward(e, degradation_weight="x"), "degradation_weight must be a number"),
        (lambda e: ShapeMarathonReward(e, risk_weight=float("nan")), r"risk_weight must be in \[0,"),
        (lambda e: ShapeMarathonReward(e, degradation_weight=-1), r"degradation_weight must be in \[0,"),
        (lambda e: ShapeMarathonReward(e, clip="no"), "clip must be True or False"),
        (lambda e: ScheduleCurriculum(e, intensity={"a": 1, "b": 2}), r"must be a \(start, end\) pair"),
        (lambda e: EncodeActionSlots(e, slots_per_step=1.5), "slots_per_step must be a whole number"),
        (lambda e: EncodeActionSlots(e, slots_per_step=9), r"slots_per_step must be in \[1, 4\]"),
    ],
)
def test_wrapper_settings_are_checked(make, says):
    with pytest.raises(ConfigurationError, match=says):
        make(gym.make(ENV, mode="train", **SHORT))


@pytest.mark.parametrize(
    "content, says",
    [
        ("{", "Invalid JSON"),
        ("[]", "Input should be an object"),
        ('{"app": "x"}', "env_config: Field required"),
        ('{"env_config": 5}', "env_config: Input should be an object"),
    ],
)
def test_a_malformed_checkpoint_description_is_a_clear_error(tmp_path, content, says):
    from sre_marathon_gym.rllib.training import CHECKPOINT_META, read_checkpoint_env_config

    (tmp_path / CHECKPOINT_META).write_text(content)
    with pytest.raises(ConfigurationError, match="not a checkpoint description") as exc:
        read_checkpoint_env_config(tmp_path)
    assert says in str(exc.value)
    (tmp_path / CHECKPOINT_META).write_text(json.dumps({"env_config": {"app": "train_ticket"}}))
    assert read_checkpoint_env_config(tmp_path) == {"app": "train_ticket"}
    with pytest.raises(ConfigurationError, match="sre_marathon.json missing"):  # a user's path: one line
        read_checkpoint_env_config(tmp_path / "nowhere")


def test_whole_number_floats_are_accepted_as_tuners_and_yaml_write_them():
    env = gym.make(
        ENV, mode="train", interval_s=120.0, injection_minutes=np.float64(6), observation_minutes=2
    )
    assert env.unwrapped.interval_s == 120 and env.unwrapped.run_s == 480
    assert EncodeActionSlots(gym.make(ENV, mode="train", **SHORT), slots_per_step=2.0).k == 2


@pytest.mark.parametrize("interval_s, observation_minutes", [(150, 0), (120, 0), (300, 1)])
def test_the_curriculum_always_runs_whole_minutes_longer_than_one_interval(interval_s, observation_minutes):
    """The curriculum sets the run length itself: it used to allow a run of exactly one interval
    (over before the first step) and, with interval_s=150, 150 s of injection, which a pickled copy
    rebuilt as 120 s (whole minutes) and so replayed a different run."""
    env = ScheduleCurriculum(
        gym.make(ENV, mode="train", interval_s=interval_s, observation_minutes=observation_minutes),
        injection_minutes=(1, 1),
        observation_minutes=observation_minutes,
    )
    env.reset(seed=1)
    base = env.unwrapped
    assert base.injection_s % 60 == 0 and base.injection_s >= interval_s and base.run_s > interval_s
    env.step(None)
    again = pickle.loads(pickle.dumps(base))
    assert again.run_s == base.run_s
    assert again.record().model_dump_json() == base.record().model_dump_json()


def test_an_invalid_action_without_a_reason_is_still_refused():
    from sre_marathon_gym.envs.inputs import InvalidAction

    env = gym.make(ENV, mode="train", **SHORT)
    env.reset(seed=1)
    assert _refused(env.step(InvalidAction(None))[4]) == "invalid action"
