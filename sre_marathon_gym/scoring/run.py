"""Deprecated: the run record moved to `sre_marathon_gym.run_record` (tools, recorder and scoring
share it, and scoring sits below tools)."""

from .._moved import moved_to

__getattr__ = moved_to(__name__, "sre_marathon_gym.run_record")
