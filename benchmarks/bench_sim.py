"""Simulated seconds per wall second of a full 90-minute run on the leaderboard schedule, per app."""

from __future__ import annotations

import time

from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.orchestrator import FaultSchedule
from sre_marathon_gym.sim.simulator import TICK_S, Simulator


def main() -> None:
    cat = load_catalog()
    run_s = (cat.leaderboard.injection_minutes + cat.leaderboard.observation_minutes) * 60
    print(f"{'app':16} {'wall s':>7} {'x real time':>12} {'us/tick':>8} {'series':>7} {'MiB':>6}")
    for app in ("online_boutique", "astronomy_shop", "train_ticket"):
        sched = FaultSchedule.generate(cat, app, cat.leaderboard.seed_for(app))
        t0 = time.perf_counter()
        sim = Simulator(cat, app, cat.leaderboard.seed_for(app), schedule=sched)
        sim.advance_to(run_s)
        wall = time.perf_counter() - t0
        print(f"{app:16} {wall:7.2f} {run_s / wall:12,.0f} {wall / (run_s / TICK_S) * 1e6:8.0f} "
              f"{sim.store.series_count:7d} {sim.store.nbytes / 2**20:6.1f}")


if __name__ == "__main__":
    main()
