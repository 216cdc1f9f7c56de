"""Plain-text and Markdown tables of dataclass rows, for the CLI reports."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# (title, attribute, alignment, number format), e.g. ("e_y RMSE [m]", "ey_rmse_m", ">12", ".4f")
Column = tuple[str, str, str, str]


def format_table(rows: Sequence[Any], columns: Sequence[Column]) -> str:
    """Fixed-width text table with a header and a rule."""
    head = " ".join(f"{title:{align}}" for title, _, align, _ in columns)
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(" ".join(f"{format(getattr(r, attr), fmt):{align}}"
                              for _, attr, align, fmt in columns))
    return "\n".join(lines)


def format_markdown(rows: Sequence[Any], columns: Sequence[Column]) -> str:
    """GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(title for title, *_ in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(format(getattr(r, attr), fmt)
                                       for _, attr, _, fmt in columns) + " |")
    return "\n".join(lines)
