"""Evaluating policies across seeds: baselines by name and trained checkpoints, each episode one
`episode_runner.run_scored_episode` (in this process or as Ray tasks); and the leaderboard protocol."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from ..core.errors import ConfigurationError
from ..core.run_record import Usage
from .env_creation import DEFAULT_ENV_CONFIG, make_base_env, wrap_for_rl
from .training import read_checkpoint_env_config


class CheckpointPolicy:
    """A trained RLModule from a checkpoint, acting on the wrapped env (`wrap_for_rl` of its config);
    an `agents.base.Agent` (``reset`` seeds the sampling generator, ``invoke`` calls `act`).

    Why a separate class: evaluation must not build an `Algorithm` (env runners, learner); only
    the module's inference forward pass is needed, on CPU, in any process.
    """

    def __init__(self, path: str | os.PathLike[str], deterministic: bool = True):
        if not os.path.isdir(os.fspath(path)):
            raise ConfigurationError(
                f"no checkpoint directory at {os.fspath(path)!r} (train_ppo.py writes OUT/checkpoint_NNNN)"
            )
        import torch  # noqa: F401  (the rllib extra)
        from ray.rllib.core import (
            COMPONENT_LEARNER,
            COMPONENT_LEARNER_GROUP,
            COMPONENT_RL_MODULE,
            DEFAULT_MODULE_ID,
        )
        from ray.rllib.core.rl_module.rl_module import RLModule

        self.path = Path(path).resolve()
        self.env_config: dict[str, Any] = read_checkpoint_env_config(self.path)
        module_dir = (
            self.path / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / DEFAULT_MODULE_ID
        )
        self.module = RLModule.from_checkpoint(str(module_dir))
        self.module.eval()
        self.deterministic = deterministic
        self.name = f"ppo:{self.path.name}"
        self.usage = Usage()  # no model calls
        self._rng: np.random.Generator | None = None

    def wrap_env(self, env: gym.Env) -> gym.Env:
        """The wrappers the checkpoint was trained with, over `env` (its protocol stays)."""
        return wrap_for_rl(env, {**self.env_config, "curriculum": None})

    # the `agents.base.Agent` protocol: `episode_runner.run_scored_episode` drives a checkpoint like any agent
    def reset(self, env: gym.Env, seed: int | None) -> None:
        self._rng = np.random.default_rng([0x5EED, seed or 0])

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> np.ndarray:
        return self.act(obs, self._rng)

    def act(self, obs: Any, rng: np.random.Generator | None = None) -> np.ndarray:
        import torch

        def batch(x: Any) -> Any:
            if isinstance(x, dict):
                return {k: batch(v) for k, v in x.items()}
            return torch.as_tensor(np.asarray(x, np.float32)[None])

        with torch.no_grad():
            out = self.module.forward_inference({"obs": batch(obs)})
            dist = self.module.get_inference_action_dist_cls().from_logits(out["action_dist_inputs"])
            if self.deterministic:
                dist = dist.to_deterministic()
            else:
                torch.manual_seed(int(rng.integers(2**31)) if rng is not None else 0)
            return np.asarray(dist.sample()[0].numpy())


class MaskedRandomPolicy:
    """Uniform over the rows the action mask allows, move by move, in the wrapped env's own action
    encoding: the baseline a trained policy in that encoding must beat (the mask alone is worth
    something there)."""

    name = "masked_random"

    def __init__(self, moves: int = 1) -> None:
        """`moves`: the index fields of one action (the encoding's moves or slots per step); the
        mask is their masks concatenated, one per field, of equal length."""
        self.moves = moves
        self.usage = Usage()
        self._rng = np.random.default_rng(0)

    def reset(self, env: gym.Env, seed: int | None) -> None:
        self._rng = np.random.default_rng([0x4D41, seed or 0])

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> Any:
        mask = np.asarray(obs["action_mask"], dtype=bool).reshape(self.moves, -1)
        out = [int(self._rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in mask]
        return out[0] if self.moves == 1 else np.array(out, dtype=np.int64)


@dataclass
class EvalResult:
    """One evaluation episode: its seed, score card and the (shaped) return the policy saw."""

    seed: int
    policy: str
    episode_return: float
    steps: int
    card: Any  # ScoreCard
    bundle: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def marathon_score(self) -> float:
        return float(self.card.marathon_score)


def evaluate_one(
    policy: str,
    app: str,
    seed: int | None,
    env_config: Mapping[str, Any] | None = None,
    deterministic: bool = True,
    bundle_dir: str | None = None,
) -> EvalResult:
    """One episode of `policy` (a baseline name for `agents.make_agent`, or a checkpoint path), run by
    `episode_runner.run_scored_episode`.

    Baselines act on the unwrapped env; a checkpoint acts through the wrappers it was trained
    with. Both use the same env kwargs (``env_config``; a checkpoint's own config by default),
    so their scores compare. ``env_config["mode"] == "eval"`` runs the leaderboard protocol
    (then `seed` must be None or the leaderboard seed). The return is the env's own cumulative
    reward for a baseline, and the sum of the (shaped) rewards the policy saw for a checkpoint.
    """
    from ..evaluation.episode_runner import run_scored_episode

    ckpt = CheckpointPolicy(policy, deterministic=deterministic) if _is_checkpoint(policy) else None
    cfg = dict(ckpt.env_config if ckpt is not None else DEFAULT_ENV_CONFIG)
    cfg.update(env_config or {})
    cfg["app"] = app
    cfg.pop("env_id", None)
    wrapped: Any = ckpt
    if policy == "masked_random":
        encoding = cfg.get("action_encoding", "flat")
        if encoding not in ("macro", "discrete"):
            raise ConfigurationError(
                f"masked_random needs a joint mask: action_encoding 'macro' or 'discrete', not {encoding!r}"
            )
        moves = cfg.get("moves_per_step", 2) if encoding == "macro" else cfg.get("slots_per_step", 1)
        wrapped = MaskedRandomPolicy(int(moves))

    def make() -> gym.Env:
        base = make_base_env(cfg)
        if wrapped is None or ckpt is not None:
            return base  # a checkpoint's wrappers: run_scored_episode applies its wrap_env
        return wrap_for_rl(base, {**cfg, "curriculum": None, "flatten_obs": False})

    run = run_scored_episode(make, policy if wrapped is None else wrapped, seed=seed, out=bundle_dir)
    total = run.env_return if wrapped is None else run.episode_return
    return EvalResult(
        seed=run.seed,
        policy=run.agent_name,
        episode_return=total,
        steps=run.steps,
        card=run.card,
        bundle=run.bundle,
    )


def _is_checkpoint(policy: str | os.PathLike[str]) -> bool:
    return os.path.isdir(os.fspath(policy))


def _ensure_ray(num_cpus: int | None = None) -> Any:
    import ray

    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")  # local use; a cluster brings its own
        ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    return ray


def evaluate_policy(
    policy: str | os.PathLike[str],
    app: str,
    seeds: Iterable[int | None],
    num_workers: int = 2,
    env_config: Mapping[str, Any] | None = None,
    deterministic: bool = True,
    bundle_dir: str | None = None,
) -> list[EvalResult]:
    """Evaluate `policy` on every seed of `seeds`, `num_workers` episodes at a time as Ray tasks.

    `policy` is a baseline name (``"random"``, ``"noop"``, ... from `agents.make_agent`),
    ``"masked_random"`` (`MaskedRandomPolicy`, in ``env_config``'s action encoding) or a
    checkpoint directory written by `save_checkpoint`. Results come back in `seeds` order. With
    ``num_workers <= 1`` it runs in this process without Ray. Uses the running Ray instance (a
    cluster after ``ray.init(address=...)``) or starts a local one.
    """
    seeds = list(seeds)
    policy = os.fspath(policy)
    if _is_checkpoint(policy):
        policy = str(Path(policy).resolve())
    kwargs = dict(env_config=dict(env_config or {}), deterministic=deterministic, bundle_dir=bundle_dir)
    if num_workers <= 1:
        return [evaluate_one(policy, app, s, **kwargs) for s in seeds]
    ray = _ensure_ray()
    task = ray.remote(num_cpus=1)(evaluate_one)
    pending: list[Any] = []
    refs: dict[Any, int] = {}
    results: dict[int, EvalResult] = {}
    for i, s in enumerate(seeds):
        if len(pending) >= num_workers:
            done, pending = ray.wait(pending, num_returns=1)
            results[refs[done[0]]] = ray.get(done[0])
        ref = task.remote(policy, app, s, **kwargs)
        refs[ref] = i
        pending.append(ref)
    for ref in pending:
        results[refs[ref]] = ray.get(ref)
    return [results[i] for i in range(len(seeds))]


def evaluate_checkpoint_on_leaderboard(
    path: str | os.PathLike[str], out: str | None = None, catalog: Any = None
) -> list[tuple[Any, Any, str | None]]:
    """The leaderboard protocol for a trained checkpoint (what ``sre-marathon evaluate --checkpoint``
    runs): ``mode="eval"`` (leaderboard seed, 60+30 min, 120 s) on the app it was trained on.

    Returns ``[(RunSpec, ScoreCard, bundle path or None)]``, the shape of
    `sre_marathon_gym.evaluation.leaderboard.evaluate`, so `evaluation.leaderboard_table(results, catalog)`
    prints it next to the baselines. The policy's spaces are those of its training env
    (action_slots, max_alerts, max_incidents are kept; the schedule is the leaderboard's).
    """
    from ..catalog import load_catalog
    from ..evaluation.leaderboard import RunSpec

    path = Path(path).resolve()
    cfg = read_checkpoint_env_config(path)
    app = str(cfg.get("app", "online_boutique"))
    catalog = catalog or load_catalog(cfg.get("catalog"))
    env_config = {"mode": "eval", "catalog": str(catalog.root)}
    res = evaluate_policy(path, app, [None], num_workers=1, env_config=env_config, bundle_dir=out)[0]
    spec = RunSpec(app, res.policy, res.seed, "eval", out, str(catalog.root))
    return [(spec, res.card, res.bundle)]


def summarize(results: Sequence[EvalResult]) -> dict[str, float]:
    """Mean and 95% half-width of the Marathon-Score over `results`, clipped and before clipping
    (under rules v2 guessing drives the latter below zero), plus stage fractions."""
    from ..evaluation.reports import mean_ci95

    scores = [r.marathon_score for r in results]
    mean, half = mean_ci95(scores) if scores else (float("nan"), float("nan"))
    raw = [float(r.card.marathon_score_unclipped) for r in results]
    raw_mean, raw_half = mean_ci95(raw) if raw else (float("nan"), float("nan"))
    return {
        "episodes": len(results),
        "marathon_score": mean,
        "ci95": half,
        "marathon_score_unclipped": raw_mean,
        "ci95_unclipped": raw_half,
        "correlated": float(np.mean([r.card.correlated for r in results])) if results else float("nan"),
        "localized": float(np.mean([r.card.localized for r in results])) if results else float("nan"),
        "repaired": float(np.mean([r.card.repaired for r in results])) if results else float("nan"),
    }
