"""Disjoint seed splits per env copy: `SPLITS`, `split_seed`, `split_seeds`, `which_split` and the
`EpisodeSeeds` wrapper (no Ray needed; `sre_marathon_gym.rllib` re-exports them all).

Seed splits
-----------
Every episode is one fault schedule, chosen by its seed. Training, validation and test episodes
come from disjoint integer ranges (``SPLITS``), all far from the leaderboard seeds (30, 27,
83) and the CLI's extra seeds (10000+), so a trained policy is never tested on a schedule it saw::

    train       [1_000_000,     1_000_000_000)
    validation  [1_000_000_000, 1_500_000_000)
    test        [1_500_000_000, 2_000_000_000)

Within a split, each env copy is a *stream* ``stream = worker_index * MAX_VECTOR + vector_index``
(RLlib's env-runner index, 0 for the local runner, and the index of the copy inside the runner's
vector env; ``MAX_VECTOR = 64``, ``worker_index < MAX_WORKERS = 1024``), and its ``k``-th episode
(k = 0, 1, ...) gets::

    seed = lo + (k * MAX_STREAMS + stream) mod (hi - lo),      MAX_STREAMS = MAX_WORKERS * MAX_VECTOR

Two streams never share a seed as long as ``k < (hi - lo) / MAX_STREAMS`` (15,243 episodes per
env copy for train), and the seeds of one stream never repeat before then either. The seeds an
env copy used are in `EpisodeSeeds.seeds_used` and (with ``env_config["seed_log_dir"]``)
appended to ``seeds-w<worker>-v<vector>-<pid>.txt`` there, so tests can check disjointness.

Note: RLlib 2.60 passes ONE `EnvContext` to all copies of a runner's vector env (its
``vector_index`` is 0 for each), so `make_env` also counts the copies it creates per process
and worker and uses ``max(ctx.vector_index, count)``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium as gym

SPLITS: dict[str, tuple[int, int]] = {
    "train": (1_000_000, 1_000_000_000),
    "validation": (1_000_000_000, 1_500_000_000),
    "test": (1_500_000_000, 2_000_000_000),
}
MAX_VECTOR = 64
MAX_WORKERS = 1024
MAX_STREAMS = MAX_WORKERS * MAX_VECTOR


def split_seed(split: str, stream: int, episode: int) -> int:
    """The seed of episode `episode` of env copy `stream` in `split` (see the module docstring)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {sorted(SPLITS)}")
    if not 0 <= stream < MAX_STREAMS or episode < 0:
        raise ValueError(f"stream must be in [0, {MAX_STREAMS}) and episode >= 0")
    lo, hi = SPLITS[split]
    return lo + (episode * MAX_STREAMS + stream) % (hi - lo)


def split_seeds(split: str, n: int) -> list[int]:
    """`n` seeds of `split` for evaluation: the first episode of streams 0..n-1 (lo, lo+1, ...)."""
    return [split_seed(split, i, 0) for i in range(n)]


def which_split(seed: int) -> str | None:
    """The split `seed` belongs to, or None."""
    for name, (lo, hi) in SPLITS.items():
        if lo <= seed < hi:
            return name
    return None


class EpisodeSeeds(gym.Wrapper):
    """Ignores the seed passed to `reset` and uses the split's next seed for this env copy.

    Why: RLlib seeds a vector env once (or never); a fresh, disjoint schedule per episode and per
    env copy is what makes "trained on these seeds, tested on those" true. ``info["episode_seed"]``
    carries the seed; ``seeds_used`` lists them all.
    """

    def __init__(
        self,
        env: gym.Env,
        split: str = "train",
        worker_index: int = 0,
        vector_index: int = 0,
        log_dir: str | os.PathLike[str] | None = None,
    ):
        super().__init__(env)
        if not 0 <= worker_index < MAX_WORKERS or not 0 <= vector_index < MAX_VECTOR:
            raise ValueError(f"worker_index must be < {MAX_WORKERS} and vector_index < {MAX_VECTOR}")
        split_seed(split, 0, 0)  # validates the split name
        self.split, self.worker_index, self.vector_index = split, worker_index, vector_index
        self.stream = worker_index * MAX_VECTOR + vector_index
        self.seeds_used: list[int] = []
        self.log_path = None
        if log_dir is not None:
            Path(log_dir).mkdir(parents=True, exist_ok=True)
            self.log_path = Path(log_dir) / f"seeds-w{worker_index}-v{vector_index}-{os.getpid()}.txt"

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[Any, dict]:
        episode_seed = split_seed(self.split, self.stream, len(self.seeds_used))
        self.seeds_used.append(episode_seed)
        if self.log_path is not None:
            with open(self.log_path, "a") as fh:
                fh.write(f"{self.split} {self.worker_index} {self.vector_index} {episode_seed}\n")
        obs, info = self.env.reset(seed=episode_seed, options=options)
        info = dict(info)
        info["episode_seed"] = episode_seed
        return obs, info


def seeds_used(env: Any) -> list[tuple[int, int, int]]:
    """(worker, vector, seed) of every episode started by the `EpisodeSeeds` inside `env`
    (a single env or a Gymnasium vector env, possibly wrapped)."""
    out: list[tuple[int, int, int]] = []
    stack, seen = [env], set()
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, EpisodeSeeds):
            out += [(e.worker_index, e.vector_index, s) for s in e.seeds_used]
        stack += list(getattr(e, "envs", []) or [])
        stack.append(getattr(e, "env", None))
    return out


__all__ = [
    "MAX_STREAMS",
    "MAX_VECTOR",
    "MAX_WORKERS",
    "SPLITS",
    "EpisodeSeeds",
    "seeds_used",
    "split_seed",
    "split_seeds",
    "which_split",
]
