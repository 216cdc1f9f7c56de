"""integrator="semi_implicit" (the body explicit, the wheel spins linearly implicit at the
body's new state): the accuracy gate against the 10x finer RK4 reference at the training
substeps, the low-speed cases against the reference configuration (heun 0.5 ms), a
hand-written Python transcription of one step, and the envs on it."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401
from vdsim_gym import _core
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.eval import accuracy
from vdsim_gym.sim.physics_options import make_session


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
    integ, dt, st = accuracy.REFERENCE_CONFIG
    ref = accuracy.low_speed_checks(integ, dt, level, st)
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
    lagged = list(range(12, 16))  # tan(alpha) lagged by the relaxation length
    body = [i for i in range(_core.STATE_SIZE) if not 6 <= i < 10 and i not in lagged]
    want[body] += dt * k1[body]
    k2 = f(want)
    # the lagged slips: exponentially toward the slip at the body's new state, lambda from
    # the body's vx (at 3 m/s the slip speed floor, 2.5 m/s, does not bind)
    lam = max(abs(want[3]), 2.5) / vehicle.tire.relaxation_length
    assert vehicle.tire.relaxation_length > 0.0
    lag_step = k2[lagged] * (1.0 - math.exp(-lam * dt)) / lam
    for i in range(6, 10):
        hw = 1e-4 * (1.0 + abs(want[i]))
        bumped = want.copy()
        bumped[i] += hw
        jac = min((f(bumped)[i] - k2[i]) / hw, 0.0)
        want[i] += dt * k2[i] / (1.0 - dt * jac)
    want[lagged] += lag_step
    np.testing.assert_allclose(got[body + lagged], want[body + lagged], rtol=1e-6, atol=1e-9)
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


# ------------------------------------------------------------------ multirate (max_step)


def _run(plant, commands):
    obs = plant.reset({"vx": 15.0})
    out = [obs]
    for c in commands:
        out.append(plant.step(c))
    return out


def test_max_step_equals_the_coarse_substep_between_events():
    from vdsim_gym import Plant

    cmds = [(0.02 * np.sin(k / 10), 0.1) for k in range(50)]
    fine = _run(Plant(integrator="semi_implicit", max_step=5e-3), cmds)
    coarse = _run(Plant(integrator="semi_implicit", substep_dt=5e-3), cmds)
    for a, b in zip(fine, coarse, strict=True):
        for key in ("X", "Y", "psi", "vx", "vy", "r"):
            assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12), key


def test_max_step_keeps_the_delay_grid_fine():
    from vdsim_gym import LatencyModel

    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.003),
                   integrator="semi_implicit", max_step=5e-3)
    env.reset(seed=0)
    info = env.step(np.zeros(2, np.float32))[4]
    assert info["t_apply"] - info["t_sample"] == pytest.approx(0.003)  # not rounded to 5 ms


def test_max_step_one_substep_and_actuator_fallback_are_bit_identical():
    from vdsim_gym import Plant

    cmds = [(0.03, 0.2)] * 20
    # one substep: as before max_step existed (heun: its default)
    assert _run(Plant(integrator="heun", max_step=5e-4), cmds) == \
        _run(Plant(integrator="heun"), cmds)
    # the default: etd3 with steps of up to 10 ms
    assert _run(Plant(integrator="etd3", max_step=1e-2), cmds) == _run(Plant(), cmds)
    assert _run(Plant(integrator="etd2", max_step=5e-3), cmds) == \
        _run(Plant(integrator="etd2"), cmds)
    act = {"time_constant": 0.05, "rate_limit": 1.0}
    with_chain = _run(Plant(integrator="semi_implicit", actuator=act, max_step=5e-3), cmds)
    per_tick = _run(Plant(integrator="semi_implicit", actuator=act, max_step=5e-4), cmds)
    assert with_chain == per_tick  # the steering chain runs per tick: no multirate


def test_max_step_with_the_cascade_and_bad_values():
    from vdsim_gym import Plant

    p = Plant(integrator="semi_implicit", max_step=5e-3, longitudinal="accel")
    obs = p.reset({"vx": 10.0})
    for _ in range(100):
        obs = p.step((0.0, 1.5))
    assert obs["ax"] == pytest.approx(1.5, abs=0.1)
    with pytest.raises(ValueError, match="max_step = 0.0012 s is not a whole multiple"):
        Plant(max_step=1.2e-3)


def test_trace_recording_leaves_the_run_bit_identical():
    """Trace rows never end a multirate step: recording at any decimation gives the same
    run (semi_implicit, etd2 and the default, etd3), and a row inside a step is the linear
    interpolation of the step's ends (semi_implicit)."""
    from vdsim_gym import Plant

    cmds = [(0.03, 0.3)] * 15 + [(-0.02, -0.4)] * 15
    for integrator in ("etd3", "etd2", "semi_implicit"):
        plain, traced = Plant(integrator=integrator), Plant(integrator=integrator)
        # 10 ms (etd3) or 5 ms steps on the 0.5 ms grid
        assert plain.physics.step_ticks == (20 if integrator == "etd3" else 10)
        traced.session.trace_decimation = 5  # rows at the middle of every step
        assert _run(traced, cmds) == _run(plain, cmds), integrator
    rows = traced.session.take_trace()
    assert rows.shape[0] == 30 * 40 // 5
    t = rows[:, 0]
    np.testing.assert_allclose(t, np.arange(rows.shape[0]) * 5 * 5e-4, rtol=0, atol=1e-12)
    # rows 0, 2, 4, ... are step boundaries (exact); odd rows the midpoints of their steps
    mid = 0.5 * (rows[0:-2:2, 1:7] + rows[2::2, 1:7])
    np.testing.assert_allclose(rows[1:-1:2, 1:7], mid, rtol=1e-12, atol=1e-12)
