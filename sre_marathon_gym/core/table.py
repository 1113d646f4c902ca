"""Plain-text tables for the CLI (aligned columns, numbers right-aligned)."""

from __future__ import annotations

from collections.abc import Sequence


def _is_number(text: str) -> bool:
    try:
        float(text.replace("%", "").replace(",", ""))
    except ValueError:
        return False
    return True


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], title: str | None = None) -> str:
    cells = [[str(h) for h in headers], *([("" if c is None else str(c)) for c in row] for row in rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if (_is_number(c) and i > 0) else c.ljust(w)
            for i, (c, w) in enumerate(zip(row, widths))
        ).rstrip()

    out = [title] if title else []
    out += [line(cells[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells[1:]]
    return "\n".join(out)
