"""Local-clock phrasing of the ORCA-bench tasks (`task_spec.py`): clock text, day words, periods."""

from __future__ import annotations

import datetime as dt
import re

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


_CLOCK = r"(\d{1,2}):(\d{2}) ([AP]M)"
_DAY = r"(today|yesterday)"


def _clock_s(h: str, m: str, ampm: str) -> int:
    return (int(h) % 12 + (12 if ampm == "PM" else 0)) * 3600 + int(m) * 60


def reported_time_guess(styled: str, current_s: int) -> int | None:
    """The time a reader takes from a report-time phrase (`_Spec.styled`): the clock time of "at",
    the middle of a "between" range, of a period or of the whole day; None for a phrase it does not
    know. What an agent that calls no tool can date its claims with."""
    today = day_start(current_s)

    def day(word: str) -> int:
        return today - DAY_S if word == "yesterday" else today

    if m := re.fullmatch(rf"at {_CLOCK} {_DAY} ET", styled):
        return day(m[4]) + _clock_s(m[1], m[2], m[3])
    if m := re.fullmatch(rf"between {_CLOCK} and {_CLOCK} {_DAY} ET", styled):
        return day(m[7]) + (_clock_s(m[1], m[2], m[3]) + _clock_s(m[4], m[5], m[6])) // 2
    if m := re.fullmatch(rf"sometime in the ([a-z ]+) {_DAY}", styled):
        for name, a, b in PERIODS:
            if name == m[1]:
                return day(m[2]) + (a + b) * 1800
        return None
    if m := re.fullmatch(rf"sometime {_DAY}", styled):
        return day(m[1]) + DAY_S // 2
    return None
