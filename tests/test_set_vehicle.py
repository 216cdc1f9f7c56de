"""Session.set_vehicle / set_actuator and their env-core and vector-core setters: a
session (or env core) given new parameters steps bit for bit as one built with them."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import _core
from vdsim_gym.config.vehicle import ActuatorConfig, load_vehicle
from vdsim_gym.sim.plant import PhysicsSpec

BASE = load_vehicle("generic_sedan")


def _tire(v, **changes):
    return dataclasses.replace(v, tire=dataclasses.replace(v.tire, **changes))


# Every derived quantity the constructor computes changes in one of these: the mass and
# CG (axle loads, the compliance's axle stiffness), the tire (shape constants, the axle
# tires), the differentials' coupling, the slip lag (on, changed, off).
OTHER = {
    "mass_cg": dataclasses.replace(BASE, mass=1720.0, yaw_inertia=2870.0, cg_to_front=1.32,
                                   cg_to_rear=1.38),
    "tire": _tire(BASE, mu=0.8, lateral=dataclasses.replace(BASE.tire.lateral, B=9.5, C=1.4),
                  relaxation_length=0.5),
    "no_lag": _tire(BASE, relaxation_length=0.0),
    "coupling": dataclasses.replace(BASE, diff_coupling_front=150.0, diff_coupling_rear=80.0,
                                    compliance_steer_front=5e-6, compliance_steer_rear=1e-6),
}


def _run(session, steps=3):
    """A reset, then a steer and pedal sequence; every state along the way."""
    session.reset(0.0, 0.0, 0.1, 18.0, 0.0, 0.0)
    out = []
    buf = np.zeros(_core.STATE_SIZE)
    for k in range(steps):
        session.command_now(0.06 * (-1) ** k, 0.3 - 0.4 * k)
        session.advance(400)
        session.get_state(buf)
        out.append(buf.copy())
    return np.array(out)


@pytest.mark.parametrize("name", sorted(OTHER))
@pytest.mark.parametrize(("level", "integrator"),
                         [("L2", "semi_implicit"), ("L2", "heun"), ("L1", "semi_implicit")])
def test_set_vehicle_steps_as_a_session_built_with_the_vehicle(name, level, integrator):
    v2 = OTHER[name]
    fresh = PhysicsSpec.build(level=level, vehicle=v2, integrator=integrator).make_session()
    changed = PhysicsSpec.build(level=level, vehicle=BASE, integrator=integrator).make_session()
    before = _run(changed)  # mid-run on the old vehicle, then replaced
    changed.set_vehicle(v2.to_core())
    np.testing.assert_array_equal(_run(changed), _run(fresh))
    # the test can fail: the vehicle does change the run
    assert not np.array_equal(before, _run(fresh))
    assert changed.vehicle.mass == v2.mass and changed.vehicle.tire.mu == v2.tire.mu


def test_set_vehicle_refused_leaves_the_session_unchanged():
    session = PhysicsSpec.build(vehicle=BASE).make_session()
    reference = PhysicsSpec.build(vehicle=BASE).make_session()
    bad = dataclasses.replace(BASE, compliance_steer_front=-1e-4).to_core()
    with pytest.raises(ValueError, match="compliance_steer_front"):
        session.set_vehicle(bad)
    assert session.vehicle.compliance_steer_front == BASE.compliance_steer_front
    np.testing.assert_array_equal(_run(session), _run(reference))


def test_set_actuator_steps_as_a_session_built_with_the_actuator():
    a1 = ActuatorConfig(time_constant=0.05, rate_limit=2.0)
    a2 = ActuatorConfig(dead_time=0.01, time_constant=0.12, rate_limit=1.0, max_angle=0.3)
    fresh = PhysicsSpec.build(actuator=a2).make_session()
    changed = PhysicsSpec.build(actuator=a1).make_session()
    _run(changed)
    core = _core.ActuatorParams()
    core.enabled = True
    core.dead_time, core.time_constant = a2.dead_time, a2.time_constant
    core.rate_limit, core.max_angle = a2.rate_limit, a2.max_angle
    changed.set_actuator(core, 20)  # 0.01 s of 0.5 ms ticks
    assert changed.actuator.time_constant == 0.12
    np.testing.assert_array_equal(_run(changed), _run(fresh))
    with pytest.raises(ValueError, match="dead_ticks"):
        changed.set_actuator(core, -1)


def _episode(env, seed, steer=0.0):
    obs, info = env.reset(seed=seed)
    rows = [obs]
    done = False
    while not done:
        obs, r, term, trunc, info = env.step(np.array([steer, 0.1], np.float32))
        rows.append(obs)
        done = term or trunc
    return np.array(rows), info


def test_env_core_set_vehicle_updates_the_task_footprint():
    """The path task's footprint (CG to bumpers) comes from the vehicle: a core given a
    long-nosed vehicle hits the cones as a core built with it does."""
    long_nose = dataclasses.replace(BASE, cg_to_front=1.0, cg_to_rear=1.7, front_overhang=2.5)
    fresh = gym.make("VDSim-DLC-v0", vehicle=long_nose, speed=15.0)
    changed = gym.make("VDSim-DLC-v0", speed=15.0)
    plain = gym.make("VDSim-DLC-v0", speed=15.0)
    changed.unwrapped._core.set_vehicle(long_nose.to_core())
    # the DLC's reference line is optimized for the body extent it is built with (the
    # road is fixed at construction): the same course for both
    changed.unwrapped._course = plain.unwrapped._course = fresh.unwrapped._course
    o1, i1 = _episode(fresh, 3)
    o2, i2 = _episode(changed, 3)
    np.testing.assert_array_equal(o1, o2)
    assert repr(i1["episode_summary"]) == repr(i2["episode_summary"])  # NaN pass_speed
    assert i1["outcome"] == "cone_hit"
    # the nominal car (straight on) reaches its first cone later: its nose is shorter
    plain.unwrapped._core.set_vehicle(BASE.to_core())
    o3, _ = _episode(plain, 3)
    assert len(o3) > len(o1)


def test_dyno_core_and_vector_core_setters():
    dyno = gym.make("VDSim-Dyno-v0")
    with pytest.raises(ValueError, match="no vehicle parameters"):
        dyno.unwrapped._core.set_vehicle(BASE.to_core())
    with pytest.raises(ValueError, match="no steering actuator"):
        dyno.unwrapped._core.set_actuator(_core.ActuatorParams(), 0)
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2, threads=1)
    ref = gym.make("VDSim-DLC-v0")
    heavy = dataclasses.replace(BASE, mass=1800.0, yaw_inertia=3000.0)
    vec._session.set_vehicle(1, heavy.to_core())
    assert vec.envs[1]._core.session.vehicle.mass == 1800.0
    assert vec.envs[0]._core.session.vehicle.mass == BASE.mass
    ref.unwrapped._core.set_vehicle(heavy.to_core())
    obs, _ = vec.reset(seed=[0, 7])
    o_ref, _ = ref.reset(seed=7)
    np.testing.assert_array_equal(obs[1], o_ref)
    a = np.array([[0.1, 0.2], [0.1, 0.2]], np.float32)
    for _ in range(20):
        obs, *_ = vec.step(a)
        o_ref, *_ = ref.step(a[1])
    np.testing.assert_array_equal(obs[1], o_ref)
    with pytest.raises(IndexError):
        vec._session.set_vehicle(2, heavy.to_core())
    with pytest.raises(ValueError, match="env 0: its plant has no vehicle"):
        dvec = gym.make_vec("VDSim-Dyno-v0", num_envs=1)
        try:
            dvec._session.set_vehicle(0, heavy.to_core())
        finally:
            dvec.close()
    vec.close()
