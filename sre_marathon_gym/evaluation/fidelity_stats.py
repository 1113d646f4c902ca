"""SRE-Marathon's statistics beside the paper's: what `sre-marathon stats` prints.

Why: the simulator is worth training on only if the phenomena the paper measured emerge from it
(concurrency, alert ambiguity, faults the alerts miss, severity), and nothing else shows them drift
when the catalog or the simulator changes. Every figure comes from a no-action run under the
leaderboard protocol (60 min of injections + 30 min of observation, alerts evaluated every 15 s,
the run sampled at the protocol's interval), on the leaderboard seed and on further seeds
(`evaluation.EXTRA_SEED_BASE` + k, the seeds `evaluate --seeds N` uses).

Definitions (per run):
- ``mean_concurrency`` / ``peak_concurrency``: `FaultSchedule.stats` (injection-window mean, whole-run
  peak, no repair);
- ``ambiguous_alert_share``: fired alerts compatible with two or more active faults
  (`alert_noise.alert_compatibility`), over all fired alerts;
- ``unattributed_alert_share``: fired alerts compatible with no active fault;
- ``faults_with_alert_share``: faults with at least one compatible fired alert;
- ``probe_failing_share``: faults whose symptom probe fails at some interval while they are active;
- ``max_degraded`` / ``saturated_intervals``: the entry point's degraded fraction per interval (failed
  or slower than the probe's 2.5 s) and how many intervals are above 0.95.
Single-fault severity (`single_fault_severity`): each catalog fault injected alone on a warmed-up
system, the degraded fraction of entry-point requests over its shortest window.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from ..alerting.engine import AlertEngine
from ..backends.fault_check import fault_severity
from ..backends.sim_run import SimulatedRun
from ..catalog import Catalog
from ..schedule.fault_schedule import FaultSchedule
from .alert_noise import alert_compatibility
from .leaderboard import EXTRA_SEED_BASE

SATURATED = 0.95
PAPER_KEYS = {  # our statistic -> the published number's key (catalog/published.yaml)
    "faults": "faults_per_run",
    "mean_concurrency": "mean_concurrent_faults",
    "peak_concurrency": "peak_concurrent_faults",
    "ambiguous_alert_share": "ambiguous_alert_share",
}


@dataclass(frozen=True)
class RunStats:
    app: str
    seed: int
    faults: int
    categories: dict[str, int]
    mean_concurrency: float
    peak_concurrency: int
    alerts: int
    ambiguous_alert_share: float
    unattributed_alert_share: float
    faults_with_alert_share: float
    probe_failing_share: float
    max_degraded: float
    saturated_intervals: int
    intervals: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# the statistics printed one per line, in `RunStats` order (identity, the category mix and the
# interval count are printed elsewhere)
SCALARS = tuple(f.name for f in fields(RunStats) if f.name not in ("app", "seed", "categories", "intervals"))


def run_stats(catalog: Catalog, app: str, seed: int) -> RunStats:
    """One no-action run of `app` under the leaderboard protocol with `seed`'s schedule."""
    lb = catalog.leaderboard
    schedule = FaultSchedule.generate(
        catalog, app, seed, injection_minutes=lb.injection_minutes, observation_minutes=lb.observation_minutes
    )
    run = SimulatedRun(catalog, app, seed, schedule)
    engine = AlertEngine(catalog.rules, catalog.app(app), run.metric_store)
    probes = {f.fault_id: catalog.fault(f.fault_id).probe for f in schedule.faults}
    failed: set[str] = set()
    degraded: list[float] = []
    t, end = 0.0, float(schedule.run_s)
    while t < end:
        t = min(end, t + lb.interval_s)
        run.start_interval()
        run.advance_to(t)
        engine.evaluate_until(t)
        requests, bad = run.interval_traffic()
        degraded.append(bad / requests if requests else 0.0)
        for f in schedule.active_at(t):
            if f.fault_id not in failed and run.probe_failing(probes[f.fault_id]):
                failed.add(f.fault_id)
    fired = [a for a in engine.history() if a.fired_at is not None]
    comp = alert_compatibility(fired, schedule, catalog, store=run.metric_store)
    n_alerts = len(fired)
    attributed = {fid for c in comp for fid in c}
    sched = schedule.stats()
    n_faults = len(schedule.faults)
    return RunStats(
        app=app,
        seed=seed,
        faults=n_faults,
        categories=dict(sched["categories"]),
        mean_concurrency=round(float(sched["mean_concurrency"]), 4),
        peak_concurrency=int(sched["peak_concurrency"]),
        alerts=n_alerts,
        ambiguous_alert_share=_share(sum(len(c) > 1 for c in comp), n_alerts),
        unattributed_alert_share=_share(sum(len(c) == 0 for c in comp), n_alerts),
        faults_with_alert_share=_share(len(attributed), n_faults),
        probe_failing_share=_share(len(failed), n_faults),
        max_degraded=round(max(degraded, default=0.0), 4),
        saturated_intervals=sum(d > SATURATED for d in degraded),
        intervals=len(degraded),
    )


