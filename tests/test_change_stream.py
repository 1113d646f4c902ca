"""The production change stream (`change_stream`): its mix, its planes, its rules, its knob."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest

from sre_marathon_gym.catalog import APPS, App
from sre_marathon_gym.core.errors import ConfigurationError, UnknownNameError
from sre_marathon_gym.schedule.change_stream import (
    CHANGE_FAILURE_RATE,
    SETTLE_S,
    change_plane,
    fault_values,
    plan_production_changes,
)
from sre_marathon_gym.schedule.fault_schedule import (
    FaultSchedule,
    artifact_key,
    occupied_keys,
    touched_artifacts,
)


@pytest.fixture(scope="module")
def many(catalog) -> list[FaultSchedule]:
    return [FaultSchedule.generate(catalog, app, seed) for app in APPS for seed in range(6)]


def test_default_is_production_at_the_documented_rate(many):
    for s in many:
        assert s.changes == "production" and s.change_failure_rate == CHANGE_FAILURE_RATE
        faulty = sum(change_plane(f.mechanism) is not None for f in s.faults)
        assert faulty >= 20, s.app  # most of the ~60 faults are changes
        assert s.measured_change_failure_rate() == pytest.approx(CHANGE_FAILURE_RATE, abs=0.01)


def test_every_plane_carries_benign_changes(catalog, many):
    by_app: dict[str, Counter] = {}
    for s in many:
        by_app.setdefault(s.app, Counter()).update(b.plane for b in s.benign)
    for app, planes in by_app.items():
        assert {"pipeline", "manifest", "netpol", "node"} <= set(planes), (app, planes)
        kinds = Counter(b.kind for s in many if s.app == app for b in s.benign)
        assert {"code", "config", "image", "netpol", "cordon"} <= set(kinds), (app, kinds)
        # replicas twins add pods, so only a cluster with room for its pods with a node gone gets
        # them: every catalog app's nodes are sized for that (`App.node_allocatable_m`)
        assert catalog.app(app).survives_node_loss, app
        assert "replicas" in kinds, (app, kinds)


def test_nodes_are_sized_for_losing_any_one(catalog):
    """N-1 capacity: each zone's other nodes take all of its pods' CPU requests, plus 25%."""
    for app in APPS:
        a = catalog.app(app)
        for z in a.zones:
            need = sum(s.scheduled_cpu_m * s.replicas for s in a.services if z.name in s.zones)
            assert len(z.nodes) >= 2, (app, z.name)
            assert a.node_allocatable_m * (len(z.nodes) - 1) >= 1.25 * need, (app, z.name)


def test_changes_ship_beside_infrastructure_faults(many):
    """No change freeze on the catalog's apps (it told faults from harmless changes): harmless
    changes ship within SETTLE_S of node and zone faults' starts on every app."""
    for app in APPS:
        near = [
            b
            for s in many
            if s.app == app
            for b in s.benign
            for f in s.faults
            if f.category == "infrastructure" and abs(b.time_s - f.start_s) < SETTLE_S
        ]
        assert len(near) >= 10, (app, len(near))


def test_the_freeze_keeps_changes_off_a_cluster_without_room(catalog):
    """An app without N-1 capacity (none in the catalog: here Train Ticket on one node) gets no
    harmless change within SETTLE_S of an infrastructure fault's start and no replica twin, and
    still as many changes."""
    tt = catalog.app("train_ticket")
    zones = [z.model_copy(update={"nodes": z.nodes[:1]}) for z in tt.zones]
    cramped = App.model_validate({**tt.model_dump(), "zones": [z.model_dump() for z in zones]})
    assert not cramped.survives_node_loss and tt.survives_node_loss
    s = FaultSchedule.generate(catalog, "train_ticket", 3)
    starts = [f.start_s for f in s.faults if f.category == "infrastructure"]
    assert starts
    pool = catalog.faults["train_ticket"]
    args = (pool, pool, s.faults, s.injection_s, CHANGE_FAILURE_RATE)
    frozen = plan_production_changes(cramped, *args, np.random.default_rng(0))
    spare = plan_production_changes(tt, *args, np.random.default_rng(0))
    assert len(frozen) == len(spare) == len(s.benign)
    assert all(abs(b.time_s - t0) >= SETTLE_S for b in frozen for t0 in starts)
    assert any(abs(b.time_s - t0) < SETTLE_S for b in spare for t0 in starts)
    assert not any(b.kind == "replicas" for b in frozen) and any(b.kind == "replicas" for b in spare)


