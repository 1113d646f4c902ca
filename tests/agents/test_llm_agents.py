"""LLM agents (ReAct, RAG, Keep-agent) end to end against a local OpenAI-compatible server.

The server (stdlib `http.server` on 127.0.0.1, a free port) replays a script of chat-completions
answers, including malformed ones, a 500, a dropped connection and a slow answer that outlives the
invocation budget. Each method runs a short episode of the real simulator; the tests check the
tool calls that reached the record, the incident reports, and the accounting in the written bundle.
Scripts use alert ids the seeded run produces (a0001.. fire at t=240 s on seed 3).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

pytest.importorskip("openai")

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.agents import make_agent, run_episode
from sre_marathon_gym.agents.llm import KeepAgent, RAGAgent, ReActAgent
from sre_marathon_gym.agents.llm.budget import Deadline
from sre_marathon_gym.agents.llm.client import PREFLIGHT_MESSAGES
from sre_marathon_gym.agents.llm.plan import Plan, execute_plan, parse_plan
from sre_marathon_gym.agents.llm.retrieval import Document, alert_terms, rank
from sre_marathon_gym.agents.runbook import workload_of
from sre_marathon_gym.catalog.pricing import ModelPrice
from sre_marathon_gym.core.errors import BudgetExceededError, ConfigurationError
from sre_marathon_gym.recording.bundle import load_bundle, write_bundle
from sre_marathon_gym.scoring import score_run
from sre_marathon_gym.tools.models import ToolResult

KW = {"injection_minutes": 10, "observation_minutes": 5, "intensity": 0.6}  # 7 invocations, t=120..840
SEED = 3
PRICE = (1.0, 2.0)  # USD per million input / output tokens
FAST = {"backoff_s": 0.01, "backoff_max_s": 0.01, "max_retries": 3}


# ------------------------------------------------------------------ the scripted server
def completion(
    content: str | None = None, tools: list[tuple[str, Any]] = (), prompt: int = 1000, out: int = 50
) -> dict:
    calls = [
        {
            "id": f"call_{i}",
            "type": "function",
            "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)},
        }
        for i, (name, args) in enumerate(tools)
    ]
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = calls
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": "stub-model",
        "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out},
    }


DONE = completion("Nothing more to do.", prompt=100, out=5)


class FakeClock:
    """The agents' injectable clock: time moves only when a test (or the server) moves it."""

    def __init__(self, now: float = 1000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class ScriptedServer:
    """Answers POST /v1/chat/completions from a script; after the script: `DONE`.

    Preflight requests (`LLMAgent.preflight`) are answered with `preflight` (a step; default a
    short completion) and kept apart in `preflights`. A script step is a completion dict, or
    ("status", code), ("drop",) to close the connection without an answer, ("raw", text) for a 200
    with a body that is not JSON, ("slow", seconds, completion) to answer after real seconds,
    ("late", seconds, completion) to answer at once but advance `clock` (the agent's injected
    clock) by that many seconds first: a deterministic slow answer.
    """

    def __init__(self, script: list[Any], clock: FakeClock | None = None, preflight: Any = None):
        self.script = list(script)
        self.clock = clock
        self.preflight = completion("OK", prompt=20, out=1) if preflight is None else preflight
        self.preflights: list[dict] = []  # preflight requests, answered with `preflight`, not from the script
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with server.lock:
                    if body.get("messages") == PREFLIGHT_MESSAGES:
                        server.preflights.append(body)
                        step = server.preflight
                    else:
                        server.requests.append(body)
                        step = server.script.pop(0) if server.script else DONE
                if isinstance(step, tuple) and step[0] == "drop":
                    self.close_connection = True
                    self.connection.close()
                    return
                if isinstance(step, tuple) and step[0] == "status":
                    return self._send(
                        step[1], json.dumps({"error": {"message": "scripted failure"}}).encode()
                    )
                if isinstance(step, tuple) and step[0] == "raw":
                    return self._send(200, step[1].encode())
                if isinstance(step, tuple) and step[0] == "slow":
                    time.sleep(step[1])
                    step = step[2]
                if isinstance(step, tuple) and step[0] == "late":
                    assert server.clock is not None, "a late answer needs the agent's FakeClock"
                    server.clock.advance(step[1])
                    step = step[2]
                self._send(200, json.dumps(step).encode())

            def _send(self, code: int, data: bytes) -> None:
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (the timeout case)
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def messages(self, i: int) -> list[dict]:
        return self.requests[i]["messages"]

    def text(self, i: int) -> str:
        return json.dumps(self.requests[i]["messages"])


def run(agent: Any, tmp_path: Path) -> tuple[Any, Any, Any]:
    """A short real episode; the bundle written with the agent's extra; the loaded bundle back."""
    env = gym.make("SREMarathon/OnlineBoutique-v3", **KW)
    record = run_episode(env, agent, seed=SEED)
    path = write_bundle(
        tmp_path / f"{agent.name}.bundle",
        record,
        store=env.unwrapped.sim.store,
        catalog=env.unwrapped.catalog,
        extra=agent.bundle_extra(),
    )
    return env.unwrapped, record, load_bundle(path)


def cost(tin: int, tout: int) -> float:
    return (tin * PRICE[0] + tout * PRICE[1]) / 1e6


@pytest.fixture(autouse=True)
def _no_endpoint_env(monkeypatch):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "SRE_MARATHON_MODEL"):
        monkeypatch.delenv(var, raising=False)


