"""The simulated days behind ORCA-bench: one Astronomy Shop run with the flag schedule applied.

Why once: six days of telemetry take seconds to a minute to simulate and a few hundred MiB to
hold; every task reads the same recorded run (ORCA's snapshots), so `orca_world` keeps it per
process and on disk (`world_cache`: a new process loads it in about a second) and tasks only cap
what their tools may see.
"""

from __future__ import annotations

import datetime as dt
import math
from functools import lru_cache

from ..backends.sim import SimBackend, run_flag_schedule
from ..catalog import load_catalog
from ..clock import Epoch
from . import APP, DAY_S
from .schedule import OrcaSchedule, orca_schedule
from .world_cache import load_or_build, world_key

WORLD_SEED = 2026_04_19
LOAD_STEP_S = 900  # the load level changes every 15 min (the traffic model caches between changes)
WEEKEND = (0, 6)  # day 1 is a Sunday; day 7 a Saturday


def daily_load(t: float) -> float:
    """Load multiplier: a daily wave (low at 03:00, peak at 15:00), lighter on the weekend."""
    q = math.floor(t / LOAD_STEP_S) * LOAD_STEP_S
    hour = (q % DAY_S) / 3600.0
    level = 0.6 - 0.4 * math.cos(2 * math.pi * (hour - 3.0) / 24.0)
    day = int(q // DAY_S)
    return round(level * (0.8 if day % 7 in WEEKEND else 1.0), 4)


def simulate(schedule: OrcaSchedule, seed: int = WORLD_SEED, progress: bool = False) -> SimBackend:
    """Run the whole schedule; returns the run at the end of the last day (read-only from then on)."""
    epoch = Epoch.at(schedule.utc(0).replace(tzinfo=dt.UTC))  # logs and metrics carry the schedule's dates
    defaults = {f.name: f.default for f in load_catalog().app(APP).feature_flags}
    changes = [
        (c.time_s, c.flag, defaults[c.flag] if c.value == "off" else c.value) for c in schedule.changes
    ]
    if not progress:
        return run_flag_schedule(APP, seed, changes, schedule.run_s, load_profile=daily_load, epoch=epoch)
    from tqdm import tqdm

    bar = tqdm(total=schedule.days, desc="simulating ORCA days", unit="day")
    done = [0]

    def on_change(now: float) -> None:
        if int(now // DAY_S) > done[0]:
            bar.update(int(now // DAY_S) - done[0])
            done[0] = int(now // DAY_S)

    world = run_flag_schedule(
        APP, seed, changes, schedule.run_s, load_profile=daily_load, epoch=epoch, on_change=on_change
    )
    bar.update(schedule.days - done[0])
    bar.close()
    return world


def orca_world(days: int = 6, seed: int = WORLD_SEED) -> SimBackend:
    """The cached run (one per process and on disk; the key is normalised so orca_world() is
    orca_world(6))."""
    return _world(int(days), int(seed))


@lru_cache(maxsize=1)
def _world(days: int, seed: int) -> SimBackend:
    from ..bundle import catalog_digest

    key = world_key(days, seed, catalog_digest(load_catalog()))
    return load_or_build(key, lambda: simulate(orca_schedule(days), seed))