def test_replica_twins_stay_within_the_room_a_lost_node_leaves(catalog, many):
    """The pods replica twins add, all together at any time, fit in each zone's spare CPU with a
    node gone (`App.spare_with_node_lost_m`), so a node fault never leaves pods Pending for them."""
    for s in many:
        app = catalog.app(s.app)
        spare, added, base = app.spare_with_node_lost_m, Counter(), {}
        for b in sorted((b for b in s.benign if b.kind == "replicas"), key=lambda b: b.time_s):
            svc = app.service(b.service)
            step = int(b.new_value) - base.get(b.service, svc.replicas)
            base[b.service] = int(b.new_value)
            for z in svc.zones:
                added[z] += step * svc.scheduled_cpu_m
                assert 0 <= added[z] <= spare[z], (s.app, s.seed, z, added[z], spare[z])


def test_no_twin_drops_a_key_a_missing_env_fault_of_its_run_drops(catalog, many):
    """Dropping such a key again breaks the service again (the fault's behaviour is keyed by the
    key's absence), so it would be no harmless change."""
    drops = 0
    for s in many:
        rows = {f.id: f for f in catalog.faults[s.app]}
        kept = {rows[sf.fault_id].artifact for sf in s.faults if sf.mechanism == "config_missing_env"}
        for b in s.benign:
            if b.kind == "config" and b.new_value is None:
                drops += 1
                assert b.artifact not in kept, (s.app, s.seed, b)
    assert drops > 50


def test_the_knob_sets_the_mix(catalog):
    half = FaultSchedule.generate(catalog, "train_ticket", 5, change_failure_rate=0.5)
    assert half.measured_change_failure_rate() == pytest.approx(0.5, abs=0.02)
    default = FaultSchedule.generate(catalog, "train_ticket", 5)
    assert default.faults == half.faults  # the knob changes the benign stream only
    assert len(default.benign) > 4 * len(half.benign)


def test_bad_options_are_refused(catalog):
    with pytest.raises(UnknownNameError):
        FaultSchedule.generate(catalog, "online_boutique", 1, changes="chaos")
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(ConfigurationError, match="change_failure_rate"):
            FaultSchedule.generate(catalog, "online_boutique", 1, change_failure_rate=bad)
    with pytest.raises(ConfigurationError, match="production"):
        FaultSchedule.generate(catalog, "online_boutique", 1, changes="curated", change_failure_rate=0.2)


def test_twins_keep_out_of_the_faults_way(catalog, many):
    for s in many:
        ends: dict[str, list[int]] = {}
        revs: dict[str, set[str]] = {}
        for f in s.faults:
            fault = catalog.fault(f.fault_id)
            for key in touched_artifacts(fault):
                ends.setdefault(key, []).append(f.planned_end_s)
            if fault.change is not None:
                revs.setdefault(artifact_key(fault.artifact), set()).add(fault.change.to_revision)
        for b in s.benign:
            assert 0 <= b.time_s < s.injection_s  # the faults' own arrival window
            if b.plane != "manifest":  # a fault's artifact only once the fault is over
                assert all(b.time_s >= end + SETTLE_S for end in ends.get(artifact_key(b.artifact), ())), b
            if b.kind == "code":  # never a revision whose effect a fault registers
                assert b.to_revision not in revs.get(artifact_key(b.artifact), set()), b
            for f in s.active_at(b.time_s):
                keys = occupied_keys(catalog.fault(f.fault_id))
                if b.plane in ("pipeline", "manifest") and f"{f.target}#rollout" in keys:
                    assert b.service != f.target, (b, f)
                if b.plane == "node":
                    assert f.category != "infrastructure", (b, f)


def test_twins_read_like_their_rows(catalog, many):
    """What the agent reads about a twin is what a faulty change of the same row shows."""
    for s in many:
        app = catalog.app(s.app)
        known = set(app.artifact_ids())
        calls = {(e.source, e.target) for e in app.edges}
        messages = {f.change.message for f in catalog.faults[s.app] if f.change}
        for b in s.benign:
            if b.plane == "pipeline":
                assert b.message in messages and b.diff.startswith("--- a/"), b
                assert artifact_key(b.artifact) in {artifact_key(k) for k in known}, b
            elif b.plane == "manifest":
                assert b.artifact in known and b.new_value, b
            elif b.plane == "netpol":
                assert b.artifact == f"networkpolicy/deny-{b.service}-to-{b.new_value}"
                assert (b.service, b.new_value) not in calls  # blocks nothing the service uses
            else:
                assert b.kind == "cordon" and b.new_value in app.nodes and b.until_s > b.time_s


