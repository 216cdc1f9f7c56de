"""Text tables of the CLI reports keep their columns aligned whatever the cell lengths."""

from __future__ import annotations

from types import SimpleNamespace

from vdsim_gym._table import format_table


def test_table_column_widens_to_its_longest_cell():
    rows = [SimpleNamespace(key="preset=iso3888_2,speed=15.0", v=1.23456),
            SimpleNamespace(key="default", v=22.0)]
    lines = format_table(rows, [("scenario", "key", "<10", "s"), ("e_y", "v", ">8", ".3f")])
    lines = lines.splitlines()
    assert len({len(line) for line in lines}) == 1  # header, rule and rows: same width
    assert [line.rindex(".") for line in (lines[2], lines[3])] == [len(lines[0]) - 4] * 2
