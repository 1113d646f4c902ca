"""The committed alert pack is a valid Prometheus rule file and its expressions do what the params say."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RULE_FILE = REPO / "catalog" / "alerts" / "prometheus-rules.yaml"
SMOKE_TEST = REPO / "scripts" / "catalog_gen" / "promtool_smoke_test.yaml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool is not on PATH")


def _promtool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, *args], cwd=REPO, capture_output=True, text=True, timeout=120)


@needs_promtool
def test_promtool_check_rules_accepts_the_pack():
    res = _promtool("check", "rules", str(RULE_FILE))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS: 122 rules found" in res.stdout  # 39 shared rules x 3 apps + 5 Astronomy-only


@needs_promtool
def test_promtool_smoke_tests_pass():
    res = _promtool("test", "rules", str(SMOKE_TEST))
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_expr_is_rendered_from_its_params():
    import yaml
    from catalog_gen import alerts

    from sre_marathon_gym.catalog.alerts import RulePack

    pack = RulePack.model_validate(yaml.safe_load((REPO / "catalog" / "alerts" / "rules.yaml").read_text()))
    for rule in pack.rules:
        assert rule.expr == alerts.promql(dict(rule.params)), rule.name
        assert rule.metrics == alerts.metrics_read(dict(rule.params)), rule.name
