"""Deprecated: moved to `sre_marathon_gym.metric_store` (a name that says what it holds)."""

from .._moved import moved_to

__getattr__ = moved_to(__name__, "sre_marathon_gym.metric_store")
