"""The simulated days behind ORCA-bench: one Astronomy Shop run with the flag schedule applied.

Why once: six days of telemetry take seconds to a minute to simulate and a few hundred MiB to
hold; every task reads the same recorded run (ORCA's snapshots), so `orca_world` keeps it per
process and on disk (`world_cache`: a new process loads it in about a second) and tasks only cap
what their tools may see. The traffic is the demo's light load generator (`load`); the demo's
background noise (`noise`) is merged in where the tools read.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from functools import lru_cache

from ..backends.sim import SimBackend
from ..catalog import load_catalog
from ..core.clock import Epoch
from . import APP, DAY_S
from .load import run_orca_flags
from .noisy_backend import NoisyBackend
from .schedule import OrcaSchedule
from .tasks import world_schedule
from .world_cache import load_or_build, world_key
from .world_spec import PUBLISHED, WorldSpec

WORLD_SEED = 2026_04_19


def simulate(schedule: OrcaSchedule, seed: int = WORLD_SEED, progress: bool = False) -> SimBackend:
    """Run the whole schedule; returns the run at the end of the last day (read-only from then on)."""
    epoch = Epoch.at(schedule.utc(0).replace(tzinfo=dt.UTC))  # logs and metrics carry the schedule's dates
    defaults = {f.name: f.default for f in load_catalog().app(APP).feature_flags}
    changes = [
        (c.time_s, c.flag, defaults[c.flag] if c.value == "off" else c.value) for c in schedule.changes
    ]
    if not progress:
        return run_orca_flags(seed, changes, schedule.run_s, epoch=epoch)
    from tqdm import tqdm

    bar = tqdm(total=schedule.days, desc="simulating ORCA days", unit="day")
    done = [0]

    def on_change(now: float) -> None:
        if int(now // DAY_S) > done[0]:
            bar.update(int(now // DAY_S) - done[0])
            done[0] = int(now // DAY_S)

    world = run_orca_flags(seed, changes, schedule.run_s, epoch=epoch, on_change=on_change)
    bar.update(schedule.days - done[0])
    bar.close()
    return world


def world_noise_seed(world: WorldSpec) -> int:
    """The simulator's seed of `world`: the published world's own, else one derived from its seed."""
    if world.seed is None:
        return WORLD_SEED
    digest = hashlib.sha256(f"orca-world-noise:{world.seed}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def schedule_digest(schedule: OrcaSchedule) -> str:
    """What names a world's flag changes in its cache key."""
    blob = json.dumps([[c.time_s, c.flag, c.value] for c in schedule.changes], separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


def orca_world(days: int = 6, seed: int | None = None, world: WorldSpec = PUBLISHED) -> SimBackend:
    """The cached run of `world` (one per process and on disk; the key is normalised so orca_world()
    is orca_world(6)). `seed`: the simulator's seed (default: the world's, `world_noise_seed`)."""
    return _world(int(days), world_noise_seed(world) if seed is None else int(seed), world)


@lru_cache(maxsize=2)
def _world(days: int, seed: int, world: WorldSpec) -> SimBackend:
    from ..recording.bundle import catalog_digest

    schedule = world_schedule(days, world)
    label = "published" if world.published else schedule_digest(schedule)
    key = world_key(days, seed, catalog_digest(load_catalog()), schedule=label)
    run = load_or_build(key, lambda: simulate(schedule, seed))
    return NoisyBackend(run.sim, seed)
