"""Which user-facing request types a flag value degrades, measured with the simulator (an isolated
run under the ORCA world's load, `load.run_orca_flags`).

Why a separate, isolated run per (flag, value): ground truth keeps only candidate events whose
effect reaches user-visible symptoms, and whether it does is a property of the flag's mechanism in
the simulator (not of the noise of one day). The expected per-request-type failure share and
latency of the traffic model are deterministic, so the answer is the same on every machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .load import run_orca_flags

WARMUP_S = 300.0
SETTLE_S = 300.0
FAIL_DELTA = 0.01  # a user notices failures from about 1 in 100 requests (the ads banner at 10%)
LATENCY_DELTA_MS = 500.0  # a page slower by half a second or more (adManualGc's blank banner)


@dataclass(frozen=True)
class Visibility:
    flag: str
    value: str
    failing: tuple[str, ...]  # request types whose failure share rose by >= FAIL_DELTA
    slow: tuple[str, ...]  # request types whose mean latency rose by >= LATENCY_DELTA_MS

    @property
    def request_types(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.failing) | set(self.slow)))

    @property
    def user_visible(self) -> bool:
        return bool(self.failing or self.slow)


Stats = dict[str, tuple[float, float]]  # request type -> (expected failure share, mean latency ms)


@lru_cache(maxsize=64)
def _expected(flag: str | None, value: str | None) -> Stats:
    changes = [] if flag is None else [(WARMUP_S, flag, str(value))]
    run = run_orca_flags(0, changes, WARMUP_S + SETTLE_S, telemetry=False)
    return run.request_type_stats()


@lru_cache(maxsize=1)
def _baseline() -> Stats:
    return _expected(None, None)


@lru_cache(maxsize=64)
def flag_visibility(flag: str, value: str) -> Visibility:
    base, cur = _baseline(), _expected(flag, value)
    failing = tuple(n for n, (f0, _) in base.items() if cur[n][0] - f0 >= FAIL_DELTA)
    slow = tuple(n for n, (_, l0) in base.items() if cur[n][1] - l0 >= LATENCY_DELTA_MS)
    return Visibility(flag, value, failing, slow)


def visibility_margin(flag: str, value: str) -> float:
    """The flag's strongest user-visible change as a multiple of its threshold (max over request
    types of failure-share rise / FAIL_DELTA and latency rise / LATENCY_DELTA_MS): >= 1 is visible.
    Ground truth should not hinge on a flag sitting a hair from 1."""
    base, cur = _baseline(), _expected(flag, value)
    fail = {n: (cur[n][0] - f0) / FAIL_DELTA for n, (f0, _) in base.items()}
    ratios = [max(fail[n], (cur[n][1] - l0) / LATENCY_DELTA_MS) for n, (_, l0) in base.items()]
    return round(max(ratios, default=0.0), 3)
