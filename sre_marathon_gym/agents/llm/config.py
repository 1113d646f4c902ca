"""Where an LLM agent's endpoint settings come from: arguments first, then environment variables.

Why environment variables: any OpenAI-compatible server (hosted, vLLM, Ollama, LiteLLM) is
reached the same way, and the API key never has to appear on a command line or in a bundle.
"""

from __future__ import annotations

import os
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from ...core.errors import ConfigurationError

ENV_MODEL = "SRE_MARATHON_MODEL"
ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_API_KEY = "OPENAI_API_KEY"
NO_KEY = "not-needed"  # local servers ignore the key, but the openai client insists on one


class LLMConfig(BaseModel):
    """One endpoint and how patiently to talk to it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(min_length=1)
    base_url: str | None = Field(None, repr=False)  # may carry credentials; `public()` redacts it
    api_key: SecretStr = Field(repr=False)
    request_timeout_s: float = Field(
        60.0, gt=0, description="one HTTP request at most (the budget caps it further)"
    )
    max_retries: int = Field(4, ge=0, description="retries of a failed request (connection error, 429, 5xx)")
    backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles each retry")
    backoff_max_s: float = Field(16.0, ge=0)
    temperature: float | None = Field(None, ge=0, le=2, description="None: the server's default")
    max_output_tokens: int | None = Field(None, gt=0, description="None: the server's default")
    max_consecutive_rejections: int = Field(
        3,
        ge=1,
        description="abort the run after this many requests in a row "
        "that the endpoint refused with a non-retryable 4xx (bad key, model...)",
    )

    @field_validator("base_url")
    @classmethod
    def _absolute_http_url(cls, v: str | None) -> str | None:
        if v is None:
            return v
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = redact_url(v) if parts.scheme in ("http", "https") else v.rsplit("@", 1)[-1]
            raise ValueError(
                f"{shown!r} is not an http(s) URL with a host; write it in full, "
                "e.g. http://localhost:11434/v1"
            )
        return v

    def public(self) -> dict:
        """What a bundle may record about the endpoint: never the key, never URL credentials."""
        return {"model": self.model, "base_url": redact_url(self.base_url) if self.base_url else None}


def redact_url(url: str) -> str:
    """Drop user:password@ and the query string (where some gateways put keys)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def resolve_config(
    model: str | None = None, base_url: str | None = None, api_key: str | None = None, **options: object
) -> LLMConfig:
    """Arguments win; else `SRE_MARATHON_MODEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`."""
    model = model or os.environ.get(ENV_MODEL)
    if not model:
        raise ConfigurationError(
            f"an LLM agent needs a model: pass --model NAME (model=...) or set ${ENV_MODEL}"
        )
    base_url = base_url or os.environ.get(ENV_BASE_URL) or None
    key = api_key or os.environ.get(ENV_API_KEY)
    if not key:
        if base_url is None:
            raise ConfigurationError(
                f"no API key: set ${ENV_API_KEY}, or pass --base-url for a local server that needs none"
            )
        key = NO_KEY
    return validated(
        LLMConfig, "LLM agent", model=model, base_url=base_url, api_key=SecretStr(key), **options
    )


M = TypeVar("M", bound=BaseModel)
_SECRET_FIELDS = {"api_key", "base_url"}  # never echoed: they may carry credentials


def validated(schema: type[M], what: str, **values: Any) -> M:
    """`schema(**values)`, or a `ConfigurationError` naming each offending field and value.

    The one boundary where options reach an LLM agent (Python arguments and CLI flags alike), so
    a bad value fails before any run starts instead of deep inside one.
    """
    try:
        return schema(**values)
    except ValidationError as exc:
        raise ConfigurationError(f"invalid {what} option(s): {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError) -> str:
    """`max_steps='ten': Input should be a valid integer...; budget_s=-5: ...` (secrets not echoed)."""
    out = []
    for e in exc.errors()[:5]:
        field = ".".join(map(str, e["loc"])) or "value"
        shown = "" if field in _SECRET_FIELDS or e["type"] == "extra_forbidden" else f"={e.get('input')!r}"
        msg = e["msg"].removeprefix("Value error, ")
        out.append(f"{field}{shown}: {msg}")
    return "; ".join(out)


__all__ = [
    "ENV_API_KEY",
    "ENV_BASE_URL",
    "ENV_MODEL",
    "LLMConfig",
    "describe_errors",
    "redact_url",
    "resolve_config",
    "validated",
]
