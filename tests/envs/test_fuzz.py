"""Fuzzing the agent interface: random and malformed tool calls and actions on the real simulator.

What must hold for any input: no exception escapes `call_tool` or `step`, every result is a
`ToolResult`, the run's record serializes, its bundle writes and verifies, and the record stays
bounded. Hypothesis draws each episode (app, schedule seed, the seed of its call stream) with a
fixed seed (`derandomize`), so a failure reproduces; the calls themselves come from a numpy
generator seeded by that draw, because hypothesis limits how much one example may draw and a
profile of 100,000 calls needs volume.

Profiles: the default runs about 1,500 calls; the slow test runs the issue's profile of at least
100,000 calls and actions across the three apps (`SENT` counts what was actually sent).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import resource
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sre_marathon_gym  # noqa: F401  (registers the env ids)
from sre_marathon_gym.recording.bundle import verify_bundle, write_bundle
from sre_marathon_gym.tools.models import TOOL_NAMES, ToolResult, json_schemas

ENV_IDS = ("SREMarathon/OnlineBoutique-v3", "SREMarathon/AstronomyShop-v3", "SREMarathon/TrainTicket-v3")
PROPS = {
    name: [p for p in schema.get("properties", {}) if p != "tool"] for name, schema in json_schemas().items()
}
SHORT = dict(injection_minutes=10, observation_minutes=2, intensity=1.5)
SENT = {"calls": 0}

NAMES = [
    "frontend",
    "cartservice",
    "checkout",
    "payment",
    "ts-order-service",
    "flagd",
    "node-a1",
    "zone-a",
    "redis-cart",
    "nonexistent",
    "",
]
METRICS = [
    "traces_span_metrics_calls_total",
    "container_memory_working_set_bytes",
    "up",
    "kube_pod_status_ready",
]
PATTERNS = [
    "~.*",
    "~fron.*",
    "!frontend",
    "~(a|b)+c",
    "~[",
    "~a{2,5}",
    "~(.*.*)*z",
    "~a{4294967296}",
    "~(?P<x>a)",
]
LABELS = ["pod", "service_name", "namespace", "le", "status_code", "node"]


class Junk:
    """Values JSON can carry and values it cannot (bytes, huge ints, nan, deep nesting, objects)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def leaf(self) -> object:
        r = self.rng
        return [
            None,
            True,
            int(r.integers(-(2**40), 2**40)),
            2 ** int(r.integers(64, 400)),
            float("nan"),
            float(r.normal() * 1e6),
            "x" * int(r.integers(0, 3000)),
            bytes(r.integers(0, 256, 4, dtype=np.uint8)),
            object(),
            str(r.choice(NAMES)),
        ][int(r.integers(0, 10))]

    def value(self, depth: int = 0) -> object:
        r = self.rng
        k = int(r.integers(0, 6))
        if k == 0 and depth < 6:
            return [self.value(depth + 1) for _ in range(int(r.integers(0, 4)))]
        if k == 1 and depth < 6:
            return {
                str(r.choice(LABELS + ["tool", "x"])): self.value(depth + 1)
                for _ in range(int(r.integers(0, 4)))
            }
        if k == 2:  # very deep
            node: object = "end"
            for _ in range(int(r.integers(50, 400))):
                node = [node]
            return node
        return self.leaf()

    def plausible(self) -> object:
        r = self.rng
        return [
            str(r.choice(NAMES)),
            f"a{int(r.integers(0, 400)):04d}",
            f"inc-{int(r.integers(0, 30)):03d}",
            str(r.choice(METRICS)),
            float(r.uniform(-100, 7000)),
            int(r.integers(-10, 5000)),
            [str(r.choice(NAMES))],
            {str(r.choice(LABELS)): str(r.choice(PATTERNS + NAMES))},
            str(r.choice(["p95", "rate", "raw", "errors", "all", "firing", "write", "read", "list"])),
        ][int(r.integers(0, 9))]

    def call(self) -> object:
        """Mostly a known tool with some of its argument names (plausible or junk values), else junk."""
        r = self.rng
        kind = int(r.integers(0, 10))
        if kind == 0:
            return self.value()
        name = str(r.choice(TOOL_NAMES)) if kind > 1 else "x" * int(r.integers(0, 5000))
        call: dict = {"tool": name}
        for prop in PROPS.get(name, []):
            if r.random() < 0.6:
                call[prop] = self.plausible() if r.random() < 0.75 else self.value()
        if r.random() < 0.1:
            call[str(r.choice(["bogus", "", "tool "]))] = self.value()
        return call

    def action(self, space: gym.spaces.MultiDiscrete) -> object:
        r = self.rng
        k = int(r.integers(0, 6))
        if k == 0:
            return None
        if k <= 3:
            return np.array([[int(r.integers(0, int(n))) for n in row] for row in space.nvec], dtype=np.int64)
        return [self.value(), np.full(space.shape, 0.5), r.integers(-5, 50, int(r.integers(0, 30)))][k - 4]


