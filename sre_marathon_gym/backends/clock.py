"""Clocks for live backends: wall time in production, a settable clock in tests.

Why a seam: the simulator never reads the wall clock, but a live cluster runs in real time. The
live backend and environment read time only through a `Clock`, so tests drive them with a
`ManualClock` (and advance the cluster stub in step) instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol


class Clock(Protocol):
    def time(self) -> float:
        """Seconds since the Unix epoch."""
        ...

    def sleep(self, seconds: float) -> None:
        """Let `seconds` pass."""
        ...


class WallClock:
    """Real time."""

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class ManualClock:
    """Time that moves only when `sleep` is called; `on_advance(t)` runs after every move (tests
    use it to advance a cluster stub and record metrics in step with the clock)."""

    def __init__(self, start: float = 1_780_000_000.0, on_advance: Callable[[float], None] | None = None):
        self.t = float(start)
        self.on_advance = on_advance

    def time(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.t += seconds
            if self.on_advance is not None:
                self.on_advance(self.t)


__all__ = ["Clock", "ManualClock", "WallClock"]
