"""Agent-supplied patterns run with bounded cost: RE2 label regexes, bounded log queries.

Each hostile pattern goes through the real entry points (`call_tool`, ORCA's tools, the evidence
judge). No wall-clock assertions: a catastrophic regex would hang, and the alarm guard turns a hang
into a failure after a generous minute instead of a stuck test run.
"""

from __future__ import annotations

import signal

import gymnasium as gym
import pytest

import sre_marathon_gym  # noqa: F401
from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.catalog import load_catalog
from sre_marathon_gym.core.errors import PatternError
from sre_marathon_gym.core.patterns import MAX_PATTERN_CHARS, compile_label_regex
from sre_marathon_gym.orca.evidence import EvidenceChecker
from sre_marathon_gym.orca.report import MetricRef
from sre_marathon_gym.orca.tasks import GroundTruthCause
from sre_marathon_gym.orca.tools import OrcaTools
from sre_marathon_gym.sim.simulator import Simulator

HOSTILE = ["(.*.*)*z", "a{4294967296}"]  # exponential backtracking in `re`; OverflowError in `re`
UNSUPPORTED = [
    r"(a)\1",
    "(?=cart)cart.*",
    "(?<!x)cart",
    "a{1001}",
    "(a{100}){100}",
    "x" * (MAX_PATTERN_CHARS + 1),
]


@pytest.fixture(autouse=True)
def no_hang():
    """Fail (rather than hang) if a call does not return within a minute."""

    def _hung(signum, frame):
        raise TimeoutError("a pattern call did not return within 60 s")

    old = signal.signal(signal.SIGALRM, _hung)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture(scope="module")
def env():
    e = gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4, observation_minutes=2)
    e.reset(seed=3)
    e.step(None)
    yield e.unwrapped
    e.close()


def _metrics(env, pod: str) -> object:
    return env.call_tool(
        {
            "tool": "query_metrics",
            "metric": "container_cpu_usage_seconds_total",
            "matchers": {"pod": pod},
            "function": "rate",
        }
    )


def test_label_regexes_are_fully_anchored_re2_like_promql():
    rx = compile_label_regex("cart.*|front")
    assert rx.fullmatch("cartservice") and rx.fullmatch("front") and not rx.fullmatch("frontend")
    assert compile_label_regex("a.b").fullmatch("a\nb")  # Prometheus 3: `.` matches a newline
    assert compile_label_regex("(?i)CART").fullmatch("cart")
    assert compile_label_regex(r"\{5000\}|[{5000}]|\x{41}").fullmatch("A")  # literal braces are no repetition
    assert not compile_label_regex("(.*.*)*z").fullmatch("a" * 50_000 + "y")  # linear time, no backtracking


@pytest.mark.parametrize("pattern", HOSTILE + UNSUPPORTED)
def test_refused_patterns_are_pattern_errors_naming_the_pattern(pattern):
    if pattern == "(.*.*)*z":
        return  # valid RE2: it runs, in linear time
    with pytest.raises(PatternError) as info:
        compile_label_regex(pattern, "label 'pod'")
    assert repr(pattern[:20]).rstrip("'") in str(info.value) and "label 'pod'" in str(info.value)


def test_hostile_regexes_through_call_tool_answer_or_refuse(env):
    slow = _metrics(env, "~(.*.*)*z")  # runs (RE2): no pod name ends in "z"
    assert slow.ok and slow.data["series"] == []
    assert _metrics(env, "~.*cart.*").data["series"]  # regexes still select
    for pattern in ["a{4294967296}", *UNSUPPORTED]:
        res = _metrics(env, "~" + pattern)
        assert not res.ok and res.error.code == "invalid_arguments", (pattern, res)
        assert repr(pattern[:20]).rstrip("'") in res.error.message, res.error.message
    bad_label = env.call_tool(
        {
            "tool": "query_metrics",
            "metric": "container_cpu_usage_seconds_total",
            "matchers": {'pod"} or vector(1) #': "x"},
        }
    )
    assert not bad_label.ok and bad_label.error.code == "invalid_arguments"
    assert env.runner.actions[-1].verdict == "error"  # recorded like any failed call


def test_log_queries_are_bounded_substrings(env):
    res = env.call_tool({"tool": "search_logs", "query": "(.*.*)*z a{4294967296}"})
    assert res.ok and res.data["count"] == 0  # terms are literal substrings, never regexes
    long = env.call_tool({"tool": "search_logs", "query": "-x " * 400})
    assert not long.ok and long.error.code == "invalid_arguments"


@pytest.fixture(scope="module")
def astro():
    sim = Simulator(load_catalog(), "astronomy_shop", 5, telemetry=True)
    sim.advance_to(600)
    return SimBackend(sim)  # ORCA's tools and evidence checks read a recorded world through its backend


def _orca(tools: OrcaTools, raw: dict) -> object:
    model, err = tools.parse(raw)
    return err if model is None else tools.call(model)


def test_orca_searches_answer_or_refuse(astro):
    tools = OrcaTools(astro, 600.0)
    ok = _orca(
        tools,
        {
            "tool": "query_metrics",
            "metric": "traces_span_metrics_calls_total",
            "matchers": {"service_name": "~(.*.*)*z"},
            "function": "rate",
            "start_s": 300,
        },
    )
    assert ok.ok and ok.data["series"] == []
    for pattern in ["a{4294967296}", r"(a)\1", "(?=a)"]:
        res = _orca(
            tools,
            {
                "tool": "query_metrics",
                "metric": "traces_span_metrics_calls_total",
                "matchers": {"service_name": "~" + pattern},
                "start_s": 300,
            },
        )
        assert not res.ok and res.error.code == "invalid_arguments" and repr(pattern) in res.error.message
    logs = _orca(tools, {"tool": "search_logs", "query": "(.*.*)*z", "start_s": 0})
    assert logs.ok and logs.data["count"] == 0
    long = _orca(tools, {"tool": "search_logs", "query": "y" * (MAX_PATTERN_CHARS + 1), "start_s": 0})
    assert not long.ok and long.error.code == "invalid_arguments"


def test_orca_evidence_with_refused_regexes_earns_nothing(astro):
    chk = EvidenceChecker(astro)
    cause = GroundTruthCause(
        event_id="e",
        flag="adFailure",
        value="on",
        services=("ad",),
        mechanisms=("errors",),
        start_s=60.0,
        end_s=600.0,
    )
    for pattern in HOSTILE + [r"(a)\1"]:
        ref = MetricRef(metric="traces_span_metrics_calls_total", matchers={"service_name": "~" + pattern})
        assert not chk.shows(ref, cause, 600.0)


def test_alert_rule_regexes_use_the_same_engine():
    from sre_marathon_gym.alerting.rules import _compile_matchers
    from sre_marathon_gym.core.errors import AlertRuleError

    ((label, op, value, rx),) = _compile_matchers({"reason": ("=~", "ImagePullBackOff|ErrImagePull")}, "rule")
    assert rx.fullmatch("ErrImagePull") and not rx.fullmatch("ErrImagePullX")
    with pytest.raises(AlertRuleError, match="rule: invalid regex"):
        _compile_matchers({"reason": ("=~", "(?=x)")}, "rule")
