"""Local-clock phrasing of the ORCA-bench tasks (`task_spec.py`): clock text, day words, periods."""

from __future__ import annotations

import datetime as dt

from . import DAY_S

MONTHS = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)  # not %b: locale-free
PERIODS = (
    ("late night", 0, 5),
    ("early morning", 5, 8),
    ("morning", 8, 12),
    ("afternoon", 12, 17),
    ("evening", 17, 21),
    ("night", 21, 24),
)


def day_start(t: int) -> int:
    return t - t % DAY_S


def clock_text(local: dt.datetime) -> str:
    """`7:49 PM`: 12-hour clock without a leading zero (task_spec)."""
    h = local.hour % 12 or 12
    return f"{h}:{local.minute:02d} {'AM' if local.hour < 12 else 'PM'}"


def day_word(reported: dt.datetime, current: dt.datetime) -> str:
    if reported.date() == current.date():
        return "today"
    if reported.date() == current.date() - dt.timedelta(days=1):
        return "yesterday"
    return f"on {date_text(reported)}"


def current_text(local: dt.datetime) -> str:
    """`Apr 20, 2026 at 17:19 ET` (the instruction template's 24-hour clock)."""
    return f"{date_text(local)} at {local.hour:02d}:{local.minute:02d} ET"


def date_text(local: dt.datetime) -> str:
    """`Apr 20, 2026` with English month names whatever the process locale (strftime's %b is not)."""
    return f"{MONTHS[local.month - 1]} {local.day:02d}, {local.year}"


def period_of(t: int) -> tuple[str, int, int]:
    """(name, start_s, end_s) of the time-of-day period that contains `t` (simulated seconds)."""
    hour = (t % DAY_S) // 3600
    for name, a, b in PERIODS:
        if a <= hour < b:
            return name, day_start(t) + a * 3600, day_start(t) + b * 3600
    raise AssertionError(hour)


def previous_period(t: int) -> tuple[str, int, int]:
    _, start, _ = period_of(t)
    return period_of(start - 1)
