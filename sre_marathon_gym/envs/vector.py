"""The Marathon envs' vector entry point: ``gym.make_vec(id, n, vectorization_mode="vector_entry_point")``.

Why not only Gymnasium's own modes: `AsyncVectorEnv` starts one process per env, so with more envs
than cores every process compiles the app, builds its own span-series block and alert views (the
per-process caches a reset reuses) and all of them compete for the cores. Here `workers` processes
(by default one per core, at most one per env) each step a share of the envs, which share those
caches; with one worker the envs step in this process, as `SyncVectorEnv` steps them. Results are
the same as `SyncVectorEnv`'s for the same seeds and actions (a test checks it), with the same
next-step autoreset: the step after an episode ends resets that env, with reward 0.

What does not pay here, measured (README): batching one step across envs. Each env's simulator,
store and alert engine are its own, and the time goes to them, not to the Python between them.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import traceback
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

from ..core.errors import ConfigurationError, SREMarathonError


class VectorWorkerError(SREMarathonError):
    """A worker process of `MarathonVectorEnv` failed with an error that could not be passed back."""


class _Envs:
    """Some Marathon envs, stepped one after the other with next-step autoreset (in a worker, or in
    the parent process when there is one worker)."""

    def __init__(self, count: int, env_kwargs: dict[str, Any], max_episode_steps: int | None):
        from gymnasium.wrappers import TimeLimit

        from .marathon import MarathonEnv

        def make() -> Any:
            env = MarathonEnv(**env_kwargs)
            return env if max_episode_steps is None else TimeLimit(env, max_episode_steps)

        self.envs = [make() for _ in range(count)]
        self.autoreset = [False] * count
        self.last_obs: list[Any] = [None] * count

    def reset(
        self, seeds: Sequence[int | None], options: dict | None, mask: Sequence[bool]
    ) -> list[tuple[Any, dict | None]]:
        """Reset the envs `mask` selects (the others keep their last observation and give no info)."""
        out: list[tuple[Any, dict | None]] = []
        for i, (env, seed, chosen) in enumerate(zip(self.envs, seeds, mask, strict=True)):
            if chosen:
                self.last_obs[i], info = env.reset(seed=seed, options=options)
                self.autoreset[i] = False
                out.append((self.last_obs[i], info))
            else:
                out.append((self.last_obs[i], None))
        return out

    def step(self, actions: Sequence[Any]) -> list[tuple[Any, float, bool, bool, dict]]:
        out = []
        for i, (env, action) in enumerate(zip(self.envs, actions, strict=True)):
            if self.autoreset[i]:
                obs, info = env.reset()
                out.append((obs, 0.0, False, False, info))
            else:
                out.append(env.step(action))
            self.last_obs[i] = out[-1][0]
            self.autoreset[i] = bool(out[-1][2] or out[-1][3])
        return out

    def call(self, name: str, args: tuple, kwargs: dict) -> list[Any]:
        results = []
        for env in self.envs:
            attr = getattr(env, name)
            results.append(attr(*args, **kwargs) if callable(attr) else attr)
        return results

    def set_attr(self, name: str, values: Sequence[Any]) -> None:
        for env, value in zip(self.envs, values, strict=True):
            setattr(env, name, value)

    def spaces(self) -> tuple[Any, Any]:
        return self.envs[0].observation_space, self.envs[0].action_space

    def close(self) -> None:
        for env in self.envs:
            env.close()


def _worker(conn: Any, count: int, env_kwargs: dict[str, Any], max_episode_steps: int | None) -> None:
    """A worker process: builds its envs, then answers (method, args) until told to close."""
    try:
        envs = _Envs(count, env_kwargs, max_episode_steps)
        conn.send(("ok", None))
    except BaseException as exc:  # noqa: BLE001 - passed back to the parent, which raises it
        conn.send(("error", _portable(exc)))
        conn.close()
        return
    while True:
        method, args = conn.recv()
        try:
            result = getattr(envs, method)(*args)
            conn.send(("ok", result))
        except BaseException as exc:  # noqa: BLE001 - passed back to the parent, which raises it
            conn.send(("error", _portable(exc)))
        if method == "close":
            conn.close()
            return


def _portable(exc: BaseException) -> BaseException:
    """The exception itself if it pickles (the parent raises the same type: a user mistake stays a
    `ConfigurationError`), with the worker's traceback as a note; else a `VectorWorkerError` with it."""
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    try:
        exc.add_note(f"in a worker process of the vector env:\n{text}")
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 - any pickling failure: send the text instead
        return VectorWorkerError(f"a worker failed:\n{text}")


