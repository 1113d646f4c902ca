"""feature_flag.evaluation span events: every flag a service reads, with the variant in force."""

from __future__ import annotations

from sre_marathon_gym.orca.load import run_orca_flags
from sre_marathon_gym.orca.noisy_backend import NoisyBackend
from sre_marathon_gym.sim.flag_events import EVENT

FLIP, OFF, END = 1200.0, 2400.0, 3600.0


def _ad_variants(world, t0, t1):
    out = set()
    for tr in world.traces(None, "ad", t0, t1, None, None, 50):
        for span in tr["spans"]:
            for ev in span.get("events", []):
                assert ev["name"] == EVENT
                if ev["attributes"]["feature_flag.key"] == "adFailure":
                    assert span["service"] == "ad" and span["kind"] == "SERVER"
                    out.add(ev["attributes"]["feature_flag.result.variant"])
    return out


def test_events_carry_the_variant_in_force_when_the_trace_started():
    run = run_orca_flags(0, [(FLIP, "adFailure", "on"), (OFF, "adFailure", "off")], END)
    world = NoisyBackend(run.sim, 0)
    assert _ad_variants(world, 0, FLIP - 60) == {"off"}
    assert _ad_variants(world, FLIP + 60, OFF - 60) == {"on"}
    assert _ad_variants(world, OFF + 60, END) == {"off"}
    # the ad service reads every ad flag: the key alone names no culprit
    tr = next(t for t in world.traces(None, "ad", 0, FLIP - 60, None, None, 20) if t["spans"])
    keys = {
        ev["attributes"]["feature_flag.key"]
        for s in tr["spans"]
        if s["service"] == "ad"
        for ev in s.get("events", [])
    }
    assert {"adFailure", "adHighCpu", "adManualGc"} <= keys
    # a trace fetched by id is annotated the same way
    again = world.traces(tr["trace_id"], None, 0.0, 0.0, None, None, 1)[0]
    assert again == tr
    # a view before the flip sees no "on" (no future leak through the timeline)
    assert _ad_variants(world.view_at(FLIP - 1), 0, FLIP - 60) == {"off"}
