"""The seeded fault schedule of one marathon run (SRE-Marathon §2, §4).

A run is ``injection_s`` seconds of injections at increasing intensity followed by ``observation_s``
seconds without new injections. The orchestrator decides, from one seed, which catalog faults start
when, when each would be reverted if nobody repairs it, and which benign changes ship in between.
The schedule is hidden ground truth: only the simulator and the sealed bundle see it.

Arrival process (stratified, increasing intensity)
    The number of faults is ``N = round(FAULTS_PER_HOUR * intensity * injection_minutes / 60)``
    plus a small seeded jitter of +-5 %. Their start times follow a linearly increasing rate
    ``lambda(t) ~ 1 + RAMP * t / T`` over the injection window ``[0, T)`` (the rate at the end is
    ``1 + RAMP`` times the rate at the start). Times are drawn by stratified inverse-CDF sampling
    (one uniform per 1/N stratum) rather than as a raw Poisson process: the shape is the same, but
    counts and concurrency vary far less between seeds, which is what a benchmark schedule needs.

Durations
    Each arrival first gets a duration ``240 + 480 * x`` seconds (the paper's 4-12 minutes), where
    ``x`` follows a Kumaraswamy(``timeline.DURATION_SHAPE``) law (Beta-like, closed-form inverse)
    skewed to the short end, so that ~60 faults give the paper's mean concurrency of ~6 with a peak of 10-11.
    The quantiles are stratified (a random permutation of one draw per 1/N stratum), which keeps the
    total fault-time, hence the mean concurrency, steady across seeds. The fault is then drawn among
    the free faults whose catalog ``duration`` bounds contain that duration (if none does, among all
    free faults, and the duration is clipped into the chosen fault's bounds). Why: the timeline, and
    so the calibration, then depends on the seed only, not on which faults the catalog holds, and
    stays put when the catalog is regenerated.

Conflict rule (who may be active at the same time)
    Every fault occupies a set of *keys* (see `occupied_keys`): its artifact without any
    ``@revision`` suffix (two revisions of one file are one artifact), its remedies' artifacts, and one
    ``<target>#<slot>`` key per part of the target's deployment its mechanism takes over (``rollout``
    for anything that changes the pod template -- code and config changes, image, probes, limits;
    ``cpu``, ``memory``, ``network``, ``dependency``, ``load``); ``scale_to_zero`` takes every slot
    of its target. Node and zone faults share ``infrastructure#cluster`` (one at a time, so a second
    zone never fails on top of the first) and faults marked ``full_outage`` share ``entry#outage``.
    Two faults whose intervals overlap never share a key. Why: each active fault must stay a
    separate, attributable incident -- e.g. two changes on one deployment would make ``rollback``
    repair (or undo) the wrong one, and a second fault on a scaled-to-zero service would be
    invisible. At each arrival the fault is drawn uniformly, without replacement, from the app's
    faults whose keys are free at that moment; if none is free the arrival is dropped.

Clipping
    Starts always lie in ``[0, injection_s)``. ``planned_end_s = start + duration`` may run into the
    observation window, but is clipped to the end of the run (``injection_s + observation_s``) so
    that every fault is reverted by the end; a clipped fault has ``clipped=True`` (with the default
    60 + 30 minutes no fault can be clipped, since durations are at most 12 minutes).

Benign changes
    ``8-15`` per hour over the whole run: harmless config knobs (log level, profiler/debug toggles,
    more generous timeouts, larger pools/caches) and source edits (a comment, a version bump). They go
    through the same pipeline as faulty changes, so agents must tell them apart. They never touch an
    artifact any scheduled fault touches (its artifact, alias artifacts or remedy artifacts), nor a
    service while a fault holds that service's ``rollout`` slot (a rollback must revert the fault,
    not the benign change); each artifact changes at most once per run, so every diff applies to the
    catalog's text. Their ``to_revision`` is ``r<N>`` with ``N`` counting up from
    ``BENIGN_REVISION_BASE`` = 1000 (or the first multiple of 1000 above the app's highest catalog
    or fault revision, if that is larger), so it never collides with a catalog or fault revision.

All randomness comes from one ``numpy.random.Generator`` (``np.random.default_rng(seed)`` unless one
is passed), split into independent child streams for counts/arrivals, durations/selection and
benign changes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..core.clock import TICK_S
from ..core.errors import ConfigurationError, UnknownNameError
from .benign_edits import (
    benign_code_change,
    benign_config_value,
    benign_revision_base,
    commit_message,
    config_diff,
)
from .change_stream import CHANGE_FAILURE_RATE, CHANGE_STREAMS, change_plane, plan_production_changes
from .timeline import (
    COUNT_JITTER,
    DURATION_RANGE,
    DURATION_SHAPE,
    FAULTS_PER_HOUR,
    RAMP,
    BenignChange,
    EventKind,
    ScheduledFault,
    ScheduleEvent,
    arrival_times,
    artifact_key,
    duration_quantiles,
    durations,
    fault_count,
    holds_rollout,
    occupied_keys,
    touched_artifacts,
)

if TYPE_CHECKING:
    from ..catalog import Catalog, Fault
    from ..catalog.apps import App

SCHEMA_VERSION = 2  # 2: the change stream (`changes`, `change_failure_rate`) and benign planes
BENIGN_PER_HOUR = (8, 15)  # range the benign-change rate is drawn from


@dataclass(frozen=True)
class _BenignCandidate:
    service: str
    artifact: str
    kind: Literal["config", "code"]
    revision: str
    entry: Any = None  # ConfigEntry for config candidates
    path: str = ""
    excerpt: str = ""


def _benign_candidates(app: App, forbidden: set[str]) -> list[_BenignCandidate]:
    from ..catalog.apps import config_artifact_id

    out: list[_BenignCandidate] = []
    for s in app.services:
        for c in s.config:
            aid = config_artifact_id(s.name, c)
            if artifact_key(aid) not in forbidden:
                out.append(_BenignCandidate(s.name, aid, "config", c.revision, entry=c))
        for src in s.sources:
            aid = f"{s.name}:{src.path}@{src.revision}"
            if artifact_key(aid) not in forbidden:
                out.append(
                    _BenignCandidate(s.name, aid, "code", src.revision, path=src.path, excerpt=src.excerpt)
                )
    return out


def _plan_benign(
    app: App, faults: list[Fault], scheduled: list[ScheduledFault], run_s: int, rng: np.random.Generator
) -> list[BenignChange]:
    forbidden: set[str] = set()
    for f in faults:
        forbidden |= touched_artifacts(f)
    candidates = _benign_candidates(app, forbidden)
    if not candidates:
        return []
    rate = float(rng.uniform(BENIGN_PER_HOUR[0], BENIGN_PER_HOUR[1]))
    n = max(1, int(round(rate * run_s / 3600.0)))
    lo, hi = 60, max(61, run_s - 300)  # not at t=0, and early enough to be observed before the end
    times = np.sort(np.floor(lo + (np.arange(n) + rng.random(n)) / n * (hi - lo)).astype(np.int64))
    by_id = {f.id: f for f in faults}
    next_rev = benign_revision_base(app, faults)
    used: set[str] = set()  # one benign change per artifact, so every diff applies to the catalog text
    changes: list[BenignChange] = []
    for t in times:
        busy = {sf.target for sf in scheduled if sf.active_at(int(t)) and holds_rollout(by_id[sf.fault_id])}
        # pick the kind first (config or code, evenly), then a candidate of that kind, falling back
        kinds = ["config", "code"] if rng.random() < 0.5 else ["code", "config"]
        order = [
            int(k)
            for kind in kinds
            for k in rng.permutation(len(candidates))
            if candidates[int(k)].kind == kind
        ]
        for k in order:
            cand = candidates[k]
            if cand.service in busy or cand.artifact in used:
                continue
            if cand.kind == "config":
                made = benign_config_value(cand.entry, rng)
                if made is None:
                    continue
                new_value, what = made
                message = commit_message(cand.service, what)
                diff = config_diff(cand.service, cand.entry, new_value)
            else:
                made_code = benign_code_change(cand.path, cand.excerpt, rng)
                if made_code is None:
                    continue
                what, diff = made_code
                message = commit_message(cand.service, what)
                new_value = None
            from_rev, to_rev = cand.revision, f"r{next_rev}"
            next_rev += 1
            used.add(cand.artifact)
            changes.append(
                BenignChange(
                    time_s=int(t),
                    service=cand.service,
                    artifact=cand.artifact,
                    kind=cand.kind,
                    message=message,
                    diff=diff,
                    from_revision=from_rev,
                    to_revision=to_rev,
                    new_value=new_value,
                )
            )
            break
    return changes


# --------------------------------------------------------------------------------------------------
# the schedule


@dataclass(frozen=True)
class FaultSchedule:
    """The seeded fault and benign-change timeline of one run (see the module docstring)."""

    app: str
    seed: int
    injection_s: int
    observation_s: int
    faults: tuple[ScheduledFault, ...]
    benign: tuple[BenignChange, ...] = ()
    intensity: float = 1.0
    changes: str = "curated"  # which benign stream (`change_stream.CHANGE_STREAMS`)
    change_failure_rate: float | None = None  # production stream only
    _events: tuple[ScheduleEvent, ...] = field(default=(), init=False, repr=False, compare=False)

    @property
    def run_s(self) -> int:
        return self.injection_s + self.observation_s

    # ---- generation -----------------------------------------------------------------------------

    @classmethod
    def generate(
        cls,
        catalog: Catalog | None,
        app: str,
        seed: int,
        *,
        injection_minutes: float = 60,
        observation_minutes: float = 30,
        intensity: float = 1.0,
        rng: np.random.Generator | None = None,
        changes: str = "production",
        change_failure_rate: float | None = None,
    ) -> FaultSchedule:
        """Draw the schedule of `app` for `seed` (or from `rng`, recording `seed` for provenance).

        `intensity` scales the fault count (1.0 -> ~60 per hour of injections, 0.25 -> ~15), for
        curricula; arrival shape and duration draw stay the same. `changes` picks the benign
        stream: "production" (twins on every plane at `change_failure_rate`, default
        `change_stream.CHANGE_FAILURE_RATE`) or "curated" (the template commits of env ids up to
        -v2, kept so earlier results reproduce).
        """
        if changes not in CHANGE_STREAMS:
            raise UnknownNameError("change stream", changes, CHANGE_STREAMS)
        if changes == "curated" and change_failure_rate is not None:
            raise ConfigurationError("change_failure_rate applies to the production change stream only")
        if change_failure_rate is None and changes == "production":
            change_failure_rate = CHANGE_FAILURE_RATE
        if change_failure_rate is not None and not 0.0 < change_failure_rate <= 1.0:
            raise ConfigurationError(f"change_failure_rate must be in (0, 1], got {change_failure_rate!r}")
        if catalog is None:
            from ..catalog import load_catalog

            catalog = load_catalog()
        if app not in catalog.faults:
            raise UnknownNameError("app", app, catalog.faults)
        if not intensity > 0:
            raise ConfigurationError(f"intensity must be > 0, got {intensity!r}")
        if not injection_minutes > 0 or observation_minutes < 0:
            raise ConfigurationError(
                f"injection_minutes must be > 0 and observation_minutes >= 0, got {injection_minutes!r}, "
                f"{observation_minutes!r}"
            )
        injection_s = int(round(injection_minutes * 60))
        observation_s = int(round(observation_minutes * 60))
        run_s = injection_s + observation_s
        rng = np.random.default_rng(seed) if rng is None else rng
        arrivals_rng, faults_rng, benign_rng = rng.spawn(3)

        pool = list(catalog.faults[app])
        n = min(fault_count(intensity, injection_minutes, arrivals_rng), len(pool))
        starts = arrival_times(n, injection_s, arrivals_rng)
        wanted = durations(duration_quantiles(n, faults_rng))
        lo_s = np.array([f.duration.min_s for f in pool])
        hi_s = np.array([f.duration.max_s for f in pool])
        keys = [occupied_keys(f) for f in pool]
        unused = np.ones(len(pool), dtype=bool)
        held: list[tuple[int, frozenset[str]]] = []  # (planned end, keys) of placed faults
        placed: list[ScheduledFault] = []
        for start, want in zip(starts, wanted):
            s, d = int(start), int(want)
            busy = frozenset().union(*(k for end, k in held if end > s))
            free = [i for i in np.flatnonzero(unused) if not (keys[i] & busy)]
            if not free:
                continue
            fitting = [i for i in free if lo_s[i] <= d <= hi_s[i]] or free
            i = int(fitting[int(faults_rng.integers(len(fitting)))])
            unused[i] = False
            fault = pool[i]
            end = s + int(min(hi_s[i], max(lo_s[i], d)))
            clipped = end > run_s
            end = min(end, run_s)
            held.append((end, keys[i]))
            placed.append(
                ScheduledFault(
                    fault_id=fault.id,
                    app=app,
                    target=fault.target,
                    mechanism=fault.mechanism,
                    category=fault.category,
                    artifact=fault.artifact,
                    start_s=s,
                    planned_end_s=end,
                    clipped=clipped,
                )
            )
        chosen = [pool[i] for i in np.flatnonzero(~unused)]
        if changes == "production":
            benign = plan_production_changes(
                catalog.app(app), pool, chosen, placed, injection_s, float(change_failure_rate), benign_rng
            )
        else:
            benign = _plan_benign(catalog.app(app), chosen, placed, run_s, benign_rng)
        return cls(
            app=app,
            seed=int(seed),
            injection_s=injection_s,
            observation_s=observation_s,
            faults=tuple(placed),
            benign=tuple(benign),
            intensity=float(intensity),
            changes=changes,
            change_failure_rate=change_failure_rate,
        )

    # ---- accessors for the simulator ------------------------------------------------------------

    def active_at(self, t: float) -> list[ScheduledFault]:
        """Faults active at `t` assuming no repair (``start_s <= t < planned_end_s``)."""
        return [f for f in self.faults if f.active_at(t)]

    def starting_between(self, t0: float, t1: float) -> list[ScheduledFault]:
        """Faults injected in ``[t0, t1)`` -- half-open, so consecutive ticks see each once."""
        return [f for f in self.faults if t0 <= f.start_s < t1]

    def ending_between(self, t0: float, t1: float) -> list[ScheduledFault]:
        """Faults the orchestrator reverts in ``[t0, t1)`` (if not repaired earlier)."""
        return [f for f in self.faults if t0 <= f.planned_end_s < t1]

    def benign_between(self, t0: float, t1: float) -> list[BenignChange]:
        return [b for b in self.benign if t0 <= b.time_s < t1]

    def events(self) -> list[ScheduleEvent]:
        """Every inject, revert and benign event, by time; at one instant reverts come first
        (freeing their keys), then injections, then benign changes."""
        if not self._events:
            rank = {"revert": 0, "benign_end": 0, "inject": 1, "benign": 2}
            evs = [ScheduleEvent(f.start_s, "inject", f) for f in self.faults]
            evs += [ScheduleEvent(f.planned_end_s, "revert", f) for f in self.faults]
            evs += [ScheduleEvent(b.time_s, "benign", b) for b in self.benign]
            evs += [
                ScheduleEvent(min(b.until_s, self.run_s), "benign_end", b)
                for b in self.benign
                if b.until_s is not None
            ]

            def order(e: ScheduleEvent) -> tuple[int, int, str]:
                item = e.item
                name = (
                    item.fault_id if isinstance(item, ScheduledFault) else item.to_revision or item.artifact
                )
                return e.time_s, rank[e.kind], name

            object.__setattr__(self, "_events", tuple(sorted(evs, key=order)))
        return list(self._events)

    def fault(self, fault_id: str) -> ScheduledFault:
        for f in self.faults:
            if f.fault_id == fault_id:
                return f
        raise UnknownNameError("scheduled fault", fault_id, [f.fault_id for f in self.faults])

    # ---- statistics -----------------------------------------------------------------------------

    def concurrency(self, t0: int = 0, t1: int | None = None, step_s: int = int(TICK_S)) -> np.ndarray:
        """Number of faults active at ``t0, t0 + step_s, ... < t1`` assuming no repair."""
        t1 = self.run_s if t1 is None else t1
        ts = np.arange(t0, t1, step_s)
        if not self.faults:
            return np.zeros(len(ts), dtype=np.int64)
        starts = np.array([f.start_s for f in self.faults])
        ends = np.array([f.planned_end_s for f in self.faults])
        return ((starts[None, :] <= ts[:, None]) & (ends[None, :] > ts[:, None])).sum(axis=1)

    def stats(self) -> dict[str, Any]:
        """Headline numbers comparable to SRE-Marathon §4.

        ``mean_concurrency`` is the mean number of active faults over the injection window
        ``[0, injection_s)``, sampled every 5 s (one tick), assuming no repair (every fault runs to
        its planned end). Why: the schedule, not the agent, should be characterized; the injection
        window is where the paper's "increasing intensity" applies, and including the 30-minute
        observation tail would only dilute the mean with the drain-down. ``peak_concurrency`` is the
        maximum over the whole run on the same 5 s grid. ``mean_concurrency_run`` (whole run) is
        given for reference.
        """
        inj = self.concurrency(0, self.injection_s)
        run = self.concurrency(0, self.run_s)
        return {
            "faults": len(self.faults),
            "mean_concurrency": float(inj.mean()) if len(inj) else 0.0,
            "peak_concurrency": int(run.max()) if len(run) else 0,
            "mean_concurrency_run": float(run.mean()) if len(run) else 0.0,
            "window": (
                f"mean over [0, {self.injection_s}) s every {int(TICK_S)} s, no repair; "
                "peak over the whole run"
            ),
            "categories": dict(sorted(Counter(f.category for f in self.faults).items())),
            "benign": len(self.benign),
            "benign_planes": dict(sorted(Counter(b.plane for b in self.benign).items())),
            "change_failure_rate": self.measured_change_failure_rate(),
            "clipped": sum(f.clipped for f in self.faults),
        }

    def measured_change_failure_rate(self) -> float | None:
        """Faulty changes / all changes on the agent-visible planes (None when nothing changed)."""
        faulty = sum(change_plane(f.mechanism) is not None for f in self.faults)
        total = faulty + len(self.benign)
        return faulty / total if total else None

    # ---- serialization --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict (ints, floats, strings, lists) that `from_dict` restores exactly."""
        return {
            "schema_version": SCHEMA_VERSION,
            "app": self.app,
            "seed": self.seed,
            "injection_s": self.injection_s,
            "observation_s": self.observation_s,
            "intensity": self.intensity,
            "changes": self.changes,
            "change_failure_rate": self.change_failure_rate,
            "faults": [asdict(f) for f in self.faults],
            "benign": [asdict(b) for b in self.benign],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FaultSchedule:
        version = data.get("schema_version")
        if version not in (1, SCHEMA_VERSION):  # 1: before the change stream (curated)
            raise ConfigurationError(f"fault schedule schema_version {version!r} is not {SCHEMA_VERSION}")
        return cls(
            app=str(data["app"]),
            seed=int(data["seed"]),
            injection_s=int(data["injection_s"]),
            observation_s=int(data["observation_s"]),
            intensity=float(data.get("intensity", 1.0)),
            faults=tuple(ScheduledFault(**f) for f in data["faults"]),
            benign=tuple(BenignChange(**b) for b in data["benign"]),
            changes=str(data.get("changes", "curated")),
            change_failure_rate=data.get("change_failure_rate"),
        )


# --------------------------------------------------------------------------------------------------
# report


def leaderboard_schedules(catalog: Catalog | None = None) -> dict[str, FaultSchedule]:
    """The schedule of each app for its leaderboard seed and the leaderboard's windows."""
    if catalog is None:
        from ..catalog import load_catalog

        catalog = load_catalog()
    lb = catalog.leaderboard
    return {
        app: FaultSchedule.generate(
            catalog,
            app,
            lb.seed_for(app),
            injection_minutes=lb.injection_minutes,
            observation_minutes=lb.observation_minutes,
        )
        for app in catalog.apps
    }


def schedule_stats_table(catalog: Catalog | None = None) -> str:
    from ..core.table import format_table

    rows = []
    for app, sched in leaderboard_schedules(catalog).items():
        st = sched.stats()
        cats = ", ".join(
            f"{k} {v}" for k, v in sorted(st["categories"].items(), key=lambda kv: (-kv[1], kv[0]))
        )
        rows.append(
            [
                app,
                sched.seed,
                st["faults"],
                f"{st['mean_concurrency']:.2f}",
                st["peak_concurrency"],
                st["benign"],
                cats,
            ]
        )
    return format_table(
        ["app", "seed", "faults", "mean", "peak", "benign", "categories"],
        rows,
        title="Leaderboard schedules (mean: injection window, 5 s grid, no repair)",
    )


def print_schedule_stats(catalog: Catalog | None = None) -> None:
    print(schedule_stats_table(catalog))


if __name__ == "__main__":
    print_schedule_stats()


__all__ = [
    "BENIGN_PER_HOUR",
    "COUNT_JITTER",
    "DURATION_SHAPE",
    "EventKind",
    "DURATION_RANGE",
    "FAULTS_PER_HOUR",
    "RAMP",
    "SCHEMA_VERSION",
    "BenignChange",
    "FaultSchedule",
    "ScheduleEvent",
    "ScheduledFault",
    "arrival_times",
    "artifact_key",
    "leaderboard_schedules",
    "occupied_keys",
    "print_schedule_stats",
    "schedule_stats_table",
    "touched_artifacts",
]
