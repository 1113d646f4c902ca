"""Outputs must not depend on the process's string-hash seed (PYTHONHASHSEED), which Python draws
afresh for every process: a set's iteration order changes with it. Each check below runs in two
processes with different hash seeds and compares what they print."""

from __future__ import annotations

import os
import subprocess
import sys

SCRIPT = r"""
import gymnasium as gym
import sre_marathon_gym
from sre_marathon_gym.agents.adversarial_v3 import class_name
from sre_marathon_gym.backends.sim import SimBackend
from sre_marathon_gym.catalog import APPS, load_catalog
from sre_marathon_gym.sim.simulator import Simulator

cat = load_catalog()
env = gym.make("SREMarathon/OrcaRCA-v0")
env.action_space.seed(3)
print(repr(env.action_space.sample()))  # a Text space indexes its charset in the order given
for app in APPS:  # the class an adversarial policy claims: ties among a row's accepted names
    class Env:
        catalog = cat
    Env.app = cat.app(app)
    print(app, [class_name(Env, s.name) for s in cat.app(app).services])
backend = SimBackend(Simulator(cat, "astronomy_shop", 1, telemetry=False))
print([backend.service_config(s.name)["configmaps"] for s in cat.app("astronomy_shop").services])
"""


def _run(hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
    return out.stdout


def test_outputs_do_not_depend_on_the_hash_seed():
    first, second = _run("1"), _run("2")
    assert first.count("\n") >= 5
    assert first == second
