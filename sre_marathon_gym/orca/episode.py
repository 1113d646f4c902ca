"""One ORCA-bench task as an investigation: the issue text, the capped tools, the judged report.

Why shared by the env, the evaluator and the baselines: all three must run a task the same way
(same instruction text, same horizon, same judge), whether an agent speaks Gymnasium or Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..scoring.orca import TaskScore, judge
from ..tools.models import ToolResult
from .data import load_questions
from .evidence import EvidenceChecker
from .observed import Observations
from .report import EvidenceRef, MetricRef, RcaReport
from .schedule import OrcaSchedule
from .task_model import GroundTruthCause
from .tasks import OrcaTask, world_schedule
from .time_text import current_text, date_text
from .tools import OrcaTools, parse_orca_call
from .world import orca_world
from .world_spec import PUBLISHED, WorldSpec


def instruction(task: OrcaTask, schedule: OrcaSchedule, source_access: bool = True) -> str:
    """The agent's instructions (ORCA's template), with the simulated clock the tools speak."""
    now = current_text(schedule.local(task.current_s))
    src = "Read source with read_source (service flagd holds the flag definitions). " if source_access else ""
    return (
        f"You are an expert SRE. The current time is {now} (simulated t={task.current_s} s; t=0 is "
        f"{date_text(schedule.local(0))} 00:00 ET; tools take seconds). "
        f"The following issue was reported {task.reported_styled}: {task.question}. "
        "The reported time is not necessarily when the incident began; pinpoint the root-cause events and "
        "their times. There may be multiple root causes, or none. "
        "Telemetry (query_metrics, search_logs, get_traces, get_topology) is available up to "
        f"t={task.horizon_s} s. {src}"
        "First decide whether an incident occurred: if none did, submit an empty report. Otherwise submit "
        "a structured RCA report (summary, timeline, five_whys, remediation, root_causes with the feature "
        "flag or service, mechanism, incident_start_s and evidence: metric queries, log ids, trace ids; "
        "a metric query counts as evidence only if one of your query_metrics calls returned its series "
        "over the incident's start)."
    )


@dataclass
class Episode:
    task: OrcaTask
    source_access: bool = True
    days: int = 6
    world: WorldSpec = PUBLISHED  # the world the task was generated on

    @cached_property
    def schedule(self) -> OrcaSchedule:
        return world_schedule(self.days, self.world)

    @cached_property
    def tools(self) -> OrcaTools:
        """Built on first use: the recorded run is simulated (once per process) only when needed."""
        return OrcaTools(orca_world(self.days, world=self.world), self.task.horizon_s, self.source_access)

    @property
    def issue(self) -> str:
        return instruction(self.task, self.schedule, self.source_access)

    def call(self, raw: Any) -> ToolResult:
        model, err = parse_orca_call(raw, self.source_access)
        if err is not None:
            return err
        if model.tool == "submit_report":
            return ToolResult.fail(
                "submit_report",
                "invalid_arguments",
                "submit_report ends the task: pass the report to Episode.score (the env's step does this), "
                "not to Episode.call",
            )
        return self.tools.call(model)

    def score(self, report: RcaReport) -> TaskScore:
        task, horizon = self.task, self.task.horizon_s
        if report.is_empty or not report.all_evidence():
            return judge(task, report, lambda ref, cause: False)
        checker = EvidenceChecker(orca_world(self.days, world=self.world))
        qf = load_questions()
        rts = tuple(rt for a in task.areas for rt in qf.areas[a].request_types) if task.areas else None
        signals = checker.request_type_signals(rts)
        tools = self.__dict__.get("tools")  # built only if the agent called a tool
        observed = tools.observed if tools is not None else Observations()

        def seen(ref: EvidenceRef, cause: GroundTruthCause) -> bool:
            """A metric ref counts only if the agent's own queries returned it across the flip."""
            return not isinstance(ref, MetricRef) or observed.covers(ref, cause.start_s)

        return judge(
            task,
            report,
            lambda ref, cause: seen(ref, cause) and checker.shows(ref, cause, horizon),
            # level 1: the complaint's request types change at this cause's own flip
            lambda ref, cause: (
                seen(ref, cause)
                and checker.symptom_shows(ref, signals, [(cause.start_s, cause.end_s)], horizon)
            ),
        )
