"""Shared by the Prometheus tests: the skip marker and the short run's settings."""

from __future__ import annotations

import shutil

import pytest

needs_prometheus = pytest.mark.skipif(
    shutil.which("prometheus") is None or shutil.which("promtool") is None,
    reason="prometheus/promtool not on PATH (apt-get install -y prometheus)",
)
SHORT = dict(injection_minutes=12, observation_minutes=6, intensity=1.0)
SEED = 11
