"""How loud each ORCA flag is: failed user requests in the 30 minutes after it flips, alone.

Why alone: in the world most flips overlap other flags (d6 turns on five), so a flag's own count is
measured in an isolated run under the world's load (`load.run_orca_flags`) and intensities
(`intensity`). The count is what the proxy's span metrics show (`traces_span_metrics_calls_total` of
frontend-proxy's SERVER spans with status ERROR), seeded, so the same on every machine.
The reference's counts per flag are in `catalog/orca/flag_volumes.yaml`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .load import run_orca_flags

FLIP_S = 600.0
WINDOW_S = 1800.0
SEEDS = 8
_ERRORS = {
    "service_name": "frontend-proxy",
    "span_kind": "SPAN_KIND_SERVER",
    "status_code": "STATUS_CODE_ERROR",
}


def _increase(store, t0: float, t1: float) -> float:
    ids = store.select("traces_span_metrics_calls_total", _ERRORS)
    if len(ids) == 0:
        return 0.0
    _, v = store.range(ids, t0, t1)
    v = np.nan_to_num(v)
    return float((v[:, -1] - v[:, 0]).sum())


def _flip_errors(flag: str, value: str, seed: int) -> float:
    run = run_orca_flags(seed, [(FLIP_S, flag, value)], FLIP_S + WINDOW_S)
    store = run.metrics
    before = _increase(store, 0.0, FLIP_S) * (WINDOW_S / FLIP_S)
    return _increase(store, FLIP_S, FLIP_S + WINDOW_S) - before


@lru_cache(maxsize=64)
def flip_errors(flag: str, value: str, seeds: int = SEEDS) -> float:
    """Mean failed user requests in the WINDOW_S after `flag` is set to `value` (less the same span
    of the run before the flip: background failures), over `seeds` runs: at the demo's load a 10%
    fault fails a handful of requests, so one run's count is mostly Poisson noise."""
    return round(sum(_flip_errors(flag, value, s) for s in range(seeds)) / seeds, 2)
