"""`MarathonCore`: what every SRE-Marathon environment shares, whatever keeps its time.

Why a base class: the simulated env (`MarathonEnv`, which steps a `SimulatedRun`) and the live env
(`LiveMarathonEnv`, which waits on a cluster's clock) must show an agent the same thing: the same
spaces, the same action decoding and masks, the same observation, the same tools. They differ only
in how time passes, how faults get in, and what the per-service summary can measure, so those are
the hooks (`backend`, `runner`, `alert_engine`, `_service_features`) and everything else is here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ..core.errors import SREMarathonError
from ..tools.models import ToolResult
from .actions import VERBS, decode_slot, slot_mask
from .inputs import MAX_ACTION_SLOTS, MAX_OBSERVED_ROWS, whole
from .observation import build_observation, env_spaces


class MarathonCore(gym.Env, ABC):
    """Subclasses set `catalog`, `app`, `interval_s`, `run_s`, `injection_s`, then call
    `_init_spaces`; after reset they hold `backend`, `runner` and `alert_engine`."""

    metadata: ClassVar[dict] = {"render_modes": []}
    backend: Any
    runner: Any
    alert_engine: Any

    def _init_spaces(self, max_alerts: int, max_incidents: int, action_slots: int) -> None:
        """The spaces for these sizes (checked here, for every env: an absurd size would allocate
        gigabytes before anything else could refuse it)."""
        action_slots = whole("action_slots", action_slots, 1, MAX_ACTION_SLOTS)
        max_alerts = whole("max_alerts", max_alerts, 1, MAX_OBSERVED_ROWS)
        max_incidents = whole("max_incidents", max_incidents, 1, MAX_OBSERVED_ROWS)
        self.max_alerts, self.max_incidents, self.action_slots = max_alerts, max_incidents, action_slots
        sp = env_spaces(self.catalog, self.app, max_alerts, max_incidents, action_slots)
        self.layout, self.service_index, self.rule_index = sp.layout, sp.service_index, sp.rule_index
        self.observation_space, self.action_space = sp.observation_space, sp.action_space

    # ------------------------------------------------------------ hooks
    @abstractmethod
    def _service_features(self) -> np.ndarray:
        """The per-service rows of the observation (`observation.SERVICE_FEATURES`): what this env's
        time source can measure (a simulated run's traffic summary, or the cluster API alone)."""

    def _extra_info(self) -> dict:
        return {}

    # ------------------------------------------------------------ shared
    def _pod_services(self) -> dict[str, str]:
        try:
            return self.backend.pod_services()
        except SREMarathonError:  # a live cluster that cannot list pods now: labels alone
            return {}

    def _network_policies(self) -> list[str]:
        try:
            return sorted(r["name"] for r in self.backend.k8s_state("networkpolicies", None, 10_000))
        except SREMarathonError:
            return []

    def _run_slots(self, arr: np.ndarray | None) -> list[ToolResult]:
        """Decode each action slot against the current view and run it through the tool runner."""
        results: list[ToolResult] = []
        if arr is None:
            return results
        view = self._view()
        for slot in arr:
            call = decode_slot(self.layout, slot, view)
            if call is not None:
                results.append(self.runner.call(call))
                view = self._view()
        return results

    def _view(self) -> dict:
        """What action decoding and masks need: open incidents, firing alerts per service that no open
        incident groups yet, the app's baseline config values and the network policies."""
        runner = self.runner
        incidents = runner.incidents.incidents
        open_ids = [i for i, inc in incidents.items() if inc.resolved_s is None][-self.max_incidents :]
        grouped = {a for i in open_ids for a in incidents[i].alert_ids}
        pod_service = self._pod_services()
        ungrouped: dict[str, list[str]] = {}
        for a in self.alert_engine.history():
            if a.resolved_at is None and a.id not in grouped:
                for s in sorted(self.app.label_services(a.labels, pod_service)):
                    ungrouped.setdefault(s, []).append(a.id)
        return {
            "incident_ids": open_ids,
            "ungrouped_alerts": ungrouped,
            "baseline_values": self.baseline_values,
            "policies": self._network_policies(),
        }

    def _info(self) -> dict:
        view = self._view()
        ungrouped = np.array([bool(view["ungrouped_alerts"].get(s)) for s in self.layout.services])
        return {
            "time_s": self.backend.now(),
            "invocation": self.runner.invocation,
            "action_mask": slot_mask(self.layout, view),
            "verbs": VERBS,
            "services_with_ungrouped_alerts": ungrouped,
            **self._extra_info(),
        }

    def _observe(self) -> dict[str, np.ndarray]:
        return build_observation(self, self._service_features())


__all__ = ["MarathonCore"]
