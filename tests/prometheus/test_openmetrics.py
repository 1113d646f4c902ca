"""The OpenMetrics writer and promtool's series notation: formats that lose data silently if wrong."""

from __future__ import annotations

import numpy as np
import pytest

from sre_marathon_gym.core.errors import TelemetryError
from sre_marathon_gym.metrics.store import MetricStore
from sre_marathon_gym.prometheus.openmetrics import format_value, series_selector, write_openmetrics
from sre_marathon_gym.prometheus.rule_tests import encode_values


def _store() -> MetricStore:
    store = MetricStore(step_s=15)
    a = store.series_id("b_metric_total", {"pod": 'we"ird\\pod', "zone": "z1"})
    b = store.series_id("a_metric", {})
    c = store.series_id("b_metric_total", {"pod": "p2"})
    for k in range(4):
        store.record(15.0 * k, np.array([a, b]), np.array([k * 1.5, 0.1]))
        if k == 2:
            store.record(30.0, np.array([c]), np.array([7.0]))
    return store


def test_file_groups_families_uses_seconds_and_ends_with_eof(tmp_path):
    path = tmp_path / "m.om"
    counts = write_openmetrics(_store(), path, origin_s=1000)
    lines = path.read_text().splitlines()
    assert counts == {"series": 3, "samples": 9}
    assert lines[-1] == "# EOF"
    names = [line.split("{")[0].split(" ")[0] for line in lines[:-1]]
    assert names == sorted(names)  # each family contiguous
    # label values escaped, no space after commas, timestamps in seconds from the origin
    assert lines[4] == 'b_metric_total{pod="we\\"ird\\\\pod",zone="z1"} 0.0 1000'
    assert lines[0] == "a_metric 0.10000000149011612 1000"  # float32 widened exactly
    assert 'b_metric_total{pod="p2"} 7.0 1030' in lines


def test_bad_origin_is_refused(tmp_path):
    with pytest.raises(TelemetryError, match="origin_s"):
        write_openmetrics(_store(), tmp_path / "m.om", origin_s=1.5)


def test_selector_and_values():
    assert series_selector("up", {}) == "up"
    assert series_selector("up", {"b": "2", "a": "1"}) == 'up{a="1",b="2"}'
    assert format_value(float("nan")) == "NaN" and format_value(float("inf")) == "+Inf"


def test_promtool_series_notation_is_run_length_encoded():
    nan = np.nan
    vals = np.array([1.0, 1.0, 1.0, nan, nan, 2.5, nan, 3.0, 3.0])
    stale = np.zeros(vals.size, dtype=bool)
    stale[6] = True
    assert encode_values(vals, stale) == "1.0+0x2 _x2 2.5 stale 3.0+0x1"


def test_series_notation_edge_cases_read_back_as_the_samples():
    """Infinities, signed zeros (equal, so one run written as its first), a marker right after a
    gap and inside a repeat, a lone gap, tiny and huge numbers: each token is `format_value`'s."""
    nan, inf = np.nan, np.inf
    vals = np.array([inf, -inf, -0.0, 0.0, nan, nan, nan, 5e-324, 1e300, 1.0, 1.0, nan, 1.0, 0.1])
    stale = np.zeros(vals.size, dtype=bool)
    stale[[6, 10]] = True
    assert encode_values(vals, stale) == "+Inf -Inf -0.0+0x1 _x2 stale 5e-324 1e+300 1.0 stale _ 1.0 0.1"
    assert encode_values(np.array([]), np.array([], dtype=bool)) == ""
