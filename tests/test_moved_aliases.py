"""Moved modules keep working for one release, with a DeprecationWarning that names the new home."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from sre_marathon_gym.core.moved import MOVED_MODULES

PROBES = {  # a public name of each new home, read through the old module
    "core.errors": "CatalogError",
    "core.clock": "TICK_S",
    "core.patterns": "compile_label_regex",
    "core.detmath": "OrderedSums",
    "core.quantities": "parse_quantity",
    "core.table": "format_table",
    "core.logquery": "parse_query",
    "core.run_record": "RunRecord",
    "cli.arg_types": "positive_int",
    "metrics.store": "MetricStore",
    "schedule.fault_schedule": "FaultSchedule",
    "schedule.change_stream": "CHANGE_FAILURE_RATE",
    "schedule.benign_edits": "BENIGN_REVISION_BASE",
    "alerting.engine": "AlertEngine",
    "alerting.rules": "CompiledRule",
    "alerting.templates": "go_float",
    "recording.bundle": "write_bundle",
    "recording.archive": "canonical_json",
    "recording.metrics": "RecordedMetrics",
    "recording.rescoring": "score_bundle",
    "evaluation.episode_runner": "run_scored_episode",
    "evaluation.reports": "leaderboard_table",
    "evaluation.fidelity_stats": "RunStats",
    "evaluation.alert_noise": "alert_compatibility",
    "evaluation.orca": "run_orca_task",
    "cli.stats": "add_stats_parser",
    "tools.symptoms": "Telemetry",
    "tools.change_planes": "PlaneReader",
}


@pytest.mark.parametrize(("old", "new"), sorted(MOVED_MODULES.items()))
def test_old_names_still_resolve_and_warn(old, new):
    name = PROBES[new.removeprefix("sre_marathon_gym.")]
    target = importlib.import_module(new)
    assert hasattr(target, name), f"{new} has no {name}: fix the probe table"
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=f"{old}.{name} moved to {new}.{name}"):
        value = getattr(module, name)
    assert value is getattr(target, name)


def test_the_old_leaderboard_module_is_now_a_package_that_still_answers_its_names():
    from sre_marathon_gym.evaluation import leaderboard

    evaluation = importlib.import_module("sre_marathon_gym.evaluation")
    with pytest.warns(DeprecationWarning, match="evaluation.run_one moved to"):
        assert evaluation.run_one is leaderboard.run_one
    from sre_marathon_gym.evaluation import reports  # a submodule, not a forwarded name

    assert reports.__name__ == "sre_marathon_gym.evaluation.reports"


def test_the_command_line_entry_point_keeps_its_path():
    from sre_marathon_gym.cli import main
    from sre_marathon_gym.cli.commands import main as moved

    assert main is moved


def test_a_name_the_new_module_lacks_is_an_attribute_error():
    module = importlib.import_module("sre_marathon_gym.orchestrator")
    with pytest.raises(AttributeError):
        module.NoSuchThing  # noqa: B018


def test_an_old_name_imports_in_a_fresh_interpreter():
    """The alias hook is installed by the package root, before any old name is looked up."""
    code = "from sre_marathon_gym.bundle import verify_bundle; print(verify_bundle.__module__)"
    out = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "sre_marathon_gym.recording.bundle"


def test_renamed_classes_keep_their_old_names():
    from sre_marathon_gym import prometheus
    from sre_marathon_gym.recording import bundle

    assert bundle.Telemetry is bundle.RecordedMetrics
    assert prometheus.PrometheusTelemetry is prometheus.PrometheusMetrics
