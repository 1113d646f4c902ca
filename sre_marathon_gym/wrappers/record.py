"""Recording: a sealed run bundle per episode, written when the episode ends."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym


class RecordBundle(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Writes ``<directory>/<prefix>-<seed>-<n>.bundle`` when an episode terminates or truncates.

    Why: a training or evaluation run should leave the same sealed, rescorable evidence as the
    CLI does (`sre-marathon score BUNDLE` recomputes every metric from it). Uses
    `sre_marathon_gym.recording.bundle.write_bundle` with the env's record, metric store and catalog. The
    written paths are in ``self.paths`` and in the final step's ``info["bundle"]``. An episode a
    step limit truncates before the run's end is sealed INCOMPLETE (`score` refuses to print it as
    a leaderboard number).

    Example:
        >>> import tempfile, gymnasium as gym, numpy as np, sre_marathon_gym
        >>> d = tempfile.mkdtemp()
        >>> env = RecordBundle(gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=2,
        ...                             observation_minutes=2), d)
        >>> _ = env.reset(seed=5)
        >>> done = False
        >>> while not done:
        ...     _, _, term, trunc, info = env.step(np.zeros(env.action_space.shape, np.int64))
        ...     done = term or trunc
        >>> info["bundle"].endswith("episode-5-0.bundle")
        True
    """

    def __init__(
        self, env: gym.Env, directory: str | Path, prefix: str = "episode", extra: dict | None = None
    ):
        gym.utils.RecordConstructorArgs.__init__(self, directory=str(directory), prefix=prefix, extra=extra)
        gym.Wrapper.__init__(self, env)
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.extra = extra
        self.paths: list[Path] = []

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            from ..recording.bundle import Incomplete, write_bundle

            base = self.env.unwrapped
            path = self.directory / f"{self.prefix}-{base.seed_used}-{len(self.paths)}.bundle"
            cut = None  # a step limit (TimeLimit) that truncates before the run's end seals it INCOMPLETE
            if base.now < base.run_s:
                cut = Incomplete(float(base.now), "truncated before the end of the run")
            write_bundle(
                path,
                base.record(),
                store=base.metric_store,
                catalog=base.catalog,
                extra=self.extra,
                incomplete=cut,
            )
            self.paths.append(path)
            info = dict(info)
            info["bundle"] = str(path)
        return obs, reward, terminated, truncated, info
