"""Evaluation across seeds: baselines by name, in-process (Ray parallelism is covered by the slow test)."""

from __future__ import annotations

import pytest

from sre_marathon_gym.rllib import evaluate_policy, split_seeds, summarize

SHORT = {"intensity": 0.5, "injection_minutes": 4, "observation_minutes": 2}


def test_baselines_on_test_seeds_in_process() -> None:
    seeds = split_seeds("test", 2)
    noop = evaluate_policy("noop", "online_boutique", seeds, num_workers=1, env_config=SHORT)
    rnd = evaluate_policy("random", "online_boutique", seeds, num_workers=1, env_config=SHORT)
    assert [r.seed for r in noop] == seeds == [r.seed for r in rnd]
    assert all(r.marathon_score == 0.0 for r in noop)
    for r in rnd:
        assert r.episode_return == pytest.approx(r.card.marathon_score_unclipped)
        assert r.steps == 2  # (4 + 2) min / 120 s = 3 intervals; reset simulates the first
    assert summarize(rnd)["episodes"] == 2
