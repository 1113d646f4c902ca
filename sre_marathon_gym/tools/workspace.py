"""What persists across invocations: the agent's notes and its incident store.

Each invocation is otherwise independent (as in the paper); the incident store is also what
scoring reads, so every change to it is recorded as an event with its time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.run_record import IncidentEvent

MAX_NOTES = 200
MAX_NOTE_CHARS = 20000
MAX_WRITTEN_CHARS = 2_000_000
"""Characters one run may write to the workspace in all (the paper's runbook writes ~0.3 M in a
leaderboard run): every write is recorded, so without a budget a record could grow without bound."""


@dataclass
class Incident:
    id: str
    opened_s: float
    title: str
    alert_ids: list[str]
    services: list[str] = field(default_factory=list)
    artifact: str | None = None
    summary: str = ""
    notes: list[str] = field(default_factory=list)
    resolved_s: float | None = None

    def view(self) -> dict:
        return {
            "id": self.id,
            "opened_s": self.opened_s,
            "title": self.title,
            "alert_ids": list(self.alert_ids),
            "root_cause": {"services": list(self.services), "artifact": self.artifact}
            if self.artifact
            else None,
            "status": "resolved" if self.resolved_s is not None else "open",
        }


class IncidentStore:
    def __init__(self) -> None:
        self.incidents: dict[str, Incident] = {}
        self.events: list[IncidentEvent] = []

    def _event(self, now: float, op: str, inc: Incident) -> None:
        """Record the incident's full state after `op` (what scoring replays)."""
        self.events.append(
            IncidentEvent(
                time_s=now,
                op=op,
                incident_id=inc.id,
                alert_ids=list(inc.alert_ids),
                services=list(inc.services),
                artifact=inc.artifact,
            )
        )

    def open(self, now: float, alert_ids: list[str], title: str) -> Incident:
        inc = Incident(f"inc-{len(self.incidents) + 1:03d}", now, title, sorted(set(alert_ids)))
        self.incidents[inc.id] = inc
        self._event(now, "open", inc)
        return inc

    def set_root_cause(
        self, now: float, inc: Incident, services: list[str], artifact: str, summary: str
    ) -> None:
        inc.services, inc.artifact, inc.summary = sorted(set(services)), artifact, summary
        self._event(now, "root_cause", inc)

    def update(self, now: float, inc: Incident, add: list[str], remove: list[str], note: str) -> None:
        inc.alert_ids = sorted((set(inc.alert_ids) | set(add)) - set(remove))
        if note:
            inc.notes.append(note[:MAX_NOTE_CHARS])
        self._event(now, "update", inc)

    def resolve(self, now: float, inc: Incident, note: str) -> None:
        inc.resolved_s = now
        if note:
            inc.notes.append(note[:MAX_NOTE_CHARS])
        self._event(now, "resolve", inc)


class Workspace:
    """Free-form notes by key, bounded in count, in size and in what one run may write in all."""

    def __init__(self) -> None:
        self.notes: dict[str, str] = {}
        self.written = 0

    def write(self, key: str, text: str) -> None:
        from ..core.errors import BudgetExceededError

        if key not in self.notes and len(self.notes) >= MAX_NOTES:
            raise ValueError(f"the workspace holds at most {MAX_NOTES} notes; delete one first")
        text = text[:MAX_NOTE_CHARS]
        if self.written + len(text) > MAX_WRITTEN_CHARS:
            raise BudgetExceededError(
                f"this run has written {self.written:,} of the workspace's "
                f"{MAX_WRITTEN_CHARS:,} characters; this write ({len(text):,}) would "
                "exceed them: keep notes shorter or overwrite less often"
            )
        self.written += len(text)
        self.notes[key] = text
