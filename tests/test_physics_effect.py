"""tools/physics_effect.py: the published comparisons on two physics, and what moved."""

from __future__ import annotations

import csv
import importlib.util
import shutil
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "physics_effect", Path(__file__).parents[1] / "tools" / "physics_effect.py")
tool = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(tool)


@pytest.fixture(scope="module")
def one_run(tmp_path_factory) -> Path:
    """The DLC comparison on one seed, run once for the module."""
    out = tmp_path_factory.mktemp("run")
    tool.run(out, {}, {"dlc": 1, "acc": 1}, names=("dlc",))
    return out


def test_the_same_physics_twice_moves_nothing(one_run, tmp_path):
    a = one_run
    b = tmp_path / "b"
    tool.run(b, {}, {"dlc": 1, "acc": 1}, names=("dlc",))  # a second, independent run
    lines = tool.compare(a, b, ref=a)
    assert lines[0].startswith("DLC (")
    for line in lines[1:]:
        assert "0 cells moved at 4 dp; largest change 0.000 %" in line, line
        assert "before 0.000 %, after 0.000 %" in line


def test_a_changed_cell_is_counted_and_named(one_run, tmp_path):
    a = tmp_path / "a"
    shutil.copytree(one_run, a)
    b = tmp_path / "b" / "dlc"
    b.mkdir(parents=True)
    with (a / "dlc" / "sweep_summary.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    rows[0]["rms_e_y_mean"] = str(float(rows[0]["rms_e_y_mean"]) * 1.02)
    with (b / "sweep_summary.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    line = next(x for x in tool.compare(a, tmp_path / "b") if x.startswith("  rms_e_y:"))
    assert "1 cells moved at 4 dp; largest change 2.000 %" in line
    assert "dlc_ppo" in line