# ------------------------------------------------------------------ ReAct
def test_react_end_to_end_with_malformed_calls_errors_and_timeout(tmp_path):
    LATE = completion(
        tools=[("restart", {"incident_id": "inc-001", "service": "frontend"})], prompt=300, out=7
    )
    script = [
        DONE,  # invocation 0 (t=120): no alerts yet; the model stops at once
        ("status", 500),
        ("drop",),  # invocation 1: a server error and a dropped connection, retried
        completion(
            tools=[
                ("get_alertz", {}),  # unknown tool
                ("open_incident", '{"alert_ids": ["a0003"'),  # invalid JSON
                ("open_incident", {"alert_ids": ["a9999"], "title": "made up"}),  # hallucinated id
                ("get_deploy_history", {"service": "cartservice"}),
            ]
        ),
        completion(
            tools=[
                ("open_incident", {"alert_ids": ["a0003", "a0005", "a0006"], "title": "cartservice errors"})
            ]
        ),
        completion(
            tools=[
                (
                    "set_root_cause",
                    {
                        "incident_id": "inc-001",
                        "services": ["cartservice"],
                        "artifact": "cartservice:env/REDIS_ADDR",
                        "summary": "cache address",
                    },
                ),
                ("restart", {"incident_id": "inc-001", "service": "cartservice"}),
            ]
        ),
        DONE,
        ("late", 111.0, LATE),  # invocation 2: answers after the 110 s budget (on the agent's clock)
    ]
    clock = FakeClock()
    with ScriptedServer(script, clock=clock) as server:
        agent = make_agent("react", model="stub-model", base_url=server.url, price=PRICE, clock=clock, **FAST)
        u, record, bundle = run(agent, tmp_path)

    # what the model saw after its malformed turn: one tool message per call, errors included
    turn = [m for m in server.messages(4) if m["role"] == "tool"]
    assert len(turn) == 4
    assert '"unknown_tool"' in turn[0]["content"] and "get_alerts" in turn[0]["content"]  # did-you-mean
    assert "not valid JSON" in turn[1]["content"]
    assert "unknown alert id(s) ['a9999']" in turn[2]["content"]
    assert '"ok":true' in turn[3]["content"]
    # every invocation is a fresh conversation: the alert history, the incidents so far, nothing else
    first_of_inv3 = server.messages(8)
    assert [m["role"] for m in first_of_inv3] == ["system", "user"]
    assert "a0003" in first_of_inv3[1]["content"] and "inc-001" in first_of_inv3[1]["content"]
    assert server.requests[3]["tools"][0]["type"] == "function"

    # the record: every attempted call, with its verdict
    agent_calls = [(a.tool, a.verdict) for a in record.actions if a.tool not in ("get_alerts", "workspace")]
    assert agent_calls == [
        ("get_alertz", "invalid"),
        ("?", "invalid"),
        ("open_incident", "error"),
        ("get_deploy_history", "ok"),
        ("open_incident", "ok"),
        ("set_root_cause", "ok"),
        ("restart", "ok"),
    ]
    restart = next(a for a in record.actions if a.tool == "restart")
    assert restart.incident_id == "inc-001" and restart.in_scope is True and restart.time_s == 240.0
    assert [(e.op, e.incident_id) for e in record.incident_events] == [
        ("open", "inc-001"),
        ("root_cause", "inc-001"),
    ]
    assert record.incident_events[1].artifact == "cartservice:env/REDIS_ADDR"
    assert record.incident_events[0].alert_ids == ["a0003", "a0005", "a0006"]

    # accounting: 12 requests; the 500 and the drop failed; 10 were answered: the 5 scripted answers,
    # the late one (its tokens were spent, but invocation 2 timed out before acting on it: no frontend
    # restart), then DONE for invocations 3-6
    answered = [s for s in script if isinstance(s, dict)] + [LATE] + [DONE] * 4
    tin = sum(s["usage"]["prompt_tokens"] for s in answered)
    tout = sum(s["usage"]["completion_tokens"] for s in answered)
    u_ = bundle.record.usage
    assert len(server.requests) == 12
    assert (u_.model_calls, u_.failed_model_calls, u_.timed_out_invocations) == (10, 2, [2])
    assert (u_.input_tokens, u_.output_tokens) == (tin, tout)
    assert u_.cost_usd == pytest.approx(cost(tin, tout))
    assert bundle.record.usage == record.usage
    extra = bundle.extra["agent"]
    assert extra["method"] == "react" and extra["model"] == "stub-model"
    assert extra["price_per_mtok"] == {"input": 1.0, "output": 2.0} and extra["timed_out_invocations"] == [2]
    assert "api_key" not in json.dumps(bundle.manifest) and "not-needed" not in json.dumps(bundle.manifest)
    assert any("timeout" in line for line in extra["log"])
    card = score_run(bundle.record, u.catalog.scoring)
    assert card.model_calls == 10 and card.input_tokens + card.output_tokens == tin + tout
    assert agent.stops == ["no_tool_calls"] * 2 + ["timeout"] + ["no_tool_calls"] * 4
    assert extra["stops"] == {"no_tool_calls": 6, "timeout": 1}


def test_react_stops_at_the_step_and_token_caps(tmp_path):
    looping = completion(tools=[("get_topology", {})], prompt=40_000, out=10)
    cheap = completion(tools=[("get_topology", {})], prompt=10, out=1)
    with ScriptedServer([looping] * 3 + [cheap] * 10) as server:
        agent = ReActAgent(model="stub-model", base_url=server.url, **FAST)
        env = gym.make("SREMarathon/OnlineBoutique-v3", **KW)
        run_episode(env, agent, seed=SEED)
    # invocation 0: 3 turns spend 120k tokens; the 4th prompt would be the 3rd one (40k) plus the
    # topology result: 120k + 40k > 150k, so it is never sent (no overshoot); invocation 1: 10 cheap
    # turns -> max_steps
    assert agent.stops == ["max_tokens", "max_steps"] + ["no_tool_calls"] * 5
    assert agent.usage.model_calls == 3 + 10 + 5  # then one DONE turn for each remaining invocation
    assert agent.usage.input_tokens + agent.usage.output_tokens <= 3 * 40_010 + 10 * 11 + 5 * 105
    assert [a.tool for a in env.unwrapped.record().actions].count("get_topology") == 13

    # the first prompt is estimated too: a cap below it means no call at all
    with ScriptedServer([]) as server:
        agent = ReActAgent(model="stub-model", base_url=server.url, max_tokens=500, **FAST)
        run_episode(gym.make("SREMarathon/OnlineBoutique-v3", **KW), agent, seed=SEED)
    assert server.requests == [] and agent.stops == ["max_tokens"] * 7


