"""The MPC baseline: the condensed QP against hand-solved cases, its constraints, the exact
discretization, the single-track model's steady state, and the tracker in closed loop."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registers the envs)
from vdsim_gym import LatencyModel
from vdsim_gym.analysis.handling import understeer_gradient
from vdsim_gym.controllers import MPCSteer, mpc_pi, stanley_dc_pi
from vdsim_gym.controllers.mpc import CondensedMPC, discretize
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies import load_controller

pytest.importorskip("osqp")

INTEGRATOR = dict(a=[[1.0]], b=[[1.0]], w=[0.0])  # z+ = z + u


def solve(n_steps, z0, ref, *, r=0.0, s=0.0, u_prev=0.0, u_min=-1e3, u_max=1e3, du=1e3):
    mpc = CondensedMPC(n_steps)
    return mpc.solve(z0=[z0], ref=np.full((n_steps, 1), ref), q=[[1.0]], r=[[r]], s=[[s]],
                     u_prev=[u_prev], u_min=u_min, u_max=u_max, du_max=du,
                     **INTEGRATOR).u[:, 0]


@pytest.mark.parametrize("z0, ref, r", [(0.0, 1.0, 0.0), (0.3, -0.5, 0.5), (2.0, 2.0, 3.0)])
def test_one_step_is_the_hand_solved_minimum(z0, ref, r):
    # min (z0 + u - ref)^2 + r u^2: u = (ref - z0) / (1 + r).
    assert solve(1, z0, ref, r=r)[0] == pytest.approx((ref - z0) / (1.0 + r), abs=1e-6)


@pytest.mark.parametrize("z0, ref, s, up", [(0.0, 1.0, 0.5, 0.0), (1.0, -1.0, 2.0, 0.4)])
def test_two_steps_with_a_rate_weight_are_hand_solved(z0, ref, s, up):
    # cost (z1 - ref)^2 + (z2 - ref)^2 + s (u0 - up)^2 + s (u1 - u0)^2, z1 = z0 + u0,
    # z2 = z1 + u1; setting both derivatives to zero:
    #   (2 + 2 s) u0 + (1 - s) u1 = 2 (ref - z0) + s up
    #   (1 - s) u0 + (1 + s) u1 = ref - z0
    a11, a12, b1 = 2 + 2 * s, 1 - s, 2 * (ref - z0) + s * up
    a21, a22, b2 = 1 - s, 1 + s, ref - z0
    det = a11 * a22 - a12 * a21
    u0, u1 = (b1 * a22 - a12 * b2) / det, (a11 * b2 - a21 * b1) / det
    assert solve(2, z0, ref, s=s, u_prev=up) == pytest.approx([u0, u1], abs=1e-6)


def test_bounds_and_rate_limits_hold_at_the_optimum():
    # One step: the constrained optimum of a convex scalar cost is the clipped one.
    assert solve(1, 0.0, 1.0, u_max=0.4)[0] == pytest.approx(0.4, abs=1e-6)
    assert solve(1, 0.0, -1.0, u_min=-0.25)[0] == pytest.approx(-0.25, abs=1e-6)
    assert solve(1, 0.0, 1.0, u_prev=0.1, du=0.2)[0] == pytest.approx(0.3, abs=1e-6)
    # Many steps: every input and change within its bound, the bound reached.
    u = solve(20, 0.0, 5.0, u_prev=0.0, u_max=0.5, du=0.1)
    assert u.max() <= 0.5 + 1e-6 and np.abs(np.diff(np.r_[0.0, u])).max() <= 0.1 + 1e-6
    assert u.max() == pytest.approx(0.5, abs=1e-5) and u[0] == pytest.approx(0.1, abs=1e-5)


def test_a_plan_that_cannot_be_met_is_an_error():
    # u_prev outside [u_min - du, u_max + du]: no first input satisfies both bounds.
    with pytest.raises(ConfigError, match="not solved"):
        solve(3, 0.0, 1.0, u_prev=5.0, u_max=1.0, du=0.1)


def test_discretization_is_exact_for_a_double_integrator():
    dt = 0.05
    ad, bd, wd = discretize(np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([[0.0], [1.0]]),
                            np.array([0.0, 2.0]), dt)
    assert ad == pytest.approx(np.array([[1.0, dt], [0.0, 1.0]]), abs=1e-14)
    assert bd[:, 0] == pytest.approx([dt**2 / 2, dt], abs=1e-14)
    assert wd == pytest.approx([2.0 * dt**2 / 2, 2.0 * dt], abs=1e-14)


@pytest.mark.parametrize("vx", [10.0, 20.0, 30.0])
def test_the_model_steers_like_the_linear_bicycle(vx):
    # The steady state of (vy, r) under a held steer: r / delta = vx / (L + K vx^2), K the
    # vehicle's linear understeer gradient (analysis.handling, from the tires).
    env = gym.make("VDSim-DLC-v0")
    mpc = MPCSteer.from_env(env)
    a, b = mpc.model(vx)
    vy_r = np.linalg.solve(a[2:, 2:], -b[2:, 0])
    v = mpc.vehicle
    assert vy_r[1] == pytest.approx(vx / (v.wheelbase + understeer_gradient(v, 0.0) * vx**2),
                                    rel=1e-9)


def test_tracks_iso3888_closer_than_delay_compensated_stanley_at_every_delay():
    # 2 seeds, 0, 40 and 80 ms: no cone, and closer to the line than stanley_dc.
    def run(make, d):
        env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(d) if d else None)
        pol = make(env)
        rmse, cones = [], 0
        for seed in range(2):
            obs, _ = env.reset(seed=seed)
            ey, done, first = [], False, True
            while not done:
                a, _ = pol.predict(obs, episode_start=np.array([first]))
                obs, _, term, trunc, info = env.step(a)
                ey.append(info["e_y"])
                done, first = term or trunc, False
            rmse.append(math.sqrt(np.mean(np.square(ey))))
            cones += info["cone_hits"]
        return float(np.mean(rmse)), cones, pol

    for d in (0.0, 0.04, 0.08):
        e_mpc, c_mpc, pol = run(mpc_pi, d)
        e_dc, _, _ = run(stanley_dc_pi, d)
        assert c_mpc == 0 and e_mpc < 0.8 * e_dc, (d, e_mpc, e_dc)
        stats = pol.lateral.solve_time_stats()
        assert stats["n"] > 200 and stats["max_s"] > 0.0  # one solve per env step
        assert set(pol.lateral.statuses) == {"solved"}


def test_batch_rows_plan_on_their_own():
    env = gym.make("VDSim-DLC-v0")
    obs = np.stack([env.reset(seed=i)[0] for i in range(3)])
    batch, _ = mpc_pi(env).lateral.predict(obs)
    for i in range(3):
        one, _ = mpc_pi(env).lateral.predict(obs[i])
        assert one.shape == (1,) and one[0] == pytest.approx(batch[i, 0], abs=1e-6)


def test_spec_and_bad_parameters():
    name, factory = load_controller("mpc:horizon=20,q_psi=2,kp=0.4,delay=0.02")
    pol = factory(gym.make("VDSim-DLC-v0"))
    assert pol.lateral.horizon == 20 and pol.lateral.delay == 0.02
    assert pol.longitudinal.kp == 0.4
    with pytest.raises(ConfigError, match="unknown parameter 'nonsense'"):
        load_controller("mpc:nonsense=1")
    with pytest.raises(ConfigError, match="horizon"):
        load_controller("mpc:horizon=2.5")
    env = gym.make("VDSim-DLC-v0")
    for bad in (dict(dt=0.0), dict(q_y=-1.0), dict(max_steer_rate=float("nan")),
                dict(q_y=0.0, q_psi=0.0)):
        with pytest.raises(ConfigError):
            MPCSteer.from_env(env, **bad)
    with pytest.raises(ConfigError, match="preview"):
        MPCSteer.from_env(gym.make("VDSim-ACC-v0"))


def test_without_osqp_the_error_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def fake(name, *args, **kwargs):
        if name == "osqp":
            raise ImportError("no osqp")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake)
    with pytest.raises(ImportError, match=r"vdsim-gym\[mpc\]"):
        MPCSteer.from_env(gym.make("VDSim-DLC-v0"))


def test_per_row_delays_plan_as_that_delay_and_copies_work():
    import copy
    import pickle

    env = gym.make("VDSim-DLC-v0")
    obs = np.stack([env.reset(seed=i)[0] for i in range(2)])
    obs[:, 9] = [0.05, -0.05]  # prev_steer: the steer in flight matters with a delay
    lat = mpc_pi(env).lateral
    assert lat.follows_env and not mpc_pi(env, delay=0.01).lateral.follows_env
    lat.set_delays([0.0, 0.06])
    batch, _ = lat.predict(obs)
    for i, d in enumerate((0.0, 0.06)):
        one, _ = mpc_pi(env, delay=d).lateral.predict(obs[i])
        assert one[0] == pytest.approx(batch[i, 0], abs=1e-6)
    twin = copy.deepcopy(lat)  # OSQP's workspace is not copied: the copy starts cold
    assert twin.predict(obs)[0] == pytest.approx(lat.predict(obs)[0], abs=1e-6)
    pickle.loads(pickle.dumps(lat))
    with pytest.raises(ConfigError, match="delays"):
        lat.set_delays([0.0, float("nan")])


def test_the_reference_spline_is_scipys():
    from scipy.interpolate import CubicSpline

    from vdsim_gym.controllers.mpc import _interp_line

    xs = np.array([-0.02, 5.0, 10.0, 20.0, 30.0])
    ys = np.array([0.01, 0.05, 0.4, 1.8, 3.4])
    x = np.linspace(0.5, 29.5, 40)
    y, psi = _interp_line(x, xs, ys, 0.02)
    ref = CubicSpline(xs, ys, bc_type=((1, 0.02), (2, 0.0)))
    np.testing.assert_allclose(y, ref(x), atol=1e-12)
    np.testing.assert_allclose(psi, np.arctan(ref(x, 1)), atol=1e-12)
    beyond, _ = _interp_line(np.array([40.0]), xs, ys, 0.02)  # straight past the preview
    assert beyond[0] == pytest.approx(ys[-1] + 10.0 * ref(30.0, 1), abs=1e-12)


def test_a_non_finite_observation_is_named():
    env = gym.make("VDSim-DLC-v0")
    obs, _ = env.reset(seed=0)
    obs = obs.copy()
    obs[0] = np.nan
    with pytest.raises(ConfigError, match=r"not finite in \['e_y'\]"):
        mpc_pi(env).predict(obs)
