"""Steering actuator chain: dead time -> first-order lag -> rate limit -> saturation."""

from __future__ import annotations

import math

import numpy as np
import pytest

import vdsim_gym

DT = 5e-4  # one substep per Plant.step, so every substep is observed


def realized(actuator, commands, level: str = "L2") -> tuple[list[float], list[dict]]:
    # max_step of one substep: the stepping an actuator forces (its chain runs per tick),
    # so a run without one integrates alike
    p = vdsim_gym.Plant(level=level, substep_dt=DT, control_period=DT, actuator=actuator,
                        max_step=DT)
    p.reset({"vx": 15.0})
    obs = [p.step((c, 0.0)) for c in commands]
    return [o["delta_rw"] for o in obs], obs


def test_actuator_off_passes_command_bit_for_bit() -> None:
    commands = np.random.default_rng(1).uniform(-0.3, 0.3, 200).tolist()
    delta, _ = realized(None, commands)
    assert delta == commands


def test_actuator_neutral_chain_equals_off() -> None:
    commands = [0.0] * 10 + [0.05] * 100 + [-0.02] * 100
    off, obs_off = realized(None, commands)
    on, obs_on = realized({}, commands)
    assert on == pytest.approx(off, abs=1e-15)
    for a, b in zip(obs_off, obs_on, strict=True):
        assert b["r"] == pytest.approx(a["r"], abs=1e-12)
        assert b["vy"] == pytest.approx(a["vy"], abs=1e-12)


@pytest.mark.parametrize("n", [1, 3, 10])
def test_actuator_dead_time_delays_step_by_whole_substeps(n: int) -> None:
    k0 = 5
    commands = [0.0] * k0 + [0.1] * 30
    delta, _ = realized({"dead_time": n * DT}, commands)
    assert delta == [0.0] * (k0 + n) + [0.1] * (30 - n)


def test_actuator_lag_matches_first_order_step_response() -> None:
    tau = 0.01
    delta, _ = realized({"time_constant": tau}, [0.1] * 100)
    expected = [0.1 * (1 - math.exp(-(k + 1) * DT / tau)) for k in range(100)]
    assert delta == pytest.approx(expected, rel=1e-12)


def test_actuator_rate_limit_gives_constant_slope() -> None:
    rate = 2.0  # rad/s -> 1e-3 rad per substep
    delta, _ = realized({"rate_limit": rate}, [0.1] * 150)
    expected = [min(0.1, (k + 1) * rate * DT) for k in range(150)]
    assert delta == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_actuator_saturation_clamps_both_signs() -> None:
    delta, _ = realized({"max_angle": 0.05}, [0.1] * 5 + [-0.2] * 5 + [0.03] * 5)
    assert delta == [0.05] * 5 + [-0.05] * 5 + [0.03] * 5


def test_actuator_chain_order_dead_time_then_rate_limit() -> None:
    delta, _ = realized({"dead_time": 2 * DT, "rate_limit": 10.0, "max_angle": 0.004},
                        [0.1] * 10)
    # two substeps of nothing, then 5e-3 per substep, clamped at 0.004
    assert delta == pytest.approx([0.0, 0.0, 0.004, 0.004] + [0.004] * 6, abs=1e-15)
