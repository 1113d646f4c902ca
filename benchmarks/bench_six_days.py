"""Memory of six simulated days of Astronomy Shop telemetry (the ORCA-bench setting), and its speed."""

from __future__ import annotations

import time
import tracemalloc

from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.sim.simulator import Simulator

DAYS = 6


def main() -> None:
    cat = load_catalog()
    tracemalloc.start()
    t0 = time.perf_counter()
    sim = Simulator(cat, "astronomy_shop", 2026)
    sim.advance_to(DAYS * 86400)
    wall = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    print(f"astronomy_shop, {DAYS} simulated days: {wall:.1f} s wall ({DAYS * 86400 / wall:,.0f}x real time)")
    print(
        f"  series {sim.store.series_count}, metric values {sim.store.nbytes / 2**20:.1f} MiB, "
        f"peak Python heap {peak / 2**20:.1f} MiB"
    )


if __name__ == "__main__":
    main()
