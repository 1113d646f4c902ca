"""Speed of the alert engine over a 90-minute marathon, printed as measured value vs. target.

Every rule of the pack is evaluated every 15 s of simulated time (361 evaluations), interleaved
with the simulator as in an episode (the engine catches up once per 120 s agent invocation).
Times are CPU seconds of the evaluation only (robust to other processes on the machine).

Run: python benchmarks/bench_alerts.py [app ...]
"""

from __future__ import annotations

import sys
import time

from sre_marathon_gym.alerting.engine import AlertEngine
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator

TARGET_S = 1.0  # the whole run's evaluation, per app


def bench(app: str) -> None:
    cat = load_catalog()
    seed = cat.leaderboard.seed_for(app)
    schedule = FaultSchedule.generate(cat, app, seed)
    sim = Simulator(cat, app, seed, schedule=schedule)
    engine = AlertEngine(cat.rules, sim.app, sim.store)
    spent = 0.0
    for t in range(120, schedule.run_s + 1, 120):
        sim.advance_to(t)
        t0 = time.process_time()
        engine.evaluate_until(t)
        spent += time.process_time() - t0
    label = (
        f"{app}: {len(engine.rules)} rules x {engine.evaluations} evaluations "
        f"({sim.store.series_count} series)"
    )
    print(
        f"{label:<70} {spent:>7.3f} s  target < {TARGET_S:g} s  ratio {spent / TARGET_S:6.3f}"
        f"  ({1000 * spent / engine.evaluations:.2f} ms/evaluation, {len(engine.history())} alerts fired)"
    )


if __name__ == "__main__":
    for name in sys.argv[1:] or ["online_boutique", "astronomy_shop", "train_ticket"]:
        bench(name)
