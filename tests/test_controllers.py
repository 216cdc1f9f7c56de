"""Baselines on a purpose-built observation layout with obvious expected values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym.controllers import LateralLongitudinal, ObsLayout, PISpeed, Stanley

NAMES = ("e_y", "e_psi", "vx", "vy", "r", "v_ref", "kappa_ref")
SCALE = np.array([2.0, 0.5, 30.0, 5.0, 1.0, 30.0, 0.1])
LAYOUT = ObsLayout(NAMES, SCALE)


def obs(**phys: float) -> np.ndarray:
    """A normalized observation from physical values (missing ones are 0)."""
    return np.array([phys.get(n, 0.0) for n in NAMES]) / SCALE


def stanley(**kw) -> Stanley:
    return Stanley(LAYOUT, wheelbase=2.7, cg_to_front=1.2, max_steer=0.6, yaw_damping=0.0, **kw)


def test_stanley_law_matches_formula():
    c = stanley(gain=2.0, soft_speed=1.0, accel_gain=0.004)
    o = obs(e_y=0.4, e_psi=0.05, vx=20.0, kappa_ref=0.01, r=0.2)
    e_front = 0.4 + 1.2 * math.sin(0.05)
    feed_forward = math.atan(2.7 * 0.01) + 0.004 * 20.0**2 * 0.01
    expected = feed_forward - 0.05 - math.atan2(2.0 * e_front, 21.0)
    action, state = c.predict(o)
    assert state is None and action.shape == (1,) and action.dtype == np.float32
    assert action[0] == pytest.approx(expected / 0.6, rel=1e-6)


def test_stanley_steers_back_towards_the_path_and_saturates():
    c = stanley()
    left, _ = c.predict(obs(e_y=1.0, vx=10.0))
    right, _ = c.predict(obs(e_y=-1.0, vx=10.0))
    assert left[0] < 0 < right[0]  # left of the path (e_y > 0) steers right
    big, _ = c.predict(obs(e_psi=1.2, vx=1.0))
    assert big[0] == -1.0


def test_stanley_batch_equals_rows():
    c = stanley()
    rng = np.random.default_rng(0)
    batch = rng.normal(size=(8, len(NAMES)))
    actions, _ = c.predict(batch)
    rows = np.stack([c.predict(row)[0] for row in batch])
    assert actions.shape == (8, 1)
    np.testing.assert_array_equal(actions, rows)


def test_stanley_rejects_wrong_shape_and_missing_column():
    with pytest.raises(ValueError, match=r"shape \(7,\) or \(N, 7\)"):
        stanley().predict(np.zeros(5))
    with pytest.raises(KeyError, match="no column 'e_y'"):
        Stanley(ObsLayout(("vx",), np.ones(1)), wheelbase=2.7, cg_to_front=1.2,
                max_steer=0.6).predict(np.zeros(1))


def test_pi_speed_integrates_and_does_not_wind_up():
    pi = PISpeed(LAYOUT, dt=0.02, kp=0.5, ki=0.1)
    a1, _ = pi.predict(obs(v_ref=20.0, vx=19.0))
    assert a1[0] == pytest.approx(0.5 * 1.0 + 0.1 * 0.02, rel=1e-6)
    for _ in range(500):  # large error: saturated, integral must not grow
        pi.predict(obs(v_ref=30.0, vx=0.0))
    assert pi._integral[0] == pytest.approx(0.02)
    back, _ = pi.predict(obs(v_ref=20.0, vx=20.5))
    assert back[0] < 0.0  # no wound-up integral keeps the throttle open


def test_pi_speed_episode_start_resets_only_flagged_rows():
    pi = PISpeed(LAYOUT, dt=0.1, kp=0.0, ki=1.0)
    batch = np.stack([obs(v_ref=5.0, vx=4.0), obs(v_ref=5.0, vx=3.0)])
    pi.predict(batch)
    pi.predict(batch)
    a, _ = pi.predict(batch, episode_start=np.array([True, False]))
    np.testing.assert_allclose(a[:, 0], [0.1, 0.6], rtol=1e-6)


def test_composite_gives_two_columns():
    comp = LateralLongitudinal(stanley(), PISpeed(LAYOUT, dt=0.02))
    a, _ = comp.predict(obs(e_y=0.5, vx=10.0, v_ref=12.0))
    assert a.shape == (2,) and a[0] < 0 < a[1]
    b, _ = comp.predict(np.zeros((3, len(NAMES))))
    assert b.shape == (3, 2)


@pytest.mark.parametrize("name, env_id", [
    ("stanley", "VDSim-DLC-v0"), ("stanley_dc", "VDSim-PathFollow-v0"),
    ("acc_pid", "VDSim-ACC-v0"), ("acc_pid_dc", "VDSim-ACC-v0"), ("idm", "VDSim-ACC-v0"),
    ("idm_dc", "VDSim-ACC-v0"), ("cycle_follower", "VDSim-Dyno-v0")])
def test_every_registered_baseline_loads_by_name_and_acts(name, env_id):
    """load_controller finds each name in the one registry (policies.BASELINES) that
    `vdsim-gym sweep` also walks; the controller it builds acts on its env's observation.
    A name outside the registry is taken for a model path."""
    import gymnasium as gym

    from vdsim_gym.errors import ConfigError
    from vdsim_gym.policies import BASELINES, load_controller

    assert name in BASELINES
    spec, factory = load_controller(name)
    env = gym.make(env_id)
    obs, _ = env.reset(seed=0)
    action, _ = factory(env).predict(obs, deterministic=True)
    assert spec == name and np.all(np.isfinite(action))
    assert action.shape == env.action_space.shape
    env.close()
    with pytest.raises(ConfigError, match="stanlee"):
        load_controller("stanlee")