def _share(n: int, d: int) -> float:
    return round(n / d, 4) if d else math.nan


@dataclass(frozen=True)
class AppStats:
    app: str
    leaderboard: RunStats
    others: tuple[RunStats, ...] = field(default=())

    def spread(self, name: str) -> tuple[float, float, float] | None:
        """(mean, min, max) of a statistic over the other seeds (None without them)."""
        vals = [float(getattr(r, name)) for r in self.others]
        vals = [v for v in vals if not math.isnan(v)]
        if not vals:
            return None
        return float(np.mean(vals)), min(vals), max(vals)


def _run_job(job: tuple[str, str, int]) -> RunStats:
    from ..catalog import load_catalog

    path, app, seed = job
    return run_stats(load_catalog(path), app, seed)


def all_app_stats(
    catalog: Catalog,
    apps: Sequence[str],
    seeds: int = 0,
    *,
    workers: int | None = None,
    progress: Callable[[], None] | None = None,
) -> list[AppStats]:
    """`AppStats` of each app: its leaderboard seed and `seeds` further seeds, the runs spread over
    `workers` processes (default: one per core; each loads the catalog from `catalog.root`). The
    result does not depend on the number of workers: each run is a pure function of (app, seed)."""
    jobs = [
        (str(catalog.root), app, seed)
        for app in apps
        for seed in (catalog.leaderboard.seed_for(app), *(EXTRA_SEED_BASE + k for k in range(seeds)))
    ]
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    results: list[RunStats] = []
    if workers == 1:
        for _, app, seed in jobs:
            results.append(run_stats(catalog, app, seed))
            if progress is not None:
                progress()
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for r in pool.map(_run_job, jobs):
                results.append(r)
                if progress is not None:
                    progress()
    per_app = 1 + seeds
    return [
        AppStats(app, results[i * per_app], tuple(results[i * per_app + 1 : (i + 1) * per_app]))
        for i, app in enumerate(apps)
    ]


def published(catalog: Catalog, app: str, name: str) -> float | None:
    """The paper's figure for a statistic of `app` (an app-specific one first, else the general one)."""
    key = PAPER_KEYS.get(name)
    if key is None:
        return None
    nums = [n for n in catalog.published.numbers if n.key == key and n.benchmark == "sre-marathon"]
    for n in nums:
        if n.app == app:
            return float(n.value)
    for n in nums:
        if not n.app:
            return float(n.value)
    return None


def deviation(ours: float, paper: float | None) -> float | None:
    """Relative deviation of ours from the paper's figure (None without one)."""
    if paper is None or not paper or math.isnan(ours):
        return None
    return (ours - paper) / paper


# ------------------------------------------------------------ single-fault severity
@dataclass(frozen=True)
class Severity:
    app: str
    faults: int
    over_half: int  # not full outages by design that degrade more than half of entry requests
    over_90: int
    full_outages: int
    median: float
    p90: float
    worst: tuple[tuple[str, float], ...]  # the five most severe faults that are not full outages


