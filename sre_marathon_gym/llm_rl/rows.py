"""The dataset rows an LLM-RL trainer iterates: one per episode (a train-split seed, or an ORCA task)."""

from __future__ import annotations

from ..rllib.env_creation import split_seeds


def train_rows(app: str, n: int, split: str = "train") -> list[dict]:
    """`n` episodes of `app` from `split`'s seeds (disjoint from validation, test and the leaderboard)."""
    return [{"app": app, "seed": seed} for seed in split_seeds(split, n)]


def orca_rows(difficulty: str | None = None, world_seed: int | None = None) -> list[dict]:
    """Every ORCA-bench task (or those of one difficulty), by id: of the published schedule, or of the
    fresh world of `world_seed` (its ids carry the seed, so `OrcaToolEnv` finds its world)."""
    from ..orca.tasks import orca_tasks
    from ..orca.world_spec import WorldSpec

    tasks = orca_tasks(6, WorldSpec(world_seed))
    return [{"task_id": t.task_id} for t in tasks if difficulty in (None, t.difficulty)]
