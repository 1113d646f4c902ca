"""Validation harness of the benign change stream: each benign change, alone, breaks nothing.

The counterpart of `fault_check` (the paper's Appendix C) for `change_stream`: a benign twin is
applied alone to a warmed-up system and watched for `WATCH_S`. It passes when no symptom probe of
the app's catalog fails and the alert pack fires nothing that a rolling restart of the same
workload (`kubectl rollout restart`, the reference of "a change that replaces pods") does not
fail or fire too. Why the restart as reference: a real rollout replaces pods (new names,
readiness, controller events), and the pack's pod rules and the ready-replica probes see that;
anything beyond it is a symptom the change caused, which a benign change must not have. For node
maintenance the reference is the node's own state: an alert naming only the node (the pack's
"node unschedulable") says what was changed, as the cordon's event does.

It lives with the backends because it drives its own simulations (`docs/ARCHITECTURE.md`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..alerting.engine import AlertEngine
from ..catalog import Catalog
from ..core.clock import TICK_S
from ..schedule.change_stream import benign_twins
from ..schedule.fault_schedule import BenignChange, FaultSchedule
from .sim_run import SimulatedRun

WARMUP_S = 300
WATCH_S = 600  # longer than a rollout, the pipeline's stages and every `for:` clause of the pack


@dataclass(frozen=True)
class ChangeCheck:
    app: str
    kind: str
    artifact: str
    failing_probes: tuple[str, ...]  # probes that failed while the change ran alone
    extra_alerts: tuple[str, ...]  # "rule{workload}" fired that the restart reference does not fire

    @property
    def passed(self) -> bool:
        return not self.failing_probes and not self.extra_alerts


def _moved_off(catalog: Catalog, app: str, seed: int, node: str) -> list[str]:
    """The workloads node maintenance moves off `node` at the end of the warm-up (none if no room)."""
    run = SimulatedRun(catalog, app, seed, FaultSchedule(app, seed, WARMUP_S, 0, faults=()), telemetry=False)
    run.advance_to(WARMUP_S)
    cl = run.sim.cluster
    if not cl.room_without(node):
        return []
    return sorted({p.service for p in cl.pods.values() if p.node == node and not p.terminating})


def _alone(catalog: Catalog, app: str, seed: int, change: BenignChange | None, restart: list[str] | None):
    """(probes failing at any point, alerts fired) with `change` (or rolling restarts) alone."""
    schedule = FaultSchedule(app, seed, WARMUP_S + WATCH_S, 0, faults=(), benign=(change,) if change else ())
    run = SimulatedRun(catalog, app, seed, schedule)
    engine = AlertEngine(catalog.rules, catalog.app(app), run.metric_store)
    probes = {f.probe.model_dump_json(): f.probe for f in catalog.faults[app]}
    keys, checked = list(probes), list(probes.values())
    failing: set[str] = set()
    run.advance_to(WARMUP_S)
    for service in restart or ():
        run.sim.act.restart(service)
    while run.now < WARMUP_S + WATCH_S:
        run.advance_to(run.now + TICK_S)
        failing |= {key for key, bad in zip(keys, run.probes_failing(checked)) if bad}
    engine.evaluate_until(run.now)
    fired = {
        f"{a.rule}{{{','.join(sorted(catalog.app(app).label_services(a.labels)))}}}"
        for a in engine.history(run.now)
        if a.fired_at is not None and a.fired_at >= WARMUP_S
    }
    return failing, fired


_REFERENCES: dict[tuple[int, str, int, tuple[str, ...]], tuple[Catalog, frozenset[str], frozenset[str]]] = {}


def _reference(catalog: Catalog, app: str, seed: int, restart: list[str]):
    """`_alone` with no change (a quiet run, or rolling restarts): the same for every change of an
    app, so computed once per catalog, app, seed and restarted workloads (the entry holds the
    catalog, so its id is not reused while cached)."""
    key = (id(catalog), app, seed, tuple(restart))
    if key not in _REFERENCES:
        failing, fired = _alone(catalog, app, seed, None, restart)
        _REFERENCES[key] = (catalog, frozenset(failing), frozenset(fired))
    return _REFERENCES[key][1:]


def check_change(catalog: Catalog, app: str, change: BenignChange, seed: int = 0) -> ChangeCheck:
    quiet_failing, quiet = _reference(catalog, app, seed, [])
    failing, fired = _alone(catalog, app, seed, change, None)
    workload = [change.service] if change.plane in ("pipeline", "manifest") and change.service else []
    ref_failing, reference = (
        _reference(catalog, app, seed, workload) if workload else (frozenset(), frozenset())
    )
    if change.plane == "node":  # the node's own state (e.g. "unschedulable") is the change, not a
        # symptom; the workloads maintenance moves off are restarted: their restarts are the reference
        moved = _moved_off(catalog, app, seed, str(change.new_value))
        ref_failing, reference = (
            _reference(catalog, app, seed, moved) if moved else (frozenset(), frozenset())
        )
        reference = reference | {a for a in fired if a.endswith("{}")}
    return ChangeCheck(
        app,
        change.kind,
        change.artifact,
        tuple(sorted(failing - quiet_failing - ref_failing)),
        tuple(sorted(fired - quiet - reference)),
    )


def twins_to_check(catalog: Catalog, apps: Iterable[str], per_kind: int | None, seed: int = 0):
    """(app, twin) for every twin kind of each app: all of them, or `per_kind` drawn per kind."""
    out = []
    rng = np.random.default_rng(seed)
    for app in apps:
        twins = benign_twins(catalog.app(app), catalog.faults[app], rng, at_s=WARMUP_S)
        by_kind: dict[str, list[BenignChange]] = {}
        for t in twins:
            by_kind.setdefault(t.kind, []).append(t)
        for kind in sorted(by_kind):
            group = by_kind[kind]
            if per_kind is not None and len(group) > per_kind:
                group = [group[int(i)] for i in sorted(rng.choice(len(group), per_kind, replace=False))]
            out += [(app, t) for t in group]
    return out


def validate_changes(
    catalog: Catalog, apps: list[str] | None = None, per_kind: int | None = None, progress: bool = True
) -> list[ChangeCheck]:
    from tqdm import tqdm

    todo = twins_to_check(catalog, apps or list(catalog.apps), per_kind)
    return [
        check_change(catalog, app, change)
        for app, change in tqdm(todo, desc="validating benign changes", unit="change", disable=not progress)
    ]
