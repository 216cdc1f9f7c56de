"""Plain-text and Markdown tables of dataclass rows, for the CLI reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# (title, attribute, alignment, number format), e.g. ("e_y RMSE [m]", "ey_rmse_m", ">12", ".4f")
Column = tuple[str, str, str, str]


def format_table(rows: Sequence[Any], columns: Sequence[Column]) -> str:
    """Fixed-width text table with a header and a rule; a column widens to its longest
    cell (a long scenario key must not push the columns after it out of line)."""
    cells = [[format(getattr(r, attr), fmt) for _, attr, _, fmt in columns] for r in rows]
    specs = []
    for j, (title, _, align, _) in enumerate(columns):
        side, declared = align[:1] if align[:1] in "<>^" else "<", align.lstrip("<>^")
        width = max([int(declared or 0), len(title), *(len(c[j]) for c in cells)])
        specs.append(f"{side}{width}")
    head = " ".join(f"{title:{spec}}" for (title, *_), spec in zip(columns, specs, strict=True))
    lines = [head, "-" * len(head)]
    for row in cells:
        lines.append(" ".join(f"{c:{spec}}" for c, spec in zip(row, specs, strict=True)))
    return "\n".join(lines)


def format_markdown(rows: Sequence[Any], columns: Sequence[Column]) -> str:
    """GitHub-flavoured Markdown table (a "|" inside a cell escaped, as in "max \\|e_y\\|")."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(cell(title) for title, *_ in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(cell(format(getattr(r, attr), fmt))
                                       for _, attr, _, fmt in columns) + " |")
    return "\n".join(lines)
