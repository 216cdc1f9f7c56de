"""Plant: timing validation, command checks, reference point, equivalence to the core loop."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import vdsim_gym
from vdsim_gym import Plant, _core
from vdsim_gym.sim.physics_options import make_session
from vdsim_gym.timing import ceil_ticks, whole_ticks


def test_plant_provenance_is_baked_in():
    assert vdsim_gym.__version__ == _core.__version__
    assert re.fullmatch(r"[0-9a-f]{40}|unknown", vdsim_gym.__git_sha__)
    assert vdsim_gym.__git_dirty__ in (True, False, None)


def test_timing_ticks_do_not_drift():
    assert whole_ticks(0.06, 0.0005, "x") == 120  # 0.06 / 0.0005 = 119.99999999999999
    assert ceil_ticks(0.06, 0.0005) == 120
    assert ceil_ticks(0.0601, 0.0005) == 121
    assert whole_ticks(0.02, 5e-4, "x") == 40
    assert all(whole_ticks(k * 0.001, 0.0001, "x") == 10 * k for k in range(1, 2000))


@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"control_period": 0.0203}, r"not a whole multiple of substep_dt.*0\.02"),
        ({"substep_dt": -1e-3}, r"substep_dt must be a positive"),
        ({"substep_dt": float("nan")}, r"substep_dt must be a positive"),
        ({"control_period": 0.0}, r"control_period must be positive"),
        ({"level": "L3"}, r"level must be one of"),
        ({"longitudinal": "acceleration"},
         r"longitudinal must be one of \('force', 'pedal', 'accel'\)"),
        ({"vehicle": "tractor"}, r"unknown vehicle 'tractor'"),
        ({"ref_point": "nose"}, r"ref_point 'nose' unknown"),
        ({"actuator": {"dead_time": 0.0007}}, r"dead_time.*not a whole multiple"),
    ],
)
def test_plant_bad_arguments_name_cause_and_fix(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        Plant(**kwargs)


def test_plant_bad_commands_are_rejected_and_plant_stays_usable():
    p = Plant(longitudinal="pedal")
    p.reset({"vx": 10.0})
    with pytest.raises(ValueError, match="finite"):
        p.step((float("nan"), 0.0))
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        p.step((0.0, 0.0, 0.0))
    with pytest.raises(ValueError, match=r"pedal command 15.0 is beyond 10 x the vehicle's "
                                         r"range \[-1, 1\].*unit slip"):
        p.step((0.0, 15.0))
    assert p.tick == 0
    obs = p.step((0.0, 0.1))
    assert p.tick == 40 and math.isfinite(obs["vx"]) and obs["saturated"] == 0.0
    obs = p.step((0.0, 1.5))  # a real pedal saturates at full throttle
    assert obs["saturated"] == 1.0 and p.n_saturated == 1


@pytest.mark.parametrize("integrator,step_ticks", [("heun", 1), ("semi_implicit", 10)])
def test_plant_step_equals_plain_core_loop_bit_for_bit(integrator, step_ticks):
    """The Plant against a plain loop over a core session: per substep for heun; in
    integration steps of 10 substeps (5 ms, the default's) for semi_implicit."""
    rng = np.random.default_rng(3)
    commands = np.column_stack([rng.uniform(-0.05, 0.05, 50), rng.uniform(-2000, 2000, 50)])
    p = Plant(level="L2", longitudinal="force", integrator=integrator)
    p.reset({"vx": 15.0})
    for c in commands:
        obs = p.step(c)
    session = make_session(
        level="L2", vehicle=p.vehicle, substep_dt=5e-4, longitudinal="force", actuator=None,
        integrator=integrator, step_ticks=step_ticks)
    session.reset(0, 0, 0, 15.0, 0, 0)
    for c in commands:
        session.command_now(*c)
        for _ in range(40 // step_ticks):
            session.advance(step_ticks)
    state = np.zeros(_core.STATE_SIZE)
    session.get_state(state)
    assert (obs["X"], obs["Y"], obs["vx"], obs["r"]) == tuple(state[[0, 1, 3, 5]])


def test_plant_reference_point_follows_rigid_body_kinematics():
    p = Plant(ref_point=[2.0, 0.5], longitudinal="force")
    p.reset({"vx": 15.0})
    for _ in range(30):
        obs = p.step((0.05, 500.0))
    c, s = math.cos(obs["psi"]), math.sin(obs["psi"])
    assert obs["X_ref"] == pytest.approx(obs["X"] + 2.0 * c - 0.5 * s, abs=1e-12)
    assert obs["Y_ref"] == pytest.approx(obs["Y"] + 2.0 * s + 0.5 * c, abs=1e-12)
    assert obs["vx_ref"] == pytest.approx(obs["vx"] - obs["r"] * 0.5, abs=1e-12)
    assert obs["vy_ref"] == pytest.approx(obs["vy"] + obs["r"] * 2.0, abs=1e-12)
    rear = Plant(ref_point="rear_axle")
    rear.reset({"vx": 10.0})
    o = rear.step((0.02, 0.0))
    assert o["vy_ref"] == pytest.approx(o["vy"] - o["r"] * 1.5, abs=1e-12)


def test_plant_realized_steer_and_steering_wheel_angle():
    p = Plant()
    p.reset({"vx": 10.0})
    obs = p.step((0.0123, 0.0))
    assert obs["delta_rw"] == 0.0123  # no actuator: the command in force, bit for bit
    assert obs["delta_sw"] == 0.0123 * 15.0
    no_ratio = Plant(vehicle={"mass": 1500.0})  # a vehicle that states no steering ratio
    no_ratio.reset({"vx": 10.0})
    assert "delta_sw" not in no_ratio.step((0.01, 0.0))


def test_plant_observation_keys_per_level():
    l1 = Plant(level="L1").reset({"vx": 5.0})
    l2 = Plant(level="L2").reset({"vx": 5.0})
    assert {"Fx_F", "Fy_R", "kappa_F"} <= set(l1)
    keys = ("Fx", "Fy", "Fz", "kappa", "alpha")
    assert {f"{k}_{w}" for k in keys for w in ("FL", "FR", "RL", "RR")} <= set(l2)
    assert l2["Fz_FL"] + l2["Fz_FR"] + l2["Fz_RL"] + l2["Fz_RR"] == pytest.approx(1500 * 9.80665)