def test_a_timeout_cut_short_by_the_budget_is_recorded_as_a_timeout():
    from sre_marathon_gym.agents.llm.client import ChatClient
    from sre_marathon_gym.agents.llm.config import resolve_config

    usage = make_agent("noop").usage.model_copy()
    with ScriptedServer([("slow", 5.0, DONE)]) as server:
        client = ChatClient(resolve_config("stub-model", server.url, max_retries=0), usage)
        # 0.3 s left on a clock that does not move: the request is sent with a 0.3 s timeout,
        # which the budget (not the 60 s request limit) imposed, so its expiry is a budget timeout
        with pytest.raises(BudgetExceededError, match="budget ran out"):
            client.chat([{"role": "user", "content": "hi"}], Deadline(0.3, clock=lambda: 0.0))
        client.close()
    assert (usage.model_calls, usage.failed_model_calls) == (0, 1)


# ------------------------------------------------------------------ RAG
def test_rag_one_call_per_invocation_plan_validated_and_executed(tmp_path):
    plan = {
        "incidents": [
            {"incident_id": None, "alert_ids": ["a9999"], "title": "ghost"},  # hallucinated id
            {
                "alert_ids": ["a0003", "a0006"],
                "title": "cartservice saturated",
                "root_cause": {
                    "services": ["cartservice"],
                    "artifact": "deployment/cartservice:resources.limits.cpu",
                },
                "repairs": [
                    {"tool": "scale", "service": "cartservice", "replicas": 2},
                    {"tool": "search_logs"},
                ],
            },
            {
                "alert_ids": ["a0003", "a0001", "a0005"],
                "title": "checkout",  # a0003 taken: dropped
                "root_cause": {
                    "services": ["checkoutservice"],
                    "artifact": "checkoutservice:env/CART_SERVICE_ADDR",
                },
            },
        ]
    }
    script = [
        completion("Here is my plan: {incidents: [oops"),  # invocation 1: invalid JSON
        ("status", 503),
        completion("```json\n" + json.dumps(plan) + "\n```"),  # invocation 2 (after a retried 503)
        completion(json.dumps({"incidents": [{"incident_id": "inc-001", "alert_ids": ["a0007", "a0009"]}]})),
        completion(json.dumps({"incidents": "not a list"})),  # invocation 4: schema violation
    ]
    with ScriptedServer(script) as server:
        agent = RAGAgent(model="stub-model", base_url=server.url, price=PRICE, **FAST)
        _u, record, bundle = run(agent, tmp_path)

    # no firing alert at t=120: no call; then exactly one answered call per invocation
    assert len(server.requests) == 6 + 1  # 6 invocations with alerts, plus the retried 503
    assert all("tools" not in r for r in server.requests)
    prompt = server.messages(0)[1]["content"]
    assert "[service/" in prompt and "ServiceErrorRatioCritical" in prompt and '"incidents"' in prompt
    assert "not valid JSON" in server.messages(1)[1]["content"]  # feedback shown the next invocation
    assert "a9999" in server.messages(3)[1]["content"] and "search_logs" in server.messages(3)[1]["content"]
    assert "did not match the format" in server.messages(5)[1]["content"]

    calls = [(a.tool, a.verdict) for a in record.actions if a.kind != "read"]
    assert calls == [
        ("open_incident", "error"),
        ("open_incident", "ok"),
        ("set_root_cause", "ok"),
        ("scale", "ok"),
        ("open_incident", "ok"),
        ("set_root_cause", "ok"),
        ("update_incident", "ok"),
    ]
    ev = record.incident_events
    assert (
        ev[0].alert_ids == ["a0003", "a0006"]
        and ev[1].artifact == "deployment/cartservice:resources.limits.cpu"
    )
    assert ev[2].incident_id == "inc-002" and ev[2].alert_ids == ["a0001", "a0005"]
    assert ev[-1].op == "update" and ev[-1].alert_ids == ["a0003", "a0006", "a0007", "a0009"]
    scale = next(a for a in record.actions if a.tool == "scale")
    assert scale.args["replicas"] == 2 and scale.incident_id == "inc-001"

    u_ = bundle.record.usage
    assert (u_.model_calls, u_.failed_model_calls, u_.timed_out_invocations) == (6, 1, [])
    tin, tout = 4 * 1000 + 2 * 100, 4 * 50 + 2 * 5  # four scripted answers, then DONE twice
    assert (u_.input_tokens, u_.output_tokens) == (tin, tout)
    assert u_.cost_usd == pytest.approx(cost(tin, tout))
    assert bundle.extra["agent"]["method"] == "rag"


# ------------------------------------------------------------------ Keep-agent
def test_keep_rules_group_model_diagnoses_and_places_only_ungrouped(tmp_path):
    plan = {
        "incidents": [
            {
                "incident_id": "inc-003",
                "root_cause": {"services": ["cartservice"], "artifact": "cartservice:env/REDIS_ADDR"},
                "repairs": [{"tool": "rollback", "service": "cartservice"}],
            },
            {"incident_id": "inc-001", "alert_ids": ["a0003"]},  # grouped by the rules: refused
            {
                "incident_id": "inc-404",
                "root_cause": {"services": ["frontend"], "artifact": "frontend:env/X"},
            },
        ]
    }
    with ScriptedServer([("raw", "this is not json at all"), completion(json.dumps(plan))]) as server:
        agent = KeepAgent(model="stub-model", base_url=server.url, price=PRICE, **FAST)
        _u, record, bundle = run(agent, tmp_path)

    # the rules: one incident per workload, each alert in exactly one incident
    opened = {e.incident_id: e.alert_ids for e in record.incident_events if e.op == "open"}
    assert opened["inc-001"] == ["a0001"] and opened["inc-002"] == ["a0002", "a0004"]
    assert opened["inc-003"] == ["a0003", "a0005", "a0006"]  # cartservice's errors and its pod's throttling
    final: dict[str, list[str]] = {}
    for e in record.incident_events:
        final[e.incident_id] = e.alert_ids
    every = [a for ids in final.values() for a in ids]
    assert len(every) == len(set(every))
    # every alert an invocation could see is grouped: firing then, or fired and resolved since the
    # previous invocation (a0007 does that here)
    invocations = [120.0 * k for k in range(1, 8)]
    seen = {a.id for a in record.alerts if a.fired_at <= invocations[-1]}
    between = {
        a.id
        for a in record.alerts
        if a.id in seen
        and not any(a.fired_at <= t < a.resolved_at for t in invocations if a.resolved_at)
        and a.resolved_at is not None
    }
    assert set(every) == seen and "a0007" in between, [
        (a.id, a.fired_at, a.resolved_at) for a in record.alerts
    ]
    titles = [a.args["title"] for a in record.actions if a.tool == "open_incident"]
    assert titles[:3] == ["keep: checkoutservice", "keep: frontend", "keep: cartservice"]

    # the model: the malformed 200 was retried, then its plan executed, minus what it may not do
    assert bundle.record.usage.failed_model_calls == 1
    rc = [e for e in record.incident_events if e.op == "root_cause"]
    assert [(e.incident_id, e.artifact) for e in rc] == [("inc-003", "cartservice:env/REDIS_ADDR")]
    rollback = next(a for a in record.actions if a.tool == "rollback")
    assert rollback.incident_id == "inc-003" and rollback.verdict == "ok"
    assert not any(
        a.tool == "update_incident" and "a0003" in a.args.get("add_alert_ids", []) for a in record.actions
    )
    nxt = server.messages(2)[1]["content"]
    assert "already grouped by the rules" in nxt and "inc-404" in nxt
    u_ = bundle.record.usage
    assert u_.model_calls == len(server.requests) - 1 and u_.cost_usd == pytest.approx(
        cost(u_.input_tokens, u_.output_tokens)
    )


