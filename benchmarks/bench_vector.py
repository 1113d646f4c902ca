"""Env steps per second of the three ways `gym.make_vec` runs n Marathon envs: ``sync`` (one
process), ``async`` (one process per env) and ``vector_entry_point`` (`envs.vector`: one worker
process per core, each stepping a share of the envs and sharing its per-process caches).

Each mode gets the same seeds and the same sampled actions (the raw action space, seeded), runs
`--steps` vector steps after a reset (episode ends included: next-step autoreset), and is timed
from the first reset on, so process start and each worker's first compile of the app count.

Run: python benchmarks/bench_vector.py [--app online_boutique] [--envs 2,4,8] [--steps 30]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import gymnasium as gym  # noqa: E402 (after the environment settings)

import sre_marathon_gym  # noqa: E402, F401 (registers the envs)
from sre_marathon_gym.envs import ENV_IDS  # noqa: E402

CONFIG = {"intensity": 0.5, "injection_minutes": 15, "observation_minutes": 5}  # bench_rllib's episodes


def steps_per_second(env_id: str, n: int, mode: str, steps: int) -> float:
    t = time.perf_counter()
    venv = gym.make_vec(env_id, n, vectorization_mode=mode, **CONFIG)
    try:
        venv.action_space.seed(0)
        venv.reset(seed=100)
        for _ in range(steps):
            venv.step(venv.action_space.sample())
    finally:
        venv.close()
    return n * steps / (time.perf_counter() - t)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--app", default="online_boutique", choices=sorted(ENV_IDS.values()))
    p.add_argument("--envs", default="2,4,8", help="comma-separated env counts")
    p.add_argument("--steps", type=int, default=30, help="vector steps per measurement")
    args = p.parse_args()
    env_id = next(k for k, v in ENV_IDS.items() if v == args.app)
    modes = ("sync", "async", "vector_entry_point")
    print(f"{env_id}, {os.cpu_count()} cores, env steps/s (n envs x {args.steps} vector steps / wall s)")
    print(f"{'envs':>5} " + " ".join(f"{m:>19}" for m in modes))
    for n in [int(x) for x in args.envs.split(",")]:
        rates = [steps_per_second(env_id, n, m, args.steps) for m in modes]
        print(f"{n:5d} " + " ".join(f"{r:19.1f}" for r in rates))


if __name__ == "__main__":
    main()
