"""The agent's RCA report (ORCA-bench's template) as pydantic models, and the submit tool.

Sections follow the instruction template: Summary, Timeline, 5 Whys, Remediation. Root causes are
structured so a deterministic judge can read them: each names a flag or a service, a mechanism
from a fixed vocabulary, the incident start and evidence references (metric queries, log ids,
trace ids) that the judge re-checks against the telemetry. An empty report means "no incident".
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .flags import Mechanism


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)  # 1e400 parses as inf: rejected


class MetricRef(_M):
    """A metric query: the series name and the label matchers (as in query_metrics)."""

    kind: Literal["metric"] = "metric"
    metric: str = Field(min_length=1, max_length=200)
    matchers: dict[str, str] = Field(default_factory=dict)


class LogRef(_M):
    """A log line by the `id` search_logs returned."""

    kind: Literal["log"] = "log"
    log_id: str = Field(min_length=1, max_length=100)


class TraceRef(_M):
    """A trace by its id (from get_traces or a log line's trace_id)."""

    kind: Literal["trace"] = "trace"
    trace_id: str = Field(min_length=1, max_length=100)


EvidenceRef = Annotated[Union[MetricRef, LogRef, TraceRef], Field(discriminator="kind")]


class TimelineEntry(_M):
    time_s: float = Field(ge=0, description="simulated seconds (t=0 is day 1 00:00 ET)")
    services: list[str] = Field(default_factory=list)
    description: str = Field("", max_length=1000)


class WhyStep(_M):
    question: str = Field(max_length=1000)
    answer: str = Field(max_length=2000)
    evidence: list[EvidenceRef] = Field(default_factory=list, max_length=20)


class RemediationItem(_M):
    action: str = Field(max_length=1000)
    targets: list[int] = Field(default_factory=list, description="the Why steps (1-based) it addresses")
    type: Literal["root_cause_fix", "propagation_fix", "detection_fix"] = "root_cause_fix"


class RootCause(_M):
    """One root cause: a feature flag (preferred) or a service, how it fails, when it started."""

    flag: str | None = Field(None, max_length=100)
    service: str | None = Field(None, max_length=100)
    mechanism: Mechanism
    incident_start_s: float = Field(ge=0)
    end_s: float | None = Field(
        None, ge=0, description="when the impact ended; missing: still ongoing at the current time"
    )
    explanation: str = Field("", max_length=2000)
    evidence: list[EvidenceRef] = Field(default_factory=list, max_length=20)

    @model_validator(mode="after")
    def _names_something(self) -> RootCause:
        if not self.flag and not self.service:
            raise ValueError("a root cause names a flag or a service")
        if self.end_s is not None and self.end_s < self.incident_start_s:
            raise ValueError("end_s is before incident_start_s")
        return self


class RcaReport(_M):
    summary: str = Field("", max_length=4000)
    timeline: list[TimelineEntry] = Field(default_factory=list, max_length=50)
    five_whys: list[WhyStep] = Field(default_factory=list, max_length=20)
    remediation: list[RemediationItem] = Field(default_factory=list, max_length=20)
    root_causes: list[RootCause] = Field(default_factory=list, max_length=20)

    @property
    def is_empty(self) -> bool:
        """An empty report asserts that no incident happened."""
        return not (
            self.summary.strip() or self.timeline or self.five_whys or self.remediation or self.root_causes
        )

    def all_evidence(self) -> list[EvidenceRef]:
        out: list[EvidenceRef] = []
        for rc in self.root_causes:
            out += rc.evidence
        for w in self.five_whys:
            out += w.evidence
        return out

    def incident_times(self) -> list[float]:
        """Every time the report places incident impact at (root-cause starts and timeline entries)."""
        return [rc.incident_start_s for rc in self.root_causes] + [e.time_s for e in self.timeline]

    def impact_periods(self, current_s: float, implicit_now: bool = True) -> list[tuple[float, float]]:
        """Every period the report places incident impact in, as closed intervals (a point is (t, t)).

        A root cause without `end_s` is ongoing: its impact lasts until `current_s`. A non-empty report
        that gives no time at all claims an incident now (rubric.md: "ongoing at current")."""
        out = [
            (rc.incident_start_s, max(rc.incident_start_s, current_s) if rc.end_s is None else rc.end_s)
            for rc in self.root_causes
        ]
        out += [(e.time_s, e.time_s) for e in self.timeline]
        if implicit_now and not out and not self.is_empty:
            out.append((float(current_s), float(current_s)))
        return out


class SubmitReport(_M):
    """Submit the RCA report and end the task (an empty report: no incident occurred)."""

    tool: Literal["submit_report"] = "submit_report"
    report: RcaReport = Field(default_factory=RcaReport)
