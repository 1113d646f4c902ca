"""The vector entry point (`envs.vector.MarathonVectorEnv`): the same batches as `SyncVectorEnv` for
the same seeds and actions, in one process or in worker processes, across episode ends (next-step
autoreset); clear errors for bad input, also when the error happens in a worker."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.envs.vector import MarathonVectorEnv, VectorWorkerError

ID = "SREMarathon/OnlineBoutique-v3"
SHORT = {"intensity": 0.5, "injection_minutes": 4, "observation_minutes": 2}  # 2 steps an episode


def _same(a, b, where: str = "") -> None:
    """Recursive equality of batches and infos (arrays bit for bit, object arrays by value)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a) == sorted(b), (where, sorted(a), sorted(b))
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, np.ndarray) and a.dtype == object:
        assert a.shape == b.shape, where
        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            _same(x, y, where)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape, (where, a.dtype, b.dtype, a.shape, b.shape)
        assert a.tobytes() == b.tobytes(), where
    elif isinstance(a, list | tuple):
        assert len(a) == len(b), where
        for x, y in zip(a, b, strict=True):
            _same(x, y, where)
    else:
        assert a == b, (where, a, b)


def _trajectory(venv, steps: int, mask_at: int | None = None) -> list:
    """Reset, then `steps` sampled steps; at step `mask_at`, a reset of the first and last env only."""
    venv.action_space.seed(5)
    out = [venv.reset(seed=21)]
    for k in range(steps):
        if k == mask_at:
            mask = np.zeros(venv.num_envs, dtype=bool)
            mask[[0, -1]] = True
            out.append(venv.reset(seed=40, options={"reset_mask": mask}))
        out.append(venv.step(venv.action_space.sample()))
    venv.close()
    return out


@pytest.mark.parametrize("workers, limit", [(1, None), (2, None), (2, 1)])
def test_vector_entry_point_matches_sync_across_episode_ends(workers, limit):
    """Also with a reset of some envs (``reset_mask``) and with `max_episode_steps` (a `TimeLimit`)."""
    more = {} if limit is None else {"max_episode_steps": limit}
    sync = gym.make_vec(ID, 3, vectorization_mode="sync", **SHORT, **more)
    vec = gym.make_vec(ID, 3, vectorization_mode="vector_entry_point", workers=workers, **SHORT, **more)
    assert isinstance(vec.unwrapped, MarathonVectorEnv) and vec.unwrapped.workers == workers
    assert vec.single_observation_space == sync.single_observation_space
    assert vec.single_action_space == sync.single_action_space
    assert vec.observation_space == sync.observation_space and vec.action_space == sync.action_space
    ours, theirs = _trajectory(vec, 7, mask_at=3), _trajectory(sync, 7, mask_at=3)
    ends = [bool(np.any(step[2] | step[3])) for step in theirs[1:] if len(step) == 5]
    assert sum(ends) >= 2, ends  # two episode ends at least: the autoreset step is exercised
    if limit is not None:  # the time limit, not the episode's own end (2 steps), ends each episode
        assert all(step[3].all() for step in theirs[1:] if len(step) == 5 and step[1].any())
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        _same(a, b, f"step {i}")


def test_make_vec_defaults_to_the_vector_entry_point_and_forwards_calls():
    venv = gym.make_vec(ID, 2, workers=2, disable_env_checker=True, **SHORT)
    try:
        assert isinstance(venv.unwrapped, MarathonVectorEnv)
        venv.reset(seed=3)
        assert venv.get_attr("episode_steps") == (2, 2)
        assert venv.call("episode_steps") == (2, 2)
        venv.set_attr("probe_me", [1, 2])
        assert venv.get_attr("probe_me") == (1, 2)
    finally:
        venv.close()
    with pytest.raises(ConfigurationError, match="closed"):
        venv.step(venv.action_space.sample())


def test_a_failed_or_interrupted_call_leaves_no_pipe_a_reply_behind(monkeypatch):
    """A request that does not pickle is refused before anything is sent (the next call answers
    normally); a call cut short after some workers were asked makes every later call refuse."""
    import threading

    venv = MarathonVectorEnv(2, workers=2, **SHORT)
    try:
        venv.reset(seed=1)
        with pytest.raises(TypeError):
            venv.set_attr("probe_me", [1, threading.Lock()])
        assert venv.get_attr("episode_steps") == (2, 2)
        second, send = venv._conns[1], type(venv._conns[1]).send_bytes

        def interrupted(conn, request):  # the first worker is asked, then Ctrl-C
            if conn is second:
                raise KeyboardInterrupt
            send(conn, request)

        monkeypatch.setattr(type(second), "send_bytes", interrupted)
        with pytest.raises(KeyboardInterrupt):
            venv.step(venv.action_space.sample())
        monkeypatch.undo()
        with pytest.raises(VectorWorkerError, match="interrupted"):
            venv.step(venv.action_space.sample())
    finally:
        venv.close()
    assert not venv._procs


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_envs": 0}, "num_envs"),
        ({"num_envs": 2, "context": "nope"}, "context"),
        ({"num_envs": 2, "max_episode_steps": 0}, "max_episode_steps"),
        ({"num_envs": 2, "workers": 3}, "workers"),
        ({"num_envs": 2, "workers": 0}, "workers"),
        ({"num_envs": 2, "workers": 1, "intensity": -1.0}, "intensity"),  # raised by the env itself
        ({"num_envs": 2, "workers": 2, "intensity": -1.0}, "intensity"),  # ... in a worker process
    ],
)
def test_bad_input_is_a_configuration_error(kwargs, match):
    with pytest.raises(ConfigurationError, match=match):
        MarathonVectorEnv(**{**SHORT, **kwargs})


def test_wrong_seed_and_action_counts_are_refused():
    venv = MarathonVectorEnv(2, workers=1, **SHORT)
    try:
        with pytest.raises(ConfigurationError, match="seeds"):
            venv.reset(seed=[1, 2, 3])
        obs, _ = venv.reset(seed=[4, 9])
        assert venv.observation_space.contains(obs)
    finally:
        venv.close()
