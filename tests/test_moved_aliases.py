"""Renamed modules keep working for one release, with a DeprecationWarning that names the new home."""

from __future__ import annotations

import importlib

import pytest

MOVED = [
    ("sre_marathon_gym.orchestrator", "FaultSchedule", "sre_marathon_gym.fault_schedule"),
    ("sre_marathon_gym.sim.telemetry", "MetricStore", "sre_marathon_gym.metric_store"),
    ("sre_marathon_gym.scoring.run", "RunRecord", "sre_marathon_gym.run_record"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_old_names_still_resolve_and_warn(old, name, new):
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old}.{name} moved to {new}.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


def test_a_name_the_new_module_lacks_is_an_attribute_error():
    module = importlib.import_module("sre_marathon_gym.orchestrator")
    with pytest.raises(AttributeError):
        module.NoSuchThing  # noqa: B018


def test_renamed_classes_keep_their_old_names():
    from sre_marathon_gym import bundle, prometheus

    assert bundle.Telemetry is bundle.RecordedMetrics
    assert prometheus.PrometheusTelemetry is prometheus.PrometheusMetrics
