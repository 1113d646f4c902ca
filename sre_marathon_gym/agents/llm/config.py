"""Where an LLM agent's endpoint settings come from: arguments first, then environment variables.

Why environment variables: any OpenAI-compatible server (hosted, vLLM, Ollama, LiteLLM) is
reached the same way, and the API key never has to appear on a command line or in a bundle.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from ...errors import ConfigurationError

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
    request_timeout_s: float = Field(60.0, gt=0, description="one HTTP request at most (the budget caps it further)")
    max_retries: int = Field(4, ge=0, description="retries of a failed request (connection error, 429, 5xx)")
    backoff_s: float = Field(1.0, ge=0, description="first retry delay; doubles each retry")
    backoff_max_s: float = Field(16.0, ge=0)
    temperature: float | None = Field(None, ge=0, le=2, description="None: the server's default")
    max_output_tokens: int | None = Field(None, gt=0, description="None: the server's default")

    def public(self) -> dict:
        """What a bundle may record about the endpoint: never the key, never URL credentials."""
        return {"model": self.model, "base_url": redact_url(self.base_url) if self.base_url else None}


def redact_url(url: str) -> str:
    """Drop user:password@ and the query string (where some gateways put keys)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def resolve_config(model: str | None = None, base_url: str | None = None, api_key: str | None = None,
                   **options: object) -> LLMConfig:
    """Arguments win; else `SRE_MARATHON_MODEL`, `OPENAI_BASE_URL`, `OPENAI_API_KEY`."""
    model = model or os.environ.get(ENV_MODEL)
    if not model:
        raise ConfigurationError(f"an LLM agent needs a model: pass --model NAME (model=...) or set ${ENV_MODEL}")
    base_url = base_url or os.environ.get(ENV_BASE_URL) or None
    key = api_key or os.environ.get(ENV_API_KEY)
    if not key:
        if base_url is None:
            raise ConfigurationError(f"no API key: set ${ENV_API_KEY}, or pass --base-url for a local server "
                                     "that needs none")
        key = NO_KEY
    try:
        return LLMConfig(model=model, base_url=base_url, api_key=SecretStr(key), **options)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ConfigurationError(f"invalid LLM agent option: {exc}") from None


__all__ = ["ENV_API_KEY", "ENV_BASE_URL", "ENV_MODEL", "LLMConfig", "redact_url", "resolve_config"]
