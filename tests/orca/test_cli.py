"""`sre-marathon orca tasks` prints the distribution; the tool specs export for LLM agents."""

from __future__ import annotations

import json

import pytest

from sre_marathon_gym.agents.orca_baselines import ORCA_AGENTS
from sre_marathon_gym.cli.commands import main
from sre_marathon_gym.cli.orca import AGENT_NAMES
from sre_marathon_gym.orca import world
from sre_marathon_gym.orca.tools import tool_specs


def test_orca_tasks_prints_the_distribution(capsys):
    assert main(["orca", "tasks"]) == 0
    out = capsys.readouterr().out
    assert "ORCA-bench tasks (published schedule): 1079" in out
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:] == ["96", "217", "521", "50", "195", "1079"]


def test_tool_specs_export_and_source_ablation():
    names = [s["function"]["name"] for s in tool_specs()]
    assert names == [
        "query_metrics",
        "search_logs",
        "get_traces",
        "get_topology",
        "read_source",
        "submit_report",
    ]
    assert "read_source" not in [s["function"]["name"] for s in tool_specs(source_access=False)]
    json.dumps(tool_specs())  # JSON-serialisable


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "nope"], "invalid choice"),
        (["--limit", "-5"], "at least 1"),
        (["--limit", "0"], "at least 1"),
        (["--limit", "x"], "whole number"),
    ],
)
def test_orca_evaluate_rejects_bad_arguments_before_simulating(argv, message, capsys, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("simulated the days before validating the arguments")

    monkeypatch.setattr(world, "simulate", boom)
    with pytest.raises(SystemExit) as exc:  # `boom` proves nothing was simulated first
        main(["orca", "evaluate", *argv])
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_cli_agent_names_are_the_baselines():
    assert set(AGENT_NAMES) == set(ORCA_AGENTS)
