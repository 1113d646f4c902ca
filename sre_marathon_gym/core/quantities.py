"""Kubernetes resource quantities (`300m`, `1.5`, `256Mi`, `1Gi`) as the integers the cluster
models use: millicores for cpu, MiB for memory. One parser for the tools and the simulator."""

from __future__ import annotations

from .errors import SimulatorError


def parse_quantity(text: str, resource: str) -> int:
    """cpu `300m` -> 300, `1.5` -> 1500 (millicores); memory `256Mi` -> 256, `1Gi` -> 1024 (MiB)."""
    t = str(text).strip()
    try:
        if resource == "cpu":
            return int(float(t[:-1])) if t.endswith("m") else int(float(t) * 1000)
        if t.endswith("Mi"):
            return int(float(t[:-2]))
        if t.endswith("Gi"):
            return int(float(t[:-2]) * 1024)
        return int(float(t) / (1024 * 1024))  # plain bytes
    except ValueError:
        raise SimulatorError(f"not a {resource} quantity: {text!r}") from None


__all__ = ["parse_quantity"]
