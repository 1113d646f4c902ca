"""The simulated days behind ORCA-bench: one Astronomy Shop run with the flag schedule applied.

Why once per process: six days of telemetry take about a minute to simulate and a few hundred MiB
to hold; every task reads the same recorded run (ORCA's snapshots), so `orca_world` caches it and
tasks only cap what their tools may see.
"""

from __future__ import annotations

import datetime as dt
import math
from functools import lru_cache

from ..catalog import load_catalog
from ..clock import Epoch
from ..sim.simulator import Simulator
from . import APP, DAY_S
from .schedule import OrcaSchedule, orca_schedule

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


def simulate(schedule: OrcaSchedule, seed: int = WORLD_SEED, progress: bool = False) -> Simulator:
    """Run the whole schedule; returns the simulator at the end of the last day (read-only from then on)."""
    catalog = load_catalog()
    epoch = Epoch.at(schedule.utc(0).replace(tzinfo=dt.UTC))  # logs and metrics carry the schedule's dates
    sim = Simulator(catalog, APP, seed, load_profile=daily_load, telemetry=True, epoch=epoch)
    defaults = {f.name: f.default for f in sim.app.feature_flags}
    changes = list(schedule.changes)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=schedule.days, desc="simulating ORCA days", unit="day")
    done_days = 0
    for c in changes:
        sim.advance_to(c.time_s)
        value = defaults[c.flag] if c.value == "off" else c.value
        sim.ship_flag(c.flag, value, f"flagd: set {c.flag} to {value}", "", author="ci")
        if bar is not None and int(sim.now // DAY_S) > done_days:
            bar.update(int(sim.now // DAY_S) - done_days)
            done_days = int(sim.now // DAY_S)
    sim.advance_to(schedule.run_s)
    if bar is not None:
        bar.update(schedule.days - done_days)
        bar.close()
    return sim


def orca_world(days: int = 6, seed: int = WORLD_SEED) -> Simulator:
    """The cached run (one per process; the key is normalised so orca_world() is orca_world(6))."""
    return _world(int(days), int(seed))


@lru_cache(maxsize=1)
def _world(days: int, seed: int) -> Simulator:
    return simulate(orca_schedule(days), seed)
