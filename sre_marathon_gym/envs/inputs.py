"""What the Marathon env accepts from its caller: seeds, options, actions and tool calls.

Why a module: Gymnasium's API is called by user code, RL libraries and fuzzers alike; a wrong type
must give a clear error (or, for an action, a recorded invalid result), never a traceback from
inside the simulator and never silent acceptance (a float action truncated to an int).
"""

from __future__ import annotations

import pickle
from typing import Any

import gymnasium as gym
import numpy as np

from ..errors import ConfigurationError
from ..tools.safe_json import json_safe

MAX_SEED = 2**63 - 1


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


def slot_array(action: Any, space: gym.spaces.MultiDiscrete) -> tuple[np.ndarray | None, str | None]:
    """The action as a fresh int64 array of the space's shape, or (None, why not).

    None (end the invocation without acting) is fine. Anything else must be integers (not bools, not
    floats, not strings) of the space's size, inside it: the env records a refused action as an
    invalid result and the invocation passes without acting."""
    if action is None:
        return None, None
    nvec = space.nvec.reshape(-1, space.nvec.shape[-1])[0].tolist()
    shape = f"an integer array of shape {space.shape} in MultiDiscrete(nvec per slot {nvec})"
    try:
        arr = np.array(action)  # a copy: the caller may reuse its buffer
    except Exception:  # noqa: BLE001 - any object can arrive here
        return None, f"action must be {shape}, got {type(action).__name__}"
    if arr.dtype.kind not in "iu":
        return None, f"action must be {shape}, got dtype {arr.dtype} ({json_safe(action)!r:.200})"
    if arr.size != int(np.prod(space.shape)):
        return None, f"action must be {shape}, got {arr.size} entries"
    arr = arr.astype(np.int64).reshape(space.shape)
    if not space.contains(arr):
        return None, f"action must be {shape}, got {arr.reshape(-1).tolist()!r:.300}"
    return arr, None


def frozen_copy(call: Any) -> Any:
    """A deep, picklable copy of a tool call (the journal that rebuilds a pickled env), or its bounded
    JSON-safe rendering when it cannot be copied (an arbitrary object an agent passed)."""
    try:
        return pickle.loads(pickle.dumps(call))
    except Exception:  # noqa: BLE001 - unpicklable or hostile objects: keep what can be kept
        return json_safe(call)


__all__ = ["MAX_SEED", "check_reset_arguments", "frozen_copy", "slot_array"]
