"""What every LLM method shares: configuration, the client, the budget, and failure handling.

Why one base: the protocol's guarantees must hold for every method alike. An invocation that
runs out of its wall-clock budget ends and is recorded in `usage.timed_out_invocations`; an
endpoint that stays down costs the invocation, never the run (the episode, and so its recording,
always continues). The subclass only writes `act(env, deadline)`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import gymnasium as gym
from pydantic import BaseModel, ConfigDict, Field

from ...catalog.pricing import ModelPrice, Pricing
from ...core.errors import BudgetExceededError, ConfigurationError, ModelEndpointError
from ...core.run_record import Usage
from ..base import zero_usage
from .budget import Clock, Deadline
from .client import PREFLIGHT_MESSAGES, ChatClient, require_openai
from .config import LLMConfig, resolve_config, validated

PREFLIGHT_BUDGET_S = 60.0  # the preflight's time limit when no per-invocation budget is set yet


def _rejection_hint(status: int | None) -> str:
    if status in (401, 403):
        return "the API key was refused: set $OPENAI_API_KEY to a key this endpoint accepts"
    if status == 404:
        return (
            "the model or the URL is unknown: check --model, and that --base-url is the API root, e.g. .../v1"
        )
    return "the endpoint rejects the request itself: check --model and --base-url"


class AgentOptions(BaseModel):
    """The options every LLM method takes besides the endpoint (validated at construction)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    budget_s: float | None = Field(
        None, gt=0, description="wall-clock seconds per invocation (None: the catalog's)"
    )
    price: ModelPrice | None = None
    pricing: Pricing | None = None


