"""The leaderboard protocol: run agents on each app's leaderboard seed, score, and tabulate.

Runs are independent, so apps, agents and seeds go to worker processes; each is one
`episode_runner.run_scored_episode` (via `run_one`), which writes its sealed bundle, and the table
is computed from the bundles' records exactly as `score` would. The tables and the outcome figure
live in `reports`, the run helpers (`save_incomplete`, `preflight_agent`, ...) in
`episode_runner`; both are re-exported here under their old names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from functools import partial
from typing import Any

from ..catalog import APPS, Catalog, load_catalog
from ..core.errors import ConfigurationError
from ..scoring import ScoreCard
from .episode_runner import ENV_BY_APP, close_agent, preflight_agent, reached_time, save_incomplete
from .reports import COLUMNS, PUBLISHED_KEYS, leaderboard_table, mean_ci95, outcome_chart, outcome_table
from .run_spec import RunSpec

EXTRA_SEED_BASE = 10_000  # extra seeds for --seeds N: 10000, 10001, ... (disjoint from leaderboard seeds)
FRESH_SEED_LIMIT = 2**31  # fresh bases stay below this, so base + N is still a small int64


def fresh_seed_base() -> int:
    """A base for extra seeds nobody could have known before the evaluation started.

    Why: the leaderboard seeds (and the default extra seeds) are public and the simulator is
    deterministic, so a policy can replay actions precomputed on them, e.g. the oracle's, reading
    nothing (an adversarial review scored exactly the oracle's 90.3 / 86.9 / 89.0 that way). Scores
    on fresh seeds cannot be memorised; the base is printed and recorded in every bundle, so the
    runs can be repeated with ``--seed-base B``."""
    import secrets

    return EXTRA_SEED_BASE + secrets.randbelow(FRESH_SEED_LIMIT - EXTRA_SEED_BASE)


def run_one(
    spec: RunSpec, progress: Callable[[], None] | None = None, env: Any = None
) -> tuple[RunSpec, ScoreCard, str | None]:
    """One episode: make the env (unless given: `run_group`'s) and agent, run, score, write the
    bundle (`episode_runner.run_scored_episode`).

    The bundle is ``<out>/<app>-<agent>-<spec.seed>.bundle``; a failed run leaves
    ``<out>/<app>-<agent>-<spec.seed>.incomplete.bundle`` and re-raises."""
    from .episode_runner import make_marathon_env, run_scored_episode

    catalog = load_catalog(spec.catalog)
    run = run_scored_episode(
        env if env is not None else (lambda: make_marathon_env(spec.app, spec.mode, catalog)),
        spec.agent,
        agent_options=spec.agent_options,
        seed=spec.seed if spec.mode == "train" else None,
        out=spec.out,
        bundle_stem=f"{spec.app}-{spec.agent}-{spec.seed}",
        progress=progress,
    )
    return spec, run.card, run.bundle


def run_group(specs: list[RunSpec]) -> list[tuple[RunSpec, ScoreCard, str | None]]:
    """The runs of one episode (app, seed, protocol), each agent on the same simulated world until
    its first intervention (`envs.shared_world`): the results and bundles of `run_one` for each,
    for the cost of simulating the world about once per agent that intervenes."""
    from ..envs.shared_world import SharedWorld, run_together
    from .episode_runner import make_marathon_env

    if len(specs) == 1:
        return [run_one(specs[0])]
    catalog = load_catalog(specs[0].catalog)
    world = SharedWorld()
    envs = []
    try:
        for spec in specs:
            envs.append(make_marathon_env(spec.app, spec.mode, catalog))
            envs[-1].unwrapped.share_world(world)
    except BaseException:
        for env in envs:
            env.close()
        raise
    return run_together([partial(run_one, spec, env=env) for spec, env in zip(specs, envs)], world)


def episode_groups(specs: list[RunSpec], workers: int = 1) -> list[list[RunSpec]]:
    """`specs` by episode (app, seed, protocol, catalog), in order: one `run_group` each. An LLM
    agent, or one loaded from a path, runs alone (it waits on a model, and on a shared world
    every agent waits for the slowest). With fewer groups than `workers`, the largest groups are
    split in halves until every worker has one (a shared world runs in one process: sharing must
    not leave cores idle)."""
    from ..agents import is_llm_agent

    groups: dict[tuple, list[RunSpec]] = {}
    alone: list[list[RunSpec]] = []
    for spec in specs:
        if is_llm_agent(spec.agent) or ":" in spec.agent:
            alone.append([spec])
        else:
            groups.setdefault((spec.app, spec.seed, spec.mode, spec.catalog), []).append(spec)
    out = list(groups.values())
    while len(out) + len(alone) < workers and max(map(len, out), default=1) > 1:
        big = max(out, key=len)
        i = out.index(big)
        out[i : i + 1] = [big[: len(big) // 2], big[len(big) // 2 :]]
    return [*out, *alone]


def evaluate(
    agents: list[str],
    apps: list[str] | None = None,
    extra_seeds: int = 0,
    out: str | None = None,
    workers: int | None = None,
    catalog: Catalog | None = None,
    progress: bool = True,
    agent_options: dict[str, Any] | None = None,
    preflight: bool = True,
    seed_base: int = EXTRA_SEED_BASE,
    ray_address: str | None = None,
) -> list[tuple[RunSpec, ScoreCard, str | None]]:
    """Every agent on every app's leaderboard seed (and `extra_seeds` more seeds: `seed_base`,
    `seed_base` + 1, ...; `fresh_seed_base` for seeds no policy can have memorised), in parallel.

    `agent_options` go to the LLM agents (react, rag, keep): model, base_url, api_key, price...
    With LLM agents and `preflight`, one tiny request first checks the key, model and URL
    (`LLMAgent.preflight`), so a wrong one fails before any run with a `ConfigurationError`.

    `ray_address` runs the grid as Ray tasks instead of worker processes ("local" starts a Ray on
    this machine; otherwise the address `ray.init` takes, e.g. "auto" or "ray://head:10001"): the
    same runs, table and bundles, for grids of hundreds of seeds on a cluster (whose workers must
    see the catalog path and `out`, e.g. on a shared volume).
    """
    from tqdm import tqdm

    from ..agents import is_llm_agent

    catalog = catalog or load_catalog()
    llm = [a for a in agents if is_llm_agent(a)]
    if llm and preflight:  # every LLM agent shares the endpoint options: one check covers them all
        preflight_agent(llm[0], agent_options or {})
    apps = apps or list(APPS)
    specs = []
    for app in apps:
        for agent in agents:
            opts = dict(agent_options or {}) if is_llm_agent(agent) else {}
            lb_seed = catalog.leaderboard.seed_for(app)
            specs.append(RunSpec(app, agent, lb_seed, "eval", out, str(catalog.root), opts))
            specs += [
                RunSpec(app, agent, seed_base + k, "train", out, str(catalog.root), opts)
                for k in range(extra_seeds)
            ]
    workers = workers or min(len(specs), os.cpu_count() or 1)
    results = []
    with tqdm(total=len(specs), desc="leaderboard runs", unit="run", disable=not progress) as bar:
        # the largest apps first: on fewer workers than groups, the longest must not start last
        parallel = 1 if ray_address is not None else workers  # Ray's cluster size is not known here
        groups = sorted(episode_groups(specs, parallel), key=lambda g: -len(catalog.app(g[0].app).services))
        if ray_address is not None:
            results = _run_on_ray(groups, ray_address, bar.update)
        elif workers <= 1:
            for group in groups:
                results += run_group(group)
                bar.update(len(group))
        else:
            with ProcessPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(run_group, g) for g in groups]
                for fut in as_completed(futures):
                    results += fut.result()
                    bar.update(len(results) - bar.n)
    order = {(s.app, s.agent, s.seed): i for i, s in enumerate(specs)}
    return sorted(results, key=lambda r: order[(r[0].app, r[0].agent, r[0].seed)])


def _run_on_ray(
    groups: list[list[RunSpec]], address: str, done: Callable[[int], object]
) -> list[tuple[RunSpec, ScoreCard, str | None]]:
    """Each episode group as one Ray task (one CPU each, `run_group`); a failed run re-raises its
    own exception, as the process pool does. A Ray started here is shut down at the end; one
    already running is kept."""
    try:
        import ray
    except ImportError:
        raise ConfigurationError("evaluate --ray needs Ray: pip install 'sre-marathon-gym[rllib]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(
            address=None if address == "local" else address,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(run_group)
        pending = [task.remote(group) for group in groups]
        results = []
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            try:
                finished = ray.get(ready[0])
            except ray.exceptions.RayTaskError as exc:
                raise exc.as_instanceof_cause() from None
            results += finished
            done(len(finished))
        return results
    finally:
        if started:
            ray.shutdown()


__all__ = [
    "COLUMNS",
    "ENV_BY_APP",
    "EXTRA_SEED_BASE",
    "FRESH_SEED_LIMIT",
    "PUBLISHED_KEYS",
    "RunSpec",
    "close_agent",
    "evaluate",
    "fresh_seed_base",
    "leaderboard_table",
    "mean_ci95",
    "outcome_chart",
    "outcome_table",
    "preflight_agent",
    "reached_time",
    "run_group",
    "run_one",
    "save_incomplete",
]
