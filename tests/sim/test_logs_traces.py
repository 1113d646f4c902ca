"""Logs and traces synthesised on query: deterministic, symptom-bearing, consistent, leak-free."""

from __future__ import annotations

import copy
import re

import pytest

from sre_marathon_gym.core.errors import UnknownNameError
from sre_marathon_gym.schedule.fault_schedule import FaultSchedule
from sre_marathon_gym.sim.log_context import LogContextRecorder
from sre_marathon_gym.sim.log_search import search_logs
from sre_marathon_gym.sim.simulator import Simulator
from sre_marathon_gym.sim.traces import find_traces, get_trace

STEP = 15


def drive(
    sim: Simulator, rec: LogContextRecorder, until: float, inject_at: float | None = None, fault=None
) -> None:
    """Advance in 15 s steps, recording each sample (what the simulator hook will do)."""
    if not rec.n:
        rec.record(sim, sim.now)
    t = sim.now
    while t < until:
        t += STEP
        sim.advance_to(t)
        rec.record(sim, sim.now)
        if inject_at is not None and abs(t - inject_at) < 1e-6:
            sim.inject(fault)


def faulted(catalog, app: str, pick, seed: int = 3, inject_at: float = 300, until: float = 900):
    fault = next(f for f in catalog.faults[app] if pick(f))
    sim = Simulator(catalog, app, seed)
    rec = LogContextRecorder(sim)
    drive(sim, rec, until, inject_at, fault)
    return sim, rec, fault


@pytest.fixture(scope="module")
def wrong_address(catalog):
    return faulted(catalog, "online_boutique", lambda f: f.mechanism == "config_wrong_address")


def _as_tuples(logs):
    return [
        (r.timestamp, r.service, r.pod, r.level, r.message, r.trace_id, tuple(sorted(r.attributes.items())))
        for r in logs
    ]


def test_same_inputs_give_same_logs_and_traces(catalog, wrong_address):
    _, rec, fault = wrong_address
    _, rec2, _ = faulted(catalog, "online_boutique", lambda f: f.id == fault.id)
    a = search_logs(rec, "online_boutique", None, 0, 900, limit=10**6)
    assert a and _as_tuples(a) == _as_tuples(search_logs(rec2, "online_boutique", None, 0, 900, limit=10**6))
    assert _as_tuples(a) == _as_tuples(search_logs(rec, "online_boutique", None, 0, 900, limit=10**6))
    # a sample's lines do not depend on the query window
    part = [r for r in a if 300 <= r.timestamp <= 600]
    assert _as_tuples(part) == _as_tuples(search_logs(rec, "online_boutique", None, 300, 600, limit=10**6))
    ta = find_traces(rec, "online_boutique", 0, 900, limit=30)
    tb = find_traces(rec2, "online_boutique", 0, 900, limit=30)
    assert [t.trace_id for t in ta] == [t.trace_id for t in tb] and ta == tb
    assert all(get_trace(rec, t.trace_id) == t for t in ta)


def test_different_seeds_differ(catalog):
    logs = []
    for seed in (1, 2):
        sim = Simulator(catalog, "online_boutique", seed)
        rec = LogContextRecorder(sim)
        drive(sim, rec, 300)
        logs.append(_as_tuples(search_logs(rec, "online_boutique", "frontend", 0, 300)))
    assert logs[0] != logs[1]


def test_wrong_address_logs_name_the_downstream_during_the_fault_only(wrong_address):
    _, rec, fault = wrong_address
    dst = str(fault.params["downstream"])
    before = search_logs(rec, "online_boutique", fault.target, 0, 295, level="ERROR")
    assert not [r for r in before if dst in r.message and "no such host" in r.message]
    during = search_logs(rec, "online_boutique", fault.target, 420, 900, level="ERROR")
    from sre_marathon_gym.sim.mechanics import value_from_diff

    host = (value_from_diff(fault.change.diff) or dst).rpartition(":")[0] or dst  # the address now configured
    naming = [r for r in during if dst in r.message or host in r.message]
    assert naming, "expected ERROR lines naming the unreachable downstream"
    assert any("no such host" in r.message.lower() for r in naming)
    assert all(r.service == fault.target and r.level == "ERROR" for r in during)


