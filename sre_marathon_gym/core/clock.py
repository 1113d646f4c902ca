"""Time, defined once: the simulator's tick, the metric grid, the invocation cadence, the
wall-clock origin every signal is stamped from, and the clocks live backends read.

Why one module: simulated time starts at 0 s. A Prometheus sample, a log line, a trace and an
ORCA task text of the same instant must carry the same wall-clock time, so every renderer goes
through one `Epoch` (the world's t = 0 on the UTC calendar). A Marathon episode starts at
`DEFAULT_ORIGIN_S`; the ORCA world passes the published schedule's first day. Live backends run in
real time and read it only through a `Clock`, so tests drive them with a `ManualClock`.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

TICK_S = 5.0
"""One simulator step: traffic, fault effects and probes advance together."""
METRIC_STEP_S = 15
"""Metrics are sampled on this grid (a Prometheus scrape interval); range queries evaluate on it."""
DEFAULT_INVOCATION_S = 120
"""The agent is invoked every this many seconds (the leaderboard's `interval_s`)."""
DEFAULT_ORIGIN_S = 1_767_225_600
"""Unix seconds of simulated t = 0 for a Marathon episode: 2026-01-01T00:00:00Z."""
PROMETHEUS_MAX_TIME_S = 253_402_300_799
"""The latest time Prometheus' API accepts (9999-12-31T23:59:59Z): exported samples must not pass it."""
MAX_ORIGIN_S = PROMETHEUS_MAX_TIME_S - 366 * 86_400
"""The latest simulated t = 0 a user may ask for: a year of samples still fits before Prometheus' end."""

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Epoch:
    """Simulated seconds -> wall-clock time. Formatting is locale-free and exact to the
    millisecond, so the same instant renders the same way on every machine."""

    origin_s: int = DEFAULT_ORIGIN_S

    def unix(self, t: float) -> float:
        return self.origin_s + float(t)

    def utc(self, t: float) -> dt.datetime:
        return dt.datetime.fromtimestamp(self.origin_s, dt.UTC) + dt.timedelta(
            milliseconds=int(round(t * 1000))
        )

    def iso(self, t: float) -> str:
        """`2026-01-01T00:02:05.250Z` (RFC 3339, what OpenTelemetry and envoy print)."""
        u = self.utc(t)
        return f"{u:%Y-%m-%dT%H:%M:%S}.{u.microsecond // 1000:03d}Z"

    def clf(self, t: float) -> str:
        """`01/Jan/2026:00:02:05 +0000` (Common Log Format, what nginx prints)."""
        u = self.utc(int(t))
        return f"{u.day:02d}/{_MONTHS[u.month - 1]}/{u.year}:{u:%H:%M:%S} +0000"

    @classmethod
    def at(cls, utc: dt.datetime) -> Epoch:
        """The epoch whose t = 0 is `utc` (an aware datetime)."""
        return cls(int(utc.timestamp()))


class Clock(Protocol):
    """What a live backend reads time through."""

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


__all__ = [
    "DEFAULT_INVOCATION_S",
    "DEFAULT_ORIGIN_S",
    "METRIC_STEP_S",
    "TICK_S",
    "Clock",
    "Epoch",
    "ManualClock",
    "WallClock",
]
