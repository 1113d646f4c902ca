"""The build and deploy pipeline: changes pass build, lint, unit tests and rollout in simulated time.

Curated benign changes, change-driven faults and agent repairs all travel through here, so the
deploy history shows each of them the same way: a message, a diff and the stages it passed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cluster import ClusterState

STAGE_SECONDS = {  # build, lint, unit tests; rollout time comes from the cluster itself
    "code": (60.0, 15.0, 30.0),
    "config": (0.0, 5.0, 10.0),
    "flag": (0.0, 2.0, 3.0),
    "manifest": (0.0, 3.0, 0.0),
}


@dataclass
class DeployRecord:
    id: str
    service: str
    kind: str  # code | config | flag | manifest
    artifact: str
    message: str
    diff: str
    author: str  # "ci" for the team's pipeline, "agent" for the agent's repairs
    submitted_s: float
    stages: dict[str, float] = field(default_factory=dict)  # stage -> finish time
    revision: int | None = None
    status: str = "queued"  # queued | deployed | superseded


class Pipeline:
    def __init__(self, cluster: ClusterState):
        self.cluster = cluster
        self.history: list[DeployRecord] = []

    def submit(
        self,
        service: str,
        kind: str,
        artifact: str,
        message: str,
        diff: str,
        author: str,
        apply: Callable[..., int | None],
        *args: Any,
    ) -> DeployRecord:
        """Queue a change; ``apply(*args)`` runs when the tests pass and returns the new deployment
        revision (a method, not a closure: see `ClusterState.schedule`)."""
        now = self.cluster.now
        rec = DeployRecord(
            f"d{len(self.history) + 1:04d}", service, kind, artifact, message, diff, author, now
        )
        self.history.append(rec)
        t = now
        for stage, seconds in zip(("build", "lint", "unit-tests"), STAGE_SECONDS[kind]):
            t += seconds
            rec.stages[stage] = t

        if t <= now:
            self._deploy(rec, apply, args)
        else:
            self.cluster.schedule(t, self._deploy, rec, apply, args)
        return rec

    def _deploy(self, rec: DeployRecord, apply: Callable[..., int | None], args: tuple) -> None:
        rec.revision = apply(*args)
        rec.stages["rollout-started"] = self.cluster.now
        rec.status = "deployed"

    def visible(self, now: float) -> list[DeployRecord]:
        """What `deploy history` shows at `now`: changes submitted so far, with stages reached."""
        return [r for r in self.history if r.submitted_s <= now]
