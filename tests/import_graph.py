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
    return _graph(own_packages=True)


@lru_cache(maxsize=2)
def _graph(own_packages: bool) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
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
                        if own_packages or not under_module(name, parent):
                            internal.add(parent)
                        parent = parent.rsplit(".", 1)[0]
                elif t and not t.startswith("."):
                    external.add(t.split(".")[0])
        out[name] = (frozenset((internal - {name}) & mods.keys()), frozenset(external))
    return out


def under_module(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def file_edges() -> dict[str, frozenset[str]]:
    """module -> the package files its import statements need (module-level, in functions and under
    TYPE_CHECKING alike; the package root's `__init__` too, when a file imports from it). A module's
    own enclosing packages are not counted: their `__init__` is already running or done when the
    module's imports run, so it is no dependency of the module's file."""
    return {m: deps for m, (deps, _) in _graph(own_packages=False).items()}


def loops(edges: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (each an import loop), sorted
    (Tarjan's algorithm, iterative: deep chains need no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                group = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    group.append(w)
                    if w == v:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return sorted(found)


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


__all__ = [
    "closure",
    "file_edges",
    "graph",
    "imports",
    "in_layer",
    "loops",
    "modules",
    "third_party",
    "under",
    "under_module",
]