def test_error_log_trace_fails_at_the_named_call(wrong_address):
    _, rec, fault = wrong_address
    dst = str(fault.params["downstream"])
    line = next(
        r
        for r in search_logs(rec, "online_boutique", fault.target, 420, 900, level="ERROR")
        if dst in r.message or r.attributes.get("peer.service") == dst
    )
    tr = get_trace(rec, line.trace_id)
    assert tr.status == "ERROR"
    # every call has a CLIENT span now (its callers' fail too, upstream): the one to dst is the target's
    failing = [
        s
        for s in tr.spans
        if s.status == "ERROR" and s.kind == "CLIENT" and s.attributes["peer.service"] == dst
    ]
    assert failing and failing[0].service == fault.target


def test_dependency_unavailable_shows_in_callers_logs(catalog):
    sim, rec, fault = faulted(
        catalog,
        "astronomy_shop",
        lambda f: f.mechanism == "dependency_unavailable" and f.target == "postgresql",
    )
    callers = sorted({e.source for e in sim.app.edges if e.target == fault.target})
    before = [r for s in callers for r in search_logs(rec, "astronomy_shop", s, 0, 295, level="ERROR")]
    during = [r for s in callers for r in search_logs(rec, "astronomy_shop", s, 330, 900, level="ERROR")]
    assert not before
    assert during and any(
        "postgresql" in r.message or r.attributes.get("peer.service") == "postgresql" for r in during
    )


def test_feature_flag_strings_from_the_demo(catalog):
    _, rec, _ = faulted(
        catalog,
        "astronomy_shop",
        lambda f: f.mechanism == "feature_flag" and f.params.get("flag") == "productCatalogFailure",
    )
    lines = search_logs(
        rec, "astronomy_shop", None, 330, 900, query='"Product Catalog Fail Feature Flag Enabled"', limit=1000
    )
    assert lines and {r.service for r in lines} <= {
        "frontend",
        "checkout",
        "recommendation",
        "product-reviews",
        "frontend-proxy",
    }
    assert not search_logs(rec, "astronomy_shop", None, 0, 295, query="Feature Flag Enabled")


def _check_spans(tr):
    spans = {s.span_id: s for s in tr.spans}
    assert len(spans) == len(tr.spans)
    assert tr.spans[0].parent_id is None and tr.spans[0].start_ms == 0
    assert tr.duration_ms == pytest.approx(tr.spans[0].duration_ms, abs=1e-3)
    for s in tr.spans[1:]:
        parent = spans[s.parent_id]
        assert s.start_ms >= parent.start_ms - 1e-3
        timed_out = (
            parent.kind == "CLIENT" and parent.status == "ERROR"
        )  # the callee may outlive a caller's deadline
        assert timed_out or s.start_ms + s.duration_ms <= parent.start_ms + parent.duration_ms + 1e-2
        assert s.duration_ms > 0
    if tr.status == "ERROR":
        assert any(
            s.status == "ERROR"
            and (
                s.kind == "CLIENT"
                or not [c for c in tr.spans if c.parent_id == s.span_id and c.status == "ERROR"]
            )
            for s in tr.spans
        )


@pytest.mark.parametrize("app", ["online_boutique", "astronomy_shop", "train_ticket"])
def test_trace_spans_nest_and_errors_sit_at_the_failing_call(catalog, app):
    sim = Simulator(catalog, app, 5, schedule=FaultSchedule.generate(catalog, app, 5))
    rec = LogContextRecorder(sim)
    drive(sim, rec, 1500)
    traces = find_traces(rec, app, 0, 1500, limit=40) + find_traces(
        rec, app, 0, 1500, status="error", limit=40
    )
    assert traces
    for tr in traces:
        _check_spans(tr)
        assert 0 <= tr.start_s <= 1500
    errs = find_traces(rec, app, 0, 1500, status="error", limit=10)
    assert all(t.status == "ERROR" for t in errs)


def test_latency_fault_makes_traces_through_the_service_slower(catalog):
    sim, rec, fault = faulted(catalog, "online_boutique", lambda f: f.mechanism == "code_latency", until=1200)
    before = find_traces(rec, "online_boutique", 0, 290, service=fault.target, status="ok", limit=50)
    # any status: with the added latency most calls into the target outlast their callers' deadline
    during = find_traces(rec, "online_boutique", 600, 1200, service=fault.target, limit=50)

    def svc_ms(trs):
        return [
            s.duration_ms for t in trs for s in t.spans if s.service == fault.target and s.kind == "SERVER"
        ]

    b, d = svc_ms(before), svc_ms(during)
    assert b and d and sum(d) / len(d) > sum(b) / len(b) + 0.5 * float(fault.params["added_ms"])
    slow = find_traces(
        rec, "online_boutique", 600, 1200, min_duration_ms=float(fault.params["added_ms"]), limit=5
    )
    assert slow and all(t.duration_ms >= float(fault.params["added_ms"]) for t in slow)


