"""RLlib end to end: 2 PPO iterations on 2 env runners, finite returns, disjoint runner seeds."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytest.importorskip("torch")

os.environ.setdefault("RAY_AUTH_MODE", "disabled")


@pytest.fixture(scope="module")
def ray_local():
    import ray

    ray.init(num_cpus=3, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_two_ppo_iterations_two_runners_disjoint_seeds(ray_local, tmp_path: Path) -> None:
    from ray.rllib.utils.metrics import (
        ENV_RUNNER_RESULTS,
        EPISODE_RETURN_MEAN,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
    )

    from sre_marathon_gym.rllib import (
        SPLITS,
        collect_runner_seeds,
        evaluate_policy,
        ppo_config,
        save_checkpoint,
        split_seeds,
    )

    log_dir = tmp_path / "seeds"
    env_config = {
        "intensity": 0.5,
        "injection_minutes": 6,
        "observation_minutes": 2,
        "seed_log_dir": str(log_dir),
    }
    config = ppo_config(
        "online_boutique",
        env_config,
        num_env_runners=2,
        hidden=(32,),
        train_batch_size_per_learner=32,
        minibatch_size=16,
        num_epochs=1,
    )
    algo = config.build_algo()
    try:
        returns, steps = [], []
        for _ in range(2):
            result = algo.train()
            returns.append(result[ENV_RUNNER_RESULTS].get(EPISODE_RETURN_MEAN, float("nan")))
            steps.append(
                result[NUM_ENV_STEPS_SAMPLED_LIFETIME]
                if NUM_ENV_STEPS_SAMPLED_LIFETIME in result
                else result[ENV_RUNNER_RESULTS][NUM_ENV_STEPS_SAMPLED_LIFETIME]
            )
        assert all(math.isfinite(r) for r in returns), returns
        assert steps[1] > steps[0] > 0
        live = collect_runner_seeds(algo)
        ckpt = save_checkpoint(algo, tmp_path / "ckpt")
    finally:
        algo.stop()

    # seeds from the runners' own envs ...
    by_runner: dict[int, set[int]] = {}
    for worker, _vector, seed in live:
        by_runner.setdefault(worker, set()).add(seed)
    assert len(by_runner) == 2, by_runner
    a, b = by_runner.values()
    assert a and b and a.isdisjoint(b)
    # ... and from the per-process seed logs (every env copy ever made, including the driver's)
    logged: dict[tuple[int, int], list[int]] = {}
    for f in log_dir.glob("seeds-*.txt"):
        for line in f.read_text().splitlines():
            split, w, v, s = line.split()
            assert split == "train"
            logged.setdefault((int(w), int(v)), []).append(int(s))
    all_seeds = [s for seeds in logged.values() for s in seeds]
    assert len(all_seeds) == len(set(all_seeds)), "two env copies (or two episodes) shared a seed"
    lo, hi = SPLITS["train"]
    assert all(lo <= s < hi for s in all_seeds)
    assert (ckpt / "sre_marathon.json").is_file()

    # the checkpoint evaluates on held-out seeds, as Ray tasks (2 at a time)
    short = {k: v for k, v in env_config.items() if k != "seed_log_dir"}
    results = evaluate_policy(
        ckpt, "online_boutique", split_seeds("test", 2), num_workers=2, env_config=short
    )
    assert [r.seed for r in results] == split_seeds("test", 2)
    assert all(math.isfinite(r.marathon_score) and r.steps == 3 for r in results)

    # and the CLI puts it on the leaderboard protocol (seed 30, 60+30 min, 120 s), bundle included
    from sre_marathon_gym.cli.commands import main

    assert main(["evaluate", "--checkpoint", str(ckpt), "--out", str(tmp_path / "lb")]) == 0
    assert list((tmp_path / "lb").glob("online_boutique-*-30.bundle"))


@pytest.mark.slow
def test_a_macro_policy_trains_and_takes_its_place_in_evaluate(ray_local, tmp_path: Path, capsys) -> None:
    """The macro encoding trains under RLlib's masked module; `evaluate --agents ppo:PATH` puts the
    checkpoint in the same table as the baselines (it acts through the wrappers it trained with);
    masked random runs in the same encoding."""
    from sre_marathon_gym.cli.commands import main
    from sre_marathon_gym.rllib import evaluate_policy, ppo_config, save_checkpoint, split_seeds

    env_config = {
        "intensity": 1.0,
        "injection_minutes": 8,
        "observation_minutes": 2,
        "action_encoding": "macro",
        "moves_per_step": 2,
    }
    config = ppo_config(
        "online_boutique",
        env_config,
        num_env_runners=1,
        hidden=(32,),
        train_batch_size_per_learner=16,
        minibatch_size=8,
        num_epochs=1,
    )
    algo = config.build_algo()
    try:
        result = algo.train()
        ckpt = save_checkpoint(algo, tmp_path / "macro")
    finally:
        algo.stop()
    assert result is not None
    rnd = evaluate_policy(
        "masked_random", "online_boutique", split_seeds("test", 1), num_workers=1, env_config=env_config
    )
    assert rnd[0].steps == 4 and math.isfinite(rnd[0].marathon_score)
    capsys.readouterr()
    assert main(["evaluate", "--agents", f"runbook,ppo:{ckpt}", "--apps", "online_boutique"]) == 0
    table = capsys.readouterr().out
    rows = [line.split()[0] for line in table.splitlines() if "mean of apps" in line]
    assert rows == ["runbook", f"ppo:{ckpt}"], table
