"""The shipped catalog has the sizes and mixes the paper describes, and cross-references hold."""

from __future__ import annotations

from collections import Counter

from sre_marathon_gym.catalog import APPS, MECHANISMS
from sre_marathon_gym.catalog.flag_behaviour import OUT_OF_MARATHON_CATALOG


def test_700_faults_with_code_and_config_near_39_5_percent(catalog):
    faults = catalog.all_faults()
    assert len(faults) == 700
    shares = Counter(f.category for f in faults)
    assert abs((shares["code"] + shares["config"]) / 700 - 0.395) < 0.01
    assert set(shares) == {
        "code",
        "config",
        "dependency",
        "resource",
        "network",
        "deployment",
        "infrastructure",
        "load",
    }
    assert len({f.id for f in faults}) == 700


def test_every_mechanism_is_used_and_every_flag_is_a_fault(catalog):
    """Every flag is a fault, except those the simulator cannot yet inject without stopping the shop
    (`OUT_OF_MARATHON_CATALOG`, each with its reason)."""
    used = {f.mechanism for f in catalog.all_faults()}
    assert used == set(MECHANISMS)
    astro = catalog.apps["astronomy_shop"]
    flags = {f.params["flag"] for f in catalog.faults["astronomy_shop"] if f.mechanism == "feature_flag"}
    assert flags == {fl.name for fl in astro.feature_flags} - set(OUT_OF_MARATHON_CATALOG)
    assert len(OUT_OF_MARATHON_CATALOG) <= 1
    assert len(flags) >= 10


def test_44_rules_from_18_templates_5_astronomy_only(catalog):
    pack = catalog.rules
    assert len(pack.rules) == 44 and len(pack.templates) == 18
    only = [r for r in pack.rules if r.apps != "all"]
    assert len(only) == 5 and all(r.apps == ["astronomy_shop"] for r in only)
    assert len({r.template for r in only}) == 5


def test_apps_have_entry_points_zones_and_artifacts(catalog):
    for name in APPS:
        app = catalog.apps[name]
        assert app.service(app.entry_point).kind == "entry"
        assert all(s.sources for s in app.services if s.kind in ("entry", "service"))
        ids = app.artifact_ids()
        assert f"deployment/{app.entry_point}:image" in ids
    astro = catalog.apps["astronomy_shop"]
    assert len(astro.zones) == 2 and astro.cross_zone_latency_ms == 25 and astro.failover
    assert all(len(catalog.apps[a].zones) == 1 for a in ("online_boutique", "train_ticket"))


def test_code_and_config_faults_carry_a_diff(catalog):
    for f in catalog.all_faults():
        if f.category in ("code", "config") and f.mechanism != "feature_flag":
            assert f.change is not None and "+++ " in f.change.diff and "@@" in f.change.diff, f.id


def test_fault_durations_within_4_to_12_minutes(catalog):
    for f in catalog.all_faults():
        assert 240 <= f.duration.min_s <= f.duration.max_s <= 720


def test_scope_contains_target_and_follows_call_graph(catalog):
    for f in catalog.all_faults():
        app = catalog.apps[f.app]
        assert f.target in f.scope or f.mechanism == "network_partition", f.id
        if (
            f.category != "infrastructure" and f.mechanism != "feature_flag"
        ):  # nodes, zones and flags reach beyond callers
            assert set(f.scope) <= app.downstream_closure(f.target), f.id
