"""Builds the fixed-shape observation of one invocation from summaries (not raw series)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from gymnasium import spaces

from ..core.errors import SREMarathonError
from .actions import ActionLayout

ALERT_STATES = ("empty", "firing", "resolved")
SERVICE_FEATURES = (
    "requests_per_s",
    "error_ratio",
    "mean_latency_log10_ms",
    "throttled_ratio",
    "ready_ratio",
    "restarts",
    "not_running_pods",
    "deploys",
)
INCIDENT_FEATURES = ("open", "alerts", "has_root_cause", "age_min", "resolved")


def observation_space(n_services: int, n_rules: int, max_alerts: int, max_incidents: int) -> spaces.Dict:
    return spaces.Dict(
        {
            "alert_rule": spaces.MultiDiscrete(np.full(max_alerts, n_rules + 1)),
            "alert_service": spaces.MultiDiscrete(np.full(max_alerts, n_services + 1)),
            "alert_state": spaces.MultiDiscrete(np.full(max_alerts, len(ALERT_STATES))),
            "alert_age_min": spaces.Box(0.0, 1e4, (max_alerts,), np.float32),
            "alert_in_incident": spaces.MultiBinary(max_alerts),
            "services": spaces.Box(-1e6, 1e6, (n_services, len(SERVICE_FEATURES)), np.float32),
            "incidents": spaces.Box(0.0, 1e4, (max_incidents, len(INCIDENT_FEATURES)), np.float32),
            "time": spaces.Box(0.0, 1.0, (2,), np.float32),
        }
    )


def env_spaces(
    catalog: Any, app: Any, max_alerts: int, max_incidents: int, action_slots: int
) -> SimpleNamespace:
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


def build_observation(env: Any, features: np.ndarray) -> dict[str, np.ndarray]:
    """The observation of one invocation: the latest `max_alerts` alerts, the per-service
    `features` (rows in `env.layout.services` order), the agent's incidents and time."""
    runner = env.runner
    max_alerts, max_incidents = env.max_alerts, env.max_incidents
    now = env.backend.now()
    history = env.alert_engine.history()
    grouped = {
        a for inc in runner.incidents.incidents.values() if inc.resolved_s is None for a in inc.alert_ids
    }
    pod_service = env._pod_services()
    obs = {
        "alert_rule": np.zeros(max_alerts, np.int64),
        "alert_service": np.zeros(max_alerts, np.int64),
        "alert_state": np.zeros(max_alerts, np.int64),
        "alert_age_min": np.zeros(max_alerts, np.float32),
        "alert_in_incident": np.zeros(max_alerts, np.int8),
    }
    for k, a in enumerate(history[-max_alerts:]):
        obs["alert_rule"][k] = env.rule_index.get(a.rule, 0)
        svcs = sorted(env.app.label_services(a.labels, pod_service))
        obs["alert_service"][k] = env.service_index[svcs[0]] + 1 if svcs else 0
        obs["alert_state"][k] = 1 if a.resolved_at is None else 2
        obs["alert_age_min"][k] = min(max((now - a.fired_at) / 60.0, 0.0), 1e4)  # a live clock may lag
        obs["alert_in_incident"][k] = a.id in grouped
    obs["services"] = features
    incidents = np.zeros((max_incidents, len(INCIDENT_FEATURES)), np.float32)
    for k, inc in enumerate(list(runner.incidents.incidents.values())[-max_incidents:]):
        incidents[k] = (
            inc.resolved_s is None,
            len(inc.alert_ids),
            inc.artifact is not None,
            max((now - inc.opened_s) / 60.0, 0.0),
            inc.resolved_s is not None,
        )
    obs["incidents"] = incidents
    obs["time"] = np.array([min(now / env.run_s, 1.0), float(now >= env.injection_s)], np.float32)
    return obs


def cluster_features(env: Any, restarts_seen: dict[str, int]) -> tuple[np.ndarray, dict[str, int]]:
    """Per-service features from the cluster API alone (any `Backend`): ready ratio, restarts since
    `restarts_seen` (pod -> restarts at the previous observation), pods not running, rollouts in
    the last interval. Traffic features stay 0: they need the metric source's query language.
    Returns the features and the restart counts to pass next time."""
    now = env.backend.now()
    try:
        pod_service = env.backend.pod_services()
        deployments = env.backend.k8s_state("deployments", None, 10_000)
        pods = env.backend.k8s_state("pods", None, 10_000)
    except SREMarathonError:
        pod_service, deployments, pods = {}, [], []
    feats = np.zeros((len(env.layout.services), len(SERVICE_FEATURES)), np.float32)
    col = {f: i for i, f in enumerate(SERVICE_FEATURES)}
    feats[:, col["ready_ratio"]] = 1.0
    for d in deployments:
        i = env.service_index.get(d["name"])
        if i is None:
            continue
        ready, _, desired = d["ready"].partition("/")
        feats[i, col["ready_ratio"]] = int(ready) / int(desired) if int(desired or 0) > 0 else 1.0
        feats[i, col["deploys"]] = sum(
            1 for h in d["history"] if h["time_s"] is not None and h["time_s"] > now - env.interval_s
        )
    for p in pods:
        i = env.service_index.get(pod_service.get(p["name"], ""))
        if i is None:
            continue
        feats[i, col["restarts"]] += max(p["restarts"] - restarts_seen.get(p["name"], 0), 0)
        if p["status"] not in ("Running", "Terminating"):
            feats[i, col["not_running_pods"]] += 1
    return feats, {p["name"]: p["restarts"] for p in pods}