def _episode(env_id: str, seed: int, stream: int, calls_per_step: int, tmp: Path) -> None:
    env = gym.make(env_id, **SHORT)
    env.reset(seed=seed)
    u, junk = env.unwrapped, Junk(np.random.default_rng(stream))
    done = False
    while not done:
        for _ in range(calls_per_step):
            assert isinstance(u.call_tool(junk.call()), ToolResult)
            SENT["calls"] += 1
        _, reward, term, trunc, info = env.step(junk.action(env.action_space))
        SENT["calls"] += 1
        assert np.isfinite(reward) and all(isinstance(r, dict) for r in info["tool_results"])
        done = term or trunc
    record = u.record()
    size = len(json.dumps(record.model_dump(mode="json")))
    assert size < 30_000_000, size
    verify_bundle(write_bundle(tmp / "fuzz.bundle", record, store=u.sim.store, catalog=u.catalog))


EPISODES = st.tuples(st.sampled_from(ENV_IDS), st.integers(0, 2**31 - 1), st.integers(0, 2**63 - 1))


@settings(
    max_examples=3, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(episode=EPISODES)
def test_fuzzed_calls_and_actions_never_escape(episode, tmp_path_factory):
    env_id, seed, stream = episode
    _episode(env_id, seed, stream, calls_per_step=100, tmp=tmp_path_factory.mktemp("fuzz"))


def _peak_rss_kib() -> int:
    """This process's own peak resident set, KiB.

    `/proc/self/status`'s VmHWM belongs to this process's address space. `ru_maxrss` does not do
    here: Linux records the pre-exec address space's peak at `execve`, and a spawned child is
    forked (or vforked) from the pytest worker, so its `ru_maxrss` starts at the worker's peak."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _profile(tmp: str) -> tuple[int, int]:
    """The issue's profile in this process: (calls and actions sent, this process's peak RSS, KiB)."""
    SENT["calls"] = 0
    apps = iter(ENV_IDS * 100)
    examples = itertools.count()

    @settings(
        max_examples=70,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(seed=st.integers(0, 2**31 - 1), stream=st.integers(0, 2**63 - 1))
    def run(seed, stream):
        where = Path(tmp) / f"fuzz{next(examples)}"
        where.mkdir(parents=True)
        _episode(next(apps), seed, stream, calls_per_step=300, tmp=where)

    run()
    return SENT["calls"], _peak_rss_kib()


@pytest.mark.slow
def test_fuzz_profile_of_100k_calls(tmp_path):
    """The issue's profile: at least 100,000 calls and actions across the three apps; memory stays
    bounded: peak RSS below 4 GiB, measured in a fresh (spawned) process that runs only the profile
    (a test worker's own peak also holds every test that ran in it before), as that process's own
    high-water mark (`_peak_rss_kib`)."""
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as pool:
        calls, peak_kib = pool.submit(_profile, str(tmp_path)).result()
    assert calls >= 100_000, calls
    assert peak_kib < 4 * 1024 * 1024, peak_kib  # KiB on Linux
