from __future__ import annotations

import pytest
from prom_helpers import SEED, SHORT


@pytest.fixture(scope="module")
def short_run(catalog):
    """A short Online Boutique run (no agent) on the real simulator: (env, store)."""
    import gymnasium as gym

    from sre_marathon_gym.agents import make_agent
    from sre_marathon_gym.agents.base import run_episode

    env = gym.make("SREMarathon/OnlineBoutique-v3", catalog=catalog, **SHORT)
    run_episode(env, make_agent("noop"), seed=SEED)
    return env, env.unwrapped.sim.store
