"""The package's import graph, read from source with `ast` (nothing is imported or executed).

Edges are module -> module inside `sre_marathon_gym`; `from pkg import name` points at `pkg.name`
when that is a module, else at `pkg`, and importing `a.b.c` also points at the package `a.b` (its
`__init__` runs first). Imports inside functions count: a lazy import is still a dependency.
Third-party imports are kept by their top-level name (`gymnasium`, `ray`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

PACKAGE = "sre_marathon_gym"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@lru_cache(maxsize=1)
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if not level:
        return module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


@lru_cache(maxsize=1)
def graph() -> dict[str, tuple[frozenset[str], frozenset[str]]]:
    """module -> (package modules it imports, third-party top-level packages it imports)."""
    mods = modules()
    out = {}
    for name, path in mods.items():
        internal, external = set(), set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, path.name == "__init__.py", node.level, node.module)
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for t in targets:
                if t == PACKAGE or t.startswith(PACKAGE + "."):
                    while t not in mods and "." in t:  # `import pkg.mod.attr` style: the module part
                        t = t.rsplit(".", 1)[0]
                    internal.add(t)
                    parent = t.rsplit(".", 1)[0]
                    while parent != PACKAGE and "." in parent:  # importing a.b.c runs a.b's __init__
                        internal.add(parent)
                        parent = parent.rsplit(".", 1)[0]
                elif t and not t.startswith("."):
                    external.add(t.split(".")[0])
        out[name] = (frozenset(internal - {name}), frozenset(external))
    return out


def imports(module: str) -> frozenset[str]:
    return graph()[module][0]


def third_party(module: str) -> frozenset[str]:
    return graph()[module][1]


def closure(module: str) -> set[str]:
    """Every package module `module` imports, directly or through others (the package's own
    `__init__` excepted: importing any submodule runs it, so it would make everything reach
    everything)."""
    seen: set[str] = set()
    stack = [module]
    while stack:
        for nxt in imports(stack.pop()):
            if nxt != PACKAGE and nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


def under(name: str, *prefixes: str) -> bool:
    """Whether module `name` is one of `prefixes` (given without the package name) or inside it."""
    short = name.removeprefix(PACKAGE + ".")
    return any(short == p or short.startswith(p + ".") for p in prefixes)


def in_layer(names: Iterable[str], *prefixes: str) -> list[str]:
    return sorted(n for n in names if under(n, *prefixes))


__all__ = ["closure", "graph", "imports", "in_layer", "modules", "third_party", "under"]
