"""Noise figures of a run's alerts: how ambiguous and how flappy they are.

`alert_ambiguity` is the share of fired alerts compatible with more than one active fault (the
paper reports 39 %, 76 % and 47 %); `flapping_share` the share that fire again soon after they
resolved. ``python -m sre_marathon_gym.evaluation.alert_noise`` prints them for the leaderboard seeds. Apart
from `alerting.engine` because they read a schedule, which the engine must never see.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..alerting.engine import Alert, AlertEngine
from ..catalog.apps import label_place, pod_owner
from ..metrics.store import MetricStore

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..catalog.apps import App
    from ..schedule.fault_schedule import FaultSchedule, ScheduledFault


# --------------------------------------------------------------------------------------------------
# noise figures

# alerts whose group labels name no workload: the service their metric belongs to
# (app_frontend_requests_total{service_name="frontend"},
#  app_payment_transactions_total{service_name="payment"})
_TEMPLATE_SERVICE = {"frontend_request_errors": "frontend", "payment_transactions_drop": "payment"}

Placement = Callable[[str, float], set[str]]


def store_placement(store: MetricStore, services: Iterable[str]) -> Placement:
    """Services with a pod on a node at time t, from ``kube_pod_info{node=...}`` in the store."""
    services = list(services)
    ids = store.select("kube_pod_info")
    labels = [store.labels(int(s)) for s in ids.tolist()]
    memo: dict[float, dict[str, set[str]]] = {}

    def placement(node: str, t: float) -> set[str]:
        by_node = memo.get(t)
        if by_node is None:
            by_node = defaultdict(set)
            vals = store.at(ids, t) if ids.size else np.empty(0)
            for i in np.flatnonzero(~np.isnan(vals)).tolist():
                lab = labels[i]
                if lab.get("node"):
                    by_node[lab["node"]] |= {pod_owner(lab.get("pod", ""), services)} - {None}
            memo[t] = by_node
        return set(by_node.get(node, ()))

    return placement


def static_placement(app: App) -> Placement:
    """Without telemetry: a node hosts every service that runs in the node's zone."""
    zone_of = {n: z.name for z in app.zones for n in z.nodes}
    by_zone: dict[str, set[str]] = defaultdict(set)
    for s in app.services:
        for z in s.zones:
            by_zone[z].add(s.name)
    return lambda node, t: set(by_zone.get(zone_of.get(node, ""), ()))


def alert_services(alert: Alert, app: App) -> set[str]:
    """Services an alert names (`App.label_services`), or, for an alert whose labels name no
    workload, node or zone, the service its metric belongs to."""
    out = app.label_services(alert.labels)
    lab = alert.labels
    if not out and alert.template in _TEMPLATE_SERVICE and label_place(lab) is None:
        out.add(_TEMPLATE_SERVICE[alert.template])
    return out


def alert_compatibility(
    alerts: Sequence[Alert],
    schedule: FaultSchedule,
    catalog: Catalog,
    *,
    store: MetricStore | None = None,
) -> list[list[str]]:
    """Ids of the scheduled faults active at each alert's firing time that the alert is compatible with.

    Compatible: the services the alert names (`alert_services`) meet the fault's ``scope`` (so an
    entry-point alert is compatible with every active fault whose scope holds the entry point); a
    node or zone alert is compatible with the faults whose target has a pod on that node (zone) at
    the fault's start or at the firing time (from ``kube_pod_info`` when `store` is given, else the
    catalog's zone placement).
    """
    app = catalog.app(schedule.app)
    if store is not None:
        place = store_placement(store, [s.name for s in app.services])
    else:
        place = static_placement(app)
    zone_nodes = {z.name: list(z.nodes) for z in app.zones}
    scope = {f.fault_id: set(catalog.fault(f.fault_id).scope) for f in schedule.faults}
    out: list[list[str]] = []
    for a in alerts:
        t = a.fired_at if a.fired_at is not None else a.pending_at
        active: list[ScheduledFault] = schedule.active_at(t)
        lab = a.labels
        named = label_place(lab)
        nodes = [] if named is None else [named[1]] if named[0] == "node" else zone_nodes.get(named[1], [])
        if nodes:
            hits = []
            for f in active:
                hosts = set().union(*(place(n, t) | place(n, float(f.start_s)) for n in nodes))
                if f.target in hosts:
                    hits.append(f.fault_id)
        else:
            svcs = alert_services(a, app)
            hits = [f.fault_id for f in active if svcs & scope[f.fault_id]]
        out.append(hits)
    return out


