"""The delay-budget example: the Plant-side observation equals the env's, B 0 ms == A,
the table grows with the delay, and the CLI writes its files."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from vdsim_gym import Plant
from vdsim_gym.cli import main as cli_main
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval.delay_budget import (
    REFERENCE_FIGURES,
    default_cases,
    format_markdown,
    make_env,
    run_budget,
    start_state,
)
from vdsim_gym.eval.policy_adapter import PathObservation, PolicyController


@pytest.fixture(scope="module")
def env():
    e = make_env()
    yield e
    e.close()


def test_plant_observation_is_the_envs_bit_for_bit(env):
    """The baseline sees the same vector through PathObservation as through the env, and
    the env's action mapping on the Plant gives the same trajectory."""
    obs_env, _ = env.reset(seed=3)
    base = env.unwrapped
    plant = Plant(level="L2", substep_dt=base.substep_dt, control_period=base.control_period,
                  longitudinal="force")
    x = base.state
    obs = plant.reset(dict(zip(("X", "Y", "psi", "vx", "vy", "r"), x[:6].tolist(),
                               strict=True)))
    adapter = PathObservation(env)
    policy = stanley_pi(env)
    prev = (0.0, 0.0)
    for k in range(150):
        vec = adapter(obs, prev)
        assert np.array_equal(vec, obs_env), k
        action, _ = policy.predict(obs_env, episode_start=np.array([k == 0]))
        obs_env, *_ = env.step(action)
        obs = plant.step(base.action_to_command(action))
        prev = tuple(float(a) for a in np.clip(action, -1, 1))


def test_budget_b0_equals_a_and_delay_costs_tracking(env):
    cases = default_cases()[:5]  # A, B 0 / 5 / 10 / 20 ms
    rows, results = run_budget(cases, duration=4.0)
    a, b0 = results[0], results[1]
    for col in a.trace:
        assert np.array_equal(a.trace[col], b0.trace[col], equal_nan=True), col
    assert rows[0].ey_rmse_m == rows[1].ey_rmse_m and rows[0].ey_max_m == rows[1].ey_max_m
    rmse = [r.ey_rmse_m for r in rows[1:]]
    assert rmse == sorted(rmse) and rmse[-1] > 1.05 * rmse[0]
    assert all(r.samples == 200 and r.overruns == 0 for r in rows)
    assert "| A sync |" in format_markdown(rows)


def test_controller_resets_between_runs(env):
    ctrl = PolicyController(env)
    s0 = start_state(env)
    plant = Plant(level="L2", longitudinal="force")
    first = ctrl(plant.reset(s0), 0.0)
    ctrl(plant.step(first), 0.02)
    ctrl.reset()
    assert ctrl(plant.reset(s0), 0.0) == first