class MarathonVectorEnv(VectorEnv):
    """`num_envs` Marathon envs (the kwargs of `MarathonEnv`) in `workers` processes; batched like
    `SyncVectorEnv` (next-step autoreset, ``reset_mask``, infos with ``_key`` masks,
    `max_episode_steps` as a `TimeLimit` on each env). `context`: the multiprocessing start method
    (the platform's default if None). In a daemonic process (a pool worker, which may not start
    processes) the envs step in that process."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int,
        *,
        workers: int | None = None,
        context: str | None = None,
        max_episode_steps: int | None = None,
        disable_env_checker: bool | None = None,  # `gym.make`'s: the envs are built here, unchecked
        **env_kwargs: Any,
    ):
        # set first: `VectorEnv.__del__` closes an instance whose construction failed half way
        self._local: _Envs | None = None
        self._conns: list[Any] = []
        self._procs: list[Any] = []
        self._broken = False  # a call was cut short: workers may be out of step with each other
        if not isinstance(num_envs, int | np.integer) or isinstance(num_envs, bool) or num_envs < 1:
            raise ConfigurationError(f"num_envs must be a positive integer, got {num_envs!r:.40}")
        num_envs = int(num_envs)
        if max_episode_steps is not None and (
            not isinstance(max_episode_steps, int | np.integer) or max_episode_steps < 1
        ):
            raise ConfigurationError(
                f"max_episode_steps must be a positive integer, got {max_episode_steps!r:.40}"
            )
        if context is not None and context not in mp.get_all_start_methods():
            raise ConfigurationError(
                f"context must be one of {mp.get_all_start_methods()} or None, got {context!r:.40}"
            )
        if workers is None:
            workers = 1 if mp.current_process().daemon else min(num_envs, _usable_cores())
        if (
            not isinstance(workers, int | np.integer)
            or isinstance(workers, bool)
            or not 1 <= workers <= num_envs
        ):
            raise ConfigurationError(f"workers must be an integer in 1..{num_envs}, got {workers!r:.40}")
        if workers > 1 and mp.current_process().daemon:
            raise ConfigurationError("a daemonic process cannot start workers: use workers=1")
        self.num_envs = num_envs
        self.workers = workers = int(workers)
        # env i lives in worker i % workers at position i // workers (round robin: shares differ by one)
        self._shares = [list(range(w, num_envs, workers)) for w in range(workers)]
        self.closed = False
        steps = None if max_episode_steps is None else int(max_episode_steps)
        if workers == 1:
            self._local = _Envs(num_envs, env_kwargs, steps)
            single_obs, single_act = self._local.spaces()
        else:
            ctx = mp.get_context(context)
            for share in self._shares:
                parent, child = ctx.Pipe()
                proc = ctx.Process(target=_worker, args=(child, len(share), env_kwargs, steps), daemon=True)
                proc.start()
                child.close()
                self._conns.append(parent)
                self._procs.append(proc)
            try:
                self._collect([self._reply(conn) for conn in self._conns])
                single_obs, single_act = self._run("spaces", lambda share: (), per_env=False)[0]
            except BaseException:
                self.close()
                raise
        self.single_observation_space = single_obs
        self.single_action_space = single_act
        self.observation_space = batch_space(single_obs, num_envs)
        self.action_space = batch_space(single_act, num_envs)

    # ------------------------------------------------------------------ the VectorEnv API
    def reset(self, *, seed: int | Sequence[int | None] | None = None, options: dict | None = None):
        if seed is None:
            seeds: list[int | None] = [None] * self.num_envs
        elif isinstance(seed, int | np.integer):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ConfigurationError(f"reset got {len(seeds)} seeds for {self.num_envs} envs")
        options = dict(options) if options is not None else None
        mask = [True] * self.num_envs
        if options is not None and "reset_mask" in options:
            m = options.pop("reset_mask")
            if not (
                isinstance(m, np.ndarray) and m.dtype == np.bool_ and m.shape == (self.num_envs,) and m.any()
            ):
                raise ConfigurationError(
                    f"options['reset_mask'] must be a bool array of shape ({self.num_envs},) with a True"
                )
            mask = m.tolist()
        results = self._run(
            "reset", lambda share: ([seeds[i] for i in share], options, [mask[i] for i in share])
        )
        infos: dict[str, Any] = {}
        for i, (_, info) in enumerate(results):
            if info is not None:
                infos = self._add_info(infos, info, i)
        return self._batch([r[0] for r in results]), infos

    def step(self, actions: Any):
        per_env = list(iterate(self.action_space, actions))
        if len(per_env) != self.num_envs:
            raise ConfigurationError(f"step got actions for {len(per_env)} envs, expected {self.num_envs}")
        results = self._run("step", lambda share: ([per_env[i] for i in share],))
        infos: dict[str, Any] = {}
        for i, r in enumerate(results):
            infos = self._add_info(infos, r[4], i)
        return (
            self._batch([r[0] for r in results]),
            np.array([r[1] for r in results], dtype=np.float64),
            np.array([r[2] for r in results], dtype=np.bool_),
            np.array([r[3] for r in results], dtype=np.bool_),
            infos,
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """`name` called (or read, if not callable) on every env, in env order."""
        return tuple(self._run("call", lambda share: (name, args, kwargs)))

    def get_attr(self, name: str) -> tuple[Any, ...]:
        return self.call(name)

    def set_attr(self, name: str, values: Any) -> None:
        if not isinstance(values, list | tuple):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ConfigurationError(f"set_attr got {len(values)} values for {self.num_envs} envs")
        self._run("set_attr", lambda share: (name, [values[i] for i in share]))

    def close_extras(self, **kwargs: Any) -> None:
        if self._local is not None:
            self._local.close()
        for conn in self._conns:
            try:
                if not self._broken:
                    conn.send(("close", ()))
                    if conn.poll(10):
                        conn.recv()
                conn.close()
            except (OSError, EOFError):  # the worker is gone already
                pass
        for proc in self._procs:
            if not self._broken:  # a worker cut off mid-call may wait for a request forever
                proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)
        self._conns, self._procs = [], []

    # ------------------------------------------------------------------ plumbing
    def _batch(self, observations: list[Any]) -> Any:
        out = create_empty_array(self.single_observation_space, n=self.num_envs, fn=np.zeros)
        return concatenate(self.single_observation_space, observations, out)

    def _run(self, method: str, args_for: Any, per_env: bool = True) -> list[Any]:
        """`method` on every env (each worker gets the args of its share); results in env order
        (`per_env`), else one per worker.
        Every request is pickled before any is sent, and the call is marked unfinished until every
        worker answered: after an interrupt the workers may be a step apart, so later calls refuse."""
        if self.closed:
            raise ConfigurationError("this vector env is closed")
        if self._broken:
            raise VectorWorkerError(
                "an earlier call to this vector env was interrupted: close it and make a new one"
            )
        if self._local is not None:
            return list(getattr(self._local, method)(*args_for(self._shares[0])) or [])
        requests = [pickle.dumps((method, args_for(share))) for share in self._shares]
        self._broken = True
        for conn, request in zip(self._conns, requests, strict=True):
            conn.send_bytes(request)
        replies = [self._reply(conn) for conn in self._conns]  # every worker answers before one raises
        self._broken = False
        parts = self._collect(replies)
        if not per_env:
            return parts
        merged: list[Any] = [None] * self.num_envs
        for share, part in zip(self._shares, parts, strict=True):
            if part is None:  # nothing to return (set_attr)
                continue
            for i, value in zip(share, part, strict=True):
                merged[i] = value
        return merged

    @staticmethod
    def _collect(replies: list[tuple[str, Any]]) -> list[Any]:
        for status, value in replies:
            if status == "error":
                raise value
        return [value for _, value in replies]

    @staticmethod
    def _reply(conn: Any) -> tuple[str, Any]:
        try:
            return conn.recv()
        except EOFError:
            return "error", VectorWorkerError("a worker process of the vector env died")


def _usable_cores() -> int:
    """The cores this process may run on (its affinity mask, where the platform has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
