"""`sre-marathon orca tasks` prints the distribution; the tool specs export for LLM agents."""

from __future__ import annotations

import json

from sre_marathon_gym.cli import main
from sre_marathon_gym.orca.tools import tool_specs


def test_orca_tasks_prints_the_distribution(capsys):
    assert main(["orca", "tasks"]) == 0
    out = capsys.readouterr().out
    assert "ORCA-bench tasks: 1079" in out
    total = next(line for line in out.splitlines() if line.startswith("total"))
    assert total.split()[1:] == ["100", "206", "520", "58", "195", "1079"]


def test_tool_specs_export_and_source_ablation():
    names = [s["function"]["name"] for s in tool_specs()]
    assert names == ["query_metrics", "search_logs", "get_traces", "get_topology", "read_source", "submit_report"]
    assert "read_source" not in [s["function"]["name"] for s in tool_specs(source_access=False)]
    json.dumps(tool_specs())  # JSON-serialisable
