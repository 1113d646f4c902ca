"""The per-invocation budget of LLM evaluation mode: wall-clock seconds and (for ReAct) tokens.

Why wall clock here and nowhere else: the paper gives each invocation 110 s of real time, and
only a real model call takes real time. The simulator never reads the clock; this module is the
one place the package does, and the clock is injectable so tests can drive it.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ...core.errors import BudgetExceededError

Clock = Callable[[], float]


class Deadline:
    """`seconds` of wall-clock time from now, measured on `clock` (monotonic by default)."""

    def __init__(self, seconds: float, clock: Clock = time.monotonic):
        self.seconds = float(seconds)
        self._clock = clock
        self._end = clock() + self.seconds

    def remaining(self) -> float:
        return self._end - self._clock()

    @property
    def expired(self) -> bool:
        return self.remaining() <= 0

    def check(self, what: str = "invocation") -> None:
        """Raise `BudgetExceededError` once the time is up (called between model and tool calls)."""
        if self.expired:
            raise BudgetExceededError(f"{what}: the {self.seconds:g} s wall-clock budget is spent")


__all__ = ["Clock", "Deadline"]
