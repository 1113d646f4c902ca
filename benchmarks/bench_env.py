"""Wall time of a full leaderboard episode through the Gymnasium env (noop agent), per app,
next to the simulator alone, so the cost of alerts, observations, recording and reward is visible."""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.envs import ENV_IDS


def main() -> None:
    print(f"{'env id':32} {'steps':>5} {'episode s':>9} {'ms/step':>8}")
    for env_id in ENV_IDS:
        env = gym.make(env_id, mode="eval")
        t0 = time.perf_counter()
        env.reset()
        noop = np.zeros(env.action_space.shape, dtype=np.int64)
        steps, term = 0, False
        while not term:
            _, _, term, _, _ = env.step(noop)
            steps += 1
        wall = time.perf_counter() - t0
        print(f"{env_id:32} {steps:5d} {wall:9.2f} {wall / steps * 1e3:8.1f}")


if __name__ == "__main__":
    main()
