"""PPO on the Marathon env: the RLlib config and checkpoints that remember their env config."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..core.clock import DEFAULT_INVOCATION_S
from ..core.errors import ConfigurationError
from .env_creation import APP_ENV_IDS, DEFAULT_ENV_CONFIG, register_envs

CHECKPOINT_META = "sre_marathon.json"


class CheckpointMeta(BaseModel):
    """``sre_marathon.json`` beside an RLlib checkpoint: the env config the policy was trained on."""

    model_config = ConfigDict(extra="forbid")
    env_config: dict[str, Any]


def read_checkpoint_env_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The env config saved by `save_checkpoint` in checkpoint directory `path`; a missing or
    malformed ``sre_marathon.json`` is a clear error, not a JSON or key error from inside."""
    meta = Path(path) / CHECKPOINT_META
    if not meta.is_file():
        raise ConfigurationError(
            f"{Path(path)} is not a checkpoint written by "
            f"sre_marathon_gym.rllib.save_checkpoint ({CHECKPOINT_META} missing)"
        )
    try:
        return CheckpointMeta.model_validate_json(meta.read_bytes()).env_config
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise ConfigurationError(
            f"{meta}: not a checkpoint description written by save_checkpoint ({where}: {first['msg']})"
        ) from None


def ppo_config(
    app: str = "online_boutique",
    env_config: Mapping[str, Any] | None = None,
    *,
    num_env_runners: int = 2,
    num_envs_per_env_runner: int = 1,
    hidden: Sequence[int] = (256, 256),
    masked: bool = True,
    seed: int | None = 0,
    **training: Any,
) -> Any:
    """A `PPOConfig` for the Marathon env of `app` (new API stack, torch, CPU).

    `env_config` updates `DEFAULT_ENV_CONFIG` (the short, easier schedule); `masked` uses RLlib's
    action-masking module (logits + log(mask)) over ``obs["action_mask"]``; `training` goes to
    ``PPOConfig.training(...)`` (e.g. ``train_batch_size_per_learner``, ``lr``,
    ``entropy_coeff``) and overrides the defaults below. Call `.build_algo()` on the result.
    """
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    if app not in APP_ENV_IDS:
        raise ValueError(f"unknown app {app!r}; expected one of {sorted(APP_ENV_IDS)}")
    register_envs()
    cfg = {**DEFAULT_ENV_CONFIG, **(env_config or {}), "app": app}
    cfg.pop("env_id", None)
    if not masked:
        cfg["action_encoding"] = cfg.get("action_encoding", "flat")
    steps_per_episode = _episode_steps(cfg)
    train = {
        "train_batch_size_per_learner": 40 * steps_per_episode,
        "minibatch_size": 10 * steps_per_episode,
        "num_epochs": 6,
        "lr": 3e-4,
        "gamma": 0.95,
        "lambda_": 0.95,
        "entropy_coeff": 0.003,
        "vf_loss_coeff": 0.5,
        "clip_param": 0.2,
        "vf_clip_param": 100.0,
    }
    train.update(training)
    model = {
        "fcnet_hiddens": list(hidden),
        "fcnet_activation": "tanh",
        "head_fcnet_hiddens": [],
        "vf_share_layers": False,
    }
    config = (
        PPOConfig()
        .environment(env=APP_ENV_IDS[app], env_config=cfg)
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            rollout_fragment_length="auto",
            num_cpus_per_env_runner=1,
            sample_timeout_s=600.0,
        )
        .learners(num_learners=0)
        .training(**train)
    )
    if masked:
        from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

        config = config.rl_module(
            rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)
        )
    else:
        config = config.rl_module(model_config=model)
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


def _episode_steps(cfg: Mapping[str, Any]) -> int:
    interval = int(cfg.get("interval_s") or DEFAULT_INVOCATION_S)
    minutes = int(cfg.get("injection_minutes") or 60) + int(cfg.get("observation_minutes") or 30)
    return max(1, math.ceil(60 * minutes / interval) - 1)  # reset simulates the first interval


def save_checkpoint(algo: Any, path: str | os.PathLike[str]) -> Path:
    """`algo.save_to_path(path)` plus ``sre_marathon.json`` (the env config, to rebuild the wrappers)."""
    path = Path(path).resolve()
    algo.save_to_path(str(path))
    cfg = {k: v for k, v in dict(algo.config.env_config).items() if _jsonable(v)}
    (path / CHECKPOINT_META).write_text(json.dumps({"env_config": cfg}, indent=2, sort_keys=True))
    return path


def _jsonable(v: Any) -> bool:
    try:
        json.dumps(v)
        return True
    except TypeError:
        return False
