"""The package's import graph, read from the source with `ast`: what a module imports, directly
and transitively, within `sre_marathon_gym`.

Why from the source and not `sys.modules`: importing any module first runs the package root, which
registers the Gymnasium environments (and so imports the simulator). Every import statement counts,
wherever it is (module level, inside a function, under `TYPE_CHECKING`); relative imports are
resolved, and `from pkg import name` also counts `pkg.name` when that is a module.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = "sre_marathon_gym"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def module_path(module: str) -> Path | None:
    """The source of a package-internal module (a package's `__init__.py`); None if there is none."""
    parts = module.split(".")
    if parts[0] != PACKAGE:
        return None
    base = ROOT.joinpath(*parts[1:])
    if len(parts) > 1 and (base.parent / f"{base.name}.py").is_file():
        return base.parent / f"{base.name}.py"
    init = base / "__init__.py"
    return init if init.is_file() else None


def within(module: str, package: str) -> bool:
    """Whether `module` is `package` or lives under it."""
    return module == package or module.startswith(package + ".")


def modules_under(package: str) -> list[str]:
    """Every module of a package (itself and its subpackages), sorted."""
    init = module_path(package)
    if init is None or init.name != "__init__.py":
        raise ValueError(f"{package} is not a package of {PACKAGE}")
    out = []
    for path in sorted(init.parent.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("").parts
        out.append(".".join((PACKAGE, *rel[:-1])) if rel[-1] == "__init__" else ".".join((PACKAGE, *rel)))
    return out


@cache
def direct_imports(module: str) -> frozenset[str]:
    """Package-internal modules that `module`'s own source imports."""
    path = module_path(module)
    if path is None:
        raise ValueError(f"no source for {module}")
    here = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = here.split(".")
                anchor = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{anchor}.{node.module}" if node.module else anchor
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        else:
            continue
        out.update(n for n in names if module_path(n) is not None)
    return frozenset(out)


def parents(module: str) -> list[str]:
    """The packages Python runs before `module`, except the package root (which registers the envs)."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(2, len(parts))]


def closure(module: str) -> set[str]:
    """`module` and every package-internal module importing it runs, transitively (parent packages
    included, the package root excepted)."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(direct_imports(m))
            todo.extend(parents(m))
    return seen


def import_path(start: str, target: str) -> list[str] | None:
    """One chain of imports from `start` to a module within `target` (for assertion messages)."""
    prev: dict[str, str | None] = {start: None}
    todo = [start]
    while todo:
        m = todo.pop(0)
        if within(m, target):
            chain = [m]
            while prev[chain[-1]] is not None:
                chain.append(prev[chain[-1]])  # type: ignore[arg-type]
            return chain[::-1]
        for n in sorted(direct_imports(m) | set(parents(m))):
            if n not in prev:
                prev[n] = m
                todo.append(n)
    return None
