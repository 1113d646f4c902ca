"""Validation harness (the paper's Appendix C): every catalog fault, alone, on a warmed-up system.

For each fault: (1) its symptom probe fails within its window while requests continue to be
served: at most `MAX_SEVERITY` of the entry point's requests are degraded (failed, or slower than
2.5 s, the simulator's slow threshold) over the window, unless the fault is a full outage by design
(`Fault.full_outage`: scale-to-zero of a service every request needs); (2) the probe recovers after
the revert;
(3) at least one of its valid remedies repairs it (the probe is healthy again and stays so,
or, for faults that never fail a probe, the responsible artifact is back to its good state).

It lives with the backends because it drives its own simulators, which only `sim/` and
`backends/` may build (`docs/ARCHITECTURE.md`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..catalog import App, Catalog
from ..catalog.faults import Fault, SymptomProbe
from ..core.clock import TICK_S
from ..sim.probes import ProbeWindow
from ..sim.simulator import Simulator, SimulatorError
from ..sim.warm_start import healthy_at

WARMUP_S = 120.0
RECOVERY_S = 600.0
STABLE_S = 60.0
MAX_SEVERITY = 0.5  # "observable failures while requests continue to be served" (SRE-Marathon §2)


@dataclass(frozen=True)
class FaultCheck:
    fault_id: str
    app: str
    mechanism: str
    fails: bool
    entry_serves: bool
    recovers: bool
    repaired_by: str | None
    first_fail_s: float | None
    note: str = ""

    observable: bool = True
    severity: float = 0.0  # share of entry-point requests degraded over the window (`fault_severity`)

    @property
    def passed(self) -> bool:
        shows = self.fails if self.observable else not self.fails  # a symptomless fault must stay symptomless
        return shows and self.entry_serves and self.recovers and self.repaired_by is not None


def _served(sim: Simulator) -> float:
    """Share of the entry point's requests served in the last tick."""
    res = sim.last
    total = res.rt_rate.sum()
    return float(((1 - res.rt_fail) * res.rt_rate).sum() / total) if total else 0.0


def _heals(windows: Iterable[ProbeWindow], probe: SymptomProbe, seconds: float = STABLE_S) -> bool:
    """True once `probe` has been healthy for `seconds` in a row over `windows` (one per tick); the
    windows are read lazily, so nothing is simulated past that point."""
    streak = 0.0
    for window in windows:
        streak = 0.0 if window.failing(probe) else streak + TICK_S
        if streak >= seconds:
            return True
    return False


def _live_windows(sim: Simulator, deadline: float) -> Iterator[ProbeWindow]:
    """The simulator's probe window after each tick it is advanced, up to `deadline`."""
    while sim.now + TICK_S <= deadline:
        sim.advance_to(sim.now + TICK_S)
        yield sim.probes


def _injected_alone(app: App, fault: Fault, seed: int) -> Simulator:
    """A simulator warmed up for `WARMUP_S`, with `fault` just injected (no other fault, no telemetry)."""
    sim = healthy_at(app, seed, WARMUP_S)
    sim.inject(fault)
    return sim


class AloneRun:
    """`fault` injected alone into the warmed-up system and reverted at the end of its shortest
    window: the one run its severity, every probe's values and the harness's window and recovery
    are read from. A probe only reads, so the run is the same whichever probe is judged (the fault
    generator judges several probes and remedies of one fault on it); the ticks after the revert
    are simulated as far as a reader asks."""

    def __init__(self, app: App, fault: Fault, seed: int = 0):
        self.app, self.fault, self.seed = app, fault, seed
        sim = self._sim = _injected_alone(app, fault, seed)
        self.healthy = sim.probes.snapshot()  # the probe window just before the injection
        self.times: list[float] = []  # each tick's time
        self.windows: list[ProbeWindow] = []  # the probe window after each tick
        self.served = 1.0  # the lowest share of entry requests served in a tick of the window
        before = sim.degraded.copy()
        while sim.now + TICK_S <= WARMUP_S + float(fault.duration.min_s):
            self._tick()
            self.served = min(self.served, _served(sim))
        self.severity = _degraded_share(sim, before)
        self.in_window = len(self.times)  # ticks of the window; the ones after follow the revert
        self.reverted_at = sim.now
        self._reverted = False

    def _tick(self) -> None:
        self._sim.advance_to(self._sim.now + TICK_S)
        self.times.append(self._sim.now)
        self.windows.append(self._sim.probes.snapshot())

    def window(self, i: int) -> ProbeWindow:
        """The probe window after tick `i` (a tick after the fault's window is simulated on demand)."""
        while len(self.windows) <= i:
            if not self._reverted:
                self._sim.revert(self.fault.id)
                self._reverted = True
            self._tick()
        return self.windows[i]

    def first_fail(self, probe: SymptomProbe) -> float | None:
        """When `probe` first failed within the window (None: it never did)."""
        return next((t for t, w in zip(self.times[: self.in_window], self.windows) if w.failing(probe)), None)

    def recovers(self, probe: SymptomProbe, seconds: float = STABLE_S) -> bool:
        """Whether `probe` was healthy for `seconds` in a row within `RECOVERY_S` of the revert."""
        return _heals(self._recovery_windows(), probe, seconds)

    def _recovery_windows(self) -> Iterator[ProbeWindow]:
        t, i = self.reverted_at, self.in_window
        while t + TICK_S <= self.reverted_at + RECOVERY_S:
            yield self.window(i)
            t, i = self.times[i], i + 1


