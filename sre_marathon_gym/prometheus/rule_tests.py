"""Generate ``promtool test rules`` suites from a simulated run, so real Prometheus checks the
alert engine: the run's series (with gaps and staleness markers) become ``input_series``, and the
alerts the engine raised become the expected firing alerts (labels and rendered annotations) and
expected pending ``ALERTS`` samples at every checked evaluation.

Why: the engine re-implements Prometheus rule evaluation in numpy for speed; this is the proof that
it agrees with Prometheus on every rule of the pack, including ``for:`` (pending -> firing),
resolution, joins, guards, ``offset`` and ``histogram_quantile``.

Debian's Prometheus 2.42 (and its promtool) includes a sample that sits exactly at the start of a
range and orders counter extrapolation differently from Prometheus 3, which the simulator follows.
Every evaluation of a promtool test sits on the 15 s sample grid, so the suite is generated with the
store reading like 2.42 (`MetricStore.prometheus_v2`); the engine logic is the same.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from ..catalog.loader import load_yaml
from ..core.errors import PrometheusError
from .openmetrics import series_selector
from .server import binary

if TYPE_CHECKING:
    from ..catalog import Catalog
    from ..catalog.apps import App
    from ..metrics.store import MetricStore

RULES_FILE = "rules.yaml"
TESTS_FILE = "rule-tests.yaml"


@contextmanager
def read_like_prometheus_v2(store: MetricStore) -> Iterator[MetricStore]:
    """Temporarily read `store` like Prometheus 2.42 (see module docstring)."""
    before = store.prometheus_v2
    store.prometheus_v2 = True
    try:
        yield store
    finally:
        store.prometheus_v2 = before


def encode_values(values: np.ndarray, stale: np.ndarray) -> str:
    """promtool's series notation, run-length encoded: ``_xN`` for gaps, ``v+0xN`` for repeats.

    Runs are found with numpy and numbers written through a list's `repr` (each float as `repr`
    writes it, at C speed): a leaderboard run's suite encodes millions of samples."""
    n = values.size
    if n == 0:
        return ""
    gap = np.isnan(values) & ~stale
    start = np.ones(n, dtype=bool)
    # a sample continues the run before it: both gaps, or the same number (NaN never equals),
    # neither a staleness marker (each marker is a token of its own)
    start[1:] = stale[1:] | stale[:-1] | ~((gap[1:] & gap[:-1]) | (values[1:] == values[:-1]))
    firsts = np.flatnonzero(start)
    lengths = np.diff(np.append(firsts, n)).tolist()
    heads = values[firsts]
    finite = np.isfinite(heads)
    texts = repr(np.where(finite, heads, 0.0).tolist())[1:-1].split(", ")
    out: list[str] = []
    for k, (i, length) in enumerate(zip(firsts.tolist(), lengths)):
        if stale[i]:
            out.append("stale")
        elif gap[i]:
            out.append("_" if length == 1 else f"_x{length}")
        else:
            text = texts[k] if finite[k] else ("+Inf" if heads[k] > 0 else "-Inf")  # as `format_value`
            out.append(text if length == 1 else f"{text}+0x{length - 1}")
    return " ".join(out)


def _rule_metrics(catalog: Catalog, app: App) -> list[str]:
    names: set[str] = set()
    for rule in catalog.rules.rules:
        if rule.applies_to(app.app):
            names.update(rule.metrics)
    return sorted(names)


def _app_rule_groups(catalog: Catalog, app: App) -> dict[str, Any]:
    path = Path(catalog.root) / "alerts" / "prometheus-rules.yaml"
    pack = load_yaml(path.read_text())
    groups = [
        g
        for g in pack["groups"]
        if all(r.get("labels", {}).get("namespace") == app.namespace for r in g["rules"])
    ]
    if not groups:
        raise PrometheusError(f"{path}: no rule group for namespace {app.namespace!r}")
    return {"groups": groups}


def check_times(engine: Any, end_s: float, every_s: float) -> list[float]:
    """Every `every_s` seconds, plus each evaluation where an alert became pending, fired or ended
    (and the one after it), so each transition is checked where it happens."""
    step = engine.interval_s
    times = set(np.arange(0.0, end_s + 1e-9, every_s).tolist())
    for a in [*engine.history(), *engine.pending_history()]:
        for t in (a.pending_at, a.fired_at, a.resolved_at):
            if t is not None:
                times.update((float(t), float(t) + step))
    return sorted(t for t in times if t <= end_s + 1e-9)


def _seconds(t: float) -> str:
    return f"{int(round(t))}s"


