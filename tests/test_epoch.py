"""One clock: every rendered timestamp comes from the world's `Epoch`."""

from __future__ import annotations

import datetime as dt
import re

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.core.clock import DEFAULT_ORIGIN_S, METRIC_STEP_S, TICK_S, Epoch
from sre_marathon_gym.prometheus import DEFAULT_ORIGIN_S as PROMETHEUS_ORIGIN_S
from sre_marathon_gym.sim.simulator import Simulator


def test_epoch_formats_are_exact_and_locale_free():
    e = Epoch()
    assert dt.datetime.fromtimestamp(DEFAULT_ORIGIN_S, dt.UTC) == dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    assert e.iso(125.25) == "2026-01-01T00:02:05.250Z" and e.clf(125.9) == "01/Jan/2026:00:02:05 +0000"
    assert e.iso(3 * 86_400 + 1) == "2026-01-04T00:00:01.000Z"  # no wrap-around after some hours
    assert e.unix(15) == DEFAULT_ORIGIN_S + 15
    later = Epoch.at(dt.datetime(2026, 4, 19, 4, 0, tzinfo=dt.UTC))
    assert later.iso(0) == "2026-04-19T04:00:00.000Z" and later.clf(3600) == "19/Apr/2026:05:00:00 +0000"


def test_prometheus_export_and_logs_share_the_origin():
    assert PROMETHEUS_ORIGIN_S == DEFAULT_ORIGIN_S
    assert METRIC_STEP_S % TICK_S == 0


def _proxy_dates(sim: Simulator) -> set[str]:
    rows = SimBackend(sim).search_logs("frontend-proxy", 0, sim.now, None, None, 500)
    stamps = set()
    for r in rows:
        stamps |= set(re.findall(r"\[(\d{4}-\d\d-\d\d)T", r["message"]))
    return stamps


def test_log_bodies_follow_the_simulator_epoch(catalog):
    sim = Simulator(catalog, "astronomy_shop", 3)
    sim.advance_to(600)
    assert _proxy_dates(sim) == {"2026-01-01"}
    other = Simulator(catalog, "astronomy_shop", 3, epoch=Epoch.at(dt.datetime(2026, 4, 19, tzinfo=dt.UTC)))
    other.advance_to(600)
    assert _proxy_dates(other) == {"2026-04-19"}


def test_the_default_cadence_is_the_leaderboards(catalog):
    from sre_marathon_gym.core.clock import DEFAULT_INVOCATION_S

    assert catalog.leaderboard.interval_s == DEFAULT_INVOCATION_S
    assert DEFAULT_INVOCATION_S % METRIC_STEP_S == 0