def test_cli_writes_table_csv_and_plot(tmp_path, capsys):
    assert cli_main(["delay-budget", "--out", str(tmp_path), "--duration", "1.0"]) == 0
    text = capsys.readouterr().out
    assert "B fixed 20 ms" in text and "e_y RMSE [m]" in text
    with (tmp_path / "delay_budget.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [r["case"] for r in rows] == [c.name for c in default_cases()]
    assert rows[0]["ey_rmse_m"] == rows[1]["ey_rmse_m"]
    assert (tmp_path / "delay_budget.png").stat().st_size > 10_000
    assert (tmp_path / "delay_budget_overlay.png").stat().st_size > 10_000
    from vdsim_gym.traces.trace import read_trace

    traces = sorted(p.name for p in (tmp_path / "traces").iterdir())
    assert len(traces) == len(rows) and "b_fixed_10_ms.vdtrace" in traces
    b10 = read_trace(tmp_path / "traces" / "b_fixed_10_ms.vdtrace")
    assert b10.manifest["latency_model"] == {"kind": "fixed", "c_s": 0.01}
    assert set(REFERENCE_FIGURES) == {0, 5, 10, 20}


@pytest.mark.slow
def test_full_budget_table():
    rows, _ = run_budget()
    assert rows[0].ey_rmse_m == rows[1].ey_rmse_m
    assert all(r.samples == 500 for r in rows[:6])


def test_progress_fallback_is_on_stderr_not_stdout(block_import, tmp_path, capsys):
    """delay-budget without tqdm: a line per run on stderr; stdout is the table alone."""
    block_import("tqdm")
    assert cli_main(["delay-budget", "--duration", "0.1", "--no-plot", "--out", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    assert "[delay budget 1/14] A sync" in err and "[delay budget 14/14]" in err
    assert "[delay budget" not in out and "e_y RMSE" in out


def test_reference_configuration_reproduces_the_published_figures():
    """`--integrator heun` (the reference configuration) gives the reference figures
    published in docs/EVAL_MODES.md (A sync 0.0832 m, max 0.2026 m, since the physics-
    fidelity sedan); the default's differ, by less than 10 %."""
    sync = [c for c in default_cases() if c.name == "A sync"]
    ref, _ = run_budget(sync, integrator="heun")
    new, _ = run_budget(sync)
    assert (round(ref[0].ey_rmse_m, 4), round(ref[0].ey_max_m, 4)) == (0.0832, 0.2026)
    assert new[0].ey_rmse_m != ref[0].ey_rmse_m
    assert abs(new[0].ey_rmse_m / ref[0].ey_rmse_m - 1.0) < 0.1


def test_vehicle_option_runs_the_budget_on_another_car(tmp_path):
    """--vehicle: the earlier sedan (rear drive, no tire lag) tracks the lane change
    differently from the default car; the CSV is written either way."""
    sync = [c for c in default_cases() if c.name == "A sync"]
    default, _ = run_budget(sync, duration=2.0)
    earlier, _ = run_budget(sync, duration=2.0, vehicle="generic_sedan_v0")
    assert earlier[0].ey_rmse_m != default[0].ey_rmse_m
    assert cli_main(["delay-budget", "--vehicle", "generic_sedan_v0", "--duration", "0.2",
                     "--no-plot", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "delay_budget.csv").exists()


def test_budget_split_into_its_parts():
    """A 40 ms loop budget: as the sensor's age or the network's delay it is the same pure
    delay for a time-invariant controller (the same e_y but for the first two samples),
    as the steering channel's dead time about the same (the longitudinal loop keeps its
    timing), as computation under skip the worst (every other sample taken); the parts
    add up to the total in every row."""
    from vdsim_gym.eval.delay_budget import budget_cases

    cases = budget_cases(0.04)
    rows, results = run_budget(cases, duration=4.0)
    by = {r.case.split(": ")[1]: r for r in rows}
    compute, sensor, network, steer = (by[f"{p} 40 ms"] for p in
                                       ("compute", "sensor", "network", "steer"))
    quarter = by["10 x 4"]
    assert all(r.total_ms == pytest.approx(40.0) for r in rows)
    assert (quarter.sensor_ms, quarter.mean_delay_ms, quarter.network_ms,
            quarter.steer_ms) == (10.0, 10.0, 10.0, 10.0)
    assert sensor.ey_rmse_m == pytest.approx(network.ey_rmse_m, rel=2e-3)
    pure = [sensor, network, steer, quarter]
    assert max(r.ey_rmse_m for r in pure) < compute.ey_rmse_m
    assert steer.ey_rmse_m == pytest.approx(sensor.ey_rmse_m, rel=0.05)
    sync, _ = run_budget(default_cases()[:1], duration=4.0)
    assert min(r.ey_rmse_m for r in pure) > 1.5 * sync[0].ey_rmse_m
    assert compute.overruns == compute.skipped > 0 and sensor.overruns == 0
    # each part really acts: the sensor's ages, the network's apply times, the dead time
    res = dict(zip((r.case for r in rows), results, strict=True))
    assert res["budget: sensor 40 ms"].stats["obs_age_max_s"] == pytest.approx(0.04)
    s = res["budget: network 40 ms"].samples
    np.testing.assert_allclose(s["t_apply"] - s["t_sample"], 0.04)
    assert res["budget: steer 40 ms"].meta["channel_delays_s"] == [0.04, 0.0]


def test_budget_option_errors_are_one_line(tmp_path, capsys):
    assert cli_main(["delay-budget", "--duration", "0.1", "--no-plot", "--budget", "0",
                     "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "budget: compute" not in out and "sensor" in out
    with pytest.raises(SystemExit):
        cli_main(["delay-budget", "--budget", "5", "--out", str(tmp_path)])
    assert "must be a number >= 0 and <= 1 s" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["delay-budget", "--budget", "0.0301", "--no-plot", "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "budget / 4" in err[0] and "whole multiple of substep_dt" in err[0]
