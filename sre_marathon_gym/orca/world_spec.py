"""Which six-day world an ORCA task lives in: the published flag schedule (the default, whose tasks
and numbers the README reports) or a fresh schedule drawn from its distribution by a seed.

Why fresh worlds: the published schedule, its tasks and their answers are public, so a policy can
answer a task by copying a sibling task of the same report day or a prior fit on the published
answers, reading no telemetry; a world drawn when an evaluation starts has no published siblings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..core.errors import ConfigurationError

WORLD_SEED_LIMIT = 2**31  # fresh world seeds are drawn below this (small ints print and type well)


@dataclass(frozen=True)
class WorldSpec:
    seed: int | None = None  # None: the published schedule; else the fresh draw of this seed

    def __post_init__(self) -> None:
        """The one check of a world seed, wherever it comes from (the CLI, the env, Python): an
        integer in [0, 2**63), numpy's included (kept as a plain int); never a bool."""
        seed = self.seed
        if seed is None:
            return
        if (
            isinstance(seed, (bool, np.bool_))
            or not isinstance(seed, (int, np.integer))
            or not 0 <= seed < 2**63
        ):
            raise ConfigurationError(f"world_seed must be None or an integer in [0, 2**63), got {seed!r}")
        object.__setattr__(self, "seed", int(seed))

    @property
    def published(self) -> bool:
        return self.seed is None

    @property
    def label(self) -> str:
        return "published schedule" if self.seed is None else f"fresh world, seed {self.seed}"


PUBLISHED = WorldSpec()
_TAG = re.compile(r"-w(\d+)(?=-|$)")


def world_tag(seed: int) -> str:
    """The suffix of a fresh world's event ids (and so of its task ids): ``-w<seed>``."""
    return f"-w{int(seed)}"


def world_of(task_or_event_id: str) -> WorldSpec:
    """The world a task (or event) id belongs to: a fresh world's ids carry its tag, published ids none."""
    match = _TAG.search(task_or_event_id)
    return WorldSpec(int(match.group(1))) if match else PUBLISHED


def fresh_world_seed() -> int:
    """A world seed nobody could have known before the evaluation started (printed, so the run can
    be repeated with that seed)."""
    import secrets

    return secrets.randbelow(WORLD_SEED_LIMIT)


__all__ = ["PUBLISHED", "WORLD_SEED_LIMIT", "WorldSpec", "fresh_world_seed", "world_of", "world_tag"]
