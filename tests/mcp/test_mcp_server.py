"""The MCP server driven by the official `mcp` client over stdio and streamable HTTP: a whole short
episode by a scripted harness, whose sealed bundle scores exactly like the same calls made through
`env.unwrapped.call_tool`; a harness's mistakes are tool errors, never a dropped session."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp", reason="the mcp extra (in the test extra)")

from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from sre_marathon_gym.agents.llm.context import context_view  # noqa: E402
from sre_marathon_gym.evaluation.episode_runner import make_marathon_env  # noqa: E402
from sre_marathon_gym.recording.rescoring import score_bundle  # noqa: E402
from sre_marathon_gym.scoring import score_run  # noqa: E402
from sre_marathon_gym.tools.models import TOOL_NAMES  # noqa: E402

SEED = 3
SCHEDULE = {"intensity": 0.5, "injection_minutes": 8, "observation_minutes": 4}
ARGS = ["--app", "online_boutique", "--mode", "train", "--seed", str(SEED), "--intensity", "0.5"]
ARGS += ["--injection-minutes", "8", "--observation-minutes", "4"]
MISTAKES = [  # (tool, arguments): each must come back as a tool error, and the session go on
    ("open_incident", {"alert_ids": []}),  # malformed: at least one alert
    ("no_such_tool", {}),
    ("get_k8s_state", {"resource": "secrets"}),  # forbidden
    ("scale", {"service": "frontend", "replicas": "many", "incident_id": "inc-001"}),
]


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


async def play(session: ClientSession) -> list[list[tuple[str, dict]]]:
    """A scripted harness: each invocation, read the firing alerts, open one incident per service
    for the alerts not yet grouped, name the service's deployment image as its root cause; make
    every mistake once. Returns the calls made, per invocation."""
    await session.initialize()
    names = {t.name for t in (await session.list_tools()).tools}
    assert names == {*TOOL_NAMES, "end_invocation", "invocation_context"}
    context = _text(await session.call_tool("invocation_context", {}))
    assert "Alert history (cumulative)" in context and "Invocation 0" in context
    invocations: list[list[tuple[str, dict]]] = []
    grouped: set[str] = set()
    while True:
        calls: list[tuple[str, dict]] = []

        async def call(name: str, args: dict):
            calls.append((name, args))
            return await session.call_tool(name, args)

        alerts = await call("get_alerts", {"state": "firing"})
        assert not alerts.is_error
        import json

        by_service: dict[str, list[str]] = {}
        for a in json.loads(_text(alerts))["data"]["alerts"]:
            labels = a["labels"]
            svc = labels.get("service_name") or labels.get("service") or labels.get("container")
            if a["id"] not in grouped and svc:
                by_service.setdefault(svc, []).append(a["id"])
        for svc, ids in sorted(by_service.items())[:3]:
            opened = await call("open_incident", {"alert_ids": ids, "title": f"{svc} alerts"})
            if opened.is_error:
                continue
            grouped.update(ids)
            inc = json.loads(_text(opened))["data"]["id"]
            await call(
                "set_root_cause",
                {"incident_id": inc, "services": [svc], "artifact": f"deployment/{svc}:image"},
            )
        if len(invocations) == 1:
            for name, args in MISTAKES:
                result = await call(name, args)
                assert result.is_error, (name, _text(result))
        ended = _text(await session.call_tool("end_invocation", {}))
        invocations.append(calls)
        if ended.startswith("The run is over"):
            assert "sealed in" in ended
            return invocations
        assert "Alert history (cumulative)" in ended


def replay(invocations: list[list[tuple[str, dict]]]):
    """The same calls in-process, with the context reads the server makes for the harness (as the
    LLM adapters make them) at the start of every invocation: the score card and the record."""
    env = make_marathon_env("online_boutique", "train", None, **SCHEDULE)
    env.reset(seed=SEED)
    for calls in invocations:
        context_view(env.unwrapped.call_tool)
        for name, args in calls:
            if name in TOOL_NAMES:
                env.unwrapped.call_tool({**args, "tool": name})
        env.step(None)
    record = env.unwrapped.record()
    return score_run(record, env.unwrapped.catalog.scoring), record


def _same_run(bundle: Path, invocations) -> None:
    loaded, card = score_bundle(bundle)
    expected, record = replay(invocations)
    assert card.model_dump() == expected.model_dump()
    assert [a.model_dump() for a in loaded.record.actions] == [a.model_dump() for a in record.actions]
    assert card.incidents_opened and loaded.extra["agent_name"] == "mcp"
    verdicts = {a.verdict for a in loaded.record.actions}
    assert {"ok", "forbidden", "invalid"} <= verdicts


def test_a_whole_episode_over_stdio_scores_like_the_same_calls_in_process(tmp_path):
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sre_marathon_gym.cli", "mcp", *ARGS, "--out", str(tmp_path)]
    )

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await play(session)

    invocations = anyio.run(main)
    (bundle,) = tmp_path.glob("*.bundle")
    assert bundle.name == f"online_boutique-mcp-{SEED}.bundle"
    _same_run(bundle, invocations)

    async def left_early():  # the harness goes away mid-run: what it did is sealed INCOMPLETE
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert not (await session.call_tool("end_invocation", {})).is_error

    bundle.unlink()
    anyio.run(left_early)
    (partial,) = tmp_path.glob("*.incomplete.bundle")
    loaded, _ = score_bundle(partial, allow_incomplete=True)
    assert "closed the stdio session" in loaded.info.incomplete.reason


@pytest.fixture
def http_server(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "sre_marathon_gym.cli", "mcp", *ARGS, "--out", str(tmp_path), "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("MCP server on http://127.0.0.1:"), (
            line,
            proc.stderr.read() if proc.poll() else "",
        )
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(30)


def test_a_whole_episode_over_http_and_a_session_left_early_is_sealed_incomplete(http_server, tmp_path):
    async def episode():
        async with streamable_http_client(http_server) as (read, write, *_):
            async with ClientSession(read, write) as session:
                return await play(session)

    async def left_early():
        async with streamable_http_client(http_server) as (read, write, *_):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert not (await session.call_tool("get_alerts", {"state": "all"})).is_error
                assert not (await session.call_tool("end_invocation", {})).is_error

    invocations = anyio.run(episode)
    (bundle,) = tmp_path.glob("*.bundle")
    assert bundle.name == "online_boutique-mcp-3-s1.bundle"  # the n-th session's: none overwrites another's
    _same_run(bundle, invocations)
    anyio.run(left_early)
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob("*.incomplete.bundle")) and time.monotonic() < deadline:
        time.sleep(0.2)
    (partial,) = tmp_path.glob("*.incomplete.bundle")
    assert partial.name == "online_boutique-mcp-3-s2.incomplete.bundle" and bundle.exists()
    loaded, _ = score_bundle(partial, allow_incomplete=True)
    assert not loaded.info.complete and "session ended" in loaded.info.incomplete.reason
    assert loaded.info.incomplete.reached_s == 240.0  # invoked first at t=120 s, then one interval on

    # a stateless request (protocol 2026-07-28, no session) gets a tool error, not an episode of its own
    import httpx

    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "end_invocation",
            "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "stateless", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "end_invocation",
    }
    reply = httpx.post(http_server, json=body, headers=headers, timeout=30).text
    assert '"isError":true' in reply.replace(" ", "") and "stateful session" in reply
    assert sorted(p.name for p in tmp_path.glob("*bundle")) == sorted([bundle.name, partial.name])


def test_the_invocation_budget_is_wall_clock_and_ends_with_the_invocation(tmp_path):
    """Eval mode: the budget runs from the invocation's first call (the episode's first call for the
    first one); after it, calls (the context included) are refused until end_invocation starts the
    next one; an invocation that overran is booked as timed out, refused call or not."""
    from sre_marathon_gym.mcp_server import McpEpisode

    now = [0.0]
    episode = McpEpisode("online_boutique", "eval", out=tmp_path, clock=lambda: now[0])
    budget = episode.u.catalog.leaderboard.agent_budget_s
    assert budget == 110
    now[0] += 1000  # the harness started the server long before the agent's first call
    assert not episode.call("invocation_context", {})[1]
    now[0] += budget + 1
    for tool in ("get_alerts", "invocation_context"):
        text, error = episode.call(tool, {"state": "firing"} if tool == "get_alerts" else {})
        assert error and "budget is spent" in text, tool
    assert episode.usage.timed_out_invocations == [0]
    text, error = episode.call("end_invocation", {})
    assert not error and "Invocation 1" in text
    assert not episode.call("get_alerts", {"state": "firing"})[1]  # a fresh budget
    now[0] += 500  # thinking past the budget, then ending the invocation: booked too
    assert not episode.call("end_invocation", {})[1]
    assert episode.usage.timed_out_invocations == [0, 1]
    assert episode.call("get_alerts", "not an object")[1]
    saved = episode.close("test")
    loaded, _ = score_bundle(saved, allow_incomplete=True)
    assert loaded.record.usage.timed_out_invocations == [0, 1]
    assert episode.call("get_alerts", {})[1]  # closed: refused, nothing recorded


def test_a_stopped_stdio_server_seals_what_it_recorded(tmp_path):
    """SIGTERM (what a harness may send before closing stdin) seals the run INCOMPLETE."""
    import json
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "sre_marathon_gym.cli", "mcp", *ARGS, "--out", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def send(message: dict) -> None:
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()

    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    assert json.loads(proc.stdout.readline())["id"] == 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "end_invocation", "arguments": {}},
        }
    )
    assert json.loads(proc.stdout.readline())["result"]["isError"] is False
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    (partial,) = tmp_path.glob("*.incomplete.bundle")
    loaded, _ = score_bundle(partial, allow_incomplete=True)
    assert loaded.info.incomplete.reached_s == 240.0


def test_an_orca_task_over_stdio_is_judged_as_orca_rca_judges_it():
    import json

    import gymnasium as gym

    from sre_marathon_gym.agents.orca_baselines import OrcaOracleAgent
    from sre_marathon_gym.orca.episode import Episode
    from sre_marathon_gym.orca.tasks import orca_tasks

    task = next(t for t in orca_tasks() if t.difficulty == "easy" and not t.is_control)
    report = OrcaOracleAgent().investigate_with_truth(Episode(task, True)).model_dump(mode="json")
    calls = [
        ("get_topology", {}),
        ("query_metrics", {"metric": "no such metric", "bogus": 1}),  # malformed: a tool error
        ("submit_report", {"report": report}),
    ]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "sre_marathon_gym.cli", "mcp", "--orca", task.task_id]
    )

    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = {t.name for t in (await session.list_tools()).tools}
                assert {"query_metrics", "submit_report", "invocation_context"} <= names
                issue = _text(await session.call_tool("invocation_context", {}))
                out = [await session.call_tool(name, args) for name, args in calls]
                after = await session.call_tool("get_topology", {})
                return issue, out, after

    issue, results, after = anyio.run(main)
    assert [r.is_error for r in results] == [False, True, False] and after.is_error
    judged = json.loads(_text(results[-1]))["data"]
    env = gym.make("SREMarathon/OrcaRCA-v0")
    obs, _ = env.reset(options={"task_id": task.task_id})
    assert issue == obs["issue"]
    for name, args in calls:
        _, reward, terminated, _, info = env.step({**args, "tool": name})
    assert terminated and judged["score"] == info["score"] == reward > 0  # the oracle's report is right
    assert {k: judged[k] for k in ("rca_accuracy", "hallucinate", "mode")} == {
        k: info[k] for k in ("rca_accuracy", "hallucinate", "mode")
    }


def test_an_orca_task_over_http_ends_its_session_cleanly():
    """A session of an ORCA task that ends (the client leaves) is closed without an error; the server
    serves the next one."""
    from sre_marathon_gym.orca.tasks import orca_tasks

    task = orca_tasks()[0].task_id
    proc = subprocess.Popen(
        [sys.executable, "-m", "sre_marathon_gym.cli", "mcp", "--orca", task, "--http"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = proc.stdout.readline().split()[-1]

        async def session() -> str:
            async with streamable_http_client(url) as (read, write, *_):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    result = await s.call_tool("invocation_context", {})
                    assert not result.is_error
                    return _text(result)

        assert anyio.run(session) == anyio.run(session)  # the same task, served twice
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err and "Error" not in err, err
