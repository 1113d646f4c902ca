"""A curriculum over the fault schedule: intensity and length ramp with the episode count."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from ..core.errors import ConfigurationError
from ..envs.inputs import MAX_RUN_MINUTES, real, whole


def _pair(name: str, value: Any) -> tuple[Any, Any]:
    """(start, end) of a ramped setting: exactly two values."""
    if not isinstance(value, (tuple, list, np.ndarray)) or len(value) != 2:
        raise ConfigurationError(f"{name} must be a (start, end) pair, got {value!r:.60}")
    return value[0], value[1]


class ScheduleCurriculum(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Linearly ramps fault `intensity` and `injection_minutes` from `start` to `end` over episodes.

    Why: a short, sparse schedule (few, mostly non-overlapping faults) lets a policy learn the
    correlate-localize-repair loop before it faces the full 60-minute marathon. Episode ``e``
    (counted from 0 by this wrapper's resets) uses ``frac = min(e / ramp_episodes, 1)`` and
    ``value = start + frac x (end - start)`` (minutes rounded to whole minutes, at least one
    invocation interval). The new schedule takes effect at the next ``reset``; spaces do not
    change. Requires ``mode="train"`` (the leaderboard protocol is fixed). ``start_episode``
    resumes a curriculum (e.g. per env runner after a restore). The current stage is in
    ``info["curriculum"]``.

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> env = ScheduleCurriculum(gym.make("SREMarathon/OnlineBoutique-v3"), ramp_episodes=4,
        ...                          intensity=(0.5, 1.0), injection_minutes=(4, 8), observation_minutes=2)
        >>> [env.stage(e) for e in (0, 2, 4, 9)]
        [(0.5, 4), (0.75, 6), (1.0, 8), (1.0, 8)]
        >>> _, info = env.reset(seed=0)
        >>> info["curriculum"]
        {'episode': 0, 'intensity': 0.5, 'injection_minutes': 4}
    """

    def __init__(
        self,
        env: gym.Env,
        ramp_episodes: int = 100,
        intensity: tuple[float, float] = (0.5, 1.0),
        injection_minutes: tuple[int, int] = (10, 60),
        observation_minutes: int | None = None,
        start_episode: int = 0,
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self,
            ramp_episodes=ramp_episodes,
            intensity=intensity,
            injection_minutes=injection_minutes,
            observation_minutes=observation_minutes,
            start_episode=start_episode,
        )
        gym.Wrapper.__init__(self, env)
        if env.unwrapped.mode != "train":
            raise ValueError("ScheduleCurriculum needs mode='train' (mode='eval' fixes the schedule)")
        ramp_episodes = whole("ramp_episodes", ramp_episodes, 1, 10**9)
        intensity = tuple(real("intensity", x, 0.0, 4.0, lo_open=True) for x in _pair("intensity", intensity))
        injection_minutes = tuple(
            whole("injection_minutes", m, 1, MAX_RUN_MINUTES)
            for m in _pair("injection_minutes", injection_minutes)
        )
        if observation_minutes is not None:
            observation_minutes = whole("observation_minutes", observation_minutes, 0, MAX_RUN_MINUTES)
        self.ramp_episodes = ramp_episodes
        self.intensity = intensity
        self.injection_minutes = injection_minutes
        self.observation_minutes = observation_minutes
        self.episode = whole("start_episode", start_episode, 0, 10**12)

    def stage(self, episode: int) -> tuple[float, int]:
        """(intensity, injection minutes) of episode number `episode`."""
        frac = min(episode / self.ramp_episodes, 1.0)
        i0, i1 = self.intensity
        m0, m1 = self.injection_minutes
        return round(i0 + frac * (i1 - i0), 6), int(round(m0 + frac * (m1 - m0)))

    def reset(self, **kwargs: Any) -> tuple[Any, dict]:
        base = self.env.unwrapped
        intensity, minutes = self.stage(self.episode)
        base.intensity = intensity
        if self.observation_minutes is not None:
            base.observation_s = 60 * self.observation_minutes
        # whole minutes (pickling rebuilds from minutes), at least one interval of injection, and a
        # run longer than one interval (reset simulates the first one)
        shortest = max(-(-base.interval_s // 60), (base.interval_s - base.observation_s) // 60 + 1)
        minutes = max(minutes, shortest)
        base.injection_s = 60 * minutes
        base.run_s = base.injection_s + base.observation_s
        # keep pickling (rebuild by replay) consistent with the schedule actually run
        base._init_kwargs.update(
            intensity=intensity,
            injection_minutes=base.injection_s // 60,
            observation_minutes=base.observation_s // 60,
        )
        obs, info = self.env.reset(**kwargs)
        info = dict(info)
        info["curriculum"] = {"episode": self.episode, "intensity": intensity, "injection_minutes": minutes}
        self.episode += 1
        return obs, info
