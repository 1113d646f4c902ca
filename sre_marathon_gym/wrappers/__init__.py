"""Gymnasium wrappers for the Marathon envs, one concern each.

- `ShapeMarathonReward`: Marathon-Score increments (return == score) plus optional dense terms.
- `FlattenActions` / `EncodeActionSlots`: action encodings for policy-gradient methods, with the
  action mask moved INTO the observation (``obs["action_mask"]``) for masked policies.
- `ChangeObservation` / `MacroActions`: each service's recent changes and what its telemetry did
  after each (from tool outputs), and macro moves on them (group, claim, fix, undo, resolve) with
  a joint mask and ``action_masks()``; `for_sb3` stacks them for Stable-Baselines3.
- `FlattenMarathonObservation`: a flat `Box` (optionally next to the mask) that RLlib accepts.
- `RecordBundle`: writes a sealed run bundle when an episode ends.
- `ScheduleCurriculum`: ramps fault intensity and schedule length with the episode count.
- `EpisodeSeeds` (with `SPLITS`, `split_seed`, `split_seeds`, `which_split`; module `seeds`): each
  episode's seed from disjoint train / validation / test splits per env copy, without Ray.

Typical RL stack (outermost last)::

    env = gym.make("SREMarathon/OnlineBoutique-v3", intensity=0.5, injection_minutes=10)
    env = ShapeMarathonReward(env)
    env = FlattenActions(env)                       # obs gains "action_mask"
    env = FlattenMarathonObservation(env)           # {"observations": Box, "action_mask": Box}

May import: the layers up to `envs` (and `recording`, `scoring`); never agents, evaluation or
the command line.
"""

from __future__ import annotations

from .actions import EncodeActionSlots, FlattenActions
from .changes import ChangeObservation
from .curriculum import ScheduleCurriculum
from .macro import MacroActions
from .observation import FlattenMarathonObservation
from .record import RecordBundle
from .reward import ShapeMarathonReward
from .sb3 import for_sb3
from .seeds import SPLITS, EpisodeSeeds, split_seed, split_seeds, which_split

__all__ = [
    "SPLITS",
    "ChangeObservation",
    "EncodeActionSlots",
    "EpisodeSeeds",
    "FlattenActions",
    "FlattenMarathonObservation",
    "MacroActions",
    "RecordBundle",
    "ScheduleCurriculum",
    "ShapeMarathonReward",
    "for_sb3",
    "split_seed",
    "split_seeds",
    "which_split",
]
