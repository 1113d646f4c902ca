"""Builds the fixed-shape observation of one invocation from summaries (not raw series)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from gymnasium import spaces

from ..detmath import log
from .actions import ActionLayout

ALERT_STATES = ("empty", "firing", "resolved")
SERVICE_FEATURES = ("requests_per_s", "error_ratio", "mean_latency_log10_ms", "throttled_ratio",
                    "ready_ratio", "restarts", "not_running_pods", "deploys")
INCIDENT_FEATURES = ("open", "alerts", "has_root_cause", "age_min", "resolved")
_LN10 = 2.302585092994046  # ln 10


def observation_space(n_services: int, n_rules: int, max_alerts: int, max_incidents: int) -> spaces.Dict:
    return spaces.Dict({
        "alert_rule": spaces.MultiDiscrete(np.full(max_alerts, n_rules + 1)),
        "alert_service": spaces.MultiDiscrete(np.full(max_alerts, n_services + 1)),
        "alert_state": spaces.MultiDiscrete(np.full(max_alerts, len(ALERT_STATES))),
        "alert_age_min": spaces.Box(0.0, 1e4, (max_alerts,), np.float32),
        "alert_in_incident": spaces.MultiBinary(max_alerts),
        "services": spaces.Box(-1e6, 1e6, (n_services, len(SERVICE_FEATURES)), np.float32),
        "incidents": spaces.Box(0.0, 1e4, (max_incidents, len(INCIDENT_FEATURES)), np.float32),
        "time": spaces.Box(0.0, 1.0, (2,), np.float32),
    })


def env_spaces(catalog: Any, app: Any, max_alerts: int, max_incidents: int, action_slots: int) -> SimpleNamespace:
    """What every Marathon-style env (simulated or live) fixes per app: the action layout, the
    service and rule indices the observation uses, and both spaces. One place, so the simulated
    and the live env can never disagree on them."""
    layout = ActionLayout.for_app(app, max_incidents)
    rules = [r for r in catalog.rules.rules if r.applies_to(app.app)]
    return SimpleNamespace(
        layout=layout,
        service_index={s: i for i, s in enumerate(layout.services)},
        rule_index={r.name: i + 1 for i, r in enumerate(rules)},
        observation_space=observation_space(len(layout.services), len(rules), max_alerts, max_incidents),
        action_space=spaces.MultiDiscrete(np.tile(layout.nvec(), (action_slots, 1))),
    )


def build_observation(env: Any) -> dict[str, np.ndarray]:
    sim, runner = env.sim, env.runner
    S, A, I = len(env.layout.services), env.max_alerts, env.max_incidents
    now = sim.now
    history = env.alert_engine.history()
    grouped = {a for inc in runner.incidents.incidents.values() if inc.resolved_s is None for a in inc.alert_ids}
    pod_service = {p.name: p.service for p in sim.cluster.pods.values()}
    recent = history[-A:]
    obs = {
        "alert_rule": np.zeros(A, np.int64), "alert_service": np.zeros(A, np.int64), "alert_state": np.zeros(A, np.int64),
        "alert_age_min": np.zeros(A, np.float32), "alert_in_incident": np.zeros(A, np.int8),
    }
    for k, a in enumerate(recent):
        obs["alert_rule"][k] = env.rule_index.get(a.rule, 0)
        svcs = sorted(sim.app.label_services(a.labels, pod_service))
        obs["alert_service"][k] = env.service_index[svcs[0]] + 1 if svcs else 0
        obs["alert_state"][k] = 1 if a.resolved_at is None else 2
        obs["alert_age_min"][k] = (now - a.fired_at) / 60.0
        obs["alert_in_incident"][k] = a.id in grouped
    w = sim.window
    ticks = max(w.ticks, 1)
    seconds = ticks * 5.0
    c = sim.compiled
    cl = sim.cluster
    desired = cl.desired.sum(axis=0)
    ready = cl.ready.sum(axis=0)
    not_running = np.zeros(S)
    for p in cl.pods.values():
        if cl.pod_status(p) not in ("Running", "Terminating"):
            not_running[c.index[p.service]] += 1
    deploys = np.zeros(S)
    for r in sim.pipeline.history:
        if r.submitted_s > now - env.interval_s and r.service in c.index:
            deploys[c.index[r.service]] += 1
    restarts = sim.restarts_total - env._restarts_at_step
    feats = np.stack([
        w.calls / seconds,
        np.where(w.calls > 0, w.errors / np.maximum(w.calls, 1), 0.0),
        # log10 without numpy's SIMD kernels (their last bits depend on the CPU)
        log(np.maximum(np.where(w.calls > 0, w.latency_sum / np.maximum(w.calls, 1), 0.0), 1e-3) + 1.0)
        / _LN10,
        w.throttled_sum / ticks,
        np.where(desired > 0, ready / np.maximum(desired, 1), 1.0),
        restarts,
        not_running,
        deploys,
    ], axis=1).astype(np.float32)
    obs["services"] = feats
    incidents = np.zeros((I, len(INCIDENT_FEATURES)), np.float32)
    for k, inc in enumerate(list(runner.incidents.incidents.values())[-I:]):
        incidents[k] = (inc.resolved_s is None, len(inc.alert_ids), inc.artifact is not None,
                        (now - inc.opened_s) / 60.0, inc.resolved_s is not None)
    obs["incidents"] = incidents
    obs["time"] = np.array([min(now / env.run_s, 1.0), float(now >= env.injection_s)], np.float32)
    return obs
