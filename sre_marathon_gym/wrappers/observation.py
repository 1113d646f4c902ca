"""Observation flattening: the env's `Dict` observation as one float32 vector RLlib accepts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..core.detmath import log


def _slog(x: np.ndarray) -> np.ndarray:
    """sign(x) log(1 + |x|): keeps request rates (hundreds/s) and ages (minutes) near unit scale.
    In float64 with `detmath.log` (numpy's SIMD log1p gives CPU-dependent last bits); inf stays inf."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    finite = np.isfinite(a)
    return np.sign(x) * np.where(finite, log(np.where(finite, a, 0.0) + 1.0), a)


# the per-alert rows (the env's, and ChangeObservation's incident column): what an encoding that acts on
# changes and services, not on single alerts, can leave out of the features
ALERT_TABLE = (
    "alert_rule",
    "alert_service",
    "alert_state",
    "alert_age_min",
    "alert_in_incident",
    "alert_incident",
)


class FlattenMarathonObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """One flat float32 `Box`; with ``keep_mask`` a `Dict` ``{"observations", "action_mask"}``.

    Why: RLlib's default model wants a flat vector, and its action-masking module wants the mask
    apart from the features (``{"observations": Box, "action_mask": Box}``, the layout of RLlib's
    action-masking example). Encoding, in sorted key order (as `gymnasium.spaces.flatten`):

    - `MultiDiscrete` / `MultiBinary` parts (alert rule, service, state, grouped) are one-hot;
    - `Box` parts (alert ages, per-service summary, incidents, time) pass through
      ``sign(x) log(1 + |x|)`` when ``scale`` (the default; bounds are transformed the same way);
    - with ``alert_summary`` (the default) ``2 x services`` features are appended: per service,
      the number of firing alerts and of firing alerts not yet in an incident, computed from the
      observation's own alert table (no extra information; it only saves the network a sum);
    - ``action_mask`` (added by an action encoding) is kept apart when ``keep_mask``, or appended
      to the features otherwise;
    - keys in ``exclude`` are left out (the per-service alert counts still come from the alert
      table): for example the alert table itself, when the action encoding acts on changes and
      services, not on single alerts (``wrap_for_rl``'s ``"macro"`` does), which cuts the input
      from about 5,000 to about 1,500 numbers on Online Boutique.

    Example:
        >>> import gymnasium as gym, sre_marathon_gym
        >>> from sre_marathon_gym.wrappers import FlattenActions
        >>> env = gym.make("SREMarathon/OnlineBoutique-v3", injection_minutes=4, observation_minutes=2)
        >>> flat = FlattenMarathonObservation(env)
        >>> obs, _ = flat.reset(seed=0)
        >>> obs.dtype, obs.ndim, flat.observation_space.contains(obs)
        (dtype('float32'), 1, True)
        >>> masked = FlattenMarathonObservation(FlattenActions(env))
        >>> sorted(masked.reset(seed=0)[0])
        ['action_mask', 'observations']
    """

    def __init__(
        self,
        env: gym.Env,
        keep_mask: bool = True,
        scale: bool = True,
        alert_summary: bool = True,
        exclude: Sequence[str] = (),
    ):
        gym.utils.RecordConstructorArgs.__init__(
            self, keep_mask=keep_mask, scale=scale, alert_summary=alert_summary, exclude=list(exclude)
        )
        gym.ObservationWrapper.__init__(self, env)
        space = env.observation_space
        if not isinstance(space, spaces.Dict):
            raise TypeError(f"expected a Dict observation space, got {space}")
        self.scale, self.alert_summary = scale, alert_summary
        self.has_mask = "action_mask" in space.spaces
        self.keep_mask = keep_mask and self.has_mask
        unknown = sorted(set(exclude) - set(space.spaces))
        if unknown:
            raise ValueError(f"exclude names keys the observation lacks: {unknown}")
        self.feature_space = spaces.Dict(
            {
                k: self._part_space(s)
                for k, s in space.spaces.items()
                if not (k == "action_mask" and self.keep_mask) and k not in exclude
            }
        )
        flat = spaces.flatten_space(self.feature_space)
        low, high = flat.low.astype(np.float32), flat.high.astype(np.float32)
        if alert_summary:
            n_services = space["services"].shape[0]
            cap = np.float32(
                _slog(np.float32(space["alert_rule"].shape[0])) if scale else space["alert_rule"].shape[0]
            )
            low = np.concatenate([low, np.zeros(2 * n_services, np.float32)])
            high = np.concatenate([high, np.full(2 * n_services, cap, np.float32)])
        features = spaces.Box(low, high, dtype=np.float32)
        if self.keep_mask:
            self.observation_space = spaces.Dict(
                {"observations": features, "action_mask": space["action_mask"]}
            )
        else:
            self.observation_space = features

    def _part_space(self, s: spaces.Space) -> spaces.Space:
        if self.scale and isinstance(s, spaces.Box):
            return spaces.Box(
                _slog(s.low).astype(np.float32), _slog(s.high).astype(np.float32), s.shape, np.float32
            )
        return s

    def observation(self, observation: dict[str, np.ndarray]) -> Any:
        parts = {}
        for k, s in self.feature_space.spaces.items():
            v = observation[k]
            parts[k] = _slog(np.asarray(v, np.float32)) if self.scale and isinstance(s, spaces.Box) else v
        flat = spaces.flatten(self.feature_space, parts).astype(np.float32)
        if self.alert_summary:
            n = self.env.observation_space["services"].shape[0]
            svc = np.asarray(observation["alert_service"])
            firing = np.asarray(observation["alert_state"]) == 1
            ungrouped = firing & (np.asarray(observation["alert_in_incident"]) == 0)
            counts = np.concatenate(
                [
                    np.bincount(svc[firing], minlength=n + 1)[1:],
                    np.bincount(svc[ungrouped], minlength=n + 1)[1:],
                ]
            ).astype(np.float32)
            flat = np.concatenate([flat, _slog(counts) if self.scale else counts]).astype(np.float32)
        if self.keep_mask:
            return {"observations": flat, "action_mask": np.asarray(observation["action_mask"], np.float32)}
        return flat
