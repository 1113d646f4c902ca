"""One run: one agent, one episode on one env, scored and sealed.

Every way of running a Marathon agent goes through `run_scored_episode`: `sre-marathon run` and
`export-prometheus --app` (`cli.commands`), the leaderboard protocol (`leaderboard.run_one`, also inside
`evaluate`'s worker processes) and RLlib evaluation (`rllib.evaluate_one`, also inside Ray tasks,
for baselines and trained checkpoints alike). It builds the agent (a name for `agents.make_agent`,
or any object with the `Agent` protocol, e.g. `rllib.CheckpointPolicy`), checks an LLM agent's
endpoint when asked, drives the episode with `agents.base.run_episode`, scores it and writes its
sealed bundle. A run that fails leaves an `.incomplete.bundle` instead, and the agent's HTTP client
and the env are released however the run ends.

Why one function: the loops it replaces had drifted apart (which seed named a bundle, whether a
failed run kept its recording, whether the bundle kept the agent's model and price).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from ..catalog import Catalog
from ..core.errors import RunInterrupted
from ..envs import ENV_IDS

ENV_BY_APP: dict[str, str] = {app: env_id for env_id, app in ENV_IDS.items()}
"""The Marathon env id of each app (``"online_boutique": "SREMarathon/OnlineBoutique-v3"``, ...)."""


def make_marathon_env(app: str, mode: str, catalog: Catalog | str | None, **schedule: Any) -> gym.Env:
    """`gym.make` of `app`'s Marathon env in `mode` (``schedule``: intensity, injection_minutes...)."""
    return gym.make(ENV_BY_APP[app], mode=mode, catalog=catalog, **schedule)


@dataclass
class ScoredEpisode:
    """What `run_scored_episode` returns; the env is closed by then, its metric store kept."""

    record: Any  # scoring.RunRecord
    card: Any  # scoring.ScoreCard
    bundle: str | None  # the sealed bundle's path (None without `out`)
    seed: int  # the schedule seed the env used
    steps: int  # env.step calls (agent invocations)
    episode_return: float  # the sum of the rewards env.step returned (shaped, through wrappers)
    env_return: float  # the Marathon env's own cumulative reward (unshaped)
    agent_name: str
    store: Any  # the run's metric store (Prometheus export)


def run_scored_episode(
    env: gym.Env | Callable[[], gym.Env],
    agent: Any,
    *,
    seed: int | None = None,
    agent_options: dict[str, Any] | None = None,
    out: str | Path | None = None,
    label: str | None = None,
    bundle_stem: str | None = None,
    progress: Callable[[], Any] | None = None,
    bar: str | None = None,
    preflight: bool = False,
    interrupt_as_error: bool = False,
) -> ScoredEpisode:
    """Run one episode of `agent` on `env`, score it with the env's catalog, write the bundle.

    `env`: an env, or a zero-argument callable making one (called after the agent is built and
    preflighted, so a bad agent option or endpoint fails before anything is simulated); it is
    closed at the end either way. `agent`:
    a name for `agents.make_agent` (with `agent_options`; closed at the end) or an agent object
    (the caller's to close). `seed` goes to ``env.reset`` (None in eval mode: the leaderboard seed).
    `preflight` checks an LLM agent's endpoint with one tiny request first. An agent with a
    ``wrap_env(env)`` method (a trained RL policy) gets the env it returns: the wrappers it was
    trained with, over the same base env and protocol.

    With `out`, the bundle is ``<out>/<stem>.bundle``; `bundle_stem` defaults to
    ``<app>-<label>-<seed the env used>`` (`label`: the agent's name, ``/`` and ``:`` made safe).
    A run that fails leaves ``<out>/<stem>.incomplete.bundle`` and re-raises; with
    `interrupt_as_error`, Ctrl-C is re-raised as `RunInterrupted` saying how far the run got and
    where its recording went. `progress` is called after every step; `bar` shows a tqdm progress
    bar over the invocations with that description.
    """
    from ..agents.base import run_episode
    from ..scoring import score_run

    built = isinstance(agent, str)
    name = label or (agent if isinstance(agent, str) else str(getattr(agent, "name", type(agent).__name__)))
    environment: gym.Env | None = env if isinstance(env, gym.Env) else None
    try:
        if built:
            from ..agents import make_agent  # looked up per call: tests substitute it

            agent = make_agent(agent, **(agent_options or {}))
        if preflight and callable(getattr(agent, "preflight", None)):
            agent.preflight()
        if environment is None:
            environment = env()  # type: ignore[operator]
        if callable(getattr(agent, "wrap_env", None)):  # a trained policy acts through its own wrappers
            environment = agent.wrap_env(environment)
        u = environment.unwrapped
        rewards: list[float] = []
        with _progress_bar(bar, u) as shown:
            tick = _both(progress, shown.update if shown is not None else None)
            try:
                record = run_episode(environment, agent, seed=seed, progress=tick, on_step=rewards.append)
            except BaseException as exc:  # keep the recording of what happened so far, then fail loudly
                saved = None
                if out:
                    stem = bundle_stem or _stem_so_far(environment, name)
                    if stem is not None:
                        saved = save_incomplete(
                            environment,
                            agent,
                            u.catalog,
                            Path(out) / f"{stem}.incomplete.bundle",
                            exc,
                            agent_name=name,
                        )
                if interrupt_as_error and isinstance(exc, KeyboardInterrupt):
                    raise RunInterrupted(interrupted_message(environment, saved)) from None
                raise
        card = score_run(record, u.catalog.scoring)
        path = None
        if out:
            stem = bundle_stem or run_stem(record.manifest.app, name, record.manifest.seed)
            extra = {"agent_name": name, **getattr(agent, "bundle_extra", dict)()}
            path = str(seal_run(u, record, Path(out) / f"{stem}.bundle", extra))
        total = 0.0
        for r in rewards:  # in order, one by one: the return as the agent accumulated it
            total += r
        env_return = getattr(getattr(u, "reward_fn", None), "value", total)
        used = getattr(u, "seed_used", record.manifest.seed)
        return ScoredEpisode(
            record=record,
            card=card,
            bundle=path,
            seed=int(used),
            steps=len(rewards),
            episode_return=total,
            env_return=float(env_return),
            agent_name=name,
            store=getattr(u, "metric_store", None),
        )
    finally:  # an LLM agent holds an HTTP client; the env may hold a backend: release both, always
        if built and not isinstance(agent, str):
            close_agent(agent)
        if environment is not None:
            environment.close()