def test_keep_rule_key_leaves_unnamed_alerts_to_the_model():
    services = ["frontend", "cartservice", "cart"]
    # Keep-agent's rule key is the runbook's workload, without the runbook's entry-service fallback
    assert workload_of({"pod": "cartservice-abc-x"}, services) == "cartservice"
    assert workload_of({"node": "node-a1", "pod": "cartservice-abc-x"}, services) == "node/node-a1"
    assert workload_of({"label_topology_kubernetes_io_zone": "zone-b"}, services) == "zone/zone-b"
    assert (
        workload_of({"namespace": "online-boutique", "alertname": "PaymentTransactionsDrop"}, services)
        is None
    )

    calls: list[dict] = []

    def call(raw: dict) -> ToolResult:
        calls.append(raw)
        return ToolResult(ok=True, tool=raw["tool"], data={"id": "inc-009"})

    feedback: list[str] = []
    plan = Plan.model_validate(
        {
            "incidents": [
                {"alert_ids": ["a1", "a2", "a1"], "title": "t"},
                {"incident_id": "inc-001", "alert_ids": ["a2", "a3"]},
            ]
        }
    )
    execute_plan(call, plan, feedback, placeable={"a1", "a2"})
    assert calls == [{"tool": "open_incident", "alert_ids": ["a1", "a2"], "title": "t"}]  # a2 used once
    assert feedback == [
        "alerts ['a3'] were already grouped by the rules; only ungrouped alerts may be placed"
    ]


# ------------------------------------------------------------------ pieces
def test_plan_parsing_accepts_fences_and_prose_and_rejects_the_rest():
    assert parse_plan('Sure. {"incidents": []} hope this helps')[0] == Plan()
    assert parse_plan('```json\n[{"alert_ids": ["a1"]}]\n```')[0].incidents[0].alert_ids == ["a1"]
    assert "not valid JSON" in parse_plan("no plan")[1]
    assert "did not match" in parse_plan('{"incidents": [{"alert_ids": "a1", "bogus": 1}]}')[1]


def test_retrieval_ranks_documents_by_alert_names_and_labels_deterministically():
    docs = [
        Document("service/frontend", "service", "service frontend: error ratio 1%"),
        Document("service/cartservice", "service", "service cartservice: error ratio 40%, pods restarting"),
        Document("change/d0001", "change", "change d0001 to cartservice: bump REDIS_ADDR"),
        Document("node/node-a1", "node", "node node-a1 NotReady"),
    ]
    q = alert_terms(
        [
            {
                "rule": "ServiceErrorRatioCritical",
                "labels": {"service_name": "cartservice"},
                "resolved_at": None,
            },
            {"rule": "NodeNotReady", "labels": {"node": "node-a9"}, "resolved_at": 100.0},
        ]
    )
    ranked = [d.id for d in rank(docs, q, k=3)]
    assert ranked[0] == "service/cartservice" and "node/node-a1" not in ranked  # resolved alerts do not query
    assert ranked == [d.id for d in rank(list(reversed(docs)), q, k=3)]


def test_pricing_catalog_matches_snapshots_and_providers(catalog):
    p = catalog.pricing
    assert p.schema_version == 1 and p.price_for("gpt-4o-2024-08-06").name == "gpt-4o"
    assert p.price_for("openai/gpt-4o-mini").name == "gpt-4o-mini"
    assert p.price_for("my-local-llama") is None
    # only exact names and date snapshots: variants are other models with other prices
    for variant in (
        "o3-mini",
        "o3-pro",
        "gpt-5-chat-latest",
        "gpt-4o-audio-preview",
        "gpt-4o-2024",
        "gpt-5-1",
    ):
        assert p.price_for(variant) is None, variant
    assert p.price_for("gpt-5-mini").name == "gpt-5-mini" and p.price_for("o3-2025-04-16").name == "o3"
    assert p.price_for("gpt-4o-mini-2024-07-18").name == "gpt-4o-mini"
    assert p.price_for("claude-sonnet-4-20250514").name == "claude-sonnet-4"
    assert p.price_for("claude-sonnet-4@20250514").name == "claude-sonnet-4"
    assert p.price_for("openai/gpt-4o-2024-08-06").name == "gpt-4o"
    assert ModelPrice(name="m", input_per_mtok=2, output_per_mtok=8).cost(1_000_000, 500_000) == 6.0
    # which price an agent uses: an explicit price, else an override table, else the catalog's
    from sre_marathon_gym.catalog.pricing import Pricing

    own = Pricing(schema_version=1, models=[ModelPrice(name="gpt-4o", input_per_mtok=9, output_per_mtok=9)])
    url = "http://127.0.0.1:9/v1"
    assert RAGAgent(model="gpt-4o", base_url=url)._resolve_price(p).input_per_mtok == 2.5
    assert RAGAgent(model="gpt-4o", base_url=url, pricing=own)._resolve_price(p).input_per_mtok == 9
    assert (
        RAGAgent(model="gpt-4o", base_url=url, pricing=own, price=(1, 3))._resolve_price(p).output_per_mtok
        == 3
    )
    assert RAGAgent(model="llama", base_url=url)._resolve_price(p) is None


