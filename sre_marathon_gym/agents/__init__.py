"""Baseline agents: no-op, random, runbook (the paper's rule table), the change correlator (blames a
recent change when its service's telemetry steps up right after it) and the ground-truth oracle;
plus the adversarial suite (`adversarial.py`, and `adversarial_v3.py` for the holes rules v3 closes):
degenerate policies that must score near zero.

`make_agent("runbook")` builds one by name; `run_episode(env, agent)` drives it through an
episode and returns the recorded run for `sre_marathon_gym.scoring.score_run`. The oracle reads
hidden ground truth: it is an upper bound for tests and calibration, never a leaderboard entry.

May import: the layers below the wrappers (core to envs, through `tools` and `orca`'s read
tools); never the simulator, the evaluation or the command line.
"""

from __future__ import annotations

from typing import Any

from ..core.errors import UnknownNameError
from .adversarial import ADVERSARIAL_AGENTS as _V2_HOLES
from .adversarial import ORCA_ADVERSARIAL_AGENTS
from .adversarial_v3 import V3_ADVERSARIAL_AGENTS
from .base import Agent, run_episode, zero_usage
from .change_correlator import ChangeCorrelator
from .noop import NoopAgent
from .oracle import OracleAgent
from .orca_baselines import ORCA_AGENTS, OrcaAgent
from .random_agent import RandomAgent
from .runbook import RUNBOOK_TABLE, RunbookAgent, RunbookRule

ADVERSARIAL_AGENTS: dict[str, type] = {**_V2_HOLES, **V3_ADVERSARIAL_AGENTS}
AGENTS: dict[str, type] = {
    "noop": NoopAgent,
    "random": RandomAgent,
    "runbook": RunbookAgent,
    "change_correlator": ChangeCorrelator,
    "oracle": OracleAgent,
    **ADVERSARIAL_AGENTS,
}
# not the oracle: it reads ground truth
LEADERBOARD_AGENTS: tuple[str, ...] = ("noop", "random", "runbook", "change_correlator")
ADVERSARIAL_AGENT_NAMES: tuple[str, ...] = tuple(ADVERSARIAL_AGENTS)  # benchmark-health checks, not entries
LLM_AGENT_NAMES: tuple[str, ...] = ("react", "rag", "keep")  # agents.llm, built lazily (needs the llm extra)


def is_llm_agent(name: str) -> bool:
    """Whether `name` is an LLM method (it takes model, base_url, api_key, price... options)."""
    return name in LLM_AGENT_NAMES


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build an agent by name (keyword arguments go to its constructor)."""
    if name in LLM_AGENT_NAMES:
        from .llm import LLM_AGENTS

        return LLM_AGENTS[name](**kwargs)
    if name not in AGENTS:
        raise UnknownNameError("agent", name, [*AGENTS, *LLM_AGENT_NAMES])
    return AGENTS[name](**kwargs)


def make_orca_agent(name: str) -> OrcaAgent:
    """An ORCA baseline (`orca_baselines`), or a degenerate report of the adversarial suite
    (`adversarial`), by name."""
    known = {**ORCA_AGENTS, **ORCA_ADVERSARIAL_AGENTS}
    if name not in known:
        raise UnknownNameError("ORCA agent", name, known)
    return known[name]()


__all__ = [
    "ADVERSARIAL_AGENT_NAMES",
    "AGENTS",
    "LEADERBOARD_AGENTS",
    "LLM_AGENT_NAMES",
    "is_llm_agent",
    "RUNBOOK_TABLE",
    "Agent",
    "ChangeCorrelator",
    "NoopAgent",
    "OracleAgent",
    "RandomAgent",
    "RunbookAgent",
    "RunbookRule",
    "make_agent",
    "make_orca_agent",
    "run_episode",
    "zero_usage",
]