class LLMAgent(ABC):
    """Base of the ReAct, RAG and Keep-agent adapters (one `invoke` = one invocation)."""

    name = "llm"

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        budget_s: float | None = None,
        price: ModelPrice | tuple[float, float] | None = None,
        pricing: Pricing | None = None,
        clock: Clock = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        **options: Any,
    ):
        require_openai()  # fail at construction (before any run starts), with the install hint
        self.config: LLMConfig = resolve_config(model, base_url, api_key, **options)
        if price is not None and not isinstance(price, ModelPrice):
            try:
                price_in, price_out = price
            except (TypeError, ValueError):
                raise ConfigurationError(
                    f"invalid LLM agent option price={price!r}: give (input, output) USD per million tokens"
                ) from None
            price = validated(
                ModelPrice,
                "LLM agent `price`",
                name=self.config.model,
                input_per_mtok=price_in,
                output_per_mtok=price_out,
            )
        checked = validated(AgentOptions, "LLM agent", budget_s=budget_s, price=price, pricing=pricing)
        self.budget_s = checked.budget_s
        self._price_arg = checked.price
        self._pricing_arg = checked.pricing
        self.price: ModelPrice | None = None
        self.price_source: str | None = None  # where `price` came from, for the bundle and the CLI
        self._clock, self._sleep = clock, sleep
        self.usage: Usage = zero_usage()
        self.client: ChatClient | None = None
        self.log: list[str] = []  # one line per notable event (timeouts, endpoint failures), for the bundle
        self._invocations = 0

    # ------------------------------------------------------------ Agent protocol
    def reset(self, env: gym.Env, seed: int | None) -> None:
        u = env.unwrapped
        if self.budget_s is None:
            self.budget_s = float(u.catalog.leaderboard.agent_budget_s)
        self.price = self._resolve_price(u.catalog.pricing)
        self.price_source = (
            None
            if self.price is None
            else "given price"
            if self._price_arg is not None
            else f"pricing table as of {(self._pricing_arg or u.catalog.pricing).as_of or '?'}"
        )
        self.usage = zero_usage()
        self.log = []
        self._invocations = 0
        if self.client is not None:
            self.client.close()
        self.client = ChatClient(self.config, self.usage, self.price, sleep=self._sleep)
        self.reset_state(env)

    def invoke(self, env: gym.Env, obs: Any, info: dict) -> None:
        """Run `act` under the budget; a timeout or a dead endpoint ends the invocation, not the run."""
        assert self.client is not None, "call reset() first"
        self.client.usage = self.usage
        invocation = int(info.get("invocation", self._invocations))
        self._invocations += 1
        deadline = Deadline(float(self.budget_s or 0), self._clock)
        try:
            self.act(env.unwrapped, deadline, invocation)
        except BudgetExceededError as exc:
            self.usage.timed_out_invocations.append(invocation)
            self.log.append(f"invocation {invocation}: timeout: {exc}")
        except ModelEndpointError as exc:
            self.log.append(f"invocation {invocation}: model endpoint failed: {exc}")
            refused = self.client.consecutive_rejections
            if refused >= self.config.max_consecutive_rejections:  # a wrong key or model, not bad luck
                raise ConfigurationError(
                    f"stopping the run: {refused} requests in a row refused by the endpoint, "
                    f"the last with {exc} "
                    f"({_rejection_hint(exc.status_code)})"
                ) from None

    def preflight(self) -> None:
        """One tiny chat completion before a run, so that a wrong API key, model name or URL fails
        at once with a clear `ConfigurationError` instead of costing every invocation of the run.

        Not part of any run: its tokens are not booked in the run's usage. `evaluation.evaluate`
        and `sre-marathon run` call it; a run started without it still stops after
        `max_consecutive_rejections` refusals in a row.
        """
        where = self.config.public()["base_url"] or "the OpenAI API"
        client = ChatClient(self.config, zero_usage(), None, sleep=self._sleep)
        try:
            client.chat(PREFLIGHT_MESSAGES, Deadline(float(self.budget_s or PREFLIGHT_BUDGET_S), self._clock))
        except ModelEndpointError as exc:
            if exc.status_code is not None:
                raise ConfigurationError(
                    f"{where} refused model {self.config.model!r}: HTTP {exc.status_code} "
                    f"({_rejection_hint(exc.status_code)}): {exc}"
                ) from None
            raise ConfigurationError(
                f"{where} gave no usable answer for model {self.config.model!r}: {exc}"
            ) from None
        except BudgetExceededError as exc:
            raise ConfigurationError(
                f"{where} did not answer a one-line request for model {self.config.model!r} in time: {exc}"
            ) from None
        finally:
            client.close()

    def close(self) -> None:
        """Close the HTTP client (its connection pool). `reset` opens a new one, so an agent can be
        reused after `close`; `evaluation.run_one` and the CLI call it when a run ends, however it ends."""
        if self.client is not None:
            self.client.close()

    # ------------------------------------------------------------ for subclasses
    def reset_state(self, env: gym.Env) -> None:
        """Forget per-episode memory (default: none)."""

    @abstractmethod
    def act(self, env: Any, deadline: Deadline, invocation: int) -> None:
        """One invocation's work: read, decide, call tools, until done or `deadline`."""

    # ------------------------------------------------------------ reporting
    def bundle_extra(self) -> dict:
        """What the bundle's manifest records about this agent (never the API key)."""
        return {
            "agent": {
                "method": self.name,
                **self.config.public(),
                "budget_s": self.budget_s,
                "price_per_mtok": None
                if self.price is None
                else {"input": self.price.input_per_mtok, "output": self.price.output_per_mtok},
                "price_source": self.price_source,
                "timed_out_invocations": list(self.usage.timed_out_invocations),
                "failed_model_calls": self.usage.failed_model_calls,
                "log": self.log[-200:],
            }
        }

    def _resolve_price(self, catalog_pricing: Pricing) -> ModelPrice | None:
        if self._price_arg is not None:
            return self._price_arg
        return (self._pricing_arg or catalog_pricing).price_for(self.config.model)

    def __getstate__(self) -> dict:  # the HTTP client does not pickle; it is rebuilt at reset
        state = dict(self.__dict__)
        state["client"] = None
        return state


__all__ = ["AgentOptions", "LLMAgent"]
