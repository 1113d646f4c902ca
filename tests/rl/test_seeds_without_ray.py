"""The seed splits import and work without Ray (`sre_marathon_gym.wrappers.seeds`), and give the
same seeds as the names `sre_marathon_gym.rllib` re-exports."""

from __future__ import annotations

import json
import subprocess
import sys

from sre_marathon_gym import rllib
from sre_marathon_gym.rllib import env_creation
from sre_marathon_gym.wrappers import seeds

NO_RAY = """
import json, sys
sys.modules["ray"] = None  # any `import ray` (or ray.x) now raises ImportError
from sre_marathon_gym.wrappers import SPLITS, EpisodeSeeds, split_seed, split_seeds, which_split
assert not any(m == "ray" or m.startswith("ray.") for m in sys.modules if sys.modules[m] is not None)
print(json.dumps({
    "test": split_seeds("test", 3),
    "train": [split_seed("train", 5, k) for k in range(3)],
    "which": which_split(split_seeds("validation", 1)[0]),
    "splits": SPLITS,
    "wrapper": EpisodeSeeds.__name__,
}))
"""


def test_split_seeds_import_without_ray_and_match_the_rllib_names() -> None:
    out = subprocess.run(
        [sys.executable, "-c", NO_RAY], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["test"] == [1_500_000_000, 1_500_000_001, 1_500_000_002]
    assert got["test"] == rllib.split_seeds("test", 3)
    assert got["train"] == [rllib.split_seed("train", 5, k) for k in range(3)]
    assert got["which"] == "validation"
    assert {k: tuple(v) for k, v in got["splits"].items()} == rllib.SPLITS
    assert got["wrapper"] == "EpisodeSeeds"


def test_the_rllib_names_are_the_wrappers_objects() -> None:
    names = ("SPLITS", "MAX_VECTOR", "MAX_WORKERS", "MAX_STREAMS", "EpisodeSeeds", "seeds_used")
    names += ("split_seed", "split_seeds", "which_split")
    for name in names:
        assert getattr(rllib, name) is getattr(seeds, name) is getattr(env_creation, name), name
