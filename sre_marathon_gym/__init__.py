"""sre_marathon_gym: SRE-Marathon and ORCA-bench as a fast, seeded, Gymnasium-style environment."""

from __future__ import annotations

__version__ = "0.1.0"
