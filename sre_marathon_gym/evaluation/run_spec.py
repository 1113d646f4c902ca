"""One run of the leaderboard protocol, as worker processes and Ray tasks receive it, and the
tables read it back (a module of its own: the protocol and its tables both need it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunSpec:
    app: str
    agent: str
    seed: int
    mode: str  # eval: the leaderboard seed; train: the same protocol on another seed
    out: str | None
    catalog: str | None = None
    agent_options: dict[str, Any] = field(default_factory=dict)  # LLM agents: model, base_url, price...


__all__ = ["RunSpec"]
