"""The committed catalog files are exactly what the generator scripts produce."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from sre_marathon_gym.catalog import APPS

REPO = Path(__file__).resolve().parents[2]


def committed(rel: str):
    return yaml.safe_load((REPO / "catalog" / rel).read_text())


def test_apps_generator_matches_committed():
    from catalog_gen import apps

    built = apps.build_apps()
    for app in APPS:
        assert built[app] == committed(f"apps/{app}.yaml"), app


@pytest.mark.slow  # the generator simulates every candidate fault (several minutes on 2 cores)
def test_faults_generator_matches_committed():
    from catalog_gen import faults

    built = faults.build_faults(faults.load_apps(REPO / "catalog"))
    for app in APPS:
        assert built[app] == committed(f"faults/{app}.yaml"), app


def test_alerts_generator_matches_committed():
    from catalog_gen import alerts

    assert alerts.build_metrics() == committed("metrics.yaml")
    assert alerts.build_rules() == committed("alerts/rules.yaml")
    assert alerts.build_prometheus_rules() == committed("alerts/prometheus-rules.yaml")
