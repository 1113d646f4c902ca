"""RAG (SRE-Marathon App. G): retrieve, rank against the alerts, one model call, execute the plan.

Each invocation reads live telemetry and topology (`retrieval.collect`), ranks the documents
against the firing alerts' names and labels, and makes exactly one model call that returns a
plan: alert groups, root causes and optional repairs (`plan.PLAN_FORMAT`). The plan is validated
and executed through the ordinary tools. Choices the paper leaves open: an invocation with no
firing alert makes no model call (there is nothing to group); problems with the previous plan
(invalid JSON, tool errors, made-up ids) are shown to the model in the next invocation's prompt,
the only channel a one-call method has for feedback.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...core.errors import BudgetExceededError
from .base import LLMAgent
from .budget import Deadline
from .config import validated
from .context import alert_history, context_view, incident_lines, instructions
from .plan import PLAN_FORMAT, execute_plan, parse_plan
from .retrieval import alert_terms, collect, rank, render

TOP_K = 12
MAX_FEEDBACK = 20


class RAGOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    top_k: int = Field(TOP_K, ge=1, description="retrieved documents shown to the model")


class RAGAgent(LLMAgent):
    """One planning call per invocation over ranked, retrieved context."""

    name = "rag"

    def __init__(self, *args: Any, top_k: int = TOP_K, **kwargs: Any):
        opts = validated(RAGOptions, "RAG", top_k=top_k)
        super().__init__(*args, **kwargs)
        self.top_k = opts.top_k
        self.feedback: list[str] = []

    def reset_state(self, env: Any) -> None:
        self.feedback = []

    def act(self, env: Any, deadline: Deadline, invocation: int) -> None:
        call = env.call_tool
        now, alerts, incidents = context_view(call)
        if not any(a["resolved_at"] is None for a in alerts):
            return
        user = self._planning_prompt(
            call, now, alerts, f"Incidents you reported so far:\n{incident_lines(incidents)}"
        )
        self._plan_and_execute(call, instructions(env.app.display_name, env.interval_s, now), user, deadline)

    # ------------------------------------------------------------ shared with Keep-agent
    def _planning_prompt(self, call: Any, now: float, alerts: list[dict], incidents_section: str) -> str:
        """The one planning prompt: alert history, the method's incident section, the retrieved
        context ranked against the firing alerts, feedback on the previous plan, the plan format."""
        docs = rank(collect(call, now), alert_terms(alerts), self.top_k)
        return (
            f"Cumulative alert history (t={now:g} s):\n{alert_history(alerts, now)}\n\n"
            f"{incidents_section}\n\n"
            f"Retrieved context, most relevant to the firing alerts first:\n{render(docs)}\n\n"
            + self._feedback_text()
            + PLAN_FORMAT
        )

    def _plan_and_execute(
        self, call: Any, system: str, user: str, deadline: Deadline, placeable: set[str] | None = None
    ) -> None:
        deadline.check("planning call")
        reply = self.client.chat(
            [
                {"role": "system", "content": system},  # type: ignore[union-attr]
                {"role": "user", "content": user},
            ],
            deadline,
        )
        feedback: list[str] = []
        plan, problem = parse_plan(reply.content)
        if plan is None:
            feedback.append(problem or "unusable plan")
        else:
            done = execute_plan(call, plan, feedback, placeable, deadline=deadline)
            if done.skipped:
                self.feedback = feedback[-MAX_FEEDBACK:]
                raise BudgetExceededError(
                    f"plan execution: the {deadline.seconds:g} s budget ran out; not executed: "
                    + ", ".join(done.skipped)
                )
        self.feedback = feedback[-MAX_FEEDBACK:]

    def _feedback_text(self) -> str:
        if not self.feedback:
            return ""
        return (
            "Problems with your previous plan (fix them):\n"
            + "\n".join(f"- {f}" for f in self.feedback)
            + "\n\n"
        )


__all__ = ["RAGAgent"]
