"""The demo's background noise (flagd EventStream reconnects) in the ORCA world's logs and traces."""

from __future__ import annotations

import pytest

from sre_marathon_gym.core.errors import SREMarathonError
from sre_marathon_gym.orca import noise
from sre_marathon_gym.orca.load import run_orca_flags
from sre_marathon_gym.orca.noisy_backend import LOG_PREFIX, NoisyBackend

HOURS = 3


@pytest.fixture(scope="module")
def run():
    return run_orca_flags(0, [], HOURS * 3600.0)


@pytest.fixture(scope="module")
def world(run):
    return NoisyBackend(run.sim, 7)


def test_every_half_hour_holds_error_spans_and_warn_logs(world):
    for t0 in range(0, HOURS * 3600 - 1800 + 1, 900):
        view = world.view_at(t0 + 1800)
        errs = view.traces(None, None, t0, t0 + 1800, None, "error", 50)
        assert errs, f"no ERROR trace in [{t0}, {t0 + 1800}]"
        assert all(t["status"] == "ERROR" for t in errs)
        logs = view.search_logs(None, t0, t0 + 1800, None, "WARN", 200)
        assert any(r["level"] in ("WARN", "ERROR") for r in logs)


def test_the_noise_is_the_streams_only(run, world):
    """Without the wrapper the quiet run has no ERROR trace: the noise is what the wrapper adds."""
    from sre_marathon_gym.backends.sim import SimBackend

    plain = SimBackend(run.sim)
    assert plain.traces(None, None, 0, HOURS * 3600, None, "error", 50) == []
    noisy = world.traces(None, None, 0, HOURS * 3600, None, "error", 500)
    assert noisy and all(t["root_name"] == noise.EVENT_STREAM for t in noisy)
    # each subscriber's stream is cut about once per STREAM_S
    per = {}
    for t in noisy:
        peer = t["spans"][0]["attributes"]["net.peer.name"]
        per[peer] = per.get(peer, 0) + 1
    for svc in noise.SUBSCRIBERS:
        assert abs(per.get(svc, 0) - (HOURS * 3600 - noise.STREAM_S) / noise.STREAM_S) <= 2


def test_deterministic_and_seeded(run):
    a, b, c = NoisyBackend(run.sim, 1), NoisyBackend(run.sim, 1), NoisyBackend(run.sim, 2)
    q = (None, 0.0, HOURS * 3600.0, "EventStream", None, 500)
    assert a.search_logs(*q, with_ids=True) == b.search_logs(*q, with_ids=True)
    assert a.search_logs(*q) != c.search_logs(*q)


def test_ids_resolve_and_forgeries_do_not(world):
    tr = world.traces(None, "flagd", 0, HOURS * 3600, None, "error", 5)[0]
    assert {s["service"] for s in tr["spans"]} == {"flagd"}
    again = world.traces(tr["trace_id"], None, 0.0, 0.0, None, None, 1)
    assert again == [tr]
    line = world.search_logs("checkout", 0, HOURS * 3600, "EventStream", "ERROR", 5, with_ids=True)[-1]
    assert line["trace_id"] and world.log_line(line["id"]) == {k: v for k, v in line.items() if k != "id"}
    forged = line["id"][:-1] + ("0" if line["id"][-1] != "0" else "1")
    assert world.log_line(forged) is None
    assert world.log_line("log-n99999999-checkout-deadbeef") is None


def test_a_view_sees_no_stream_cut_after_its_horizon(world):
    h = 5000.0
    view = world.view_at(h)
    ends = [
        t["start_s"] + t["duration_ms"] / 1000.0 for t in view.traces(None, None, 0, h, None, "error", 500)
    ]
    assert ends and max(ends) <= h
    logs = view.search_logs(None, 0, h + 3600, "EventStream", None, 500)
    assert logs and max(r["timestamp"] for r in logs) <= world.now()


