"""A fresh ORCA flag schedule, drawn by a seed from the published schedule's own distribution.

How: every fresh day copies the structure of one published day (drawn among the published ten):
its scenarios, each flag's on/step/off offsets within its scenario (so flip durations, cascades and
canary steps keep the published shapes), the scenario's category and the clock drift of its rows.
Each scenario is then moved as a whole by up to an hour on the published five-minute grid (the
daily rhythm stays the published one), and its flags are drawn anew, weighted by how often the
published schedule uses each flag, among the flags that have the scenario's variants (a step of
`paymentFailure` 10% -> 50% stays a payment step) and are not busy at that time. The flags are the
ones the complaint templates cover (`questions.yaml`), so every event gets its complaints.

Event ids end in ``-w<seed>``: a fresh task never shares an id, or the public task key derived from
it, with a published task. The tasks are built from the schedule by the published rules
(`tasks.world_schedule` redraws, with the next attempt number, a schedule whose task pool cannot
fill the published counts).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from ..catalog import load_catalog
from . import APP
from .data import ScheduleEntry, ScheduleFile, load_questions, load_schedule_file
from .schedule import MAX_DAYS, OrcaSchedule, build_schedule
from .world_spec import world_tag

SHIFT_STEPS = 12  # a scenario moves by up to 12 x 5 min = 1 h either way
GRID_MIN = 5
DAY_MIN = 1440
PREFIX = {  # scenario id prefix per published category (the published ids' own letters)
    "isolated": "i",
    "independent": "n",
    "conflicting": "c",
    "conflicting_cascading": "cc",
    "independent_cascading": "ic",
    "deployment": "dep",
}


@dataclass(frozen=True)
class _Row:
    minute: int  # within the day
    flag: str
    value: str
    drift_s: int


@dataclass(frozen=True)
class _Scenario:
    code: str  # the published scenario id without its day, e.g. "cc1"
    category: str
    rows: tuple[_Row, ...]


def _published_days(data: ScheduleFile) -> dict[int, list[_Scenario]]:
    """Per published day, its scenarios in order, each row with its effective clock drift."""
    drift = 0
    by_day: dict[int, dict[str, list[_Row]]] = defaultdict(dict)
    category: dict[tuple[int, str], str] = {}
    rows = sorted(
        data.events, key=lambda e: ((e.day - 1) * DAY_MIN + _minutes(e.time), e.value != "off", e.id)
    )
    for r in rows:
        if r.drift_s is not None:
            drift = r.drift_s
        code = r.id.split("-")[1]
        by_day[r.day].setdefault(code, []).append(_Row(_minutes(r.time), r.flag, r.value, drift))
        category[(r.day, code)] = r.category
    return {
        day: [_Scenario(code, category[(day, code)], tuple(rs)) for code, rs in scen.items()]
        for day, scen in sorted(by_day.items())
    }


def _minutes(hhmm: str) -> int:
    h, m = hhmm.split(":")
    return int(h) * 60 + int(m)


def _hhmm(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


class _Busy:
    """When each flag is held by a scenario already placed (absolute minutes, half-open)."""

    MARGIN = 15  # keep one flag's scenarios apart by more than the judge's date tolerance (10 min)

    def __init__(self) -> None:
        self.spans: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def free(self, flag: str, start: int, end: int) -> bool:
        return all(end + self.MARGIN <= s or start >= e + self.MARGIN for s, e in self.spans[flag])

    def hold(self, flag: str, start: int, end: int) -> None:
        self.spans[flag].append((start, end))


def _held(rows: list[_Row], flag: str, day0: int, run_end: int) -> tuple[int, int]:
    """[first change, its off) of `flag` in a placed scenario; to the end of the run if never off."""
    times = [day0 + r.minute for r in rows if r.flag == flag]
    offs = [day0 + r.minute for r in rows if r.flag == flag and r.value == "off"]
    return min(times), (max(offs) if offs else run_end)


def draw_schedule(seed: int, attempt: int = 0, days: int = 6) -> OrcaSchedule:
    """The fresh schedule of `seed` (attempt `attempt` of it); the same arguments, the same schedule."""
    data = load_schedule_file()
    published = _published_days(data)
    rng = np.random.default_rng([int(seed), int(attempt), 0x0C4A])
    variants = {f.name: set(f.variants) | {"off"} for f in load_catalog().app(APP).feature_flags}
    flags = sorted(load_questions().flags)
    weight = Counter(r.flag for r in data.events if r.value != "off")
    busy = _Busy()
    run_end = min(days, MAX_DAYS) * DAY_MIN
    entries: list[ScheduleEntry] = []
    tag = world_tag(seed)
    for day in range(1, days + 1):
        template_day = sorted(published)[int(rng.integers(len(published)))]
        day0 = (day - 1) * DAY_MIN
        letters: Counter[str] = Counter()
        for scen in published[template_day]:
            lo = min(r.minute for r in scen.rows)
            hi = max(r.minute for r in scen.rows)
            steps = np.arange(-SHIFT_STEPS, SHIFT_STEPS + 1) * GRID_MIN
            steps = steps[(lo + steps >= 0) & (hi + steps < DAY_MIN)]
            shift = int(steps[int(rng.integers(len(steps)))])
            rows = [_Row(r.minute + shift, r.flag, r.value, r.drift_s) for r in scen.rows]
            held = {old: _held(rows, old, day0, run_end) for old in dict.fromkeys(r.flag for r in rows)}
            mapping: dict[str, str] = {}
            for old, (start, end) in held.items():
                values = {r.value for r in rows if r.flag == old}
                pool = [
                    f
                    for f in flags
                    if values <= variants.get(f, set())
                    and f not in mapping.values()
                    and busy.free(f, start, end)
                ]
                if not pool:
                    mapping = {}
                    break
                p = np.array([weight.get(f, 0) + 0.5 for f in pool], dtype=float)
                mapping[old] = pool[int(rng.choice(len(pool), p=p / p.sum()))]
            if not mapping:  # no free flag with these variants now: the day goes without this scenario
                continue
            prefix = PREFIX.get(scen.category, "x")
            letters[prefix] += 1
            code = f"{prefix}{letters[prefix]}"
            for old, new in mapping.items():
                busy.hold(new, *held[old])
            for j, r in enumerate(rows):
                flag = mapping[r.flag]
                entries.append(
                    ScheduleEntry(
                        id=f"d{day}-{code}-{flag}-{j:02d}{tag}",
                        category=scen.category,
                        day=day,
                        time=_hhmm(r.minute),
                        flag=flag,
                        value=r.value,
                        description=f"drawn from published day {template_day}, scenario {scen.code}",
                        drift_s=r.drift_s,
                    )
                )
    fresh = data.model_copy(
        update={
            "events": entries,
            "themes": {
                str(d): f"fresh day {d} (world seed {seed}, attempt {attempt})" for d in range(1, days + 1)
            },
        }
    )
    return build_schedule(fresh, days)


__all__ = ["draw_schedule"]
