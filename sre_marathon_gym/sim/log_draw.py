"""Deterministic draws for rendering log lines and picking traces.

Apart because every synthesiser (`log_lines`, `log_causes`, traces' choice of roots) consumes the
same kind of stream: a block of uniforms from a Generator seeded by (seed, what, sample, ...), so a
query always renders the same lines, and template fields generated on first use from that stream.
"""

from __future__ import annotations

import re

import numpy as np

from .log_text import CURRENCIES, PRODUCT_IDS


class Draw:
    """A block of uniforms from one seeded Generator, consumed as python floats (cheaper than rng calls)."""

    def __init__(self, rng: np.random.Generator, n: int = 256):
        self.rng = rng
        self.u = rng.random(n).tolist()
        self.i = 0

    def __call__(self) -> float:
        if self.i >= len(self.u):
            self.u = self.rng.random(256).tolist()
            self.i = 0
        self.i += 1
        return self.u[self.i - 1]

    def choice(self, seq):
        return seq[min(int(self() * len(seq)), len(seq) - 1)]

    def weighted(self, weights: list[float]) -> int:
        total = sum(weights)
        x = self() * total
        for i, w in enumerate(weights):
            x -= w
            if x < 0:
                return i
        return len(weights) - 1

    def hexs(self, n: int) -> str:
        return "".join("0123456789abcdef"[int(self() * 16) % 16] for _ in range(n))


class Fill(dict):
    """format_map values generated on first use from the draw stream."""

    def __init__(self, draw: Draw, **kw):
        super().__init__(**kw)
        self.d = draw

    def __missing__(self, key: str) -> str:
        d = self.d

        def uuid() -> str:
            return f"{d.hexs(8)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(4)}-{d.hexs(12)}"

        gen = {
            "uid": uuid,
            "pid": lambda: d.choice(PRODUCT_IDS),
            "pid2": lambda: d.choice(PRODUCT_IDS),
            "cur": lambda: d.choice(CURRENCIES),
            "txn": uuid,
            "n": lambda: str(1 + int(d() * 9)),
            "n2": lambda: str(2 + int(d() * 250)),
            "n3": lambda: str(100 + int(d() * 9000)),
            "eport": lambda: str(32768 + int(d() * 28000)),
            "ip": lambda: f"10.244.{int(d() * 4)}.{2 + int(d() * 250)}",
            "rid": uuid,
            "sec": lambda: f"{3 + d() * 20:.3f}",
            "sec2": lambda: f"{4 + d() * 20:.3f}",
            "us": lambda: str(10000 + int(d() * 90000)),
            "rcmd": lambda: d.choice(("HGET", "HMSET", "EXPIRE")),
            "attempt": lambda: str(1 + int(d() * 2)),
            "pct": lambda: str(85 + int(d() * 14)),
            "lag": lambda: str(500 + int(d() * 20000)),
            "ms": lambda: str(1 + int(d() * 50)),
        }
        f = gen.get(key)
        v = f() if f is not None else "-"
        self[key] = v
        return v


def fill_path(path: str, draw: Draw) -> str:
    """Concrete request path: route parameters ({id}, {date}, ...) replaced by plausible values."""
    return re.sub(
        r"\{[^}]*\}",
        lambda m: draw.choice(PRODUCT_IDS) if "id" in m.group(0).lower() else str(1 + int(draw() * 30)),
        path,
    )


__all__ = ["Draw", "Fill", "fill_path"]
