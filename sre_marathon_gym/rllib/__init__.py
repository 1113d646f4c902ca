"""Ray RLlib integration: env creators with disjoint seed splits, PPO configs, parallel evaluation.

Ray is imported lazily (inside functions), so ``import sre_marathon_gym.rllib`` works without the
``rllib`` extra; everything that needs Ray says so when called. Modules: `env_creation` (the RL
wrapper stack, the env creators, the seed splits re-exported), `training` (`ppo_config`,
checkpoints) and `evaluate` (`CheckpointPolicy`, `evaluate_policy`: each episode one
`episode_runner.run_scored_episode`); every name is importable from here.

Seed splits (the scheme, `SPLITS`, `EpisodeSeeds`): `sre_marathon_gym.wrappers.seeds` (no Ray needed).

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
