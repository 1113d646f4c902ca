"""RLlib env creators: the Marathon env with the RL wrappers, and disjoint seed splits per env copy
(the scheme is described in `sre_marathon_gym.rllib`'s docstring)."""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym

from ..core.errors import ConfigurationError
from ..envs import ENV_IDS
from ..evaluation.episode_runner import ENV_BY_APP

SPLITS: dict[str, tuple[int, int]] = {
    "train": (1_000_000, 1_000_000_000),
    "validation": (1_000_000_000, 1_500_000_000),
    "test": (1_500_000_000, 2_000_000_000),
}
MAX_VECTOR = 64
MAX_WORKERS = 1024
MAX_STREAMS = MAX_WORKERS * MAX_VECTOR
APP_ENV_IDS = ENV_BY_APP  # app -> Marathon env id (the one table, episode_runner.ENV_BY_APP)
ENV_KWARGS = (
    "intensity",
    "injection_minutes",
    "observation_minutes",
    "interval_s",
    "action_slots",
    "max_alerts",
    "max_incidents",
    "mode",
    "catalog",
)
DEFAULT_ENV_CONFIG: dict[str, Any] = {
    # the short, easier schedule the example trains on (a laptop trains it in minutes)
    "app": "online_boutique",
    "intensity": 0.5,
    "injection_minutes": 15,
    "observation_minutes": 5,
    "action_slots": 4,
    "action_encoding": "flat",
    "split": "train",
}


# ----------------------------------------------------------------------------------- seed splits
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


def collect_runner_seeds(algo: Any) -> list[tuple[int, int, int]]:
    """(worker, vector, seed) of every training episode started on the algorithm's env runners."""
    per_runner = algo.env_runner_group.foreach_env_runner(lambda r: seeds_used(r.env), local_env_runner=False)
    return [t for seeds in per_runner for t in seeds]


# ----------------------------------------------------------------------------------- env creation
def wrap_for_rl(env: gym.Env, config: Mapping[str, Any]) -> gym.Env:
    """Apply the RL wrapper stack an `env_config` describes (shared by training and evaluation).

    Keys: ``degradation_weight``, ``risk_weight`` (`ShapeMarathonReward`); ``curriculum`` (kwargs of
    `ScheduleCurriculum`); ``action_encoding`` = ``"flat"`` (`FlattenActions`, default) |
    ``"discrete"`` (`EncodeActionSlots`, with ``slots_per_step`` and ``verbs``) | ``"none"``; ``flatten_obs``
    (default True: `FlattenMarathonObservation`, mask kept apart when an encoding added one).
    """
    from ..wrappers import (
        EncodeActionSlots,
        FlattenActions,
        FlattenMarathonObservation,
        ScheduleCurriculum,
        ShapeMarathonReward,
    )

    if config.get("curriculum"):
        env = ScheduleCurriculum(env, **dict(config["curriculum"]))
    env = ShapeMarathonReward(
        env,
        degradation_weight=config.get("degradation_weight", 0.0),  # checked (and typed) there
        risk_weight=config.get("risk_weight", 0.0),
    )
    encoding = config.get("action_encoding", "flat")
    if encoding == "flat":
        env = FlattenActions(env)
    elif encoding == "discrete":
        env = EncodeActionSlots(
            env, slots_per_step=config.get("slots_per_step", 1), verbs=config.get("verbs")
        )
    elif encoding != "none":
        raise ConfigurationError(
            f"action_encoding must be 'flat', 'discrete' or 'none', got {encoding!r:.60}"
        )
    if config.get("flatten_obs", True):
        env = FlattenMarathonObservation(env, keep_mask=True)
    return env


def _env_id(config: Mapping[str, Any], env_id: str | None) -> str:
    if env_id is not None:
        return env_id
    if "env_id" in config:
        return str(config["env_id"])
    app = str(config.get("app", "online_boutique"))
    if app not in APP_ENV_IDS:
        raise ValueError(f"unknown app {app!r}; expected one of {sorted(APP_ENV_IDS)}")
    return APP_ENV_IDS[app]


def make_base_env(config: Mapping[str, Any], env_id: str | None = None, **override: Any) -> gym.Env:
    """`gym.make` of the Marathon env with the env kwargs found in `config` (no wrappers)."""
    kwargs = {k: config[k] for k in ENV_KWARGS if k in config and config[k] is not None}
    kwargs.update(override)
    if kwargs.get("mode") == "eval":
        for k in ("intensity", "injection_minutes", "observation_minutes", "interval_s"):
            kwargs.pop(k, None)
    return gym.make(_env_id(config, env_id), **kwargs)


_COPIES: dict[tuple[str, int], int] = {}  # (split, worker_index) -> env copies made in this process


def make_env(env_config: Mapping[str, Any] | None = None, env_id: str | None = None) -> gym.Env:
    """RLlib env creator: the Marathon env, the RL wrappers, and `EpisodeSeeds` for the split.

    `env_config` is RLlib's `EnvContext` (a dict with ``worker_index`` / ``vector_index``
    attributes) or a plain dict; keys are the env's kwargs (``app`` or ``env_id``,
    ``intensity``, ``injection_minutes``, ...), the `wrap_for_rl` keys, ``split`` (default
    ``"train"``) and ``seed_log_dir``.
    """
    config = dict(env_config or {})
    split = str(config.get("split", "train"))
    worker = int(getattr(env_config, "worker_index", config.get("worker_index", 0)) or 0)
    ctx_vector = int(getattr(env_config, "vector_index", config.get("vector_index", 0)) or 0)
    count = _COPIES.get((split, worker), 0)
    _COPIES[(split, worker)] = count + 1
    vector = max(ctx_vector, count) % MAX_VECTOR
    env = wrap_for_rl(make_base_env(config, env_id), config)
    return EpisodeSeeds(
        env, split=split, worker_index=worker, vector_index=vector, log_dir=config.get("seed_log_dir")
    )


def register_envs() -> list[str]:
    """`tune.register_env` every Marathon id (creator: `make_env` with that id); returns the ids."""
    from ray.tune.registry import register_env

    for env_id in ENV_IDS:
        register_env(env_id, functools.partial(make_env, env_id=env_id))
    return list(ENV_IDS)
