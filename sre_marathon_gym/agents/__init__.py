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


# "<prefix>:<argument>" names: agents that live in a layer above this one, loaded by entry point
# (a "module:attribute" string, as Gymnasium registers envs) so this layer never imports them
AGENT_ENTRY_POINTS: dict[str, str] = {
    "ppo": "sre_marathon_gym.rllib.evaluate:CheckpointPolicy",  # ppo:PATH, a checkpoint of train_ppo.py
}


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build an agent by name (keyword arguments go to its constructor); ``ppo:PATH`` loads a
    trained RLlib checkpoint (the ``rllib`` extra), which acts through the wrappers it was trained
    with (its ``wrap_env``)."""
    prefix, sep, argument = name.partition(":")
    if sep and prefix in AGENT_ENTRY_POINTS:
        import importlib

        module, _, attr = AGENT_ENTRY_POINTS[prefix].partition(":")
        if not argument:
            raise UnknownNameError("agent", name, [f"{p}:PATH" for p in AGENT_ENTRY_POINTS])
        return getattr(importlib.import_module(module), attr)(argument, **kwargs)
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