def test_pricing_file_is_validated_by_the_loader(catalog_copy):
    from sre_marathon_gym.catalog import read_catalog
    from sre_marathon_gym.core.errors import CatalogError

    path = catalog_copy / "pricing.yaml"
    path.write_text(path.read_text().replace("input_per_mtok: 2.50", "input_per_mtok: -1", 1))
    with pytest.raises(CatalogError, match=r"pricing.yaml: models\[\d+\] \(gpt-4o\).input_per_mtok"):
        read_catalog(catalog_copy)


def test_configuration_from_environment_and_clear_errors(monkeypatch):
    with pytest.raises(ConfigurationError, match="SRE_MARATHON_MODEL"):
        make_agent("rag")
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        make_agent("rag", model="gpt-4o")
    monkeypatch.setenv("SRE_MARATHON_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://user:secret@127.0.0.1:9/v1?key=abc")
    agent = make_agent("keep")
    assert agent.config.model == "env-model" and agent.config.public()["base_url"] == "http://127.0.0.1:9/v1"
    assert "secret" not in repr(agent.config)


def test_cli_refuses_an_llm_agent_without_a_model_before_any_run(capsys):
    from sre_marathon_gym.cli.commands import main

    assert main(["evaluate", "--agent", "react", "--apps", "online_boutique"]) == 2
    assert "needs a model: pass --model NAME" in capsys.readouterr().err
    assert main(["evaluate", "--agent", "reakt", "--model", "m", "--base-url", "http://127.0.0.1:9/v1"]) == 2
    assert "did you mean 'react'" in capsys.readouterr().err


def test_cli_pricing_override_file_is_validated(tmp_path, capsys):
    from sre_marathon_gym.cli.commands import main

    bad = tmp_path / "prices.yaml"
    bad.write_text("schema_version: 1\nmodels:\n  - {name: m, input_per_mtok: 1, output_per_mtok: -2}\n")
    assert (
        main(
            [
                "evaluate",
                "--agent",
                "rag",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--pricing",
                str(bad),
            ]
        )
        == 2
    )
    assert f"{bad}: models[0] (m).output_per_mtok" in capsys.readouterr().err


