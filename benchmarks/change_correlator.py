"""Benchmark: the change correlator (an honest reader of changes and telemetry) against the Runbook
and `change_reader.py` (which claims every change once an alert fires in its scope).

Why both: change_reader measures how much the change planes give away without diagnosis, the
correlator how much of that survives when a change must be followed by its own service's symptom.
On the production change stream (env ids -v3: harmless twins of the faulty changes on every plane,
`sre_marathon_gym.schedule.change_stream`) the first should fall to the Runbook's level and the second
should not; `--changes curated` runs the template commits of the -v2 envs for comparison.

Measured on the leaderboard seeds (Online Boutique / Astronomy Shop / Train Ticket; false claims),
production stream (at 746fbd3): correlator 23.8 (0) / 19.0 (4) / 17.1 (5), change_reader 0.0 (207)
/ 0.0 (194) / 0.0 (208), Runbook 3.1 / 3.9 / 2.1; curated: correlator 35.3 (1) / 41.0 (0) / 33.1
(0), change_reader 36.0 (7) / 31.8 (8) / 42.8 (6), Runbook 6.0 / 7.5 / 11.6. A correlator episode
takes about 1.5-2x the Runbook's.

Run: python benchmarks/change_correlator.py [--agents change_correlator,runbook,change_reader]
     [--apps ...] [--changes production|curated] [--workers 2]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

APPS = ("online_boutique", "astronomy_shop", "train_ticket")
AGENTS = ("change_correlator", "runbook", "change_reader")


def _change_reader():
    spec = importlib.util.spec_from_file_location(
        "change_reader", Path(__file__).with_name("change_reader.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ChangeReader()


def run(job: tuple[str, str, str]) -> dict:
    """One scored leaderboard episode of one agent on one app."""
    app, name, changes = job
    from sre_marathon_gym.catalog import load_catalog
    from sre_marathon_gym.evaluation.episode_runner import make_marathon_env, run_scored_episode

    cat = load_catalog()
    agent = _change_reader() if name == "change_reader" else name
    t0 = time.perf_counter()
    ep = run_scored_episode(lambda: make_marathon_env(app, "eval", cat, changes=changes), agent)
    c = ep.card
    return dict(
        app=app,
        agent=name,
        score=c.marathon_score,
        correlated=c.correlated,
        localized=c.localized,
        repaired=c.repaired,
        false_claims=c.false_claims,
        false_incidents=c.false_incidents,
        needless=c.needless_actions,
        seconds=time.perf_counter() - t0,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--changes", choices=("production", "curated"), default="production")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    jobs = [(app, name, args.changes) for name in args.agents.split(",") for app in args.apps.split(",")]
    with ProcessPoolExecutor(args.workers) as ex:
        rows = list(ex.map(run, jobs))
    print(
        f"{'agent':<18} {'app':<16} {'Marathon-Score':>14} {'corr':>5} {'loc':>5} {'rep':>5} "
        f"{'false claims':>12} {'false inc':>9} {'needless':>8} {'time':>7}"
    )
    for r in rows:
        print(
            f"{r['agent']:<18} {r['app']:<16} {r['score']:14.1f} "
            f"{r['correlated']:5.2f} {r['localized']:5.2f} "
            f"{r['repaired']:5.2f} {r['false_claims']:12d} {r['false_incidents']:9d} {r['needless']:8d} "
            f"{r['seconds']:6.1f}s"
        )
    for name in args.agents.split(","):
        scores = [r["score"] for r in rows if r["agent"] == name]
        print(f"{name:<18} mean over apps {sum(scores) / len(scores):.1f}")


if __name__ == "__main__":
    main()
