"""Ray RLlib integration: env creators with disjoint seed splits, PPO configs, parallel evaluation.

Ray is imported lazily (inside functions), so ``import sre_marathon_gym.rllib`` works without the
``rllib`` extra; everything that needs Ray says so when called. Modules: `env_creation` (seed splits,
`EpisodeSeeds`, the RL wrapper stack, the env creators), `training` (`ppo_config`, checkpoints) and
`evaluate` (`CheckpointPolicy`, `evaluate_policy`: each episode one
`episode_runner.run_scored_episode`); every name is importable from here.

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

May import: every layer but `llm_rl`, `mcp_server`, `run_report` and the command line.
"""

from __future__ import annotations

from .env_creation import (
    APP_ENV_IDS,
    DEFAULT_ENV_CONFIG,
    ENV_KWARGS,
    MAX_STREAMS,
    MAX_VECTOR,
    MAX_WORKERS,
    SPLITS,
    EpisodeSeeds,
    collect_runner_seeds,
    make_base_env,
    make_env,
    register_envs,
    seeds_used,
    split_seed,
    split_seeds,
    which_split,
    wrap_for_rl,
)
from .evaluate import (
    CheckpointPolicy,
    EvalResult,
    evaluate_checkpoint_on_leaderboard,
    evaluate_one,
    evaluate_policy,
    summarize,
)
from .training import CHECKPOINT_META, ppo_config, save_checkpoint

__all__ = [
    "APP_ENV_IDS",
    "CHECKPOINT_META",
    "DEFAULT_ENV_CONFIG",
    "ENV_KWARGS",
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
    "wrap_for_rl",
]
