"""The instrumented tools: schemas, policy, structured errors, and an end-to-end repair by hand."""

from __future__ import annotations

import json
import re

import gymnasium as gym
import jsonschema
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.tools.models import TOOL_NAMES, json_schemas, openai_tools


def test_nineteen_tools_and_their_schemas_validate():
    schemas = json_schemas()
    assert len(TOOL_NAMES) == len(schemas) == 20
    for name, schema in schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
    specs = openai_tools()
    assert {s["function"]["name"] for s in specs} == set(TOOL_NAMES)
    for s in specs:
        jsonschema.Draft202012Validator.check_schema(s["function"]["parameters"])
        assert "tool" not in s["function"]["parameters"]["properties"]
        assert s["function"]["description"]


def test_malformed_calls_become_structured_errors(env):
    cases = [
        ({"tool": "get_alertz"}, "unknown_tool", "did you mean 'get_alerts'"),
        (
            {"tool": "scale", "incident_id": "inc-001", "service": "cartservice", "replicas": "many"},
            "invalid_arguments",
            "replicas",
        ),
        ({"tool": "read_source", "service": "cartservic"}, "invalid_arguments", "did you mean 'cartservice'"),
        (
            {"tool": "restart", "incident_id": "inc-999", "service": "cartservice"},
            "guard_failed",
            "must cite a reported incident",
        ),
        ({"tool": "get_k8s_state", "resource": "secrets"}, "forbidden", "secrets"),
        (
            {
                "tool": "cluster_op",
                "incident_id": "x",
                "operation": "delete_namespace",
                "target": "online-boutique",
            },
            "forbidden",
            "namespace",
        ),
        (
            {"tool": "set_config", "incident_id": "x", "service": "prometheus", "key": "rules", "value": ""},
            "forbidden",
            "alert rules",
        ),
        ({"tool": "open_incident", "alert_ids": ["a9999"]}, "invalid_arguments", "unknown alert id"),
        ("{not json", "invalid_arguments", ""),
        (42, "invalid_arguments", "JSON object"),
    ]
    for call, code, text in cases:
        res = env.call_tool(call)
        assert not res.ok and res.error.code == code, (call, res)
        assert text in res.error.message, (call, res.error.message)
    verdicts = [a.verdict for a in env.runner.actions[-len(cases) :]]
    assert verdicts.count("forbidden") == 3 and verdicts.count("guard_failed") == 1


def test_read_tools_answer(env):
    for call in (
        {"tool": "get_alerts"},
        {"tool": "get_topology"},
        {"tool": "get_k8s_state", "resource": "pods"},
        {"tool": "get_k8s_state", "resource": "events"},
        {"tool": "get_deploy_history"},
        {"tool": "read_source", "service": "cartservice"},
        {"tool": "read_config", "service": "frontend"},
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_calls_total",
            "function": "rate",
            "group_by": ["service_name"],
        },
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_duration_milliseconds",
            "function": "p95",
            "group_by": ["service_name"],
        },
        {"tool": "search_logs", "service": "frontend"},
        {"tool": "get_traces", "limit": 3},
        {"tool": "workspace", "op": "write", "key": "n1", "text": "hello"},
        {"tool": "workspace", "op": "read", "key": "n1"},
    ):
        res = env.call_tool(call)
        assert res.ok, (call, res.error)
        json.dumps(res.model_dump())  # every result is JSON-serialisable
    rates = env.call_tool(
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_calls_total",
            "function": "rate",
            "group_by": ["service_name"],
            "matchers": {"service_name": "frontend", "span_kind": "SPAN_KIND_SERVER"},
        }
    ).data
    last = [v for _, v in rates["series"][0]["values"] if v is not None][-1]
    assert last == pytest.approx(20, rel=0.3)


CALL = st.fixed_dictionaries(
    {"tool": st.sampled_from(list(TOOL_NAMES) + ["drop_tables", ""])},
    optional={
        "service": st.one_of(st.sampled_from(["frontend", "cartservice", "nope", ""]), st.integers()),
        "incident_id": st.sampled_from(["inc-001", "inc-404", ""]),
        "replicas": st.one_of(st.integers(-5, 50), st.text(max_size=3)),
        "key": st.text(max_size=12),
        "value": st.text(max_size=12),
        "alert_ids": st.lists(st.text(max_size=6), max_size=3),
        "resource": st.sampled_from(["pods", "secrets", "x"]),
        "operation": st.sampled_from(["failover", "delete_namespace", "reboot"]),
        "target": st.text(max_size=10),
        "path": st.text(max_size=20),
        "metric": st.text(max_size=20),
        "function": st.sampled_from(["rate", "p95", "avg"]),
        "op": st.sampled_from(["list", "read", "write", "zap"]),
        "junk": st.integers(),
    },
)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    calls=st.lists(CALL, min_size=1, max_size=5),
    action=st.lists(st.integers(-3, 300), min_size=1, max_size=30),
)
def test_fuzzed_calls_and_actions_never_raise(env, calls, action):
    for call in calls:
        res = env.call_tool(call)
        assert res.ok or (res.error is not None and res.error.code and res.error.message)
    if env.sim.now < env.run_s:
        obs, r, term, trunc, info = env.step(action)
        assert np.isfinite(r)
        if term:
            env.reset(seed=11)


def test_no_ground_truth_leaks_into_observations_results_or_info():
    e = gym.make("SREMarathon/AstronomyShop-v3", injection_minutes=20, observation_minutes=5).unwrapped
    obs, info = e.reset(seed=5)
    cat = e.catalog
    faults = [cat.fault(f.fault_id) for f in e.schedule.faults]
    ids = {f.id for f in faults}
    artifacts = {f.artifact for f in faults}
    texts = [json.dumps({k: np.asarray(v).tolist() for k, v in obs.items()}), json.dumps(info, default=str)]
    history = []  # the deploy history legitimately shows every change (not which one is the culprit)
    term = False
    while not term:
        obs, r, term, _, info = e.step(np.zeros(e.action_space.shape, dtype=np.int64))
        texts.append(json.dumps(info, default=str))
        for call in (
            {"tool": "get_alerts"},
            {"tool": "get_k8s_state", "resource": "events"},
            {"tool": "get_k8s_state", "resource": "deployments"},
            {"tool": "get_k8s_state", "resource": "pods"},
            {"tool": "search_logs", "level": "ERROR", "limit": 200},
            {"tool": "get_traces", "status": "error"},
        ):
            texts.append(json.dumps(e.call_tool(call).model_dump(), default=str))
        history.append(json.dumps(e.call_tool({"tool": "get_deploy_history"}).model_dump(), default=str))
    blob = "\n".join(texts)
    everything = blob + "\n".join(history)
    assert not [i for i in ids if i in everything]
    assert not re.search(
        r"\b(fault|injected|injection|chaos|ground.truth|culprit)", everything, re.IGNORECASE
    )
    # an object name (deployment/x, node/x, a NetworkPolicy) is visible in kubectl output by nature; anything
    # more specific (a file at a revision, an env key, a deployment field) must not show outside the deploy
    # history
    specific = [
        a for a in artifacts if not re.fullmatch(r"(deployment/[^:]+|node/.+|zone/.+|networkpolicy/.+)", a)
    ]
    assert specific and not [a for a in specific if a in blob]