def _degraded_share(sim: Simulator, before) -> float:
    n, bad = (sim.degraded - before).tolist()
    return float(bad / n) if n else 0.0


def fault_severity(app: App, fault: Fault, seed: int = 0) -> float:
    """Share of entry-point requests degraded (failed, or slower than 2.5 s) while `fault` runs
    alone for its shortest window: how far from "requests continue to be served" it is."""
    return AloneRun(app, fault, seed).severity


_SAME_RUN_EXCLUDES = {"probe", "remedies"}  # what `check_fault` judges, not what is injected


def check_fault(
    app: App, fault: Fault, seed: int = 0, *, stop_early: bool = False, alone: AloneRun | None = None
) -> FaultCheck:
    """Run the harness on `fault`. With `stop_early` a check returns as soon as it cannot pass (the
    fault generator asks only `passed`): the steps not run are reported as failed, and the note
    says so. `alone`: the fault's run (`AloneRun`, of the same injection at `seed`), when several
    probes or remedies of one fault are checked."""
    if alone is None:
        alone = AloneRun(app, fault, seed)
    elif alone.fault.model_dump(exclude=_SAME_RUN_EXCLUDES) != fault.model_dump(exclude=_SAME_RUN_EXCLUDES):
        raise ValueError(f"the run given is of another fault than {fault.id}")
    elif alone.app is not app or alone.seed != seed:
        raise ValueError(
            f"the run given of {fault.id} is of another app or seed (seed {alone.seed}, not {seed})"
        )
    window = float(fault.duration.min_s)
    # (1) + (2): injected alone, watched for the window, reverted, watched to recovery
    first, severity = alone.first_fail(fault.probe), alone.severity
    entry_serves = fault.full_outage or (alone.served > 0.05 and severity <= MAX_SEVERITY)

    def result(recovers: bool, repaired_by: str | None, note: str) -> FaultCheck:
        if not entry_serves:
            note = f"degrades {severity:.0%} of entry requests (at most {MAX_SEVERITY:.0%})"
        return FaultCheck(
            fault.id,
            fault.app,
            fault.mechanism,
            first is not None,
            entry_serves,
            recovers,
            repaired_by,
            first,
            note,
            fault.observable,
            round(severity, 4),
        )

    shows = (first is not None) == fault.observable
    if stop_early and not (shows and entry_serves):
        return result(False, None, "stopped early: recovery and remedies not checked")
    recovers = alone.recovers(fault.probe)
    if stop_early and not recovers:
        return result(False, None, "stopped early: remedies not checked")
    # (3): inject again, wait for the symptom, apply each remedy until one repairs
    repaired_by, note = None, ""
    for remedy in fault.remedies:
        sim2 = _injected_alone(app, fault, seed)
        sim2.advance_to(WARMUP_S + min(window, (first - WARMUP_S + 30) if first else window))
        try:
            sim2.act.apply_remedy(remedy.action, remedy.target, remedy.artifact, remedy.value)
        except SimulatorError as exc:
            note = f"{remedy.action}: {exc}"
            continue
        deadline = sim2.now + RECOVERY_S
        if not fault.observable:  # repaired when the responsible artifact is back to its good state
            sim2.advance_to(sim2.now + 180)
            if sim2.mechanics.artifact_restored(sim2.applied[fault.id]):
                repaired_by = remedy.action
                break
            note = f"{remedy.action} did not restore {fault.artifact}"
            continue
        if _heals(_live_windows(sim2, deadline), fault.probe):
            repaired_by = remedy.action
            break
        note = (
            f"{remedy.action} did not restore the probe "
            f"({fault.probe.kind}={sim2.probes.value(fault.probe):.3g})"
        )
    return result(recovers, repaired_by, note)


def validate_catalog(
    catalog: Catalog, apps: list[str] | None = None, progress: bool = True
) -> list[FaultCheck]:
    from tqdm import tqdm

    faults = [f for f in catalog.all_faults() if apps is None or f.app in apps]
    return [
        check_fault(catalog.apps[f.app], f)
        for f in tqdm(faults, desc="validating faults", unit="fault", disable=not progress)
    ]
