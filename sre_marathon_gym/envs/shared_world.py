"""One simulated world that several Marathon envs of the same seed read until each first changes it.

Why: an evaluation runs many agents on each seed, and every agent sees exactly the world a
no-action agent sees until its first intervention (most scripted agents never intervene).
Simulating that world, and evaluating its alert rules, once per seed instead of once per agent
is most of an evaluation's cost. An env leaves for a copy of the world just before the first call
that could change it (copy on write: `MarathonEnv._own_world`), so each agent sees what it would
see alone: the same observations, tool results, scores and bundles, which a test checks.

Envs on one world move in lock step: an env's advance waits until every env on the world asks for
the same time, and the last to ask advances the world once, feeding every env's recorder, so no
agent reads the world at another agent's time. `run_together` runs one thread per agent, and a
thread runs only while it holds `lock` (it lets go only while it waits for the others), so one
agent runs at a time and nothing the world caches is touched by two at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from ..core.clock import METRIC_STEP_S
from ..core.errors import ConfigurationError


def advance_world(run: Any, alert_engine: Any, recorders: Sequence[Any], t: float) -> None:
    """Advance `run` on the metric grid (each recorder samples the fault probes every 15 s and the
    interval's traffic at the end), then evaluate the alert rules up to now."""
    run.start_interval()
    while run.now + 1e-9 < t:
        run.advance_to(min(run.now + METRIC_STEP_S, t))
        for rec in recorders:
            rec.sample(run)
    for rec in recorders:
        rec.interval(run)
    alert_engine.evaluate_until(run.now)
    for rec in recorders:
        rec.before_invocation(run)


class SharedWorld:
    """The world (schedule, simulated run, alert engine) of the envs attached to it, for one episode."""

    def __init__(self) -> None:
        self.lock = threading.Condition(threading.RLock())
        self.members: list[Any] = []  # attached envs, in the order they attached
        self.key: tuple | None = None  # what every member's episode must share (`MarathonEnv._world_key`)
        self.parts: tuple | None = None  # (schedule, run, alert_engine) once the first member reset
        self._asking: dict[int, float] = {}  # id(env) -> the time it waits for
        self._round = 0  # advances done
        self._failed: BaseException | None = None

    def attach(self, env: Any) -> None:
        with self.lock:
            if self.parts is not None:
                raise ConfigurationError("a shared world takes its envs before the first reset")
            self.members.append(env)

    def leave(self, env: Any) -> None:
        """`env` no longer reads this world (it took a copy, or its episode is over); the others
        go on without waiting for it. Never raises: if the world then fails to advance for the
        others, they get the error, not the env leaving (its run may be over and sealed)."""
        with self.lock:
            if env in self.members:
                self.members.remove(env)
                self._asking.pop(id(env), None)
                try:
                    self._advance_if_all_asked()
                except BaseException:  # noqa: BLE001 - kept in `_failed`: every waiting member raises it
                    pass

    def abort(self, exc: BaseException) -> None:
        """Fail every member at its next advance (e.g. Ctrl-C while `run_together` waits)."""
        with self.lock:
            if self._failed is None:
                self._failed = exc
            self.lock.notify_all()

    def parts_for(self, key: tuple, build: Callable[[], tuple]) -> tuple:
        """The world's parts, built by the first member to reset (`build`); every member must
        ask with the same `key` (seed, app, protocol, catalog)."""
        with self.lock:
            if self.parts is None:
                self.key, self.parts = key, build()
            elif key != self.key:
                raise ConfigurationError(
                    f"envs on one shared world must run the same episode: {key} is not {self.key}"
                )
            return self.parts

    def advance(self, env: Any, t: float) -> None:
        """Wait until every member asks for time `t`; the last one to ask advances the world."""
        with self.lock:
            self._check()
            self._asking[id(env)] = t
            seen = self._round
            self._advance_if_all_asked()
            while self._round == seen:
                self.lock.wait()
                self._check()

    def _advance_if_all_asked(self) -> None:
        if not self.members or len(self._asking) < len(self.members) or self.parts is None:
            return
        times = set(self._asking.values())
        try:
            if len(times) != 1:
                raise RuntimeError(f"envs on one shared world asked for different times: {sorted(times)}")
            _, run, engine = self.parts
            advance_world(run, engine, [m.recorder for m in self.members], times.pop())
        except BaseException as exc:
            self._failed = exc
            raise
        finally:
            self._asking.clear()
            self._round += 1
            self.lock.notify_all()

    def _check(self) -> None:
        if isinstance(self._failed, KeyboardInterrupt):
            raise KeyboardInterrupt
        if self._failed is not None:
            raise RuntimeError("the shared world failed to advance") from self._failed


def run_together(jobs: Sequence[Callable[[], Any]], world: SharedWorld) -> list[Any]:
    """Run each job (one agent's episode on an env attached to `world`) in its own thread, one at
    a time (each holds `world.lock` while it runs); their results in order. The first job to fail
    has its exception re-raised once every job has ended."""
    results: list[Any] = [None] * len(jobs)
    errors: list[BaseException | None] = [None] * len(jobs)

    def run(i: int) -> None:
        try:
            with world.lock:
                results[i] = jobs[i]()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller below
            errors[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(len(jobs))]
    for th in threads:
        th.start()
    try:
        for th in threads:
            while th.is_alive():
                th.join(0.2)  # a timeout, so Ctrl-C reaches this thread
    except KeyboardInterrupt as exc:
        world.abort(exc)  # every run stops at its next step and keeps its recording, as one alone does
        for th in threads:
            th.join()
        raise
    for exc in errors:
        if exc is not None:
            raise exc
    return results


__all__ = ["SharedWorld", "advance_world", "run_together"]
