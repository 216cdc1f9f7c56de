"""tools/event_step_effect.py: what a longer event_step would change in the published
comparisons (docs/PHYSICS.md, "Events"). Run on tiny settings: with ``event_step`` at one
substep (the default's own rule) nothing may change, and with 2.5 ms the ACC baselines'
hard braking must show changed episodes while no collision appears."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("event_step_effect",
                                                  ROOT / "tools" / "event_step_effect.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _table(out: str, name: str) -> dict[str, list[str]]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{name}:"))
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("  "):
            break
        cells = line.split()
        rows[cells[0]] = cells[1:]
    return rows


@pytest.fixture(scope="module")
def tool():
    return _tool()


def test_one_substep_changes_nothing(tool, tmp_path, capsys):
    assert tool.main(["--only", "ACC", "--seeds-acc", "1", "--event-step", "5e-4",
                      "--out", str(tmp_path)]) == 0
    rows = _table(capsys.readouterr().out, "ACC")
    assert set(rows) == {"min_gap", "rms_jerk", "rms_time_gap_error", "collision",
                         "episode_return"}
    for metric, (changed, printed, default_err, event_err) in rows.items():
        assert (changed, printed) == ("0", "0"), metric
        assert default_err == event_err, metric  # the same runs: the same distance


def test_a_longer_event_step_changes_braking_episodes(tool, tmp_path, capsys):
    assert tool.main(["--only", "ACC", "--seeds-acc", "1", "--event-step", "2.5e-3",
                      "--out", str(tmp_path)]) == 0
    rows = _table(capsys.readouterr().out, "ACC")
    assert int(rows["min_gap"][0]) > 0 and int(rows["episode_return"][0]) > 0
    assert rows["collision"][:2] == ["0", "0"]
    for _, _, default_err, event_err in rows.values():
        assert float(default_err.rstrip("%")) < 5 and float(event_err.rstrip("%")) < 5


@pytest.mark.parametrize("args, message", [
    (["--event-step", "-1"], "event_step must be positive"),
    (["--seeds-acc", "0"], "seeds must be >= 1"),
])
def test_bad_arguments_are_one_line(tool, tmp_path, capsys, args, message):
    assert tool.main(["--only", "ACC", "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("event_step_effect: ") and message in err
    assert len(err.strip().splitlines()) == 1

