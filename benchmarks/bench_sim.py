"""Simulated seconds per wall second of a full 90-minute run on the leaderboard schedule, per app,
with telemetry (metrics, log context) and without (what fault calibration and baselines use), on
the production change stream (the default) and the curated one (env ids up to -v2), so the cost
of the benign changes shows.

    python benchmarks/bench_sim.py                  # this tree: each app, both streams, telemetry on/off
    python benchmarks/bench_sim.py --compare 0897c1d

`--compare REV` times the leaderboard run with telemetry of each app in this tree and in revision REV
(extracted with `git archive` into a temporary directory), each in its own process pinned to one
core, alternating between the two so both see the same machine, and prints each app's best time
beside REV's and their ratio (this tree / REV). Each side runs the schedule its own default env
would run: the production change stream where the revision has one, else its curated stream.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# "on one core": BLAS may not start helper threads, and the process runs on a single CPU
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
if hasattr(os, "sched_setaffinity"):
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

# these import numpy, whose BLAS reads the thread variables above once, at load: they must come after
from sre_marathon_gym.catalog import load_catalog  # noqa: E402 (after the BLAS thread settings)
from sre_marathon_gym.core.clock import TICK_S  # noqa: E402 (after the BLAS thread settings)
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule  # noqa: E402 (after the BLAS thread settings)
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


# One timing in a fresh interpreter on a tree given by PYTHONPATH; written to work on older revisions
# too (the fault schedule was `orchestrator` before it was `fault_schedule`; streams came later).
TIMING = r"""
import inspect, json, os, sys, time
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"
os.sched_setaffinity(0, {int(sys.argv[3])})
from sre_marathon_gym.catalog import load_catalog
try:
    from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
except ImportError:
    from sre_marathon_gym.orchestrator import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator
cat = load_catalog()
app, repeat = sys.argv[1], int(sys.argv[2])
seed = cat.leaderboard.seed_for(app)
run_s = (cat.leaderboard.injection_minutes + cat.leaderboard.observation_minutes) * 60
stream = "production" if "changes" in inspect.signature(FaultSchedule.generate).parameters else "curated"
sched = FaultSchedule.generate(cat, app, seed, **({"changes": stream} if stream == "production" else {}))
best = float("inf")
for _ in range(repeat):
    t0 = time.perf_counter()
    sim = Simulator(cat, app, seed, schedule=sched, telemetry=True)
    sim.advance_to(run_s)
    best = min(best, time.perf_counter() - t0)
print(json.dumps({"best": best, "stream": stream, "series": sim.store.series_count}))
"""


def _timed(tree: Path, app: str, repeat: int, cpu: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", TIMING, app, str(repeat), str(cpu)],
        env=env,
        cwd=tree,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def compare(rev: str, rounds: int = 2, repeat: int = 3) -> None:
    """Each app's leaderboard run with telemetry: this tree beside `rev`, as a ratio."""
    here = Path(__file__).resolve().parent.parent
    sha = subprocess.run(
        ["git", "rev-parse", "--short", rev], cwd=here, check=True, capture_output=True, text=True
    )
    cpu = min(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="bench_sim-") as tmp:
        archive = subprocess.run(["git", "archive", rev], cwd=here, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        print(f"{'app':16} {'this tree s':>11} {sha.stdout.strip() + ' s':>11} {'ratio':>6}  streams, series")
        for app in ("online_boutique", "astronomy_shop", "train_ticket"):
            ours, theirs = [], []
            for _ in range(rounds):  # alternate, so both sides see the same machine
                ours.append(_timed(here, app, repeat, cpu))
                theirs.append(_timed(Path(tmp), app, repeat, cpu))
            a, b = min(r["best"] for r in ours), min(r["best"] for r in theirs)
            print(
                f"{app:16} {a:11.2f} {b:11.2f} {a / b:6.2f}  "
                f"{ours[0]['stream']} vs {theirs[0]['stream']}, {ours[0]['series']} vs {theirs[0]['series']}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", metavar="REV", help="time this tree beside git revision REV")
    parser.add_argument("--rounds", type=int, default=2, help="with --compare: alternations (default 2)")
    args = parser.parse_args()
    if args.compare:
        compare(args.compare, rounds=args.rounds)
    else:
        main()
