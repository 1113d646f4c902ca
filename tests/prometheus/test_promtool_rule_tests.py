"""Real promtool agrees with the alert engine on every rule: generated `promtool test rules` suites."""

from __future__ import annotations

import pytest
import yaml
from prom_helpers import needs_prometheus

from sre_marathon_gym.prometheus.rule_tests import run_promtool_tests, write_rule_tests

pytestmark = needs_prometheus


def test_short_run_suite_passes_and_catches_a_wrong_expectation(catalog, short_run, tmp_path):
    env, store = short_run
    path, summary = write_rule_tests(tmp_path, catalog, env.unwrapped.app, store)
    assert (
        summary["firing_expected"] > 0 and summary["pending_expected"] > 0 and summary["alerts_resolved"] > 0
    )
    ok, output = run_promtool_tests(path)
    assert ok, output[-4000:]
    # the suite has teeth: drop one expected firing alert and promtool must fail on that rule
    suite = yaml.safe_load(path.read_text())
    check = next(c for c in suite["tests"][0]["alert_rule_test"] if c["exp_alerts"])
    check["exp_alerts"] = check["exp_alerts"][1:]
    path.write_text(yaml.safe_dump(suite, sort_keys=False, width=1 << 16))
    ok, output = run_promtool_tests(path)
    assert not ok and f"alertname: {check['alertname']}" in output


@pytest.mark.slow
@pytest.mark.parametrize("app", ["online_boutique", "astronomy_shop", "train_ticket"])
def test_leaderboard_seed_suites_pass(catalog, app, tmp_path):
    """The full 90-minute leaderboard schedule of each app (no agent): every rule, every minute
    and every alert transition agrees, with firing, pending and resolved alerts all exercised."""
    from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
    from sre_marathon_gym.sim.simulator import Simulator

    seed = catalog.leaderboard.seed_for(app)
    sim = Simulator(catalog, app, seed, schedule=FaultSchedule.generate(catalog, app, seed))
    sim.advance_to(90 * 60)
    path, summary = write_rule_tests(tmp_path, catalog, catalog.app(app), sim.store)
    assert (
        summary["firing_expected"] > 0 and summary["pending_expected"] > 0 and summary["alerts_resolved"] > 0
    )
    ok, output = run_promtool_tests(path)
    assert ok, output[-4000:]