def alert_ambiguity(
    alerts: Sequence[Alert],
    schedule: FaultSchedule,
    catalog: Catalog,
    *,
    store: MetricStore | None = None,
) -> float:
    """Share of fired alerts compatible with more than one fault active at their firing time.

    Alerts compatible with no active fault (lingering or spurious) count in the denominator; use
    `alert_compatibility` for the breakdown. NaN when no alert fired.
    """
    fired = [a for a in alerts if a.fired_at is not None]
    if not fired:
        return math.nan
    comp = alert_compatibility(fired, schedule, catalog, store=store)
    return sum(len(c) > 1 for c in comp) / len(fired)


def flapping_share(alerts: Sequence[Alert], window_s: float = 600.0) -> float:
    """Share of fired alerts whose rule + label set fired another time within `window_s` of them.

    NaN when no alert fired.
    """
    fired = [a for a in alerts if a.fired_at is not None]
    if not fired:
        return math.nan
    by_key: dict[tuple, list[float]] = defaultdict(list)
    for a in fired:
        by_key[(a.rule, tuple(sorted(a.labels.items())))].append(float(a.fired_at))  # type: ignore[arg-type]
    flapping = 0
    for times in by_key.values():
        ts = np.sort(np.asarray(times))
        if ts.size < 2:
            continue
        gap = np.diff(ts) <= window_s
        near = np.zeros(ts.size, dtype=bool)
        near[1:] |= gap
        near[:-1] |= gap
        flapping += int(near.sum())
    return flapping / len(fired)


# --------------------------------------------------------------------------------------------------
# leaderboard report


def _report() -> None:  # pragma: no cover - exercised by hand / CI smoke
    """Run the leaderboard schedules for 90 minutes and print the alert noise figures."""
    import time

    from ..backends.sim_run import SimulatedRun
    from ..catalog import load_catalog
    from ..schedule.fault_schedule import FaultSchedule

    cat = load_catalog()
    paper = {n.app: n.value for n in cat.published.numbers if n.key == "ambiguous_alert_share"}
    interval = cat.leaderboard.interval_s
    print(
        f"{'app':<16} {'seed':>4} {'rules':>5} {'fired':>5} {'pend.only':>9} {'ambiguous':>9} "
        f"{'paper':>6} {'no fault':>8} {'flapping':>8} {'evals':>5} {'cpu s':>7} {'ms/eval':>7}"
    )
    for run in cat.leaderboard.runs:
        app = run.app
        schedule = FaultSchedule.generate(cat, app, run.seed)
        sim = SimulatedRun(cat, app, run.seed, schedule)
        engine = AlertEngine(cat.rules, cat.app(app), sim.metric_store)
        spent = 0.0
        end = schedule.run_s
        t = 0.0
        while t < end:
            t = min(end, t + interval)
            sim.advance_to(t)
            t0 = time.process_time()  # CPU time: robust to other processes on the machine
            engine.evaluate_until(t)
            spent += time.process_time() - t0
        fired = engine.history()
        comp = alert_compatibility(fired, schedule, cat, store=sim.metric_store)
        amb = sum(len(c) > 1 for c in comp) / max(len(fired), 1)
        none = sum(len(c) == 0 for c in comp) / max(len(fired), 1)
        flap = flapping_share(fired)
        print(
            f"{app:<16} {run.seed:>4} {len(engine.rules):>5} {len(fired):>5} "
            f"{len(engine.pending_history()):>9} {amb:>9.1%} {paper.get(app, math.nan):>6.0%} "
            f"{none:>8.1%} {flap:>8.1%} {engine.evaluations:>5} "
            f"{spent:>7.3f} {1000 * spent / max(engine.evaluations, 1):>7.2f}"
        )
        by_rule: dict[str, int] = defaultdict(int)
        for a in fired:
            by_rule[a.rule] += 1
        ranked = sorted(by_rule.items(), key=lambda kv: -kv[1])
        print("    fired per rule: " + ", ".join(f"{k} {v}" for k, v in ranked))


__all__ = [
    "Placement",
    "alert_ambiguity",
    "alert_compatibility",
    "alert_services",
    "flapping_share",
    "static_placement",
    "store_placement",
]


if __name__ == "__main__":  # pragma: no cover
    _report()
