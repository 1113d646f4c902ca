"""The ORCA-bench flag schedule on the simulated clock (t = 0 s is day 1, 00:00 local time).

Why not the orchestrator's `FaultSchedule`: ORCA events set a flag to a *value* (paymentFailure
10% -> 50% -> 100%, a step overwrites the previous one) over days, and their times are fixed by the
published schedule rather than sampled; a flag change list drives the simulator directly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache

from ..core.errors import ConfigurationError
from . import DAY_S
from .data import ScheduleFile, load_schedule_file

MAX_DAYS = 10


@dataclass(frozen=True)
class FlagEvent:
    """A flag set to a non-off value: one rubric-bearing event of the published schedule."""

    id: str
    scenario: str  # e.g. d2-cc1
    category: str  # the repository's category (six kinds)
    scenario_type: str  # the paper's five types
    day: int
    flag: str
    value: str
    on_s: int
    end_s: int  # next change of the same flag (an off or the next value), or the end of the run
    ended_by_off: bool  # ends with an explicit "off" event (post-incident controls need one)

    def active_at(self, t: float) -> bool:
        return self.on_s <= t < self.end_s

    def overlaps(self, t0: float, t1: float) -> bool:
        return self.on_s < t1 and self.end_s > t0


@dataclass(frozen=True)
class FlagChange:
    time_s: int
    flag: str
    value: str  # "off" restores the flag's default
    event_id: str


@dataclass(frozen=True)
class OrcaSchedule:
    days: int
    events: tuple[FlagEvent, ...]  # non-off events by time
    changes: tuple[FlagChange, ...]  # every flag change by time
    utc_offset_hours: int
    epoch_local: str
    themes: dict[str, str]

    @property
    def run_s(self) -> int:
        return self.days * DAY_S

    def event(self, event_id: str) -> FlagEvent:
        for e in self.events:
            if e.id == event_id:
                return e
        from ..core.errors import UnknownNameError

        raise UnknownNameError("ORCA event", event_id, [e.id for e in self.events])

    def active_at(self, t: float) -> list[FlagEvent]:
        return [e for e in self.events if e.active_at(t)]

    def overlapping(self, t0: float, t1: float) -> list[FlagEvent]:
        return [e for e in self.events if e.overlaps(t0, t1)]

    def quiet_window(self, t: float) -> tuple[int | None, int | None]:
        """(latest flag-off time <= t, earliest flag-on time > t) over the whole schedule."""
        offs = [c.time_s for c in self.changes if c.value == "off" and c.time_s <= t]
        ons = [c.time_s for c in self.changes if c.value != "off" and c.time_s > t]
        return (max(offs) if offs else None, min(ons) if ons else None)

    def scenarios(self) -> dict[str, str]:
        """Scenario id -> scenario type, in schedule order."""
        out: dict[str, str] = {}
        for e in self.events:
            out.setdefault(e.scenario, e.scenario_type)
        return out

    # ---- the local clock (tasks and issue texts speak ET)
    def local(self, t: float) -> dt.datetime:
        return dt.datetime.fromisoformat(self.epoch_local) + dt.timedelta(seconds=int(t))

    def utc(self, t: float) -> dt.datetime:
        return self.local(t) - dt.timedelta(hours=self.utc_offset_hours)


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def build_schedule(data: ScheduleFile, days: int = 6) -> OrcaSchedule:
    """Place the first `days` days of the published schedule on the simulated clock."""
    if not 1 <= days <= MAX_DAYS:
        raise ConfigurationError(f"days must be in 1..{MAX_DAYS}, got {days}")
    rows = sorted(data.events, key=lambda e: ((e.day - 1) * 1440 + _minutes(e.time), e.value != "off", e.id))
    drift = 0
    timed: list[tuple[int, str, str, str, object]] = []
    for r in rows:
        if r.drift_s is not None:
            drift = r.drift_s
        if r.day > days:
            continue
        timed.append(((r.day - 1) * DAY_S + _minutes(r.time) * 60 + drift, r.flag, r.value, r.id, r))
    timed.sort(key=lambda x: (x[0], x[2] != "off", x[3]))
    changes = tuple(FlagChange(t, f, v, i) for t, f, v, i, _ in timed)
    run_s = days * DAY_S
    events = []
    for k, (t, flag, value, eid, row) in enumerate(timed):
        if value == "off":
            continue
        nxt = next(((t2, v2) for t2, f2, v2, _, _ in timed[k + 1 :] if f2 == flag), None)
        end, by_off = (nxt[0], nxt[1] == "off") if nxt else (run_s, False)
        events.append(
            FlagEvent(
                eid,
                "-".join(eid.split("-")[:2]),
                row.category,
                data.scenario_types[row.category],
                row.day,
                flag,
                value,
                t,
                min(end, run_s),
                by_off,
            )
        )
    return OrcaSchedule(
        days, tuple(events), changes, data.utc_offset_hours, data.epoch_local, dict(data.themes)
    )


def orca_schedule(days: int = 6) -> OrcaSchedule:
    return _schedule(int(days))


@lru_cache(maxsize=8)
def _schedule(days: int) -> OrcaSchedule:
    return build_schedule(load_schedule_file(), days)
