"""The leaderboard runs reproduce the paper's schedule statistics (SRE-Marathon §4) and keep the
entry point serving (issue 19): each statistic pinned to its tolerance, from a real no-action run.

Tolerances: peak concurrency exactly; mean concurrency, faults per run and the share of alerts
compatible with two or more active faults within 15 % of the paper's figure; some faults stay
below every alert threshold ("the frozen rules can miss faults"), but few; the entry point's
degraded fraction below 0.95 in every interval.
"""

from __future__ import annotations

import pytest

from sre_marathon_gym.evaluation.fidelity_stats import SATURATED, deviation, published, run_stats

APPS = ("online_boutique", "astronomy_shop", "train_ticket")


@pytest.fixture(scope="module")
def leaderboard_stats(catalog):
    return {app: run_stats(catalog, app, catalog.leaderboard.seed_for(app)) for app in APPS}


@pytest.mark.slow
@pytest.mark.parametrize("app", APPS)
def test_leaderboard_schedule_matches_the_paper(catalog, leaderboard_stats, app):
    st = leaderboard_stats[app]
    assert st.peak_concurrency == published(catalog, app, "peak_concurrency")
    for name in ("mean_concurrency", "faults"):
        dev = deviation(float(getattr(st, name)), published(catalog, app, name))
        assert dev is not None and abs(dev) <= 0.15, (name, getattr(st, name), dev)


@pytest.mark.slow
@pytest.mark.parametrize("app", APPS)
def test_leaderboard_rules_miss_a_few_faults(leaderboard_stats, app):
    """ "The frozen rules can miss faults", but few."""
    assert 0.85 <= leaderboard_stats[app].faults_with_alert_share < 1.0


@pytest.mark.slow
@pytest.mark.parametrize(
    "app",
    [
        pytest.param(
            "online_boutique",
            marks=pytest.mark.xfail(
                strict=True,
                reason="open (issue 19): Online Boutique's alerts are 0.52 ambiguous, the paper's 0.76",
            ),
        ),
        "astronomy_shop",
        "train_ticket",
    ],
)
def test_leaderboard_alert_ambiguity_matches_the_paper(catalog, leaderboard_stats, app):
    st = leaderboard_stats[app]
    dev = deviation(st.ambiguous_alert_share, published(catalog, app, "ambiguous_alert_share"))
    assert dev is not None and abs(dev) <= 0.15, (st.ambiguous_alert_share, dev)


@pytest.mark.slow
@pytest.mark.parametrize("app", APPS)
def test_leaderboard_runs_keep_serving(leaderboard_stats, app):
    """With about six faults at once and no action, requests continue to be served: the degraded
    fraction never saturates, so it still tells agents apart."""
    st = leaderboard_stats[app]
    assert st.saturated_intervals == 0 and st.max_degraded < SATURATED, st
    assert st.probe_failing_share > 0.8  # the faults are still observable
