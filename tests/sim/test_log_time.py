"""A log line's own time and its record's time are one instant, on the world's epoch (envoy and
nginx print a timestamp in the body; before, it was drawn apart from the record's and could be
up to 15 s off)."""

from __future__ import annotations

import re

import pytest

from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
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


@pytest.mark.parametrize("app", ["online_boutique", "astronomy_shop", "train_ticket"])
def test_no_pod_logs_before_it_is_scheduled(catalog, app):
    """Read as an SRE would: `get_k8s_state events` says when a pod was scheduled; none of its log
    lines may be older (pods that existed before the run have no Scheduled event)."""
    seed = catalog.leaderboard.seed_for(app)
    sim = Simulator(catalog, app, seed, schedule=FaultSchedule.generate(catalog, app, seed))
    end = 5400
    sim.advance_to(end)
    backend = SimBackend(sim)
    scheduled: dict[str, float] = {}
    for e in backend.k8s_state("events", None, 10**7):
        if e["reason"] == "Scheduled":
            scheduled.setdefault(e["object"].split("/", 1)[1], e["time_s"])
    rows = backend.search_logs(None, 0, end, None, None, 10**6)
    new_pods = [r for r in rows if r["pod"] in scheduled]
    assert len({r["pod"] for r in new_pods}) > 5  # pods were created during the run, and they logged
    early = [
        (r["pod"], r["timestamp"], scheduled[r["pod"]])
        for r in new_pods
        if r["timestamp"] < scheduled[r["pod"]]
    ]
    assert not early, early[:5]
