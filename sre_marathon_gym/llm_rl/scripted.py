"""A scripted policy for the tool-use environments: what the example runs and the tests drive, in
place of a language model (it reads alerts, groups them, and nothing more: a smoke test of the
protocol, not a baseline)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def alert_grouping_episode(step: Callable[[str, dict], Any], max_incidents: int = 3) -> list[float]:
    """Play one episode through `step(tool, arguments)` (which returns an observation with ``text``,
    ``is_error``, ``reward``, ``done``): each invocation, read up to 12 firing alerts, open an incident
    per service for those not grouped yet (at most `max_incidents`), then end the invocation.
    Returns every call's reward, in order."""
    rewards: list[float] = []
    grouped: set[str] = set()
    while True:
        seen = step("get_alerts", {"state": "firing", "limit": 12})
        rewards.append(seen.reward)
        by_service: dict[str, list[str]] = {}
        for alert in json.loads(seen.text)["data"]["alerts"] if not seen.is_error else []:
            service = alert["labels"].get("service_name") or alert["labels"].get("container")
            if service and alert["id"] not in grouped:
                by_service.setdefault(service, []).append(alert["id"])
        for service, ids in sorted(by_service.items())[:max_incidents]:
            opened = step("open_incident", {"alert_ids": ids, "title": f"{service} alerts"})
            rewards.append(opened.reward)
            if not opened.is_error:
                grouped.update(ids)
        ended = step("end_invocation", {})
        rewards.append(ended.reward)
        if ended.done:
            return rewards
