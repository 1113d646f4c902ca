"""A thin chat-completions client: retries with backoff, the invocation deadline, usage accounting.

Why not the openai client's own retries: a retry must respect the invocation's wall-clock budget
(a backoff that outlives the budget is a timeout, and is recorded as one), and every attempt must
be counted. `openai` is imported lazily, so the package works without the `llm` extra.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...catalog.pricing import ModelPrice
from ...core.errors import BudgetExceededError, ModelEndpointError, OptionalDependencyError
from ...core.run_record import Usage
from .budget import Deadline
from .config import LLMConfig

INSTALL_HINT = "pip install 'sre-marathon-gym[llm]'"
# the preflight request (`LLMAgent.preflight`): the smallest chat completion that proves the key,
# the model name and the URL work together
PREFLIGHT_MESSAGES = [{"role": "user", "content": "Connection check before a benchmark run: reply with OK."}]


def require_openai() -> Any:
    """The `openai` module, or an error that says how to install it."""
    try:
        import openai
    except ImportError:
        raise OptionalDependencyError(f"LLM agents need the `openai` package: {INSTALL_HINT}") from None
    return openai


@dataclass(frozen=True)
class ToolCallRequest:
    """One function call the model asked for (arguments are raw text: they may not be JSON)."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ChatReply:
    content: str | None
    tool_calls: list[ToolCallRequest] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None

    def assistant_message(self) -> dict:
        """The reply as the assistant turn of the next request."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            msg["tool_calls"] = [
                {"id": t.id, "type": "function", "function": {"name": t.name, "arguments": t.arguments}}
                for t in self.tool_calls
            ]
        return msg


def estimate_tokens(payload: Any) -> int:
    """About four characters per token: only used when a server reports no usage."""
    text = payload if isinstance(payload, str) else json.dumps(payload, default=str)
    return math.ceil(len(text) / 4)


class ChatClient:
    """Sends chat completions to one OpenAI-compatible endpoint and books every call in `usage`."""

    def __init__(
        self,
        config: LLMConfig,
        usage: Usage,
        price: ModelPrice | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        openai = require_openai()
        self.config, self.usage, self.price = config, usage, price
        self._sleep = sleep
        self._openai = openai
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key.get_secret_value(),
            max_retries=0,
            timeout=config.request_timeout_s,
        )
        self.errors: list[str] = []  # one line per failed attempt (what went wrong, for the run log)
        self.consecutive_rejections = 0  # non-retryable 4xx answers since the last usable answer

    def close(self) -> None:
        self._client.close()

    @property
    def closed(self) -> bool:
        return bool(self._client.is_closed())

    def chat(self, messages: list[dict], deadline: Deadline, tools: list[dict] | None = None) -> ChatReply:
        """One completion; retryable failures are retried until `max_retries` or the deadline."""
        cfg, o = self.config, self._openai
        retryable = (
            o.APIConnectionError,
            o.RateLimitError,
            o.InternalServerError,
            o.APIResponseValidationError,
        )
        kwargs: dict[str, Any] = {"model": cfg.model, "messages": messages}
        if tools:
            kwargs.update(tools=tools, tool_choice="auto")
        if cfg.temperature is not None:
            kwargs["temperature"] = cfg.temperature
        if cfg.max_output_tokens is not None:
            kwargs["max_tokens"] = cfg.max_output_tokens
        attempt = 0
        while True:
            deadline.check("model call")
            timeout = min(cfg.request_timeout_s, deadline.remaining())
            try:
                resp = self._client.chat.completions.create(timeout=timeout, **kwargs)
                reply = self._reply(resp, messages)
            except retryable as exc:
                self._failed(exc)
                capped = timeout < cfg.request_timeout_s  # the budget, not the request limit, cut it short
                if deadline.remaining() <= 0.05 or (capped and isinstance(exc, o.APITimeoutError)):
                    raise BudgetExceededError(
                        f"model call: the {deadline.seconds:g} s budget ran out ({type(exc).__name__})"
                    ) from None
            except o.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                self._failed(exc)
                self.consecutive_rejections += 1
                raise ModelEndpointError(
                    f"{cfg.model}: HTTP {exc.status_code}: {_short(exc)}", status_code=exc.status_code
                ) from None
            except o.OpenAIError as exc:
                self._failed(exc)
                raise ModelEndpointError(f"{cfg.model}: {_short(exc)}") from None
            except (
                _MalformedReply,
                ValueError,
                TypeError,
                AttributeError,
            ) as exc:  # a 200 that is not a completion
                self._failed(exc)
            else:
                if deadline.expired:  # booked above (the tokens were spent), but too late to act on
                    raise BudgetExceededError(
                        f"model call: the answer came after the {deadline.seconds:g} s budget ran out"
                    )
                return reply
            if attempt >= cfg.max_retries:
                raise ModelEndpointError(
                    f"{cfg.model}: no usable answer after {attempt + 1} attempt(s): {self.errors[-1]}"
                )
            delay = min(cfg.backoff_s * 2**attempt, cfg.backoff_max_s, max(deadline.remaining(), 0.0))
            attempt += 1
            if delay > 0:
                self._sleep(delay)

    # ------------------------------------------------------------ internals
    def _reply(self, resp: Any, messages: list[dict]) -> ChatReply:
        choices = getattr(resp, "choices", None)
        if not choices:
            raise _MalformedReply("the response has no choices")
        msg = choices[0].message
        calls = [
            ToolCallRequest(
                id=t.id or f"call_{i}", name=t.function.name or "", arguments=t.function.arguments or ""
            )
            for i, t in enumerate(getattr(msg, "tool_calls", None) or [])
            if getattr(t, "function", None)
        ]
        usage = getattr(resp, "usage", None)
        if usage is not None and usage.prompt_tokens is not None:
            tin, tout = int(usage.prompt_tokens), int(usage.completion_tokens or 0)
        else:
            tin = estimate_tokens(messages)
            tout = estimate_tokens(msg.content or "") + sum(estimate_tokens(c.arguments) for c in calls)
        self.consecutive_rejections = 0
        u = self.usage
        u.model_calls += 1
        u.input_tokens += tin
        u.output_tokens += tout
        if self.price is not None:
            u.cost_usd += self.price.cost(tin, tout)
        return ChatReply(
            content=msg.content,
            tool_calls=calls,
            input_tokens=tin,
            output_tokens=tout,
            finish_reason=choices[0].finish_reason,
        )

    def _failed(self, exc: BaseException) -> None:
        self.usage.failed_model_calls += 1
        self.errors = [*self.errors[-99:], f"{type(exc).__name__}: {_short(exc)}"]


class _MalformedReply(Exception):
    """A 200 answer without a usable message (retried like a server error)."""


def _short(exc: BaseException, limit: int = 300) -> str:
    text = " ".join(str(exc).split())
    return text[:limit] + ("..." if len(text) > limit else "")


__all__ = [
    "INSTALL_HINT",
    "PREFLIGHT_MESSAGES",
    "ChatClient",
    "ChatReply",
    "ToolCallRequest",
    "estimate_tokens",
    "require_openai",
]
