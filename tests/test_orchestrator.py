"""The seeded fault schedule: determinism, windows, conflicts, calibration, benign changes, round-trip."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

from sre_marathon_gym.catalog import APPS
from sre_marathon_gym.schedule.fault_schedule import (
    FaultSchedule,
    ScheduledFault,
    artifact_key,
    occupied_keys,
    touched_artifacts,
)


@pytest.fixture(scope="module")
def leaderboard(catalog) -> dict[str, FaultSchedule]:
    lb = catalog.leaderboard
    return {
        app: FaultSchedule.generate(
            catalog,
            app,
            lb.seed_for(app),
            injection_minutes=lb.injection_minutes,
            observation_minutes=lb.observation_minutes,
            changes="curated",  # the production stream: tests/test_change_stream.py
        )
        for app in APPS
    }


@pytest.fixture(scope="module")
def many(catalog) -> list[FaultSchedule]:
    """A spread of schedules over apps and seeds, for the structural properties."""
    return [
        FaultSchedule.generate(catalog, app, seed, changes="curated") for app in APPS for seed in range(8)
    ]


def overlaps(a: ScheduledFault, b: ScheduledFault) -> bool:
    return a.start_s < b.planned_end_s and b.start_s < a.planned_end_s


# ---- determinism ---------------------------------------------------------------------------------


@pytest.mark.parametrize("app", APPS)
def test_same_seed_same_schedule(catalog, app):
    a = FaultSchedule.generate(catalog, app, 7)
    b = FaultSchedule.generate(catalog, app, 7)
    assert a.to_dict() == b.to_dict()
    assert a == b


def test_passed_generator_is_used(catalog):
    a = FaultSchedule.generate(catalog, "online_boutique", 0, rng=np.random.default_rng(42))
    b = FaultSchedule.generate(catalog, "online_boutique", 0, rng=np.random.default_rng(42))
    c = FaultSchedule.generate(catalog, "online_boutique", 0)
    assert a.to_dict() == b.to_dict()
    assert a.faults != c.faults


@pytest.mark.parametrize("app", APPS)
def test_different_seeds_different_schedules(catalog, app):
    scheds = [FaultSchedule.generate(catalog, app, s) for s in range(5)]
    ids = {tuple(f.fault_id for f in s.faults) for s in scheds}
    starts = {tuple(f.start_s for f in s.faults) for s in scheds}
    assert len(ids) == 5 and len(starts) == 5


# ---- windows and durations -----------------------------------------------------------------------


def test_starts_within_injection_window_and_sorted(many):
    for s in many:
        starts = [f.start_s for f in s.faults]
        assert starts == sorted(starts)
        assert all(0 <= t < s.injection_s for t in starts), s.app
        assert all(f.planned_end_s <= s.run_s for f in s.faults)


def test_durations_within_fault_bounds(catalog, many):
    for s in many:
        for f in s.faults:
            bounds = catalog.fault(f.fault_id).duration
            if f.clipped:
                assert f.planned_end_s == s.run_s and f.duration_s < bounds.max_s
            else:
                assert bounds.min_s <= f.duration_s <= bounds.max_s, f.fault_id


def test_short_observation_clips_at_run_end(catalog):
    s = FaultSchedule.generate(catalog, "train_ticket", 3, observation_minutes=0)
    assert all(f.planned_end_s <= s.injection_s for f in s.faults)
    clipped = [f for f in s.faults if f.clipped]
    assert clipped, "with no observation window the last faults must be clipped"
    assert all(f.planned_end_s == s.run_s for f in clipped)
    assert s.ending_between(s.run_s, s.run_s + 1) == clipped


def test_faults_match_catalog_and_are_distinct(catalog, many):
    for s in many:
        ids = [f.fault_id for f in s.faults]
        assert len(ids) == len(set(ids)), "chosen without replacement"
        for f in s.faults:
            src = catalog.fault(f.fault_id)
            assert (f.app, f.target, f.mechanism, f.category, f.artifact) == (
                s.app,
                src.target,
                src.mechanism,
                src.category,
                src.artifact,
            )


def test_arrivals_increase_over_the_window(many):
    early = sum(sum(f.start_s < s.injection_s / 2 for f in s.faults) for s in many)
    late = sum(sum(f.start_s >= s.injection_s / 2 for f in s.faults) for s in many)
    assert late > 1.3 * early


# ---- conflicts -----------------------------------------------------------------------------------


def test_no_overlapping_faults_on_same_artifact(many):
    for s in many:
        for i, a in enumerate(s.faults):
            for b in s.faults[i + 1 :]:
                if overlaps(a, b):
                    assert artifact_key(a.artifact) != artifact_key(b.artifact), (a, b)


def test_no_overlapping_faults_share_a_key(catalog, many):
    for s in many:
        for i, a in enumerate(s.faults):
            ka = occupied_keys(catalog.fault(a.fault_id))
            for b in s.faults[i + 1 :]:
                if overlaps(a, b):
                    assert not ka & occupied_keys(catalog.fault(b.fault_id)), (a.fault_id, b.fault_id)


def test_conflict_keys_cover_same_deployment_rollouts(catalog):
    faults = [f for f in catalog.faults["online_boutique"] if f.mechanism in ("bad_image_tag", "code_error")]
    by_target: dict[str, list] = {}
    for f in faults:
        by_target.setdefault(f.target, []).append(f)
    pairs = [v for v in by_target.values() if len({f.mechanism for f in v}) == 2]
    if not pairs:
        pytest.skip("no service with both an image fault and a code fault")
    image = next(f for f in pairs[0] if f.mechanism == "bad_image_tag")
    code = next(f for f in pairs[0] if f.mechanism == "code_error")
    assert occupied_keys(image) & occupied_keys(code)


# ---- calibration ---------------------------------------------------------------------------------


@pytest.mark.parametrize("app", APPS)
def test_leaderboard_seed_calibration(leaderboard, app):
    st = leaderboard[app].stats()
    assert 55 <= st["faults"] <= 65, st
    assert 5.5 <= st["mean_concurrency"] <= 7.0, st
    assert 10 <= st["peak_concurrency"] <= 12, st
    assert st["clipped"] == 0


def test_stats_are_consistent(leaderboard):
    s = leaderboard["online_boutique"]
    st = s.stats()
    grid = range(0, s.injection_s, 5)
    assert st["mean_concurrency"] == pytest.approx(np.mean([len(s.active_at(t)) for t in grid]))
    assert st["peak_concurrency"] == max(len(s.active_at(t)) for t in range(0, s.run_s, 5))
    assert sum(st["categories"].values()) == st["faults"] == len(s.faults)


def test_timeline_does_not_depend_on_catalog_content(catalog):
    """Starts and durations come from the seed alone, so regenerating the catalog keeps the calibration."""
    from dataclasses import replace

    app = "train_ticket"
    thinned = replace(catalog, faults={**catalog.faults, app: catalog.faults[app][::2]}, _by_id={})
    full = FaultSchedule.generate(catalog, app, 202)
    half = FaultSchedule.generate(thinned, app, 202)
    assert [f.start_s for f in half.faults] == [f.start_s for f in full.faults]
    assert [f.duration_s for f in half.faults] == [f.duration_s for f in full.faults]
    assert [f.fault_id for f in half.faults] != [f.fault_id for f in full.faults]


@pytest.mark.parametrize("app", APPS)
def test_intensity_quarter_gives_a_quarter(catalog, app):
    full = np.mean([len(FaultSchedule.generate(catalog, app, s).faults) for s in range(4)])
    quarter = [len(FaultSchedule.generate(catalog, app, s, intensity=0.25).faults) for s in range(4)]
    assert all(13 <= n <= 17 for n in quarter), quarter
    assert np.mean(quarter) / full == pytest.approx(0.25, abs=0.04)


def test_bad_intensity_is_refused(catalog):
    from sre_marathon_gym.core.errors import ConfigurationError, UnknownNameError

    with pytest.raises(ConfigurationError):
        FaultSchedule.generate(catalog, "online_boutique", 1, intensity=0)
    with pytest.raises(UnknownNameError):
        FaultSchedule.generate(catalog, "online_botique", 1)


# ---- accessors -----------------------------------------------------------------------------------


def test_accessors_partition_the_timeline(leaderboard):
    s = leaderboard["astronomy_shop"]
    starts = [f for t0 in range(0, s.run_s, 120) for f in s.starting_between(t0, t0 + 120)]
    ends = [f for t0 in range(0, s.run_s + 1, 120) for f in s.ending_between(t0, t0 + 120)]
    assert sorted(starts, key=lambda f: f.fault_id) == sorted(s.faults, key=lambda f: f.fault_id)
    assert sorted(ends, key=lambda f: f.fault_id) == sorted(s.faults, key=lambda f: f.fault_id)
    f = s.faults[len(s.faults) // 2]
    assert f in s.active_at(f.start_s) and f not in s.active_at(f.planned_end_s)
    assert s.fault(f.fault_id) == f


def test_events_sorted_and_complete(leaderboard):
    s = leaderboard["train_ticket"]
    ev = s.events()
    assert [e.time_s for e in ev] == sorted(e.time_s for e in ev)
    kinds = [e.kind for e in ev]
    assert kinds.count("inject") == kinds.count("revert") == len(s.faults)
    assert kinds.count("benign") == len(s.benign)
    seen: set[str] = set()
    for e in ev:  # a fault is reverted only after it was injected
        if e.kind == "inject":
            seen.add(e.item.fault_id)
        elif e.kind == "revert":
            assert e.item.fault_id in seen


# ---- serialization -------------------------------------------------------------------------------


@pytest.mark.parametrize("app", APPS)
def test_round_trip(leaderboard, app):
    s = leaderboard[app]
    data = json.loads(json.dumps(s.to_dict()))
    back = FaultSchedule.from_dict(data)
    assert back == s
    assert back.to_dict() == s.to_dict()
    assert back.events() == s.events()
    assert pickle.loads(pickle.dumps(s)) == s


def test_from_dict_refuses_unknown_schema(leaderboard):
    from sre_marathon_gym.core.errors import ConfigurationError

    data = leaderboard["online_boutique"].to_dict() | {"schema_version": 99}
    with pytest.raises(ConfigurationError):
        FaultSchedule.from_dict(data)


# ---- benign changes ------------------------------------------------------------------------------


def test_benign_never_touch_fault_artifacts(catalog, many):
    for s in many:
        touched: set[str] = set()
        for f in s.faults:
            touched |= touched_artifacts(catalog.fault(f.fault_id))
        assert s.benign, s.app
        for b in s.benign:
            assert artifact_key(b.artifact) not in touched, b
            assert artifact_key(b.new_artifact) not in touched, b


def test_benign_changes_are_plausible(catalog, leaderboard):
    for app, s in leaderboard.items():
        hours = s.run_s / 3600
        assert 8 * hours - 1 <= len(s.benign) <= 15 * hours + 1
        known = catalog.app(app).artifact_ids()
        fault_revs = {
            r for f in catalog.faults[app] if f.change for r in (f.change.from_revision, f.change.to_revision)
        }
        to_revs = [b.to_revision for b in s.benign]
        assert len(set(to_revs)) == len(to_revs)
        assert all(0 <= b.time_s < s.run_s for b in s.benign)
        for b in s.benign:
            assert b.artifact in known, b.artifact
            assert b.to_revision not in fault_revs
            assert int(b.to_revision[1:]) >= 1000 > int(b.from_revision[1:])
            assert b.diff.startswith("--- a/") and "\n+++ b/" in b.diff and "\n@@ " in b.diff
            assert b.kind in ("config", "code")
            assert (b.new_value is not None) == (b.kind == "config")
            if b.kind == "config":
                assert b.new_value in b.diff
                assert b.artifact.startswith(f"{b.service}:")


def test_benign_avoid_services_mid_rollout_fault(catalog, many):
    rollout = {"rollout"}
    for s in many:
        for b in s.benign:
            for f in s.active_at(b.time_s):
                keys = occupied_keys(catalog.fault(f.fault_id))
                if {k.split("#", 1)[1] for k in keys if k.startswith(f"{f.target}#")} & rollout:
                    assert b.service != f.target, (b, f)


def test_print_schedule_stats(capsys, catalog):
    from sre_marathon_gym.schedule.fault_schedule import print_schedule_stats

    print_schedule_stats(catalog)
    out = capsys.readouterr().out
    for app in APPS:
        assert app in out
