"""The noisy-command gate (vdsim_gym.eval.noisy_gate): recorded command streams replayed
open loop against heun at 0.1 ms, each env's task signals scored over the run."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym.cli.main import main
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval import noisy_gate
from vdsim_gym.eval.noisy_gate import (
    CASES,
    REFERENCE,
    NoisyRow,
    record_stream,
    replay,
    run_gate,
    score,
    summary,
)


def test_row_error_and_verdict():
    row = NoisyRow("dlc", "L2", "uniform", 0, "e_y", 10, reference=2.0, value=2.03,
                   traj_err=0.05)
    assert row.rel_err == pytest.approx(0.015) and not row.passes
    assert row.metric == "rms e_y"
    assert NoisyRow("acc", "L2", "uniform", 0, "gap", 10, 2.0, 1.99, 0.0).passes
    ended = NoisyRow("dlc", "L2", "uniform", 0, "e_y", 3, 2.0, math.nan, math.inf)
    assert ended.rel_err == math.inf and not ended.passes


@pytest.mark.parametrize("stream", ["uniform", "noise_0.3"])
def test_streams_are_seeded_bounded_and_follow_the_baseline(stream):
    case = CASES["dlc"]
    a = record_stream(case, "L2", stream, seed=1, duration=1.0)
    assert a.dtype == np.float32 and a.shape == (50, 2)
    assert np.all(np.abs(a) <= 1.0)
    assert np.array_equal(a, record_stream(case, "L2", stream, seed=1, duration=1.0))
    assert not np.array_equal(a, record_stream(case, "L2", stream, seed=2, duration=1.0))
    if stream == "noise_0.3":  # the baseline's own actions plus noise of that size
        base = record_stream(case, "L2", "noise_0.0", seed=1, duration=1.0)
        d = (a - base)[:, 0]  # the steer noise on the first steps (before the runs part)
        assert 0.15 < float(np.std(d[:10])) < 0.6


def test_the_reference_replays_its_own_recording_exactly():
    case = CASES["acc"]
    actions, ref = noisy_gate._record(case, "L2", "noise_0.3", 0, 2.0)
    again = replay(case, "L2", REFERENCE, actions, 0)
    assert np.array_equal(again, ref)
    assert all(err == 0.0 for _, _, err in score(case, again, ref))


def test_scoring_by_the_envs_metrics():
    case = CASES["acc"]  # gap by its minimum, acceleration by its RMS
    ref = np.array([[10.0, 1.0], [8.0, -1.0], [9.0, 1.0]])
    got = ref + np.array([[0.0, 0.0], [0.08, 0.0], [0.0, 0.1]])
    (gr, gv, gt), (ar, av, at) = score(case, got, ref)
    assert (gr, gv) == (8.0, pytest.approx(8.08))
    assert ar == 1.0 and av == pytest.approx(math.sqrt((1 + 1 + 1.21) / 3))
    assert gt == pytest.approx(math.sqrt(0.08 ** 2 / 3) / math.sqrt((100 + 64 + 81) / 3))
    short = score(case, got[:2], ref)  # the run ended before the reference
    assert all(math.isnan(v) and t == math.inf for _, v, t in short)


def test_the_reference_configuration_on_every_substep_passes_a_subset():
    """heun on every 0.5 ms substep (the reference configuration) is within the gate."""
    rows = run_gate({"integrator": "heun"}, cases=("dlc", "acc"), levels=("L2",),
                    streams=("uniform", "noise_0.3"), seeds=(0,), duration=5.0)
    assert len(rows) == 2 * 2 * 2
    assert all(r.passes for r in rows), summary(rows)


def test_the_gate_sees_semi_implicits_lag_under_noise():
    rows = run_gate({"integrator": "semi_implicit"}, cases=("dlc",), levels=("L2",),
                    streams=("noise_0.3",), seeds=(1,), duration=5.0)
    e_y = next(r for r in rows if r.signal == "e_y")
    assert e_y.rel_err > 0.05, summary(rows)


def test_default_physics_passes_a_subset():
    """etd3 with its step-size rule (the default) on the hardest streams of both path envs
    and the ACC (the full gate: the validation marker)."""
    rows = run_gate(cases=("dlc", "path_follow", "acc"), levels=("L2",),
                    streams=("uniform", "noise_0.3"), seeds=(1,))
    assert len(rows) == 12
    assert all(r.passes for r in rows), summary(rows)


@pytest.mark.validation
def test_default_physics_passes_the_full_noisy_gate():
    rows = run_gate()
    assert len(rows) == 3 * 2 * 4 * 3 * 2
    assert all(r.passes for r in rows), summary(rows)


def test_unknown_cases_streams_and_physics_keywords_are_refused():
    with pytest.raises(ConfigError, match="unknown noisy-gate case"):
        run_gate(cases=("dlc", "nope"))
    with pytest.raises(ConfigError, match="'noise_x'"):
        run_gate(streams=("noise_x",))
    with pytest.raises(ConfigError, match="'gauss'"):
        run_gate(streams=("gauss",))
    with pytest.raises(ConfigError, match="numerical option"):
        run_gate({"level": "L1"})
    with pytest.raises(ConfigError, match="seeds is empty"):
        run_gate(seeds=())
    with pytest.raises(ConfigError, match="duration"):
        run_gate(duration=float("nan"))


def test_cli_noisy_gate_prints_its_table_and_verdict(capsys):
    code = main(["accuracy", "--noisy", "--integrator", "heun", "--cases", "acc",
                 "--levels", "L2", "--seeds", "1"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "Noisy-command gate: integrator='heun'" in out
    assert "| acc | L2 | noise_0.5 | 0 | min gap |" in out
    assert "8 of 8 metrics within 1 %" in out
