"""Seed splits: disjoint train / validation / test ranges, disjoint streams per env copy."""

from __future__ import annotations

import itertools

import pytest

from sre_marathon_gym.rllib import (
    MAX_STREAMS,
    MAX_VECTOR,
    SPLITS,
    EpisodeSeeds,
    make_env,
    seeds_used,
    split_seed,
    split_seeds,
    which_split,
)


def test_split_ranges_are_disjoint_and_avoid_leaderboard_seeds(catalog) -> None:
    ranges = sorted(SPLITS.values())
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(ranges))
    for entry in (27, 30, 83, 10_000, 10_999):
        assert which_split(entry) is None
    for app in ("online_boutique", "astronomy_shop", "train_ticket"):
        assert which_split(catalog.leaderboard.seed_for(app)) is None


def test_streams_never_share_seeds() -> None:
    streams = [w * MAX_VECTOR + v for w in range(4) for v in range(3)]
    seen: dict[int, int] = {}
    for split in SPLITS:
        for s in streams:
            for k in range(50):
                seed = split_seed(split, s, k)
                assert which_split(seed) == split
                assert seen.setdefault(seed, s) == s
    lo, hi = SPLITS["train"]
    last = (hi - lo) // MAX_STREAMS - 1
    assert split_seed("train", MAX_STREAMS - 1, last) < hi
    with pytest.raises(ValueError):
        split_seed("holdout", 0, 0)
    assert split_seeds("test", 3) == [SPLITS["test"][0] + i for i in range(3)]


def test_make_env_counts_copies_per_worker_and_logs(tmp_path) -> None:
    class Ctx(dict):  # RLlib's EnvContext: a dict with worker/vector attributes
        worker_index = 7
        vector_index = 0

    cfg = Ctx(injection_minutes=2, observation_minutes=2, seed_log_dir=str(tmp_path), split="validation")
    a, b = make_env(cfg), make_env(cfg)
    assert isinstance(a, EpisodeSeeds) and (a.worker_index, b.worker_index) == (7, 7)
    assert a.vector_index != b.vector_index
    for env in (a, b):
        for _ in range(2):
            _, info = env.reset(seed=123)  # the passed seed is ignored on purpose
            assert which_split(info["episode_seed"]) == "validation"
    used = seeds_used(a) + seeds_used(b)
    assert len({s for *_, s in used}) == 4
    lines = [ln for f in tmp_path.glob("seeds-w7-*.txt") for ln in f.read_text().splitlines()]
    assert len(lines) == 4
