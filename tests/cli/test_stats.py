"""`sre-marathon stats`: the simulator's statistics beside the paper's, computed from real runs."""

from __future__ import annotations

import json
import math

import pytest

from sre_marathon_gym.backends.fault_check import fault_severity
from sre_marathon_gym.cli.commands import main
from sre_marathon_gym.evaluation.fidelity_stats import deviation, published, run_stats
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule


def test_each_published_figure_belongs_to_its_app(catalog):
    """The paper lists ambiguity 39 / 76 / 47 % in its own order (Astronomy Shop, Online Boutique,
    Train Ticket); each app must get its own figure, and a general one (faults per run) all apps."""
    assert published(catalog, "astronomy_shop", "ambiguous_alert_share") == 0.39
    assert published(catalog, "online_boutique", "ambiguous_alert_share") == 0.76
    assert published(catalog, "train_ticket", "ambiguous_alert_share") == 0.47
    assert published(catalog, "astronomy_shop", "peak_concurrency") == 11
    assert {published(catalog, a, "faults") for a in catalog.faults} == {60}
    assert published(catalog, "online_boutique", "max_degraded") is None
    assert deviation(6.5, 5.0) == pytest.approx(0.3)
    assert deviation(1.0, None) is None


def test_run_statistics_agree_with_the_schedule_and_are_shares(catalog):
    app = "online_boutique"
    seed = catalog.leaderboard.seed_for(app)
    st = run_stats(catalog, app, seed)
    sched = FaultSchedule.generate(catalog, app, seed).stats()
    assert st.faults == sched["faults"] and st.peak_concurrency == sched["peak_concurrency"]
    assert st.mean_concurrency == pytest.approx(sched["mean_concurrency"], abs=1e-4)
    assert sum(st.categories.values()) == st.faults
    assert st.alerts > 50  # a leaderboard run with no action raises alerts
    for share in (
        st.ambiguous_alert_share,
        st.unattributed_alert_share,
        st.faults_with_alert_share,
        st.probe_failing_share,
        st.max_degraded,
    ):
        assert 0.0 <= share <= 1.0
    assert st.ambiguous_alert_share + st.unattributed_alert_share <= 1.0
    assert st.intervals == 45 and 0 <= st.saturated_intervals <= st.intervals
    assert run_stats(catalog, app, seed) == st  # deterministic


def test_severity_tells_an_outage_from_a_silent_fault(catalog):
    """A fault that is a full outage by design degrades nearly every entry request; a fault that by
    design fails no probe degrades almost none."""
    outage = next(f for fs in catalog.faults.values() for f in fs if f.full_outage)
    silent = next((f for fs in catalog.faults.values() for f in fs if not f.observable), None)
    assert fault_severity(catalog.app(outage.app), outage) > 0.5
    if silent is not None:
        assert fault_severity(catalog.app(silent.app), silent) < 0.05


def test_stats_command_prints_json_with_the_papers_figures(capsys):
    assert (
        main(["stats", "--app", "online_boutique", "--seeds", "1", "--no-severity", "--no-orca", "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    ob = out["apps"]["online_boutique"]
    assert ob["leaderboard"]["seed"] != ob["other_seeds"][0]["seed"]
    assert ob["leaderboard"]["peak_concurrency"] >= 1
    assert out["orca"] is None and out["severity"] == {}
    assert not any(isinstance(v, float) and math.isnan(v) for v in ob["leaderboard"].values())


def test_stats_command_prints_tables(capsys):
    assert main(["stats", "--app", "astronomy_shop", "--seeds", "0", "--no-severity", "--no-orca"]) == 0
    text = capsys.readouterr().out
    assert "ambiguous_alert_share" in text and "0.390" in text  # ours beside the paper's figure
    assert "Faults per category" in text


def test_stats_command_refuses_bad_options(capsys):
    assert main(["stats", "--app", "nope"]) == 2
    assert "unknown app" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["stats", "--seeds", "-1"])


def test_runs_spread_over_processes_give_the_same_statistics(catalog):
    """`stats --workers N` only spreads the runs: each is a pure function of (app, seed)."""
    from sre_marathon_gym.evaluation.fidelity_stats import all_app_stats

    one = all_app_stats(catalog, ["online_boutique"], seeds=1, workers=1)
    two = all_app_stats(catalog, ["online_boutique"], seeds=1, workers=2)
    assert one == two and len(one[0].others) == 1
    assert one[0].leaderboard.seed == catalog.leaderboard.seed_for("online_boutique")


def test_stats_command_prints_the_change_mix_at_the_default_rate(capsys, catalog):
    """The change mix of the leaderboard schedule: faulty and benign changes per hour on each plane,
    and an overall measured change failure rate at the production stream's default."""
    from sre_marathon_gym.schedule.change_stream import CFR_SOURCE, CHANGE_FAILURE_RATE

    assert main(["stats", "--app", "online_boutique", "--seeds", "0", "--no-severity", "--no-orca"]) == 0
    text = capsys.readouterr().out
    table = text[text.index("Change mix") :]
    lb = catalog.leaderboard
    hours = (lb.injection_minutes + lb.observation_minutes) / 60
    rows = {}
    for line in table.splitlines()[3:]:
        cells = line.replace(f"online_boutique (seed {lb.seed_for('online_boutique')})", "").split()
        if len(cells) < 6 or not cells[-1].replace(".", "").isdigit():
            break
        rows[" ".join(cells[:-5])] = [float(c) for c in cells[-5:]]
    assert {"pipeline code", "pipeline config", "manifest", "netpol", "node", "all"} <= set(rows)
    faulty, benign, faulty_h, benign_h, overall = rows["all"]
    assert abs(overall - CHANGE_FAILURE_RATE) <= 0.02
    assert faulty_h == pytest.approx(faulty / hours, abs=0.05)
    assert benign_h == pytest.approx(benign / hours, abs=0.05)
    assert sum(r[0] for p, r in rows.items() if p != "all") == faulty
    assert f"{CHANGE_FAILURE_RATE:.3f}" in table and CFR_SOURCE in table
