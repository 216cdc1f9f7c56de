"""integrator="semi_implicit" (the body explicit, the wheel spins linearly implicit at the
body's new state): the accuracy gate against the 10x finer RK4 reference at the training
substeps, the low-speed cases against the reference configuration (heun 0.5 ms), a
hand-written Python transcription of one step, and the envs on it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401
from vdsim_gym import _core
from vdsim_gym.cli import accuracy
from vdsim_gym.config import load_vehicle
from vdsim_gym.plant import make_session


@pytest.mark.parametrize("level", ["L1", "L2"])
@pytest.mark.parametrize("scenario", ["step_steer", "double_lane_change"])
@pytest.mark.parametrize("substep", [2.5e-3, 5e-3])
def test_gate_at_the_training_substeps(level, scenario, substep):
    ref = accuracy.simulate(level, "rk4", accuracy.REFERENCE_SUBSTEP, scenario)
    err_ay, err_r = accuracy.relative_errors(
        accuracy.simulate(level, "semi_implicit", substep, scenario), ref)
    assert err_ay <= accuracy.GATE and err_r <= accuracy.GATE, (err_ay, err_r)


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_low_speed_cases_no_flips_no_creep(level):
    ref = accuracy.low_speed_checks(*accuracy.REFERENCE_CONFIG, level)
    got = accuracy.low_speed_checks("semi_implicit", 5e-3, level)
    for case in accuracy.LOW_SPEED_CASES:
        assert got[case]["flips"] == 0, case
        assert got[case]["vx_end"] == pytest.approx(ref[case]["vx_end"], rel=0.01, abs=1e-6)
    assert got["standstill"]["creep"] == 0.0  # a parked car stays exactly at rest
    assert got["brake_to_stop"]["creep"] < 1e-8  # and a stopped one does not creep


def test_one_step_against_a_python_transcription():
    """The step written out in Python over the core's own derivative (Heun's first stage
    is the derivative at the start: an explicit Euler substep gives it back)."""
    vehicle, dt = load_vehicle(), 5e-3

    def session(integ, state):
        s = make_session(level="L2", vehicle=vehicle, substep_dt=dt, longitudinal="pedal",
                         actuator=None, integrator=integ)
        s.reset(0.0, 0.0, 0.0, 3.0, 0.0, 0.0)
        s.set_state(state)
        s.command_now(0.05, 0.6)
        return s

    def f(state):  # the derivative at `state` under the command, by one tiny Euler step
        s = session("euler", state)
        h = 1e-7
        s2 = make_session(level="L2", vehicle=vehicle, substep_dt=h, longitudinal="pedal",
                          actuator=None, integrator="euler")
        s2.reset(0.0, 0.0, 0.0, 3.0, 0.0, 0.0)
        s2.set_state(state)
        s2.command_now(0.05, 0.6)
        s2.advance(1)
        out = np.zeros(_core.STATE_SIZE)
        s2.get_state(out)
        del s
        return (out - state) / h

    rng = np.random.default_rng(1)
    x = np.zeros(_core.STATE_SIZE)
    x[3], x[4], x[5] = 3.0, 0.05, 0.02
    x[6:10] = 3.0 / vehicle.wheel_radius * (1.0 + rng.uniform(-0.02, 0.05, 4))
    s = session("semi_implicit", x)
    s.advance(1)
    got = np.zeros(_core.STATE_SIZE)
    s.get_state(got)
    want = x.copy()
    k1 = f(x)
    body = [i for i in range(_core.STATE_SIZE) if not 6 <= i < 10]
    want[body] += dt * k1[body]
    k2 = f(want)
    for i in range(6, 10):
        hw = 1e-4 * (1.0 + abs(want[i]))
        bumped = want.copy()
        bumped[i] += hw
        jac = min((f(bumped)[i] - k2[i]) / hw, 0.0)
        want[i] += dt * k2[i] / (1.0 - dt * jac)
    np.testing.assert_allclose(got[body], want[body], rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got[6:10], want[6:10], rtol=1e-3)


def test_envs_run_on_it_deterministically():
    kw = dict(level="L2", integrator="semi_implicit", substep_dt=5e-3)
    runs = []
    for _ in range(2):
        env = gym.make("VDSim-DLC-v0", **kw)
        obs, _ = env.reset(seed=2)
        rows = [obs]
        for _ in range(100):
            obs, _, term, trunc, _ = env.step(np.array([0.02, 0.1], np.float32))
            rows.append(obs)
            if term or trunc:
                break
        runs.append(np.concatenate(rows))
    np.testing.assert_array_equal(*runs)
    with pytest.raises(ValueError, match="integrator must be one of"):
        gym.make("VDSim-DLC-v0", integrator="implicit")
