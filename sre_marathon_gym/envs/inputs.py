"""What the Marathon env accepts from its caller: seeds, options, actions and tool calls.

Why a module: Gymnasium's API is called by user code, RL libraries and fuzzers alike; a wrong type
must give a clear error (or, for an action, a recorded invalid result), never a traceback from
inside the simulator and never silent acceptance (a float action truncated to an int).
"""

from __future__ import annotations

import pickle
from typing import Any, NamedTuple

import gymnasium as gym
import numpy as np

from ..core.errors import ConfigurationError
from ..tools.safe_json import json_safe

MAX_SEED = 2**63 - 1
MAX_ACTION_SLOTS = 64
"""Tool calls per invocation an action may carry (the observation and action spaces grow with it)."""
MAX_OBSERVED_ROWS = 4096
"""Alert or incident rows an observation may hold: a 90-minute run fires a few hundred alerts, and
each row costs memory in every observation an RL buffer keeps."""
MAX_RUN_MINUTES = 24 * 60
"""Injection or observation phase length: a day of simulated time."""


def check_reset_arguments(seed: Any, options: Any) -> None:
    """`seed`: None or an integer in [0, 2**63); `options`: None or a dict."""
    if seed is not None:
        if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
            raise ConfigurationError(f"seed must be an integer or None, got {type(seed).__name__}")
        if not 0 <= int(seed) <= MAX_SEED:
            digits = len(str(abs(int(seed))))
            shown = str(int(seed)) if digits < 30 else f"a {digits}-digit number"
            raise ConfigurationError(f"seed must be in [0, 2**63 - 1], got {shown}")
    if options is not None and not isinstance(options, dict):
        raise ConfigurationError(f"options must be a dict or None, got {type(options).__name__}")


def whole(name: str, value: Any, lo: int, hi: int) -> int:
    """`value` as an int in [lo, hi]: an int, or a float with no fractional part (120.0 from YAML or a
    tuner); not bools, strings or 2.5, so a constructor argument of the wrong type is refused here,
    not deep inside the simulator."""
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        value = int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ConfigurationError(f"{name} must be a whole number, got {type(value).__name__} {value!r:.40}")
    if not lo <= int(value) <= hi:
        raise ConfigurationError(f"{name} must be in [{lo}, {hi}], got {int(value)}")
    return int(value)


def real(name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    """`value` as a finite float in [lo, hi] (or (lo, hi] with `lo_open`): numbers only."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ConfigurationError(f"{name} must be a number, got {type(value).__name__} {value!r:.40}")
    x = float(value)
    if not (lo < x if lo_open else lo <= x) or not x <= hi:  # NaN fails both
        raise ConfigurationError(f"{name} must be in {'(' if lo_open else '['}{lo:g}, {hi:g}], got {x}")
    return x


class InvalidAction(NamedTuple):
    """What an action wrapper hands the env for an action it cannot decode: the env records
    `reason` as the invocation's invalid result, as it does for its own refused actions."""

    reason: str


def int_action(
    action: Any, space: gym.spaces.Discrete | gym.spaces.MultiDiscrete
) -> tuple[np.ndarray | None, str | None]:
    """`action` as a fresh int64 array of `space`'s shape, or (None, why not): integers only (not
    bools, floats or strings), of the space's size, inside it."""
    if isinstance(space, gym.spaces.Discrete):
        shape = f"an integer in Discrete({int(space.n)})"
    else:
        per_slot = space.nvec.ndim > 1
        nvec = space.nvec.reshape(-1, space.nvec.shape[-1])[0].tolist()
        shape = (
            f"an integer array of shape {space.shape} in MultiDiscrete("
            f"{'nvec per slot ' if per_slot else ''}{nvec})"
        )
    try:
        arr = np.array(action)  # a copy: the caller may reuse its buffer
    except Exception:  # noqa: BLE001 - any object can arrive here
        return None, f"action must be {shape}, got {type(action).__name__}"
    if arr.dtype.kind not in "iu":
        shown = json_safe(arr.reshape(-1)[:8].tolist() if arr.ndim else action)
        return None, f"action must be {shape}, got dtype {arr.dtype} ({shown!r:.200})"
    if arr.size != int(np.prod(space.shape)):
        return None, f"action must be {shape}, got {arr.size} entries"
    arr = arr.astype(np.int64).reshape(space.shape)
    if not space.contains(arr):
        return None, f"action must be {shape}, got {arr.reshape(-1).tolist()!r:.300}"
    return arr, None


def slot_array(action: Any, space: gym.spaces.MultiDiscrete) -> tuple[np.ndarray | None, str | None]:
    """The env's action as a fresh int64 array of the space's shape, or (None, why not).

    None (end the invocation without acting) is fine; an `InvalidAction` is refused with its reason;
    anything else must pass `int_action`. The env records a refused action as an invalid result
    and the invocation passes without acting."""
    if action is None:
        return None, None
    if isinstance(action, InvalidAction):  # refused, whatever the reason holds (a wrapper's words)
        return None, str(action.reason)[:500] if action.reason else "invalid action"
    return int_action(action, space)


def frozen_copy(call: Any) -> Any:
    """A deep, picklable copy of a tool call (the journal that rebuilds a pickled env), or its bounded
    JSON-safe rendering when it cannot be copied (an arbitrary object an agent passed)."""
    try:
        return pickle.loads(pickle.dumps(call))
    except Exception:  # noqa: BLE001 - unpicklable or hostile objects: keep what can be kept
        return json_safe(call)


__all__ = [
    "MAX_ACTION_SLOTS",
    "MAX_OBSERVED_ROWS",
    "MAX_RUN_MINUTES",
    "MAX_SEED",
    "InvalidAction",
    "check_reset_arguments",
    "frozen_copy",
    "int_action",
    "real",
    "slot_array",
    "whole",
]
