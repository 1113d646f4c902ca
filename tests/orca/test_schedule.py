"""The ORCA-bench schedule on the simulated clock: 13 scenarios, five types, the day-6 peak."""

from __future__ import annotations

from collections import Counter

import pytest

from sre_marathon_gym.core.errors import ConfigurationError
from sre_marathon_gym.orca.data import load_schedule_file
from sre_marathon_gym.orca.schedule import DAY_S, build_schedule, orca_schedule


def test_six_days_hold_13_scenarios_of_five_types_and_42_events():
    s = orca_schedule()
    assert len(s.events) == 42
    assert [sum(e.day == d for e in s.events) for d in range(1, 7)] == [6, 7, 7, 7, 7, 8]
    types = Counter(s.scenarios().values())
    assert len(s.scenarios()) == 13
    assert types == {"isolated": 2, "independent": 1, "conflicting": 2, "cascading": 4, "sequential": 4}


def test_day6_peak_has_six_flags_active_together_and_actual_times_drift():
    s = orca_schedule()
    peak = max(len({e.flag for e in s.active_at(t)}) for t in range(5 * DAY_S, 6 * DAY_S, 60))
    assert peak == 6
    pay100 = s.event("d6-big-paymentFailure-100%")
    assert (
        s.utc(pay100.on_s).strftime("%Y-%m-%dT%H:%M:%S") == "2026-04-24T18:50:26"
    )  # the rubric incident_time
    step = s.event("d2-d1dep-paymentFailure-10%")  # overwritten by the 50% step, no explicit off
    assert step.end_s == s.event("d2-d1dep-paymentFailure-50%").on_s and not step.ended_by_off


def test_quiet_window_and_configurable_days():
    s = orca_schedule()
    qs, qe = s.quiet_window(DAY_S + 9 * 3600)  # day 2, 09:00: after day 1's last off, before day 2's first on
    assert qs is not None and qs < DAY_S and qe == s.event("d2-cc1-adHighCpu-on").on_s
    short = build_schedule(load_schedule_file(), days=2)
    assert short.run_s == 2 * DAY_S and all(e.day <= 2 for e in short.events)
    with pytest.raises(ConfigurationError):
        build_schedule(load_schedule_file(), days=0)
