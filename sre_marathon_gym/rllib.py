"""Ray RLlib integration: env creators with disjoint seed splits, PPO configs, parallel evaluation.

Ray is imported lazily (inside functions), so ``import sre_marathon_gym.rllib`` works without the
``rllib`` extra; everything that needs Ray says so when called.

Seed splits
-----------
Every episode is one fault schedule, chosen by its seed. Training, validation and test episodes
come from disjoint integer ranges (``SPLITS``), all far from the leaderboard seeds (101, 202,
303) and the CLI's extra seeds (10000+), so a trained policy is never tested on a schedule it saw::

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

import functools
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from .envs import ENV_IDS

SPLITS: dict[str, tuple[int, int]] = {
    "train": (1_000_000, 1_000_000_000),
    "validation": (1_000_000_000, 1_500_000_000),
    "test": (1_500_000_000, 2_000_000_000),
}
MAX_VECTOR = 64
MAX_WORKERS = 1024
MAX_STREAMS = MAX_WORKERS * MAX_VECTOR
APP_ENV_IDS = {app: env_id for env_id, app in ENV_IDS.items()}
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
CHECKPOINT_META = "sre_marathon.json"
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


# ----------------------------------------------------------------------------------- env creation
def wrap_for_rl(env: gym.Env, config: Mapping[str, Any]) -> gym.Env:
    """Apply the RL wrapper stack an `env_config` describes (shared by training and evaluation).

    Keys: ``degradation_weight``, ``risk_weight`` (`ShapeMarathonReward`); ``curriculum`` (kwargs of
    `ScheduleCurriculum`); ``action_encoding`` = ``"flat"`` (`FlattenActions`, default) |
    ``"discrete"`` (`EncodeActionSlots`, with ``slots_per_step`` and ``verbs``) | ``"none"``; ``flatten_obs``
    (default True: `FlattenMarathonObservation`, mask kept apart when an encoding added one).
    """
    from .wrappers import (
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
        degradation_weight=float(config.get("degradation_weight", 0.0)),
        risk_weight=float(config.get("risk_weight", 0.0)),
    )
    encoding = config.get("action_encoding", "flat")
    if encoding == "flat":
        env = FlattenActions(env)
    elif encoding == "discrete":
        env = EncodeActionSlots(
            env, slots_per_step=int(config.get("slots_per_step", 1)), verbs=config.get("verbs")
        )
    elif encoding != "none":
        raise ValueError(f"action_encoding must be 'flat', 'discrete' or 'none', got {encoding!r}")
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


# ----------------------------------------------------------------------------------- PPO config
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
    interval = int(cfg.get("interval_s") or 120)
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


# ----------------------------------------------------------------------------------- policies
class CheckpointPolicy:
    """A trained RLModule from a checkpoint, acting on the wrapped env (`wrap_for_rl` of its config).

    Why a separate class: evaluation must not build an `Algorithm` (env runners, learner); only
    the module's inference forward pass is needed, on CPU, in any process.
    """

    def __init__(self, path: str | os.PathLike[str], deterministic: bool = True):
        import torch  # noqa: F401  (the rllib extra)
        from ray.rllib.core import (
            COMPONENT_LEARNER,
            COMPONENT_LEARNER_GROUP,
            COMPONENT_RL_MODULE,
            DEFAULT_MODULE_ID,
        )
        from ray.rllib.core.rl_module.rl_module import RLModule

        self.path = Path(path).resolve()
        meta = self.path / CHECKPOINT_META
        if not meta.is_file():
            raise FileNotFoundError(
                f"{meta} is missing: save checkpoints with sre_marathon_gym.rllib.save_checkpoint"
            )
        self.env_config: dict[str, Any] = json.loads(meta.read_text())["env_config"]
        module_dir = (
            self.path / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE / DEFAULT_MODULE_ID
        )
        self.module = RLModule.from_checkpoint(str(module_dir))
        self.module.eval()
        self.deterministic = deterministic
        self.name = f"ppo:{self.path.name}"

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
    """One episode of `policy` (a baseline name for `agents.make_agent`, or a checkpoint path).

    Baselines act on the unwrapped env; a checkpoint acts through the wrappers it was trained
    with. Both use the same env kwargs (``env_config``; a checkpoint's own config by default),
    so their scores compare. ``env_config["mode"] == "eval"`` runs the leaderboard protocol
    (then `seed` must be None or the leaderboard seed).
    """
    from .scoring import score_run

    checkpoint = _is_checkpoint(policy)
    ckpt = CheckpointPolicy(policy, deterministic=deterministic) if checkpoint else None
    cfg = dict(ckpt.env_config if ckpt is not None else DEFAULT_ENV_CONFIG)
    cfg.update(env_config or {})
    cfg["app"] = app
    cfg.pop("env_id", None)
    base = make_base_env(cfg)
    if ckpt is not None:
        env = wrap_for_rl(base, {**cfg, "curriculum": None})
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng([0x5EED, seed or 0])
        total, steps, done = 0.0, 0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(ckpt.act(obs, rng))
            total += float(reward)
            steps += 1
            done = terminated or truncated
        record = env.unwrapped.record()
        name = ckpt.name
    else:
        from .agents import make_agent
        from .agents.base import run_episode

        agent = make_agent(policy)
        env = base
        counter = {"n": 0}
        record = run_episode(
            env, agent, seed=seed, progress=lambda: counter.__setitem__("n", counter["n"] + 1)
        )
        steps, name = counter["n"], policy
        total = float(env.unwrapped.reward_fn.value)
    catalog = env.unwrapped.catalog
    card = score_run(record, catalog.scoring)
    path = None
    if bundle_dir is not None:
        from .bundle import write_bundle

        Path(bundle_dir).mkdir(parents=True, exist_ok=True)
        safe = name.replace("/", "_").replace(":", "-")
        path = str(
            write_bundle(
                Path(bundle_dir) / f"{app}-{safe}-{record.manifest.seed}.bundle",
                record,
                store=env.unwrapped.sim.store,
                catalog=catalog,
            )
        )
    used_seed = int(env.unwrapped.seed_used)
    env.close()
    return EvalResult(seed=used_seed, policy=name, episode_return=total, steps=steps, card=card, bundle=path)


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

    `policy` is a baseline name (``"random"``, ``"noop"``, ... from `agents.make_agent`) or a
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
    `sre_marathon_gym.evaluation.evaluate`, so `evaluation.leaderboard_table(results, catalog)`
    prints it next to the baselines. The policy's spaces are those of its training env
    (action_slots, max_alerts, max_incidents are kept; the schedule is the leaderboard's).
    """
    from .catalog import load_catalog
    from .evaluation import RunSpec

    path = Path(path).resolve()
    meta = path / CHECKPOINT_META
    if not meta.is_file():
        raise FileNotFoundError(
            f"{path} is not a checkpoint written by sre_marathon_gym.rllib.save_checkpoint "
            f"({CHECKPOINT_META} missing)"
        )
    cfg = json.loads(meta.read_text())["env_config"]
    app = str(cfg.get("app", "online_boutique"))
    catalog = catalog or load_catalog(cfg.get("catalog"))
    env_config = {"mode": "eval", "catalog": str(catalog.root)}
    res = evaluate_policy(path, app, [None], num_workers=1, env_config=env_config, bundle_dir=out)[0]
    spec = RunSpec(app, res.policy, res.seed, "eval", out, str(catalog.root))
    return [(spec, res.card, res.bundle)]


def summarize(results: Sequence[EvalResult]) -> dict[str, float]:
    """Mean and 95% half-width of the Marathon-Score over `results`, clipped and before clipping
    (under rules v2 guessing drives the latter below zero), plus stage fractions."""
    from .evaluation import mean_ci95

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


__all__ = [
    "APP_ENV_IDS",
    "CHECKPOINT_META",
    "DEFAULT_ENV_CONFIG",
    "MAX_STREAMS",
    "MAX_VECTOR",
    "MAX_WORKERS",
    "SPLITS",
    "CheckpointPolicy",
    "EpisodeSeeds",
    "EvalResult",
    "collect_runner_seeds",
    "evaluate_checkpoint_on_leaderboard",
    "evaluate_one",
    "evaluate_policy",
    "make_base_env",
    "make_env",
    "ppo_config",
    "register_envs",
    "save_checkpoint",
    "seeds_used",
    "split_seed",
    "split_seeds",
    "summarize",
    "which_split",
]
