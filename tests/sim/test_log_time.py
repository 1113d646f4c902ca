"""A log line's own time and its record's time are one instant, on the world's epoch (envoy and
nginx print a timestamp in the body; before, it was drawn apart from the record's and could be
up to 15 s off)."""

from __future__ import annotations

import re

import pytest

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.simulator import Simulator

ISO = re.compile(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\]")
CLF = re.compile(r"\[(\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000)\]")
NGINX_ERROR = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d) \[error\]")


@pytest.mark.parametrize("app", ["astronomy_shop", "train_ticket"])  # the apps with a proxy in front
def test_proxy_line_bodies_carry_their_record_time(catalog, app):
    seed = catalog.leaderboard.seed_for(app)
    sim = Simulator(catalog, app, seed, schedule=FaultSchedule.generate(catalog, app, seed))
    sim.advance_to(1800)
    rows = SimBackend(sim).search_logs(None, 0, 1800, None, None, 100_000)
    stamped = 0
    for r in rows:
        t, msg = r["timestamp"], r["message"]
        for iso in ISO.findall(msg):
            assert iso == sim.epoch.iso(t), r
            stamped += 1
        for clf in CLF.findall(msg):
            assert clf == sim.epoch.clf(t), r
            stamped += 1
        for local in NGINX_ERROR.findall(msg):
            assert local == sim.epoch.iso(t)[:19].replace("T", " ").replace("-", "/"), r
            stamped += 1
    assert stamped > 100  # the proxies did log
