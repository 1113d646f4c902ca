"""Benchmark health of the change stream: who gains from reading changes, on the leaderboard seed
and 5 other seeds per app (issue 32's protocol).

Rows: the Runbook (reads alerts only), `change_reader` (every change it cannot rule out by form is a
fault: `benchmarks/change_reader.py`), `change_value_reader` on request (claims a change by the value
or form it writes: `benchmarks/change_value_reader.py`), the telemetry-reading `change_correlator`
and the oracle, plus any agent named on the command line (e.g. the adversarial suite). Prints the mean
Marathon-Score per app and over apps.

Run: python benchmarks/change_stream_table.py [--changes production|curated] [--seeds 5] [--agents a,b]
"""

from __future__ import annotations

import argparse
import os
import sys
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.dirname(__file__))

APPS = ("online_boutique", "astronomy_shop", "train_ticket")


def _one(job: tuple[str, str, int | None, str]) -> tuple[str, str, int | None, float, int]:
    agent_name, app, seed, changes = job
    from sre_marathon_gym.agents import make_agent
    from sre_marathon_gym.catalog import load_catalog
    from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

    cat = load_catalog()
    if agent_name == "change_reader":
        from change_reader import ChangeReader

        agent = ChangeReader()
    elif agent_name == "change_value_reader":
        from change_value_reader import DEFAULT_TELLS, ChangeValueReader

        agent = ChangeValueReader(tells=set(DEFAULT_TELLS))
    else:
        agent = make_agent(agent_name)
    mode = "eval" if seed is None else "train"
    run = run_scored_episode(lambda: make_marathon_env(app, mode, cat, changes=changes), agent, seed=seed)
    return agent_name, app, seed, run.card.marathon_score, run.card.false_claims


def main() -> None:
    from tqdm import tqdm

    from sre_marathon_gym.core.table import format_table
    from sre_marathon_gym.evaluation.leaderboard import EXTRA_SEED_BASE

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--changes", default="production", choices=("production", "curated"))
    ap.add_argument("--seeds", type=int, default=5, help="seeds beyond the leaderboard seed, per app")
    ap.add_argument("--agents", default="runbook,change_reader,change_correlator,oracle")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    agents = args.agents.split(",")
    seeds: list[int | None] = [None] + [EXTRA_SEED_BASE + k for k in range(args.seeds)]
    jobs = [(a, app, s, args.changes) for a in agents for app in APPS for s in seeds]
    scores: dict[tuple[str, str], list[float]] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for name, app, _seed, score, _fc in tqdm(pool.map(_one, jobs), total=len(jobs), desc="runs"):
            scores.setdefault((name, app), []).append(score)
    rows = []
    for a in agents:
        per_app = [sum(scores[(a, app)]) / len(scores[(a, app)]) for app in APPS]
        rows.append([a, *(f"{v:.1f}" for v in per_app), f"{sum(per_app) / len(per_app):.1f}",
                     f"{min(min(scores[(a, app)]) for app in APPS):.1f}"])  # fmt: skip
    print(
        format_table(
            ["agent", *APPS, "mean", "min run"],
            rows,
            title=f"Marathon-Score, {args.changes} change stream, "
            f"leaderboard seed + {args.seeds} seeds per app",
        )
    )


if __name__ == "__main__":
    main()
