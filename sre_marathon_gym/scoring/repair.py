"""Repair evidence of Marathon-Score: when a fault counts as repaired, and which intervention that
repair is credited to (a probe recovery that stays healthy, or an artifact restored before the
symptom showed).

Apart from the score card because it is the part of scoring that reads the run's probes and
actions sample by sample, and the part the per-step reward re-asks for every fault.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..core.run_record import ActionRecord, FaultTruth, ProbeSeries, RunRecord

REPAIR_ATTRIBUTION_S = 480.0
"""An intervention may be credited for a probe recovery at most this long after it was made."""

_EPS = 1e-9


@dataclass(frozen=True)
class Repair:
    """A fault's repair: when its evidence came, when it was confirmed, which evidence, and the
    index of the action it is credited to (None: none is)."""

    time_s: float
    confirmed_s: float
    evidence: Literal["probe", "artifact"]
    action: int | None


def touches(action: ActionRecord, touched: frozenset[str]) -> bool:
    """An executed (ok) intervention acting on one of the fault's services (or its node/zone)."""
    return action.kind == "intervention" and action.verdict == "ok" and not touched.isdisjoint(action.targets)


Credits = Callable[[int, ActionRecord], bool]
"""Which interventions may be credited with a fault's repair (index into `actions`, the action)."""


def _touching(fault: FaultTruth) -> Credits:
    """Rules v1: any executed intervention on one of the fault's services (or its node/zone)."""
    touched = fault.touched
    return lambda _k, a: touches(a, touched)


class RepairEvidence:
    """What the repair checks read, prepared once per score card: each probe as arrays, by fault,
    and the actions' times. Why: the reward rescores the run at every step and each fault asks
    twice (any repair, and a credited one); the lists grow with the run."""

    def __init__(self, record: RunRecord):
        self.record = record
        self.actions = record.actions
        self.times = [a.time_s for a in self.actions]
        self.ordered = all(x <= y for x, y in zip(self.times, self.times[1:]))
        self._probes: dict[str, ProbeSeries] = {}
        for p in reversed(record.probes):  # the first of a fault's probes wins, as `probe_for`
            self._probes[p.fault_id] = p
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def probe(self, fault_id: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(times, failing) of the fault's probe, or None without one."""
        hit = self._arrays.get(fault_id)
        if hit is None:
            p = self._probes.get(fault_id)
            if p is None:
                return None
            hit = self._arrays[fault_id] = (
                np.asarray(p.times, dtype=float),
                np.asarray(p.failing, dtype=bool),
            )
        return hit

    def candidates(self, lo_s: float, hi_s: float) -> range:
        """Indices of the actions that may lie in [lo_s, hi_s] (all of them if not in time order);
        callers still apply their exact condition to each."""
        if not self.ordered or math.isnan(lo_s) or math.isnan(hi_s):
            return range(len(self.actions))
        return range(bisect_left(self.times, lo_s - 1.0), bisect_right(self.times, hi_s + 1.0))


def _probe_repair(
    fault: FaultTruth,
    probe: tuple[np.ndarray, np.ndarray],
    ev: RepairEvidence,
    stable_s: float,
    credits: Credits,
) -> Repair | None:
    times, failing = probe
    actions = ev.actions
    if times.size < 2:
        return None
    # recoveries: healthy sample i right after a failing sample i-1, both within the fault
    idx = np.flatnonzero(~failing[1:] & failing[:-1]) + 1
    idx = idx[(times[idx - 1] >= fault.start_s - _EPS) & (times[idx] < fault.deadline_s)]
    for i in idx:
        t_r = float(times[i])
        j = int(np.searchsorted(times, t_r + stable_s - _EPS, side="left"))
        if j >= times.size or failing[i : j + 1].any():
            continue  # not (yet) confirmed stable, or relapsed
        credited = None
        for k in ev.candidates(max(fault.start_s, t_r - REPAIR_ATTRIBUTION_S), t_r):
            a = actions[k]
            in_time = fault.start_s <= a.time_s < t_r and t_r - a.time_s <= REPAIR_ATTRIBUTION_S
            if in_time and credits(k, a):
                if credited is None or a.time_s >= actions[credited].time_s:
                    credited = k
        if credited is not None:
            return Repair(t_r, float(times[j]), "probe", credited)
    return None


def _artifact_repair(
    fault: FaultTruth,
    probe: tuple[np.ndarray, np.ndarray] | None,
    fixed_s: float | None,
    ev: RepairEvidence,
    credits: Credits,
    need_action: bool,
    window_s: float = math.inf,
) -> Repair | None:
    if fixed_s is None or not (fault.start_s <= fixed_s < fault.deadline_s):
        return None
    if probe is not None:
        times, failing = probe
        if (failing & (fault.start_s <= times) & (times <= fixed_s)).any():
            return None  # the symptom did show: only a probe recovery can prove this repair
    actions = ev.actions
    credited = None
    for k in ev.candidates(max(fault.start_s, fixed_s - window_s), fixed_s):
        a = actions[k]
        if fault.start_s <= a.time_s <= fixed_s and fixed_s - a.time_s <= window_s and credits(k, a):
            credited = k
    if need_action and credited is None:
        return None
    return Repair(fixed_s, fixed_s, "artifact", credited)


def repair(
    ev: RepairEvidence,
    fault: FaultTruth,
    stable_s: float,
    credits: Credits | None = None,
    fix_window_s: float = math.inf,
) -> Repair | None:
    """The first confirmed repair evidence; `credits` None: rules v1 (any touching intervention, and an
    artifact fix needs none), else only the interventions `credits` accepts (an artifact fix too).
    `fix_window_s`: how long before an artifact fix the credited action may be (v3: the action that
    restored it, as for a probe recovery; v2: any since the fault's start)."""
    probe = ev.probe(fault.fault_id)
    need_action = credits is not None
    credits = credits or _touching(fault)
    found = [
        r
        for r in (
            _probe_repair(fault, probe, ev, stable_s, credits) if probe is not None else None,
            _artifact_repair(
                fault,
                probe,
                ev.record.artifact_fixed.get(fault.fault_id),
                ev,
                credits,
                need_action,
                fix_window_s,
            ),
        )
        if r is not None
    ]
    return min(found, key=lambda r: (r.confirmed_s, r.time_s)) if found else None