def build_rule_tests(
    catalog: Catalog, app: App, store: MetricStore, end_s: float | None = None, every_s: float = 60.0
) -> tuple[dict[str, Any], dict[str, Any], dict[str, int]]:
    """(rule file, test file, summary) for the run held in `store` up to `end_s`.

    The alert engine is replayed from scratch over the store (read like Prometheus 2.42), so the expectations
    are exactly what our engine says at each checked evaluation.
    """
    from ..alerting.engine import AlertEngine

    end = float(store.last_time if end_s is None else end_s)
    with read_like_prometheus_v2(store):
        engine = AlertEngine(catalog.rules, app, store)
        engine.evaluate_until(end)
        series = []
        n_samples = 0
        for name in _rule_metrics(catalog, app):
            ids = store.select(name)
            if len(ids) == 0:
                continue
            _, vals, stale = store.range_with_staleness(ids, 0.0, end)
            for row, sid in enumerate(ids.tolist()):
                if np.isnan(vals[row]).all() and not stale[row].any():
                    continue
                series.append(
                    {
                        "series": series_selector(name, store.labels(sid)),
                        "values": encode_values(vals[row], stale[row]),
                    }
                )
                n_samples += int((~np.isnan(vals[row])).sum())
        alert_tests, expr_tests = [], []
        rule_names = [r.name for r in engine.rules]
        n_firing = n_pending = 0
        for t in check_times(engine, end, every_s):
            firing: dict[str, list[dict[str, Any]]] = {name: [] for name in rule_names}
            tied: set[str] = set()  # an annotation on a rounding tie: that rule is not checked at t
            for labels, annotations in engine.firing_as_prometheus(t):
                name = labels["alertname"]
                if annotations is None:
                    tied.add(name)
                firing[name].append(
                    {
                        "exp_labels": {k: v for k, v in labels.items() if k != "alertname"},
                        "exp_annotations": annotations,
                    }
                )
            for name in rule_names:
                if name in tied:
                    continue
                alert_tests.append({"eval_time": _seconds(t), "alertname": name, "exp_alerts": firing[name]})
                n_firing += len(firing[name])
            pending = [
                {"labels": series_selector("ALERTS", {**a.labels, "alertstate": "pending"}), "value": 1}
                for a in engine.pending(t)
            ]
            n_pending += len(pending)
            expr_tests.append(
                {
                    "expr": f'ALERTS{{alertstate="pending", namespace="{app.namespace}"}}',
                    "eval_time": _seconds(t),
                    "exp_samples": pending,
                }
            )
    fired = engine.history()
    resolved = sum(1 for a in fired if a.resolved_at is not None)
    tests = {
        "rule_files": [RULES_FILE],
        "evaluation_interval": f"{int(engine.interval_s)}s",
        "tests": [
            {
                "interval": f"{int(store.step_s)}s",
                "input_series": series,
                "alert_rule_test": alert_tests,
                "promql_expr_test": expr_tests,
            }
        ],
    }
    summary = {
        "series": len(series),
        "samples": n_samples,
        "checked_times": len(expr_tests),
        "alert_checks": len(alert_tests),
        "firing_expected": n_firing,
        "pending_expected": n_pending,
        "alerts_fired": len(fired),
        "alerts_resolved": resolved,
    }
    return _app_rule_groups(catalog, app), tests, summary


def write_rule_tests(
    out_dir: str | os.PathLike[str],
    catalog: Catalog,
    app: App,
    store: MetricStore,
    end_s: float | None = None,
    every_s: float = 60.0,
) -> tuple[Path, dict[str, int]]:
    """Write ``rules.yaml`` and ``rule-tests.yaml`` into `out_dir`; return the test path and summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rules, tests, summary = build_rule_tests(catalog, app, store, end_s, every_s)
    (out / RULES_FILE).write_text(_dump(rules))
    path = out / TESTS_FILE
    path.write_text(_dump(tests))
    return path, summary


def _dump(doc: Any) -> str:
    """YAML through libyaml where PyYAML has it (its wheels do): a leaderboard run's tests are tens
    of megabytes, which the pure-Python emitter takes most of a minute to write."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump(doc, Dumper=dumper, sort_keys=False, width=1 << 16)


def run_promtool_tests(test_file: str | os.PathLike[str]) -> tuple[bool, str]:
    """Run ``promtool test rules``; (passed, its output with the failures, if any)."""
    res = subprocess.run(
        [binary("promtool"), "test", "rules", Path(test_file).name],
        cwd=Path(test_file).parent,
        capture_output=True,
        text=True,
    )
    return res.returncode == 0, (res.stdout + res.stderr).strip()