def test_query_level_and_limit_filters(wrong_address):
    _, rec, fault = wrong_address
    errors = search_logs(rec, "online_boutique", fault.target, 0, 900, level="ERROR", limit=1000)
    warn_up = search_logs(rec, "online_boutique", fault.target, 0, 900, level="warn", limit=1000)
    every = search_logs(rec, "online_boutique", fault.target, 0, 900, limit=1000)
    assert errors and all(r.level == "ERROR" for r in errors)
    assert {r.level for r in warn_up} <= {"WARN", "ERROR"} and len(every) > len(warn_up) >= len(errors)
    hits = search_logs(rec, "online_boutique", fault.target, 0, 900, query='"no such host"', limit=1000)
    assert hits and all("no such host" in r.message.lower() for r in hits)
    assert not [
        r
        for r in search_logs(rec, "online_boutique", fault.target, 0, 900, query="-host", limit=1000)
        if "host" in r.message.lower()
    ]
    last = search_logs(rec, "online_boutique", fault.target, 0, 900, limit=7)
    assert len(last) == 7 and last == every[-7:]
    assert all(a.timestamp <= b.timestamp for a, b in zip(every, every[1:]))
    with pytest.raises(UnknownNameError, match="did you mean 'cartservice'"):
        search_logs(rec, "online_boutique", "cartservic", 0, 900)
    with pytest.raises(UnknownNameError):
        search_logs(rec, "online_boutique", None, 0, 900, level="DEBUGGY")
    with pytest.raises(UnknownNameError):
        get_trace(rec, "0" * 32)


FORBIDDEN = re.compile(r"fault|inject|chaos|ground[ _-]?truth", re.IGNORECASE)


@pytest.mark.parametrize("app", ["online_boutique", "astronomy_shop", "train_ticket"])
def test_logs_and_traces_never_leak_fault_identity(catalog, app):
    """A marathon's worth of faults: no fault ids, no artifact ids, no orchestration words."""
    seed = 11
    sim = Simulator(catalog, app, seed, schedule=FaultSchedule.generate(catalog, app, seed))
    rec = LogContextRecorder(sim)
    drive(sim, rec, 3900)
    assert len(sim.applied) >= 30
    secret = set()
    for f in sim.applied.values():
        secret |= {f.fault.id, f.fault.artifact, *(a for a in f.fault.aliases if ":" in a or "/" in a)}
    texts = []
    for r in search_logs(rec, app, None, 0, 3900, limit=10**7):
        texts.append(
            " ".join(
                [
                    r.message,
                    r.pod,
                    r.trace_id or "",
                    *map(str, r.attributes.keys()),
                    *map(str, r.attributes.values()),
                ]
            )
        )
    for tr in find_traces(rec, app, 0, 3900, status="error", limit=300) + find_traces(
        rec, app, 0, 3900, limit=100
    ):
        for s in tr.spans:
            texts.append(" ".join([s.service, s.name, *map(str, s.attributes.values())]))
    assert len(texts) > 1000
    blob = "\n".join(texts)
    assert not FORBIDDEN.search(blob), FORBIDDEN.search(blob).group(0)
    leaked = [s for s in secret if s in blob]
    assert not leaked, leaked[:5]
    assert sum("ERROR" in t for t in texts) > 0


def test_rendered_lines_are_kept_until_their_sample_is_recorded_again(catalog):
    """A recorded sample's lines are rendered once and served again; recording that sample again
    (the same time, a changed world) drops them, so what is served is what would be rendered."""
    from sre_marathon_gym.sim import log_lines

    fault = next(f for f in catalog.faults["online_boutique"] if f.mechanism == "dependency_unavailable")
    sim = Simulator(catalog, "online_boutique", 5)
    rec = LogContextRecorder(sim)
    drive(sim, rec, 300)
    p, s = rec.n - 1, rec.service_index(fault.target)
    before = rec.lines(p, s)
    assert rec.lines(p, s) is before and _as_tuples(before) == _as_tuples(log_lines.lines(rec, p, s))
    assert copy.deepcopy(rec)._lines_cache == {}  # a copy (a shared world's) renders again on demand
    sim.inject(fault)
    sim.advance_to(sim.now + 60)  # the world with the fault, recorded as the same 15 s sample again
    rec.record(sim, float(rec.times[p]))
    after = rec.lines(p, s)
    assert after is not before and _as_tuples(after) == _as_tuples(log_lines.lines(rec, p, s))
    assert any(r.level == "ERROR" for r in after) and not any(r.level == "ERROR" for r in before)
