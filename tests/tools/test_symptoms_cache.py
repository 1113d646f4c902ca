"""`Telemetry.window` (bisection over the series kept until the next update) cuts what the plain
filter cuts, including right after an update brings new samples; and the macro stack, whose change
fields read telemetry through it and through the PromQL shortcuts, shows bit for bit what it shows
with both shortcuts turned off."""

from __future__ import annotations

import numpy as np
import pytest

from sre_marathon_gym.tools import symptoms
from sre_marathon_gym.tools.promql import engine
from sre_marathon_gym.tools.symptoms import Telemetry


def _plain(tel: Telemetry, signal: str, service: str, lo: float, hi: float, closed: bool = False):
    return [(t, v) for t, v in tel.series(signal, service) if lo <= t and (t <= hi if closed else t < hi)]


class FakeRead:
    """`query_metrics` answers for the dashboard's queries: one service, a value per grid step."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(5)

    def __call__(self, call: dict):
        start, end = call["start_s"], call["end_s"]
        times = np.arange(start, end + 1e-9, 15.0)
        label = symptoms.QUERIES[next(n for n, (q, _) in symptoms.QUERIES.items() if q == call["promql"])][1]
        if self.rng.random() < 0.05:  # a failed read: its points stay missing
            return type("Res", (), {"ok": False, "data": {}})()
        values = [
            [float(t), None if self.rng.random() < 0.1 else float(self.rng.random() / 8)] for t in times
        ]
        data = {"series": [{"labels": {label: "svc", "status_code": "STATUS_CODE_OK"}, "values": values}]}
        return type("Res", (), {"ok": True, "data": data})()


def test_window_cuts_what_the_filter_cuts_before_and_after_an_update():
    tel, read = Telemetry(600.0), FakeRead()
    rng = np.random.default_rng(1)
    for now in (120.0, 240.0, 600.0, 900.0, 1020.0):
        tel.update(read, now, lambda pod: pod)
        for signal in ("error_ratio", "latency", "throttle", "restarts", "not_ready"):
            for _ in range(40):
                lo, hi = sorted(rng.uniform(-30, now + 30, 2).round() / 5 * 5)
                for closed in (False, True):
                    got = tel.window(signal, "svc", lo, hi, closed)
                    assert got == _plain(tel, signal, "svc", lo, hi, closed)
            assert tel.window(signal, "svc", now - 60, float("inf"), True) == _plain(
                tel, signal, "svc", now - 60, float("inf"), True
            )
        assert tel.window("latency", "svc", now, now - 100) == []


def test_a_series_extended_at_each_update_is_the_series_built_afresh():
    """`series` extends what it built at an earlier update (perhaps several updates back) by the
    points read since: the same points as building it from all the samples kept."""
    tel, read = Telemetry(600.0), FakeRead()
    rng = np.random.default_rng(2)
    now = 0.0
    for _ in range(60):
        now += float(rng.choice([15.0, 60.0, 120.0, 127.5, 700.0]))
        tel.update(read, now, lambda pod: pod)
        for signal in ("error_ratio", "latency", "restarts", "waiting", "not_ready"):
            if rng.random() < 0.6:  # some series are not read at every update
                assert tel.series(signal, "svc") == tel._points(signal, "svc", None), (signal, now)


def test_window_of_a_series_out_of_time_order_falls_back_to_the_filter():
    tel = Telemetry(600.0)
    tel._series[("throttle", "x")] = [(30.0, 1.0), (15.0, 2.0), (45.0, 3.0)]
    assert tel.window("throttle", "x", 15.0, 40.0) == [(30.0, 1.0), (15.0, 2.0)]


def _run(env, steps: int) -> list[bytes]:
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    out = []
    for _ in range(steps):
        obs, reward, term, trunc, _ = env.step(np.array([rng.integers(n) for n in env.action_space.nvec]))
        parts = [np.asarray(obs[k]) for k in sorted(obs)] if isinstance(obs, dict) else [np.asarray(obs)]
        out.append(b"".join(p.tobytes() for p in parts) + repr((reward, term, trunc)).encode())
        if term or trunc:
            break
    return out


def _stack(monkeypatch: pytest.MonkeyPatch):
    """A fresh macro stack; each draws the same episodes (`make_env` gives every copy in a process its
    own seed split: the count of copies starts again)."""
    from sre_marathon_gym.rllib import env_creation

    monkeypatch.setattr(env_creation, "_COPIES", {})
    return env_creation.make_env({"app": "online_boutique", "intensity": 0.5, "action_encoding": "macro"})


def test_the_macro_stack_shows_the_same_with_the_shortcuts_off(monkeypatch: pytest.MonkeyPatch):
    fast = _run(_stack(monkeypatch), 12)
    monkeypatch.setattr(engine, "MetricStore", type("NoStore", (), {}))  # PromQL: step by step
    monkeypatch.setattr(Telemetry, "window", _plain)  # symptoms: the plain filter
    assert _run(_stack(monkeypatch), 12) == fast


def test_the_change_fields_median_is_numpys_to_the_bit():
    from sre_marathon_gym.wrappers.changes import _median

    rng = np.random.default_rng(4)
    pool = [0.0, -0.0, 1.0, 2.5, float("inf"), -float("inf"), float("nan"), 3.0]
    for _ in range(20_000):
        n = int(rng.integers(1, 9))
        vals = [float(rng.choice(pool)) if rng.random() < 0.3 else float(rng.random()) for _ in range(n)]
        with np.errstate(all="ignore"):  # inf - inf
            want, got = float(np.median(vals)), _median(vals)
        assert np.float64(got).tobytes() == np.float64(want).tobytes() or (np.isnan(got) and np.isnan(want))
