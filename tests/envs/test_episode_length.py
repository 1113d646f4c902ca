"""The episode length: `MarathonEnv.episode_steps`, ``info["episode_steps"]`` and
``spec.max_episode_steps`` agree with the steps an episode really has, for every kwargs."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

from sre_marathon_gym.envs import ENV_IDS, LEGACY_ENV_IDS

ID = "SREMarathon/OnlineBoutique-v3"

CONFIGS = {  # name -> (kwargs, steps computed by hand)
    "eval protocol": ({"mode": "eval"}, 5400 // 120 - 1),  # 90 min at 120 s: 44
    "4+2 min at 120 s": ({"injection_minutes": 4, "observation_minutes": 2, "interval_s": 120}, 2),
    "4+2 min at 90 s": ({"injection_minutes": 4, "observation_minutes": 2, "interval_s": 90}, 3),
    # 420 s is no multiple of 120 s: invoked at 120, 240, 360; the last step is clamped to 420 s
    "5+2 min at 120 s": ({"injection_minutes": 5, "observation_minutes": 2, "interval_s": 120}, 3),
}


def run_to_end(env) -> tuple[int, list[dict], list[bool]]:
    """Noop steps (``step(None)`` ends an invocation without acting) until terminated or truncated:
    (steps, infos of reset and every step, truncated flags)."""
    _, info = env.reset(seed=None if env.unwrapped.mode == "eval" else 3)  # eval: the leaderboard seed
    infos, truncs, steps = [info], [], 0
    while True:
        _, _, term, trunc, info = env.step(None)
        steps += 1
        infos.append(info)
        truncs.append(trunc)
        if term or trunc:
            return steps, infos, truncs


@pytest.mark.parametrize("name", list(CONFIGS))
def test_spec_info_and_property_match_the_real_episode_length(name: str) -> None:
    kwargs, expected = CONFIGS[name]
    env = gym.make(ID, **kwargs)
    base = env.unwrapped
    assert base.episode_steps == expected
    assert env.spec.max_episode_steps == expected
    steps, infos, truncs = run_to_end(env)
    assert steps == expected
    assert infos[-1]["time_s"] == base.run_s
    assert not any(truncs)  # gym.make adds no TimeLimit: the env ends by termination alone
    assert all(i["episode_steps"] == expected for i in infos)


@pytest.mark.parametrize("env_id", [*ENV_IDS, *LEGACY_ENV_IDS])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_every_registered_id_reports_the_length_of_its_kwargs(env_id: str) -> None:
    assert gym.spec(env_id).max_episode_steps is None  # no registry value fits every kwargs
    assert gym.make(env_id, mode="eval").spec.max_episode_steps == 44
    short = gym.make(env_id, injection_minutes=4, observation_minutes=3, interval_s=90)
    assert short.spec.max_episode_steps == short.unwrapped.episode_steps == 4  # 420 s: 90 ... 360 s


def test_a_requested_limit_truncates_there() -> None:
    env = gym.make(ID, injection_minutes=8, observation_minutes=2, max_episode_steps=3)
    assert env.unwrapped.episode_steps == 4 and env.spec.max_episode_steps == 3
    steps, infos, truncs = run_to_end(env)
    assert steps == 3 and truncs == [False, False, True]
    assert infos[-1]["time_s"] == 480 < env.unwrapped.run_s


def test_a_limit_at_the_natural_end_never_cuts_the_episode_short() -> None:
    """``gym.make(env.spec)`` re-applies the spec's limit as a TimeLimit: the episode still ends by
    termination at its last step (which TimeLimit also reports truncated), never earlier."""
    env = gym.make(gym.make(ID, injection_minutes=4, observation_minutes=2).spec)
    assert env.spec.max_episode_steps == 2
    env.reset(seed=1)
    assert env.step(None)[2:4] == (False, False)
    assert env.step(None)[2:4] == (True, True)


def test_the_length_survives_pickling_and_vectorization() -> None:
    kwargs = {"injection_minutes": 4, "observation_minutes": 2, "interval_s": 90}
    env = gym.make(ID, **kwargs)
    env.reset(seed=2)
    env.step(None)
    copy = pickle.loads(pickle.dumps(env))
    assert copy.spec.max_episode_steps == copy.unwrapped.episode_steps == 3
    assert copy.unwrapped.now == env.unwrapped.now
    venv = gym.make_vec(ID, 2, vectorization_mode="sync", **kwargs)
    assert [e.spec.max_episode_steps for e in venv.envs] == [3, 3]
    _, info = venv.reset(seed=0)
    assert list(info["episode_steps"]) == [3, 3]
    venv.step(np.zeros(venv.action_space.shape, np.int64))
    venv.close()