def test_missing_openai_extra_names_the_install_command(monkeypatch):
    import builtins
    import subprocess
    import sys

    code = (
        "import sys, sre_marathon_gym.agents.llm, sre_marathon_gym.cli.commands;"
        "print('openai' in sys.modules)"
    )
    lazy = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert lazy.stdout.strip() == "False"  # the package imports without the extra

    from sre_marathon_gym.core.errors import OptionalDependencyError

    real = builtins.__import__

    def no_openai(name, *args, **kwargs):
        if name == "openai":
            raise ImportError("No module named 'openai'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openai)
    with pytest.raises(OptionalDependencyError, match=r"pip install 'sre-marathon-gym\[llm\]'"):
        make_agent("react", model="m", base_url="http://127.0.0.1:9/v1")


def test_deadline_uses_the_injected_clock():
    now = [100.0]
    d = Deadline(110, clock=lambda: now[0])
    assert d.remaining() == 110 and not d.expired
    now[0] = 210.0
    with pytest.raises(BudgetExceededError, match="110 s wall-clock budget"):
        d.check()


def test_dead_endpoint_costs_invocations_never_the_run(tmp_path):
    with ScriptedServer([("status", 500)] * 100) as server:
        agent = ReActAgent(model="stub-model", base_url=server.url, max_retries=1, backoff_s=0.0)
        u, _record, bundle = run(agent, tmp_path)
    assert u.sim.now >= u.run_s  # the episode ran to the end and was recorded
    assert bundle.record.usage.model_calls == 0 and bundle.record.usage.failed_model_calls == 2 * 7
    assert sum("model endpoint failed" in line for line in bundle.extra["agent"]["log"]) == 7


# ------------------------------------------------------------------ the one-command leaderboard run
def test_cli_evaluate_react_runs_the_leaderboard_protocol_and_prints_published_numbers(
    tmp_path, capsys, monkeypatch
):
    from sre_marathon_gym.catalog import load_catalog
    from sre_marathon_gym.cli.commands import main

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    first = completion(tools=[("get_alerts", {"state": "firing"})], prompt=2000, out=30)
    with ScriptedServer([("status", 429), first]) as server:
        rc = main(
            [
                "evaluate",
                "--agent",
                "react",
                "--apps",
                "online_boutique",
                "--model",
                "gpt-4o-2024-08-06",
                "--base-url",
                server.url,
                "--workers",
                "1",
                "--out",
                str(tmp_path),
            ]
        )
    out = capsys.readouterr().out
    assert rc == 0
    assert server.requests[0]["model"] == "gpt-4o-2024-08-06"
    assert len(server.preflights) == 1  # the endpoint was checked once before the run
    assert "Leaderboard (our runs, leaderboard seeds)" in out and "Published reference numbers" in out
    assert "best_marathon_score" in out and "41.3" in out
    assert "LLM runs: model gpt-4o-2024-08-06; priced at $2.5 / $10 per million" in out
    seed = load_catalog().leaderboard.seed_for("online_boutique")
    bundle = load_bundle(tmp_path / f"online_boutique-react-{seed}.bundle")
    u_ = bundle.record.usage
    invocations = len(bundle.record.degradation.times) - 1  # one interval before the first invocation
    assert u_.model_calls == invocations + 1 and u_.failed_model_calls == 1  # the 429 was retried
    assert u_.input_tokens == 2000 + 100 * invocations and u_.output_tokens == 30 + 5 * invocations
    assert u_.cost_usd == pytest.approx((u_.input_tokens * 2.5 + u_.output_tokens * 10) / 1e6)
    board = next(line for line in out.splitlines() if line.startswith("react") and "mean of apps" in line)
    assert board.split()[-3:] == [
        str(u_.model_calls),
        str(u_.input_tokens + u_.output_tokens),
        f"{u_.cost_usd:.2f}",
    ]
    llm = next(line for line in out.splitlines() if line.startswith("react") and "online_boutique" in line)
    assert llm.split()[3:8] == [str(u_.model_calls), "1", "0", str(u_.input_tokens), str(u_.output_tokens)]
    assert "sk-test-secret" not in json.dumps(bundle.manifest)
    assert bundle.extra["agent"]["model"] == "gpt-4o-2024-08-06" and bundle.extra["agent"]["budget_s"] == 110


def test_a_crashing_agent_still_leaves_its_recording(tmp_path, monkeypatch):
    import sre_marathon_gym.agents as agents_mod
    from sre_marathon_gym.agents import NoopAgent
    from sre_marathon_gym.evaluation.leaderboard import RunSpec, run_one

    class Crashing(NoopAgent):
        name = "crash"

        def invoke(self, env: Any, obs: Any, info: dict) -> None:
            if info["invocation"] == 3:
                raise RuntimeError("agent bug")
            env.unwrapped.call_tool({"tool": "get_topology"})

    monkeypatch.setattr(agents_mod, "make_agent", lambda name, **kw: Crashing())
    with pytest.raises(RuntimeError, match="agent bug"):
        run_one(RunSpec("online_boutique", "crash", 101, "eval", str(tmp_path)))
    bundle = load_bundle(tmp_path / "online_boutique-crash-101.incomplete.bundle")  # verified on load
    assert bundle.extra["incomplete"] == "RuntimeError: agent bug"
    assert [a.tool for a in bundle.record.actions] == ["get_topology"] * 3
    assert not (tmp_path / "online_boutique-crash-101.bundle").exists()


# ------------------------------------------------------------------ options validated at the boundary
def test_cli_refuses_a_negative_price_before_any_run(tmp_path, capsys):
    from sre_marathon_gym.cli.commands import main

    out = tmp_path / "runs"
    assert (
        main(
            [
                "evaluate",
                "--agent",
                "react",
                "--apps",
                "online_boutique",
                "--model",
                "m",
                "--base-url",
                "http://127.0.0.1:9/v1",
                "--price",
                "-1",
                "2",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--price IN OUT: input_per_mtok=-1.0: Input should be greater than or equal to 0" in err
    assert "Traceback" not in err and not out.exists()  # no run started, so no (incomplete) bundle
    with pytest.raises(ConfigurationError, match=r"`price` option\(s\): output_per_mtok=-2"):
        make_agent("rag", model="m", base_url="http://127.0.0.1:9/v1", price=(1, -2))


@pytest.mark.parametrize(
    ("name", "options", "field"),
    [
        ("react", {"base_url": "localhost:11434/v1"}, "base_url: 'localhost:11434/v1' is not an http(s) URL"),
        ("react", {"base_url": "ftp://127.0.0.1/v1"}, "base_url: 'ftp://127.0.0.1/v1' is not an http(s) URL"),
        ("rag", {"budget_s": -5}, "budget_s=-5: Input should be greater than 0"),
        ("react", {"max_steps": "ten"}, "max_steps='ten': Input should be a valid integer"),
        ("react", {"max_tokens": 0}, "max_tokens=0: Input should be greater than or equal to 1"),
        ("keep", {"top_k": 0}, "top_k=0: Input should be greater than or equal to 1"),
        ("rag", {"max_retries": -1}, "max_retries=-1: Input should be greater than or equal to 0"),
    ],
)
def test_bad_agent_options_fail_at_construction_naming_the_field(name, options, field):
    kwargs = {"model": "m", "base_url": "http://127.0.0.1:9/v1", **options}
    with pytest.raises(ConfigurationError) as err:
        make_agent(name, **kwargs)
    assert field in str(err.value)


def test_cli_refuses_a_base_url_without_scheme(capsys):
    from sre_marathon_gym.cli.commands import main

    assert (
        main(["evaluate", "--agent", "rag", "--model", "m", "--base-url", "user:pw@localhost:8000/v1"]) == 2
    )
    err = capsys.readouterr().err
    assert "base_url: 'localhost:8000/v1' is not an http(s) URL with a host" in err and "pw" not in err


# ------------------------------------------------------------------ nothing leaks
def test_run_one_closes_the_agent_client_and_the_env_however_the_run_ends(tmp_path, monkeypatch):
    import sre_marathon_gym.agents as agents_mod
    from sre_marathon_gym.envs.marathon import MarathonEnv
    from sre_marathon_gym.evaluation.leaderboard import RunSpec, run_one

    closed_envs: list[int] = []
    real_close = MarathonEnv.close
    monkeypatch.setattr(
        MarathonEnv, "close", lambda self: (closed_envs.append(id(self)), real_close(self))[1]
    )

    class CrashingReAct(ReActAgent):
        def act(self, env: Any, deadline: Deadline, invocation: int) -> None:
            if invocation == 2:
                raise RuntimeError("agent bug")
            super().act(env, deadline, invocation)

    made: list[ReActAgent] = []

    def make(name: str, **kw: Any) -> ReActAgent:
        made.append(CrashingReAct(**kw))
        return made[-1]

    monkeypatch.setattr(agents_mod, "make_agent", make)
    with ScriptedServer([]) as server:
        spec = RunSpec(
            "online_boutique",
            "react",
            101,
            "eval",
            str(tmp_path),
            agent_options={"model": "stub-model", "base_url": server.url},
        )
        with pytest.raises(RuntimeError, match="agent bug"):
            run_one(spec)
    agent = made[0]
    assert agent.usage.model_calls == 2 and agent.client is not None and agent.client.closed
    assert len(closed_envs) == 1
    # and when the run completes: close() releases the client that reset() opened
    agent = ReActAgent(model="stub-model", base_url="http://127.0.0.1:9/v1")
    agent.close()  # nothing opened yet: a no-op
    env = gym.make("SREMarathon/OnlineBoutique-v3", **KW)
    env.reset(seed=SEED)
    agent.reset(env, SEED)
    client = agent.client
    assert client is not None and not client.closed
    agent.close()
    assert client.closed


def test_rag_checks_the_budget_before_each_planned_call_and_records_the_rest_as_skipped(tmp_path):
    plan = {
        "incidents": [
            {
                "alert_ids": ["a0003", "a0006"],
                "title": "cart",
                "root_cause": {
                    "services": ["cartservice"],
                    "artifact": "deployment/cartservice:resources.limits.cpu",
                },
                "repairs": [{"tool": "scale", "service": "cartservice", "replicas": 2}],
            },
            {"alert_ids": ["a0001"], "title": "checkout"},
        ]
    }
    clock = FakeClock()
    with ScriptedServer([completion(json.dumps(plan))]) as server:
        agent = RAGAgent(model="stub-model", base_url=server.url, clock=clock, **FAST)
        env = gym.make("SREMarathon/OnlineBoutique-v3", **KW)
        u = env.unwrapped
        real_call = u.call_tool

        def slow_mutations(raw: Any) -> ToolResult:  # each incident write takes 200 s of the 110 s budget
            result = real_call(raw)
            if isinstance(raw, dict) and raw.get("tool") == "open_incident":
                clock.advance(200.0)
            return result

        u.call_tool = slow_mutations
        record = run_episode(env, agent, seed=SEED)
    calls = [(a.tool, a.verdict) for a in record.actions if a.kind != "read"]
    assert calls == [("open_incident", "ok")]  # the root cause, the scale and the 2nd incident never ran
    assert agent.usage.timed_out_invocations == [1]
    assert any(
        "not executed: set_root_cause(inc-001), scale(inc-001), open_incident(new incident)" in line
        for line in agent.log
    )
    assert (
        "the invocation's time ran out before 3 planned call(s): set_root_cause(inc-001), scale(inc-001), "
        "open_incident(new incident)"
    ) in server.messages(1)[1]["content"]


def test_execute_plan_skips_every_call_once_the_deadline_has_passed():
    clock = FakeClock()
    calls: list[dict] = []

    def call(raw: dict) -> ToolResult:
        calls.append(raw)
        clock.advance(60.0)
        return ToolResult(ok=True, tool=raw["tool"], data={"id": "inc-007"})

    plan = Plan.model_validate(
        {
            "incidents": [
                {
                    "alert_ids": ["a1"],
                    "root_cause": {"services": ["s"], "artifact": "s:env/X"},
                    "repairs": [{"tool": "restart", "service": "s"}],
                },
                {
                    "incident_id": "inc-002",
                    "alert_ids": ["a2"],
                    "repairs": [{"tool": "rollback", "service": "t"}],
                },
            ]
        }
    )
    feedback: list[str] = []
    done = execute_plan(call, plan, feedback, deadline=Deadline(100, clock=clock))
    assert [c["tool"] for c in calls] == ["open_incident", "set_root_cause"]  # 60 s, 120 s: then it is over
    assert done.skipped == ["restart(inc-007)", "update_incident(inc-002)", "rollback(inc-002)"]
    assert len(done.results) == 2 and feedback[-1].endswith(
        "restart(inc-007), update_incident(inc-002), rollback(inc-002)"
    )


# ------------------------------------------------------------------ a wrong key or model is reported
@pytest.mark.parametrize(
    ("status", "says"),
    [
        (401, "HTTP 401 (the API key was refused: set $OPENAI_API_KEY"),
        (403, "HTTP 403 (the API key was refused"),
        (404, "HTTP 404 (the model or the URL is unknown: check --model"),
    ],
)
def test_cli_preflight_turns_a_refused_key_or_model_into_a_clear_error_before_any_run(
    tmp_path, capsys, status, says
):
    from sre_marathon_gym.cli.commands import main

    with ScriptedServer([], preflight=("status", status)) as server:
        rc = main(
            [
                "evaluate",
                "--agent",
                "react,rag",
                "--apps",
                "online_boutique",
                "--model",
                "no-such-model",
                "--base-url",
                server.url,
                "--workers",
                "1",
                "--out",
                str(tmp_path / "runs"),
            ]
        )
    err = capsys.readouterr().err
    assert rc == 2 and says in err and "refused model 'no-such-model'" in err
    assert len(server.preflights) == 1 and server.requests == []  # one check, no run
    assert not (tmp_path / "runs").exists()


def test_preflight_passes_through_a_working_endpoint_without_touching_the_run_usage():
    with ScriptedServer([]) as server:
        agent = RAGAgent(model="stub-model", base_url=server.url, **FAST)
        agent.preflight()
    assert len(server.preflights) == 1 and server.preflights[0]["model"] == "stub-model"
    assert agent.usage.model_calls == 0 and server.requests == []


def test_a_run_stops_after_consecutive_refusals_and_keeps_its_recording(tmp_path):
    from sre_marathon_gym.evaluation.leaderboard import RunSpec, run_one

    with ScriptedServer([completion("fine", prompt=10, out=1)] + [("status", 401)] * 100) as server:
        spec = RunSpec(
            "online_boutique",
            "react",
            101,
            "eval",
            str(tmp_path),
            agent_options={"model": "stub-model", "base_url": server.url, **FAST},
        )
        with pytest.raises(
            ConfigurationError, match=r"3 requests in a row refused by the endpoint.*HTTP 401.*API key"
        ):
            run_one(spec)  # no preflight here: the run itself notices
    assert (
        len(server.requests) == 1 + 3
    )  # one answer, then three refusals (401 is not retried), then the stop
    bundle = load_bundle(tmp_path / "online_boutique-react-101.incomplete.bundle")
    assert "ConfigurationError: stopping the run" in bundle.extra["incomplete"]
    assert bundle.record.usage.model_calls == 1 and bundle.record.usage.failed_model_calls == 3
    assert sum("model endpoint failed" in line for line in bundle.extra["agent"]["log"]) == 3
    assert not (tmp_path / "online_boutique-react-101.bundle").exists()


def test_keep_groups_alerts_that_fired_and_resolved_between_invocations():
    from types import SimpleNamespace

    from sre_marathon_gym.agents.llm.client import ChatClient

    def alert(aid: str, fired: float, resolved: float | None, **labels: str) -> dict:
        return {
            "id": aid,
            "rule": "ServiceErrorRatioCritical",
            "severity": "critical",
            "fired_at": fired,
            "resolved_at": resolved,
            "labels": labels,
        }

    alerts = [
        alert("a1", 200, None, service_name="cartservice"),
        alert("a2", 130, 200, service_name="cartservice"),  # fired and resolved since t=120
        alert("a3", 150, 230, service_name="paymentservice"),  # likewise, alone on its workload
        alert("a4", 60, 100, service_name="frontend"),  # resolved before the previous invocation
        alert("a5", 140, 210, alertname="PaymentTransactionsDrop"),
    ]  # names no workload
    made: list[dict] = []

    def call_tool(raw: dict) -> ToolResult:
        tool = raw["tool"]
        if tool == "get_alerts":
            return ToolResult(ok=True, tool=tool, data={"now": 240.0, "alerts": alerts})
        if tool == "workspace":
            return ToolResult(ok=True, tool=tool, data={"incidents": []})
        if tool == "get_topology":
            return ToolResult(
                ok=True,
                tool=tool,
                data={
                    "services": [{"name": s} for s in ("cartservice", "paymentservice", "frontend")],
                    "edges": [],
                },
            )
        if tool == "open_incident":
            made.append(raw)
            return ToolResult(ok=True, tool=tool, data={"id": f"inc-00{len(made)}"})
        return ToolResult.fail(tool, "unavailable", "not in this stub")

    env = SimpleNamespace(
        call_tool=call_tool, interval_s=120.0, app=SimpleNamespace(display_name="Online Boutique")
    )
    with ScriptedServer([]) as server:
        agent = KeepAgent(model="stub-model", base_url=server.url, **FAST)
        agent.client = ChatClient(agent.config, agent.usage)
        agent.act(env, Deadline(110, clock=FakeClock()), invocation=1)
        agent.close()
    assert made == [
        {"tool": "open_incident", "alert_ids": ["a1", "a2"], "title": "keep: cartservice"},
        {"tool": "open_incident", "alert_ids": ["a3"], "title": "keep: paymentservice"},
    ]
    prompt = server.messages(0)[1]["content"]
    assert (
        "Alerts the rules left ungrouped (the only alert ids you may place, into an incident above or a "
        "new one): a5" in prompt
    )


def test_retrieval_gives_each_pod_to_its_own_service():
    from sre_marathon_gym.agents.llm.retrieval import collect

    pods = [
        {"name": "frontend-proxy-7d9-x2", "status": "CrashLoopBackOff", "ready": "0/1", "restarts": 4},
        {"name": "frontend-5c4-ab", "status": "Running", "ready": "1/1", "restarts": 0},
    ]

    def call(raw: dict) -> ToolResult:
        if raw["tool"] == "get_topology":
            return ToolResult(
                ok=True,
                tool="get_topology",
                data={
                    "services": [{"name": "frontend"}, {"name": "frontend-proxy"}],
                    "edges": [{"from": "frontend-proxy", "to": "frontend"}],
                },
            )
        if raw.get("resource") == "pods":
            return ToolResult(ok=True, tool=raw["tool"], data={"items": pods})
        return ToolResult.fail(raw["tool"], "unavailable", "not in this stub")

    docs = {d.id: d.text for d in collect(call, 600.0)}
    assert "unhealthy pods: frontend-proxy-7d9-x2 CrashLoopBackOff" in docs["service/frontend-proxy"]
    assert "unhealthy" not in docs["service/frontend"]  # frontend-proxy's pod is not frontend's
    assert set(docs) == {"service/frontend", "service/frontend-proxy"}


# ------------------------------------------------------------------ `run` takes the same LLM options
def test_cli_run_takes_model_and_base_url_for_an_llm_agent(tmp_path, capsys):
    from sre_marathon_gym.cli.commands import main

    with ScriptedServer([]) as server:
        rc = main(
            [
                "run",
                "--app",
                "online_boutique",
                "--agent",
                "react",
                "--mode",
                "train",
                "--seed",
                str(SEED),
                "--injection-minutes",
                "10",
                "--observation-minutes",
                "5",
                "--intensity",
                "0.6",
                "--model",
                "stub-model",
                "--base-url",
                server.url,
                "--price",
                "1",
                "2",
                "--out",
                str(tmp_path),
            ]
        )
    assert rc == 0, capsys.readouterr().err
    assert len(server.preflights) == 1 and len(server.requests) == 7  # one DONE turn per invocation
    assert all(r["model"] == "stub-model" for r in server.requests)
    bundle = load_bundle(next(tmp_path.glob("online_boutique-react-*.bundle")))
    agent = bundle.extra["agent"]
    assert agent["model"] == "stub-model" and agent["price_per_mtok"] == {"input": 1.0, "output": 2.0}
    assert bundle.record.usage.model_calls == 7
    assert bundle.record.usage.cost_usd == pytest.approx(cost(7 * 100, 7 * 5))

    assert main(["run", "--app", "online_boutique", "--agent", "runbook", "--model", "m"]) == 2
    assert "are for the LLM agents (react, rag, keep), not 'runbook'" in capsys.readouterr().err


def test_cli_llm_accounting_reads_model_and_price_from_the_bundles(tmp_path, catalog):
    from sre_marathon_gym.cli.commands import _llm_accounting
    from sre_marathon_gym.evaluation.leaderboard import RunSpec

    with ScriptedServer([]) as server:
        agent = RAGAgent(model="stub-model", base_url=server.url, price=(0.5, 4), **FAST)
        _u, record, _bundle = run(agent, tmp_path)
    card = score_run(record, catalog.scoring)
    spec = RunSpec("online_boutique", "rag", SEED, "train", str(tmp_path))
    text = _llm_accounting([(spec, card, str(tmp_path / "rag.bundle"))], catalog)
    # nothing but the bundle says which model and price this run used
    assert (
        "LLM runs: model stub-model; priced at $0.5 / $4 per million input / output tokens (given price)"
        in text
    )


def test_cli_run_stops_on_consecutive_refusals_and_keeps_the_recording(tmp_path, capsys):
    from sre_marathon_gym.cli.commands import main

    # the key works for the preflight, then the endpoint starts refusing (a revoked key, say)
    with ScriptedServer([("status", 401)] * 10) as server:
        rc = main(
            [
                "run",
                "--app",
                "online_boutique",
                "--agent",
                "rag",
                "--mode",
                "train",
                "--seed",
                str(SEED),
                "--injection-minutes",
                "10",
                "--observation-minutes",
                "5",
                "--intensity",
                "0.6",
                "--model",
                "stub-model",
                "--base-url",
                server.url,
                "--out",
                str(tmp_path),
            ]
        )
    assert rc == 2 and "3 requests in a row refused by the endpoint" in capsys.readouterr().err
    assert len(server.requests) == 3
    bundle = load_bundle(tmp_path / f"online_boutique-rag-{SEED}.incomplete.bundle")
    assert bundle.record.usage.failed_model_calls == 3 and bundle.extra["agent"]["model"] == "stub-model"
