"""Discrete-time simulator: cluster state, traffic, telemetry and fault mechanics (no gymnasium, no
global RNG).

May import: `core`, `catalog`, `metrics` (tested).
"""
