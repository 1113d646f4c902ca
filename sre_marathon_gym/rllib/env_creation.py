"""RLlib env creators: the Marathon env with the RL wrappers, and disjoint seed splits per env copy
(the scheme and its names live in `sre_marathon_gym.wrappers.seeds`, which needs no Ray; they are
re-exported here)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from ..core.errors import ConfigurationError
from ..envs import ENV_IDS
from ..evaluation.episode_runner import ENV_BY_APP
from ..wrappers.seeds import (
    MAX_STREAMS,
    MAX_VECTOR,
    MAX_WORKERS,
    SPLITS,
    EpisodeSeeds,
    seeds_used,
    split_seed,
    split_seeds,
    which_split,
)

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
def collect_runner_seeds(algo: Any) -> list[tuple[int, int, int]]:
    """(worker, vector, seed) of every training episode started on the algorithm's env runners."""
    per_runner = algo.env_runner_group.foreach_env_runner(lambda r: seeds_used(r.env), local_env_runner=False)
    return [t for seeds in per_runner for t in seeds]


# ----------------------------------------------------------------------------------- env creation
def wrap_for_rl(env: gym.Env, config: Mapping[str, Any]) -> gym.Env:
    """Apply the RL wrapper stack an `env_config` describes (shared by training and evaluation).

    Keys: ``degradation_weight``, ``risk_weight`` (`ShapeMarathonReward`); ``curriculum`` (kwargs of
    `ScheduleCurriculum`); ``action_encoding`` = ``"flat"`` (`FlattenActions`, default) |
    ``"discrete"`` (`EncodeActionSlots`, with ``slots_per_step`` and ``verbs``) | ``"macro"``
    (`ChangeObservation` + `MacroActions`, with ``changes_shown`` and ``moves_per_step``) |
    ``"none"``; ``flatten_obs``
    (default True: `FlattenMarathonObservation`, mask kept apart when an encoding added one).
    """
    from ..wrappers import (
        ChangeObservation,
        EncodeActionSlots,
        FlattenActions,
        FlattenMarathonObservation,
        MacroActions,
        ScheduleCurriculum,
        ShapeMarathonReward,
    )

    encoding = config.get("action_encoding", "flat")
    if encoding == "macro":  # its observation fields go right on the env
        env = ChangeObservation(env, changes_shown=config.get("changes_shown", 8))

    if config.get("curriculum"):
        env = ScheduleCurriculum(env, **dict(config["curriculum"]))
    env = ShapeMarathonReward(
        env,
        degradation_weight=config.get("degradation_weight", 0.0),  # checked (and typed) there
        risk_weight=config.get("risk_weight", 0.0),
    )
    if encoding == "flat":
        env = FlattenActions(env)
    elif encoding == "discrete":
        env = EncodeActionSlots(
            env, slots_per_step=config.get("slots_per_step", 1), verbs=config.get("verbs")
        )
    elif encoding == "macro":
        env = MacroActions(env, moves_per_step=config.get("moves_per_step", 2))
    elif encoding != "none":
        raise ConfigurationError(
            f"action_encoding must be 'flat', 'discrete', 'macro' or 'none', got {encoding!r:.60}"
        )
    if config.get("flatten_obs", True):
        from ..wrappers.changes import UNUSED_BY_MACRO

        exclude = UNUSED_BY_MACRO if encoding == "macro" else ()  # macro moves act on changes, services
        env = FlattenMarathonObservation(env, keep_mask=True, exclude=exclude)
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


__all__ = [  # with the seed splits of `wrappers.seeds`, re-exported for `rllib.env_creation` callers
    "APP_ENV_IDS",
    "DEFAULT_ENV_CONFIG",
    "ENV_KWARGS",
    "MAX_STREAMS",
    "MAX_VECTOR",
    "MAX_WORKERS",
    "SPLITS",
    "EpisodeSeeds",
    "collect_runner_seeds",
    "make_base_env",
    "make_env",
    "register_envs",
    "seeds_used",
    "split_seed",
    "split_seeds",
    "which_split",
    "wrap_for_rl",
]