def test_filters_apply_to_the_noise(world):
    from sre_marathon_gym.backends.sim import SimBackend

    ok = world.traces(None, None, 0, HOURS * 3600, None, "ok", 50)
    plain = SimBackend(world.sim).traces(None, None, 0, HOURS * 3600, None, "ok", 50)
    assert ok and [t["trace_id"] for t in ok] == [t["trace_id"] for t in plain]  # no stream cut is "ok"
    assert world.traces(None, "ad", 0, HOURS * 3600, None, "error", 50) == []  # flagd's spans only
    only_cart = world.search_logs("cart", 0, HOURS * 3600, "EventStream", None, 500)
    assert only_cart and {r["service"] for r in only_cart} == {"cart"}
    assert world.search_logs(None, 0, HOURS * 3600, "EventStream -flagd", None, 500) == []
    assert world.traces(None, None, 0, HOURS * 3600, noise.STREAM_S * 1000 + 1, "error", 50) == []


@pytest.mark.slow
def test_control_windows_hold_error_spans_and_nights_hold_warnings():
    from sre_marathon_gym.orca import DAY_S
    from sre_marathon_gym.orca.tasks import orca_tasks
    from sre_marathon_gym.orca.world import orca_world

    w = orca_world()
    controls = [t for t in orca_tasks() if t.is_control]
    hit = sum(
        bool(w.view_at(t.horizon_s).traces(None, None, t.horizon_s - 1800, t.horizon_s, None, "error", 5))
        for t in controls
    )
    assert hit >= 0.95 * len(controls)
    for day in range(6):
        for hour in range(0, 6):
            t0 = day * DAY_S + hour * 3600
            logs = w.search_logs(None, t0, t0 + 3600, None, "WARN", 50)
            assert logs, f"no WARN/ERROR log on day {day + 1} at {hour:02d}:00"


def test_noise_is_never_evidence_of_a_flag(world):
    """A cheap agent could cite stream cuts (present in every window) as a flag's failing span or log."""
    from sre_marathon_gym.backends.sim import flag_log_markers
    from sre_marathon_gym.catalog.flag_behaviour import FLAG_BEHAVIOUR
    from sre_marathon_gym.orca.evidence import EvidenceChecker
    from sre_marathon_gym.orca.report import LogRef, TraceRef

    chk = EvidenceChecker(world)
    traces = world.traces(None, None, 0, HOURS * 3600, None, "error", 500)
    logs = world.search_logs(None, 0, HOURS * 3600, "EventStream", None, 500, with_ids=True)
    assert traces and logs
    for flag in FLAG_BEHAVIOUR:
        for t in traces[:10]:
            assert not chk.trace_shows(TraceRef(trace_id=t["trace_id"]), flag, 0, HOURS * 3600, HOURS * 3600)
        for r in logs[:10]:
            svcs = tuple(s for s, _, _ in FLAG_BEHAVIOUR[flag])
            assert not chk.log_shows(LogRef(log_id=r["id"]), flag, svcs, 0, HOURS * 3600, HOURS * 3600)
        assert not any(m in text for m in flag_log_markers(flag) for _, text in noise.SUBSCRIBERS.values())


def test_a_view_resolves_only_the_noise_it_could_have_seen(world):
    """A task sees the world at its horizon: a stream cut that ends later is neither a log id nor a
    trace id yet, as later samples of the recorded run are not."""
    logs = world.search_logs(None, 0, HOURS * 3600, "EventStream", None, 500, with_ids=True)
    line = next(r for r in logs if r["id"].startswith(LOG_PREFIX))
    tr = world.traces(None, "flagd", 0, HOURS * 3600, None, "error", 500)[-1]
    assert world.log_line(line["id"]) is not None and world.traces(tr["trace_id"], None, 0, 0, None, None, 1)
    early = world.view_at(line["timestamp"] - 1)
    assert early.log_line(line["id"]) is None
    assert world.view_at(line["timestamp"]).log_line(line["id"]) is not None
    with pytest.raises(SREMarathonError, match="trace"):  # unknown, as an id from a later sample
        world.view_at(tr["start_s"] + 1).traces(tr["trace_id"], None, 0, 0, None, None, 1)
