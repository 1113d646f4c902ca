"""ReAct (SRE-Marathon App. G): a fresh function-calling conversation every invocation.

As the paper describes it: each invocation starts a new conversation that holds only the
cumulative alert history and the incidents opened so far; the model chooses its own tool calls
(the benchmark's tools, as OpenAI function specs); the invocation stops when the model stops
calling tools, after `max_steps` model turns (10), or before a call that would take the
conversation past `max_tokens` tokens (150k), whichever comes first, and always within the
wall-clock budget. `stops` (and the bundle's `agent.stops`) counts why invocations ended,
timeouts and endpoint failures included.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ...core.errors import BudgetExceededError, ModelEndpointError
from ...tools.models import openai_tools
from .base import LLMAgent
from .budget import Deadline
from .calls import run_function_call
from .client import estimate_tokens
from .config import validated
from .context import alert_history, context_view, incident_lines, instructions

MAX_STEPS = 10
MAX_TOKENS = 150_000

REACT_GUIDE = """\
Use the tools: investigate what you need (metrics, logs, traces, deploy history, configuration, \
source), report incidents (open_incident, set_root_cause, update_incident, resolve_incident) and act. \
Tool errors come back as results; fix the call and continue. When you have nothing more to do in \
this invocation, answer without calling a tool.\
"""


class ReActOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(MAX_STEPS, ge=1, description="model turns per invocation")
    max_tokens: int = Field(MAX_TOKENS, ge=1, description="tokens (prompt + completion) per invocation")


class ReActAgent(LLMAgent):
    """Function calling over the shared tools; no memory beyond alerts and incidents."""

    name = "react"

    def __init__(self, *args: Any, max_steps: int = MAX_STEPS, max_tokens: int = MAX_TOKENS, **kwargs: Any):
        opts = validated(ReActOptions, "ReAct", max_steps=max_steps, max_tokens=max_tokens)
        super().__init__(*args, **kwargs)
        self.max_steps, self.max_tokens = opts.max_steps, opts.max_tokens
        self._tools = openai_tools()
        # why each invocation ended: no_tool_calls | max_steps | max_tokens | timeout | endpoint_error
        self.stops: list[str] = []

    def reset_state(self, env: Any) -> None:
        self.stops = []

    def act(self, env: Any, deadline: Deadline, invocation: int) -> None:
        try:
            self.stops.append(self._converse(env, deadline))
        except BudgetExceededError:
            self.stops.append("timeout")
            raise
        except ModelEndpointError:
            self.stops.append("endpoint_error")
            raise

    def _converse(self, env: Any, deadline: Deadline) -> str:
        """One invocation's conversation; returns why it stopped.

        The token cap is checked before every model call: the call is not made when the tokens
        spent so far plus the next prompt's would exceed `max_tokens`. The next prompt is the
        previous one plus its answer, as the server counted them, plus the tool results added
        since (estimated at four characters a token); the first prompt (messages and tool specs)
        is estimated the same way.
        Only the answer's own tokens are unknown in advance, so one call may pass the cap by at
        most one completion.
        """
        call = env.call_tool
        now, alerts, incidents = context_view(call)
        messages: list[dict] = [
            {
                "role": "system",
                "content": instructions(env.app.display_name, env.interval_s, now) + "\n\n" + REACT_GUIDE,
            },
            {
                "role": "user",
                "content": f"Cumulative alert history (t={now:g} s):\n{alert_history(alerts, now)}\n\n"
                f"Incidents you reported so far:\n{incident_lines(incidents)}",
            },
        ]
        spent = 0
        next_prompt = estimate_tokens(messages) + estimate_tokens(
            self._tools
        )  # the tool specs are prompt too
        for _step in range(self.max_steps):
            if spent + next_prompt > self.max_tokens:
                return "max_tokens"
            reply = self.client.chat(messages, deadline, tools=self._tools)  # type: ignore[union-attr]
            spent += reply.input_tokens + reply.output_tokens
            if not reply.tool_calls:
                return "no_tool_calls"
            messages.append(reply.assistant_message())
            results: list[dict] = []
            for req in reply.tool_calls:
                deadline.check("tool call")
                _result, text = run_function_call(call, req)
                results.append({"role": "tool", "tool_call_id": req.id, "content": text})
            messages += results
            next_prompt = reply.input_tokens + reply.output_tokens + estimate_tokens(results)
        return "max_steps"

    def bundle_extra(self) -> dict:
        extra = super().bundle_extra()
        extra["agent"]["stops"] = dict(sorted(Counter(self.stops).items()))
        return extra


__all__ = ["MAX_STEPS", "MAX_TOKENS", "ReActAgent"]
