"""The acceleration cascade (longitudinal="accel"): the C++ law against a slow Python
reference of the documented discrete law driving a pedal-mode Plant substep by substep
(bit for bit), its step response (steady error, settling), standstill, the command range,
and the env action mapping."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import speed_task_env

from vdsim_gym import Plant, _core

G = 9.80665


def reference_pedals(level: str, v0: float, targets: list[float], dt: float = 5e-4):
    """The law of accel_cascade.hpp in Python, on a pedal Plant stepped one substep at a
    time; returns the vx history."""
    plant = Plant(level=level, longitudinal="pedal", control_period=dt,
                  integrator="semi_implicit")
    plant.reset({"vx": v0})
    p, eps = plant.vehicle, _core.LowSpeedParams().rolling_speed_eps
    s = np.zeros(_core.STATE_SIZE)
    integral, a_meas, vx_prev, out = 0.0, 0.0, v0, []
    for a_t in targets:
        plant.session.get_state(s)
        vx, vy, r = s[3], s[4], s[5]
        a_raw = (vx - vx_prev) / dt - r * vy
        vx_prev = vx
        a_meas += (1.0 - math.exp(-dt / p.accel_filter_tau)) * (a_raw - a_meas)
        e = a_t - a_meas
        drag = 0.5 * p.air_density * p.drag_coefficient * p.frontal_area * vx * abs(vx)
        roll = p.rolling_resistance * (p.mass * G) * min(max(vx / eps, -1.0), 1.0)
        torque = (p.mass * a_t + (drag + roll)) * p.wheel_radius
        if torque >= 0.0:
            fs = p.front_drive_share
            w = s[6:10]
            omega = abs(fs * w[0] + (1 - fs) * w[1]) if level == "L1" else \
                abs(fs * 0.5 * (w[0] + w[1]) + (1 - fs) * 0.5 * (w[2] + w[3]))
            cap = min(p.drive_torque_max, p.drive_power_max / omega) if omega > 1e-3 \
                else p.drive_torque_max
        else:
            cap = p.total_brake_torque
        u = torque / cap + p.accel_kp * e + p.accel_ki * integral
        pedal = min(max(u, -1.0), 1.0)
        if not ((u > 1.0 and e > 0.0) or (u < -1.0 and e < 0.0)):
            integral += e * dt
        out.append(plant.step((0.0, pedal))["vx"])
    return np.array(out)


@pytest.mark.parametrize("level", ["L1", "L2"])
@pytest.mark.parametrize(("v0", "pattern"), [(15.0, "steps"), (3.0, "brake_to_stop"),
                                             (30.0, "saturating")])
def test_cascade_equals_python_reference_of_the_law(level, v0, pattern):
    n = 1200  # 0.6 s of substeps
    if pattern == "steps":
        targets = [2.0] * 400 + [0.0] * 400 + [-3.0] * 400
    elif pattern == "brake_to_stop":
        targets = [-3.0] * n  # reaches standstill: the brake holds, the integral saturates
    else:
        targets = [3.0] * 600 + [-8.0] * 600  # beyond the power cap, then full brake
    ref = reference_pedals(level, v0, targets)
    # The discrete law runs under the sampled integrators (here semi_implicit, one
    # substep per step); etd3 and etd2 integrate the cascade in continuous time instead
    # (ContinuousCascade; tests/test_etd.py).
    plant = Plant(level=level, longitudinal="accel", control_period=5e-4,
                  integrator="semi_implicit")
    plant.reset({"vx": v0})
    ours = np.array([plant.step((0.0, a))["vx"] for a in targets])
    np.testing.assert_array_equal(ours, ref)


# (physics, settling time [s]): the reference configuration runs the cascade every
# 0.5 ms substep (2 kHz); semi_implicit every integration step (5 ms, a 200 Hz
# controller), whose slightly slower transient settles 0.1 s later; the default (etd3)
# integrates it in continuous time, the sampled law's limit (docs/PHYSICS.md).
SETTLING = [({"integrator": "heun"}, 0.5), ({"integrator": "semi_implicit"}, 0.6),
            ({}, 0.5)]


@pytest.mark.parametrize("level", ["L1", "L2"])
@pytest.mark.parametrize("v0", [5.0, 15.0, 30.0])
@pytest.mark.parametrize("target", [2.0, 0.0, -3.0])
@pytest.mark.parametrize("physics,settle", SETTLING,
                         ids=["reference", "semi_implicit", "default"])
def test_step_response_settles_on_the_target(level, v0, target, physics, settle):
    plant = Plant(level=level, longitudinal="accel", control_period=0.01, **physics)
    plant.reset({"vx": v0})
    obs = [plant.step((0.0, target)) for _ in range(250)]  # 5 m/s at -3 m/s^2 stops in 1.7 s
    ax = np.array([o["ax"] for o in obs])
    vx = np.array([o["vx"] for o in obs])
    moving = vx > 0.5
    k = round(settle / 0.01)
    late = ax[k:][moving[k:]]  # after the settling time, while the car moves
    if len(late):
        assert np.max(np.abs(late - target)) < 0.02, (ax[k:k + 10], target)
    if not moving[-1]:  # braked to a stop: it stays stopped, no creep backwards
        assert 0.0 <= vx[-1] < 1e-9 and abs(ax[-1]) < 1e-6 and np.all(vx >= 0.0)


def test_range_is_checked_and_names_the_unit():
    plant = Plant(longitudinal="accel")
    plant.reset({"vx": 10.0})
    with pytest.raises(ValueError, match=r"acceleration target \[m/s\^2\] command 90.0 is "
                                         r"beyond 10 x the vehicle's range \[-8, 3\]"):
        plant.step((0.0, 90.0))
    assert plant.step((0.0, 9.0))["saturated"] == 1.0  # held at 3 m/s^2
    assert plant.longitudinal_range == (-8.0, 3.0)


def test_env_action_is_a_target_scaled_to_the_vehicle_limits():
    env = gym.make("VDSim-DLC-v0", longitudinal="accel")
    env.reset(seed=0)
    base = env.unwrapped
    assert base.action_to_command(np.array([0.0, 1.0]))[1] == 3.0
    assert base.action_to_command(np.array([0.0, -0.5]))[1] == -4.0
    assert base.action_to_command(np.array([0.0, 0.25]))[1] == 0.75
    for _ in range(50):  # +1/3 of max_acceleration: 1 m/s^2
        _, _, term, trunc, info = env.step(np.array([0.0, 1.0 / 3.0], np.float32))
    assert base.plant_observation()["ax"] == pytest.approx(1.0, abs=0.02)
    assert math.isfinite(info["e_y"])


@pytest.mark.parametrize("form", ["plant", "env"])
def test_evaluation_records_u_ax_and_the_conversion(form):
    from vdsim_gym import LatencyModel
    from vdsim_gym.controllers import stanley_pi
    from vdsim_gym.eval import ClosedLoopEval

    if form == "plant":
        ev = ClosedLoopEval(plant_kwargs={"level": "L2", "longitudinal": "accel"},
                            controller=lambda obs, t: (0.0, 1.5 if t < 1.0 else -2.0),
                            control_period=0.02, mode="virtual_async",
                            latency=LatencyModel.fixed(0.01), duration=2.0,
                            initial_state={"vx": 10.0})
    else:
        env = gym.make("VDSim-DLC-v0", longitudinal="accel")
        ev = ClosedLoopEval(env=env, policy=stanley_pi(env), mode="virtual_async",
                            latency=LatencyModel.fixed(0.01), duration=2.0)
    res = ev.run()
    assert "u_ax" in res.trace and "u_fx" not in res.trace and "u_pedal" not in res.trace
    conv = res.meta["accel_conversion"]
    assert conv["kp"] == 0.05 and conv["ki"] == 0.5 and conv["target_range_mps2"] == [-8, 3]
    if form == "plant":
        u = np.asarray(res.trace["u_ax"])
        assert set(np.unique(u[np.isfinite(u)])) <= {0.0, 1.5, -2.0}
    pedal = ClosedLoopEval(plant_kwargs={"longitudinal": "pedal"},
                           controller=lambda obs, t: (0.0, 0.1), control_period=0.02,
                           duration=0.2).run()
    assert pedal.meta["accel_conversion"] is None and "u_pedal" in pedal.trace


@pytest.mark.parametrize("env_id", ["VDSim-DLC-v0", speed_task_env.register_speed_env()])
@pytest.mark.parametrize("latency", [None, "fixed"])
def test_accel_command_wrapper_equals_the_kwarg(env_id, latency):
    from vdsim_gym import LatencyModel
    from vdsim_gym.wrappers import AccelCommandWrapper

    lat = None if latency is None else LatencyModel.fixed(0.03)
    wrapped = AccelCommandWrapper(gym.make(env_id, latency=lat))
    plain = gym.make(env_id, latency=lat, longitudinal="accel")
    assert wrapped.unwrapped.longitudinal == "accel"
    rng = np.random.default_rng(0)
    for seed in (0, 1):  # two episodes: the rebuilt core takes its course at each reset
        o1, _ = wrapped.reset(seed=seed)
        o2, _ = plain.reset(seed=seed)
        np.testing.assert_array_equal(o1, o2)
        for _ in range(60):
            a = rng.uniform(-0.2, 0.4, plain.action_space.shape).astype(np.float32)
            r1, r2 = wrapped.step(a), plain.step(a)
            np.testing.assert_array_equal(r1[0], r2[0])
            assert r1[1:4] == r2[1:4]
            if r1[2] or r1[3]:
                break
    with pytest.raises(ValueError, match="already an acceleration target"):
        AccelCommandWrapper(plain)
    with pytest.raises(TypeError, match="supports the VDSim envs"):
        AccelCommandWrapper(gym.make("CartPole-v1"))
