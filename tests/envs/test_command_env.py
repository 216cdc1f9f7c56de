"""CommandEnv (envs/command.py, command_task.hpp): the vehicle under its plant command,
observed by its state, the env ClosedLoopEval's callback form runs on. Oracles: a plain
``Plant.step`` loop (the same physics, its observation dict rounded to float32) and the
action's mapping written out in Python."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _helpers import through_the_action

from vdsim_gym import LatencyModel, Plant
from vdsim_gym.config.vehicle import WHEELS
from vdsim_gym.envs.command import CommandEnv
from vdsim_gym.errors import ConfigError

STATE0 = {"vx": 20.0, "Y": 0.3}


def commands(longitudinal: str, n: int = 120) -> list[tuple[float, float]]:
    scale = {"force": 900.0, "pedal": 0.4, "accel": 2.0}[longitudinal]
    return [(0.05 * math.sin(0.1 * k), scale * math.cos(0.07 * k)) for k in range(n)]


@pytest.mark.parametrize(("level", "longitudinal"),
                         [("L2", "force"), ("L1", "pedal"), ("L2", "accel"), ("L1", "force")])
def test_steps_are_a_plant_loop_and_the_observation_its_state_in_float32(level, longitudinal):
    env = CommandEnv(level=level, longitudinal=longitudinal, initial_state=STATE0)
    obs, _ = env.reset(seed=0)
    plant = Plant(level=level, longitudinal=longitudinal)
    ref = plant.reset(STATE0)
    names = env.unwrapped.obs_names
    assert len(names) == 10 + 6 * len(WHEELS[level]) and env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs, np.array([ref[n] for n in names], np.float32))
    for command in commands(longitudinal):
        action = env.unwrapped.command_to_action(*command)
        obs, reward, terminated, truncated, info = env.step(action)
        ref = plant.step(through_the_action(plant, command))
        np.testing.assert_array_equal(obs, np.array([ref[n] for n in names], np.float32))
        assert reward == 0.0 and not terminated and not truncated
        assert info["t"] == ref["t"]


@pytest.mark.parametrize("longitudinal", ["force", "pedal", "accel"])
def test_the_action_is_the_command_over_the_vehicles_range(longitudinal):
    """command_to_action and action_to_command invert each other to an ulp; beyond the
    range the action is beyond [-1, 1] and the core's clamp holds the command at the
    vehicle's limit (Plant's saturation)."""
    env = CommandEnv(longitudinal=longitudinal)
    base = env.unwrapped
    lo, hi = base.longitudinal_range
    max_steer = base.vehicle.max_steer
    for steer, lon in [(0.0, 0.0), (0.01, 0.3 * hi), (-0.2, 0.7 * lo), (max_steer, hi),
                       (-max_steer, lo)]:
        back = base.action_to_command(base.command_to_action(steer, lon))
        assert back == pytest.approx((steer, lon), rel=1e-15, abs=1e-300)
    a = base.command_to_action(2.0 * max_steer, 3.0 * hi)
    assert a[0] == pytest.approx(2.0) and a[1] == pytest.approx(3.0)
    assert base.action_to_command(a) == (max_steer, hi)
    assert base.action_to_command(base.command_to_action(-2.0 * max_steer, 3.0 * lo)) == \
        (-max_steer, lo)


def test_latency_and_sensor_delay_are_the_env_cores():
    """The command env takes every timing keyword of an env: a fixed 10 ms delay applies
    each command 20 ticks after its sample; a 20 ms sensor delay shows the state one
    period old."""
    env = CommandEnv(initial_state=STATE0, latency=LatencyModel.fixed(0.01),
                     obs_delay=LatencyModel.fixed(0.02))
    obs, _ = env.reset(seed=0)
    first = obs.copy()
    _, _, _, _, info = env.step(env.unwrapped.command_to_action(0.01, 0.0))
    assert info["apply_tick"] == 20 and info["obs_age"] == pytest.approx(0.02)
    obs, _, _, _, info = env.step(env.unwrapped.command_to_action(0.01, 0.0))
    assert info["obs_tick"] == 40
    assert not np.array_equal(obs, first)


def test_snapshot_and_restore_step_the_same_again():
    env = CommandEnv(initial_state=STATE0, latency=LatencyModel.uniform(0.0, 0.03, seed=2))
    env.reset(seed=4)
    base = env.unwrapped
    cmds = commands("pedal", 40)
    for c in cmds[:10]:
        env.step(base.command_to_action(*c))
    snap = base.snapshot()
    first = [env.step(base.command_to_action(*c))[0] for c in cmds[10:]]
    base.restore(snap)
    again = [env.step(base.command_to_action(*c))[0] for c in cmds[10:]]
    np.testing.assert_array_equal(np.array(first), np.array(again))


def test_a_non_finite_state_terminates_and_bad_initial_states_are_refused():
    with pytest.raises(ConfigError, match="unknown keys"):
        CommandEnv(initial_state={"speed": 3.0})
    with pytest.raises(ConfigError, match="finite"):
        CommandEnv(initial_state={"vx": math.inf})
    env = CommandEnv(initial_state={"vx": 1e308})
    env.reset(seed=0)
    terminated = False
    for _ in range(5):
        _, _, terminated, _, info = env.step(np.array([0.0, 1.0]))
        if terminated:
            assert info["outcome"] == "non_finite"
            break
    assert terminated


@pytest.mark.parametrize("integrator", ["etd3", "etd2", "semi_implicit"])
def test_grid_rows_change_nothing_when_the_period_is_whole_steps(integrator):
    """core.grid_rows stops the plant at every grid tick a step passes (skip overruns span
    several periods); with the period a whole number of max_step each grid tick is a step
    boundary already, so the run is the same bit for bit, and each row is the state
    there (checked against a run stepped one period at a time)."""
    def run(grid_rows: bool):
        env = CommandEnv(initial_state=STATE0, integrator=integrator,
                         latency=LatencyModel.uniform(0.0, 0.05, seed=3))
        env.reset(seed=0)
        core = env.unwrapped.core
        core.grid_rows = grid_rows
        steps = [env.step(env.unwrapped.command_to_action(*c)) for c in commands("pedal", 60)]
        assert sum(s[4]["skipped"] for s in steps) > 10  # steps spanning grid ticks
        return np.array([s[0] for s in steps]), env.unwrapped.state, core.tick
    with_rows, without = run(True), run(False)
    np.testing.assert_array_equal(with_rows[0], without[0])
    np.testing.assert_array_equal(with_rows[1], without[1])
    assert with_rows[2] == without[2]
