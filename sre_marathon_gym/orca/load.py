"""The ORCA world's traffic: the demo's light Locust load, not SRE-Marathon's busy shop.

Why its own level: the reference ran Locust with 5 users and a 1-10 s wait, around the clock
(flag_signals.md, "Traffic is light"), so a 10% fault there yields a handful of failures per half
hour, not hundreds. The catalog's `requests_per_second` (20) is Marathon's load; ORCA scales it
down to the per-route rates the reference's telemetry shows:
- about 20 `/api/data` calls in 7 min (adFailure's rubric), which fixes the overall level through
  the catalog's request mix;
- about 16 checkouts per 30 min (paymentFailure 100% ~16, 50% 5-11, 10% 1-3 per window;
  paymentUnreachable 10-21), fewer than the catalog's mix gives at that level, so checkouts get
  their own multiplier. Every other route keeps the catalog's share.
The load is constant (Locust has no daily wave); Poisson sampling of the counts is the only jitter.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

from ..backends.sim import SimBackend, run_flag_schedule
from ..catalog import load_catalog
from ..core.clock import Epoch
from . import APP
from .intensity import orca_flag_table

GET_ADS_PER_S = 20 / 420.0  # about 20 /api/data calls in 7 minutes
CHECKOUTS_PER_S = 16 / 1800.0  # about 16 checkouts (single + multi) per 30 minutes
CHECKOUT_TYPES = ("checkout", "checkout_multi")


def _weights() -> dict[str, float]:
    rts = load_catalog().app(APP).request_types
    total = sum(r.weight for r in rts)
    return {r.name: r.weight / total for r in rts}


@lru_cache(maxsize=1)
def demo_load() -> float:
    """The load factor (of the catalog's requests_per_second) that gives the demo's /api/data rate."""
    rps = load_catalog().app(APP).load.requests_per_second
    return round(GET_ADS_PER_S / (rps * _weights()["get_ads"]), 6)


def checkout_mult() -> float:
    """Checkouts relative to the catalog's mix at `demo_load()`."""
    w = _weights()
    rps = load_catalog().app(APP).load.requests_per_second
    return round(CHECKOUTS_PER_S / (rps * demo_load() * sum(w[n] for n in CHECKOUT_TYPES)), 6)


def constant_load(t: float) -> float:
    """The simulator's load profile (module level: the world is pickled with it)."""
    return demo_load()


def request_mult() -> dict[str, float]:
    """Per request type, the multiplier on the catalog's mix (checkouts only)."""
    return {n: checkout_mult() for n in CHECKOUT_TYPES}


def run_orca_flags(
    seed: int,
    changes: Iterable[tuple[float, str, str]],
    end_s: float,
    *,
    telemetry: bool = True,
    epoch: Epoch | None = None,
    on_change: Callable[[float], None] | None = None,
) -> SimBackend:
    """`backends.sim.run_flag_schedule` under the demo's load and ORCA's flag intensities: each
    `(time_s, flag, value)` change ships through flagd's pipeline when its time comes. With
    telemetry the trace store keeps rare failures and flagd's impression counter is recorded."""
    return run_flag_schedule(
        APP,
        seed,
        changes,
        end_s,
        load_profile=constant_load,
        epoch=epoch,
        telemetry=telemetry,
        on_change=on_change,
        request_mult=request_mult(),
        flag_table=orca_flag_table(),
        rare_error_traces=True,
        flag_impressions=True,
    )