def run_stem(app: str, label: str, seed: int | None) -> str:
    """``<app>-<label>-<seed>``: the name a run's bundle gets (``/`` and ``:`` in the label made safe)."""
    return f"{app}-{label.replace('/', '_').replace(':', '-')}-{seed}"


def seal_run(u: Any, record: Any, path: Path, extra: dict) -> Path:
    """Write the sealed bundle of a finished run of the env `u` (its metric store and catalog)."""
    from ..recording.bundle import write_bundle

    path.parent.mkdir(parents=True, exist_ok=True)
    return write_bundle(path, record, store=getattr(u, "metric_store", None), catalog=u.catalog, extra=extra)


def _stem_so_far(env: gym.Env, label: str) -> str | None:
    """The bundle stem of a run that stopped early (None: it recorded nothing, nothing to save)."""
    try:
        manifest = env.unwrapped.record().manifest
    except Exception:  # noqa: BLE001 - no recorder yet
        return None
    return run_stem(manifest.app, label, manifest.seed)


def _progress_bar(desc: str | None, u: Any) -> Any:
    if desc is None:
        return nullcontext(None)
    from tqdm import tqdm

    return tqdm(total=u.run_s // u.interval_s - 1, desc=desc, unit="invocation")


def _both(*calls: Callable[[], Any] | None) -> Callable[[], None] | None:
    given = [c for c in calls if c is not None]
    if not given:
        return None
    if len(given) == 1:
        return given[0]

    def call() -> None:
        for c in given:
            c()

    return call


def save_incomplete(
    env: Any, agent: Any, catalog: Catalog, path: Path, exc: BaseException, agent_name: str | None = None
) -> Path | None:
    """Write what a failed run recorded so far as a sealed `.incomplete.bundle`; never raises, so the
    original error is the one reported.

    The manifest seals the bundle as incomplete (the simulated time reached and the error), so
    renaming the file cannot pass it off as a full run; the error is also kept in the `incomplete`
    extra, where earlier versions put it."""
    from ..recording.bundle import Incomplete, write_bundle

    u = env.unwrapped
    if getattr(u, "metric_store", None) is None:
        return None
    try:
        incomplete = Incomplete.from_exception(reached_time(env), exc)
        partial = u.record()
        partial.usage = agent.usage.model_copy()
        path.parent.mkdir(parents=True, exist_ok=True)
        extra = {"agent_name": agent_name or str(getattr(agent, "name", type(agent).__name__))}
        extra.update(getattr(agent, "bundle_extra", dict)())
        return write_bundle(
            path,
            partial,
            store=u.metric_store,
            catalog=catalog,
            extra={**extra, "incomplete": incomplete.reason},
            incomplete=incomplete,
        )
    except Exception:  # noqa: BLE001 - the original error is the one to report
        return None


def reached_time(env: Any) -> float | None:
    """Simulated seconds a run got to (None when the env has no simulator yet)."""
    run = getattr(env.unwrapped, "run", None)  # a simulated episode (None before reset)
    now = getattr(run, "now", None)
    return float(now) if isinstance(now, (int, float)) else None


def interrupted_message(env: Any, saved: Path | None) -> str:
    """``run interrupted at t=1234 s of 5400 s; ...`` for a run stopped by Ctrl-C."""
    t = reached_time(env)
    run_s = env.unwrapped.run_s
    at = "before it started" if t is None else f"at t={t:.0f} s of {run_s} s"
    where = (
        f"its partial recording is sealed as INCOMPLETE in {saved}"
        if saved is not None
        else "nothing was recorded (no --out, or the partial bundle could not be written)"
    )
    return f"run interrupted {at}; {where}"


def preflight_agent(name: str, options: dict[str, Any]) -> None:
    """Build LLM agent `name` with `options` and check its endpoint with one tiny request."""
    from ..agents import make_agent

    agent = make_agent(name, **options)
    try:
        agent.preflight()  # type: ignore[attr-defined]
    finally:
        close_agent(agent)


def close_agent(agent: Any) -> None:
    """Release what an agent holds (an LLM agent's HTTP client); agents without `close` hold nothing."""
    close = getattr(agent, "close", None)
    if callable(close):
        close()


__all__ = [
    "ENV_BY_APP",
    "ScoredEpisode",
    "close_agent",
    "interrupted_message",
    "make_marathon_env",
    "preflight_agent",
    "reached_time",
    "run_scored_episode",
    "save_incomplete",
]
