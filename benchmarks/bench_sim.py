"""Simulated seconds per wall second of a full 90-minute run on the leaderboard schedule, per app,
with telemetry (metrics, log context) and without (what fault calibration and baselines use), on
the production change stream (the default) and the curated one (env ids up to -v2), so the cost
of the benign changes shows."""

from __future__ import annotations

import os
import time

# "on one core": BLAS may not start helper threads, and the process runs on a single CPU
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

# these import numpy, whose BLAS reads the thread variables above once, at load: they must come after
from sre_marathon_gym.catalog import load_catalog  # noqa: E402 (after the BLAS thread settings)
from sre_marathon_gym.clock import TICK_S  # noqa: E402 (after the BLAS thread settings)
from sre_marathon_gym.fault_schedule import FaultSchedule  # noqa: E402 (after the BLAS thread settings)
from sre_marathon_gym.sim.simulator import Simulator  # noqa: E402 (after the BLAS thread settings)


def main() -> None:
    cat = load_catalog()
    run_s = (cat.leaderboard.injection_minutes + cat.leaderboard.observation_minutes) * 60
    print(
        f"{'app':16} {'changes':>10} {'telemetry':>9} {'wall s':>7} {'x real time':>12} "
        f"{'us/tick':>8} {'series':>7} {'MiB':>6}"
    )
    for app in ("online_boutique", "astronomy_shop", "train_ticket"):
        for changes, telemetry in (("production", True), ("curated", True), ("production", False)):
            sched = FaultSchedule.generate(cat, app, cat.leaderboard.seed_for(app), changes=changes)
            best = float("inf")
            for _ in range(3):  # best of three: the machine may be shared
                t0 = time.perf_counter()
                sim = Simulator(cat, app, cat.leaderboard.seed_for(app), schedule=sched, telemetry=telemetry)
                sim.advance_to(run_s)
                best = min(best, time.perf_counter() - t0)
            series = sim.store.series_count if sim.store else 0
            mib = sim.store.nbytes / 2**20 if sim.store else 0.0
            print(
                f"{app:16} {changes:>10} {'on' if telemetry else 'off':>9} {best:7.2f} {run_s / best:12,.0f} "
                f"{best / (run_s / TICK_S) * 1e6:8.0f} {series:7d} {mib:6.1f}"
            )


if __name__ == "__main__":
    main()