def single_fault_severity(
    catalog: Catalog, app: str, progress: Callable[[], None] | None = None
) -> tuple[Severity, dict[str, float]]:
    values: dict[str, float] = {}
    for f in catalog.faults[app]:
        values[f.id] = round(fault_severity(catalog.app(app), f), 4)
        if progress is not None:
            progress()
    partial = {fid: v for fid, v in values.items() if not catalog.fault(fid).full_outage}
    arr = np.array(list(values.values()))
    worst = sorted(partial.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return (
        Severity(
            app=app,
            faults=len(values),
            over_half=sum(v > 0.5 for v in partial.values()),
            over_90=sum(v > 0.9 for v in partial.values()),
            full_outages=len(values) - len(partial),
            median=round(float(np.median(arr)), 4) if arr.size else math.nan,
            p90=round(float(np.quantile(arr, 0.9)), 4) if arr.size else math.nan,
            worst=tuple(worst),
        ),
        values,
    )


# ------------------------------------------------------------ ORCA
def orca_stats(progress: bool = False) -> dict[str, Any]:
    """Task counts, mean ground-truth causes and the heuristic's sound accuracy, by difficulty."""
    from ..orca.tasks import orca_tasks
    from .orca import evaluate as orca_evaluate

    tasks = orca_tasks()
    out: dict[str, Any] = {"tasks": len(tasks), "by_difficulty": {}}
    scores = orca_evaluate("heuristic", progress=progress)
    by_id = {s.task_id: s for s in scores}
    order = {"easy": 0, "medium": 1, "hard": 2}
    for diff in sorted({t.difficulty for t in tasks}, key=lambda d: (order.get(d, 9), d)):
        group = [t for t in tasks if t.difficulty == diff]
        incidents = [t for t in group if not t.is_control]
        acc = [by_id[t.task_id].rca_accuracy for t in incidents if t.task_id in by_id]
        out["by_difficulty"][diff] = {
            "tasks": len(group),
            "controls": len(group) - len(incidents),
            "mean_causes": round(float(np.mean([len(t.ground_truth) for t in incidents])), 3)
            if incidents
            else math.nan,
            "heuristic_accuracy": round(100.0 * float(np.mean(acc)), 2) if acc else math.nan,
        }
    return out


def format_app_table(rows: Sequence[AppStats], catalog: Catalog) -> str:
    """One line per (app, statistic): leaderboard seed, paper, deviation, other seeds' mean and range."""
    from ..core.table import format_table

    body = []
    for st in rows:
        for name in SCALARS:
            ours = float(getattr(st.leaderboard, name))
            paper = published(catalog, st.app, name)
            dev = deviation(ours, paper)
            spread = st.spread(name)
            body.append(
                [
                    st.app,
                    name,
                    _num(ours),
                    "-" if paper is None else _num(paper),
                    "-" if dev is None else f"{100 * dev:+.0f}%",
                    "-" if spread is None else _num(spread[0]),
                    "-" if spread is None else f"{_num(spread[1])}-{_num(spread[2])}",
                ]
            )
    return format_table(
        ["app", "statistic", "leaderboard seed", "paper", "deviation", "other seeds mean", "range"], body
    )


def format_category_table(rows: Sequence[AppStats]) -> str:
    """Faults per category on each app's leaderboard seed."""
    from ..core.table import format_table

    cats = sorted({c for st in rows for c in st.leaderboard.categories})
    body = [[st.app, *(st.leaderboard.categories.get(c, 0) for c in cats)] for st in rows]
    return format_table(["app", *cats], body)


def _num(v: float) -> str:
    if math.isnan(v):
        return "-"
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.3f}"


__all__ = [
    "AppStats",
    "RunStats",
    "all_app_stats",
    "Severity",
    "deviation",
    "format_app_table",
    "format_category_table",
    "orca_stats",
    "published",
    "run_stats",
    "single_fault_severity",
]