def test_address_and_image_twins_take_the_faults_forms_and_values_but_not_their_runs(catalog, many):
    """Wrong-address faults write the next port, another namespace, or a host with a letter
    missing; twins write the first two (and the same service by its other name). A twin never
    ships what a fault of its own run ships (an address or a tag means one thing for the whole
    run), but it does ship other runs' fault values: no value is a fault's in every run, so none
    can be learned as one across runs."""
    forms, reused = Counter(), Counter()
    for s in many:
        app, rows = catalog.app(s.app), catalog.faults[s.app]
        by_id = {f.id: f for f in rows}
        own = fault_values(by_id[sf.fault_id] for sf in s.faults)
        anywhere = fault_values(rows)
        by_artifact = {f.artifact: f for f in rows if f.mechanism == "config_wrong_address"}
        for b in s.benign:
            if b.kind == "image":
                assert b.new_value not in own, b
                reused["image"] += b.new_value in anywhere
            row = by_artifact.get(b.artifact)
            if row is None or b.new_value is None:
                continue
            assert b.new_value not in own, b
            reused["address"] += b.new_value in anywhere
            old = next(c.value for c in app.service(b.service).config if c.key == row.params["key"])
            host, port = old.rsplit(":", 1)
            new_host, new_port = b.new_value.rsplit(":", 1)
            assert new_host.split(".")[0] == host, (b.new_value, old)
            if new_port != port:
                forms["next port"] += 1
            else:
                forms["staging" if ".staging." in new_host else "its own name"] += 1
    assert min(forms["next port"], forms["staging"], forms["its own name"]) > 10, forms
    assert min(reused.values()) > 10 and len(reused) == 2, reused
    # image twins draw the catalog's bad-image tags half the time where a service has one
    images = [b for s in many for b in s.benign if b.kind == "image"]
    bad = fault_values(f for app in APPS for f in catalog.faults[app] if f.mechanism == "bad_image_tag")
    assert sum(b.new_value in bad for b in images) >= 0.25 * len(images), (reused, len(images))


def test_production_schedule_round_trips_and_orders_uncordons(many):
    for s in many[:6]:
        back = FaultSchedule.from_dict(json.loads(json.dumps(s.to_dict())))
        assert back == s and back.events() == s.events()
        ends = [e for e in s.events() if e.kind == "benign_end"]
        assert len(ends) == sum(b.plane == "node" for b in s.benign)
        assert all(e.time_s >= e.item.time_s for e in ends)


def test_old_schedules_load_as_curated(catalog):
    s = FaultSchedule.generate(catalog, "online_boutique", 2, changes="curated")
    data = s.to_dict()
    data.pop("changes"), data.pop("change_failure_rate")
    data["schema_version"] = 1
    assert FaultSchedule.from_dict(data) == s


def test_fault_values_remembered_from_training_runs_name_twins_as_often_as_faults(catalog):
    """The cheapest policy against the value rule (`benchmarks/change_value_reader.py`'s
    `addr_memo`, `image_memo`): remember each service's addresses and tags that faults shipped in
    training runs, and claim them when they come back. On other seeds they must be a fault's in
    well under half of their uses, or remembering pays (a false claim costs 0.7 of a right one)."""
    for app in APPS:
        rows = {f.id: f for f in catalog.faults[app]}
        remembered: set[tuple[str, str]] = set()
        for seed in range(1000, 1060):
            for sf in FaultSchedule.generate(catalog, app, seed).faults:
                remembered |= {(sf.target, v) for v in fault_values([rows[sf.fault_id]])}
        uses = Counter()
        for seed in range(40):
            s = FaultSchedule.generate(catalog, app, seed)
            for sf in s.faults:
                uses["fault"] += sum((sf.target, v) in remembered for v in fault_values([rows[sf.fault_id]]))
            uses["twin"] += sum((b.service, b.new_value) in remembered for b in s.benign if b.new_value)
        assert uses["fault"] >= 20 and uses["fault"] / (uses["fault"] + uses["twin"]) < 0.45, (app, uses)
