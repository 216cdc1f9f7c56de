"""The delay-compensating Stanley and its single-track predictor: closed forms, the
plant, Stanley at zero delay, and what the compensation buys under delay."""

from __future__ import annotations

import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registers the envs)
from vdsim_gym import LatencyModel
from vdsim_gym.analysis.handling import understeer_gradient
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.controllers import DelayCompensatedStanley, Stanley, stanley_dc_pi, stanley_pi
from vdsim_gym.controllers.prediction import SingleTrackPredictor, loop_delay
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies import load_controller

STATE = ("e_y", "e_psi", "vx", "vy", "r")


def col(env, obs, name):
    u = env.unwrapped
    i = u.obs_names.index(name)
    return obs[..., i] * u.obs_scale[i]


def test_straight_road_without_slip_is_kinematic():
    # No steer, no slip, no yaw rate on a straight path: e_y grows by vx sin(e_psi) t exactly.
    p = SingleTrackPredictor("generic_sedan")
    x = p.predict(0.3, 0.05, 20.0, 0.0, 0.0, 0.0, 0.0, 0.06)
    assert x[:, 0] == pytest.approx([0.3 + 20.0 * math.sin(0.05) * 0.06, 0.05, 20.0, 0.0, 0.0],
                                    abs=1e-12)


@pytest.mark.parametrize("vx", [10.0, 20.0, 30.0])
def test_steady_yaw_gain_is_the_linear_bicycle_one(vx):
    # A small held steer settles to r = vx delta / (L + K vx^2), K the vehicle's linear
    # understeer gradient from its tires (analysis.handling, independent of the predictor).
    p = SingleTrackPredictor("generic_sedan")
    delta = 1e-3
    x = p.predict(0.0, 0.0, vx, 0.0, 0.0, delta, 0.0, 4.0)
    v = p.vehicle
    expected = vx * delta / (v.wheelbase + understeer_gradient(v, 0.0) * vx**2)
    assert x[4, 0] == pytest.approx(expected, rel=2e-3)


def test_prediction_matches_the_plant_under_a_held_steer():
    # From states of a Stanley run on ISO 3888-1, the L2 plant is stepped 40 ms with the
    # steer held; the prediction lands at least 5 times closer than the unpredicted state
    # (measured: e_y 20-40 times, the rest 7-12 times; the path's curvature, held by the
    # prediction, changes along the 0.8 m driven).
    def env_at(k, actions):
        env = gym.make("VDSim-DLC-v0", terminate_on_cone=False)
        obs, _ = env.reset(seed=0)
        for a in actions[:k]:
            obs, *_ = env.step(a)
        return env, obs

    env = gym.make("VDSim-DLC-v0", terminate_on_cone=False)
    pol = stanley_pi(env)
    obs, _ = env.reset(seed=0)
    actions = []
    for _ in range(200):
        a, _ = pol.predict(obs)
        actions.append(a)
        obs, *_ = env.step(a)
    pred = SingleTrackPredictor(env.unwrapped.vehicle)
    worst_pred, worst_none = np.zeros(5), np.zeros(5)
    for k in (60, 100, 130, 160, 190):  # through the lane change's turns
        e, o0 = env_at(k, actions)
        hold = actions[k]
        o2 = o0
        for _ in range(2):
            o2, *_ = e.step(hold)
        x = pred.predict(*(col(e, o0, n) for n in STATE), hold[0] * pred.vehicle.max_steer,
                         col(e, o0, "kappa_ref"), 0.04)[:, 0]
        true = np.array([col(e, o2, n) for n in STATE])
        now = np.array([col(e, o0, n) for n in STATE])
        worst_pred = np.maximum(worst_pred, np.abs(x - true))
        worst_none = np.maximum(worst_none, np.abs(now - true))
    for i in (0, 1, 3, 4):  # e_y, e_psi, vy, r (vx is held by both)
        assert worst_pred[i] < worst_none[i] / 5, (STATE[i], worst_pred[i], worst_none[i])


def test_zero_delay_is_stanley_bit_for_bit():
    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30")
    a, b = stanley_pi(env), stanley_dc_pi(env)
    assert b.lateral.delay == 0.0
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        ua, _ = a.predict(obs)
        ub, _ = b.predict(obs)
        assert np.array_equal(ua, ub) and ua.dtype == ub.dtype
        obs, _, term, trunc, _ = env.step(ua)
        done = term or trunc


def test_the_delay_comes_from_the_env():
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.04),
                   obs_delay=LatencyModel.fixed(0.01), channel_delays={"steer": 0.005})
    assert loop_delay(env) == pytest.approx(0.055)
    assert loop_delay(env, steer=False) == pytest.approx(0.05)
    assert DelayCompensatedStanley.from_env(env).delay == pytest.approx(0.055)
    assert DelayCompensatedStanley.from_env(env, delay=0.02).delay == 0.02
    assert loop_delay(gym.make("VDSim-DLC-v0",
                               latency=LatencyModel.uniform(0.0, 0.04, seed=1))) == \
        pytest.approx(0.02)
    with pytest.raises(ConfigError, match="delay=<seconds>"):
        loop_delay(gym.make("VDSim-DLC-v0", latency=LatencyModel.measured()))
    with pytest.raises(ConfigError, match="delay must be"):
        DelayCompensatedStanley.from_env(env, delay=-0.01)
    with pytest.raises(ConfigError, match="delay must be"):
        DelayCompensatedStanley.from_env(env, delay=float("nan"))


def test_single_and_batch_agree_and_shapes_match_stanley():
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.04))
    c = DelayCompensatedStanley.from_env(env)
    s = Stanley.from_env(env)
    obs = np.stack([env.reset(seed=i)[0] for i in range(4)])
    batch, _ = c.predict(obs)
    single = np.stack([c.predict(o)[0] for o in obs])
    assert batch.shape == s.predict(obs)[0].shape and batch.dtype == np.float32
    assert np.array_equal(batch, single)
    with pytest.raises(ConfigError, match="shape"):
        c.predict(obs[:, :5])


def test_compensation_pays_under_delay():
    # ISO 3888-1 at 20 m/s, 40 and 60 ms of computation delay (skip), 4 seeds: plain
    # Stanley's error more than doubles at 40 ms and it hits cones at 60 ms; compensated,
    # it tracks closer than plain Stanley at 40 ms by a third at least and passes at 60 ms.
    def run(make, d):
        env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(d), terminate_on_cone=False)
        pol = make(env)
        rmse, cones = [], 0
        for seed in range(4):
            obs, _ = env.reset(seed=seed)
            ey, done = [], False
            while not done:
                a, _ = pol.predict(obs)
                obs, _, term, trunc, info = env.step(a)
                ey.append(info["e_y"])
                done = term or trunc
            rmse.append(math.sqrt(np.mean(np.square(ey))))
            cones += info["cone_hits"]
        return float(np.mean(rmse)), cones

    plain40, _ = run(stanley_pi, 0.04)
    comp40, cones40 = run(stanley_dc_pi, 0.04)
    _, plain_cones60 = run(stanley_pi, 0.06)
    comp60, cones60 = run(stanley_dc_pi, 0.06)
    assert comp40 < 0.67 * plain40 and cones40 == 0
    assert plain_cones60 > 0 and cones60 == 0 and comp60 < 0.04


def test_spec_registry():
    name, factory = load_controller("stanley_dc:delay=0.03,gain=6,kp=0.4")
    env = gym.make("VDSim-DLC-v0")
    pol = factory(env)
    assert name == "stanley_dc:delay=0.03,gain=6,kp=0.4"
    assert pol.lateral.delay == 0.03 and pol.lateral.stanley.gain == 6.0
    assert pol.longitudinal.kp == 0.4
    with pytest.raises(ConfigError, match="delay"):
        load_controller("stanley_dc:nonsense=1")
    with pytest.raises(ConfigError, match="delay must be >= 0"):
        load_controller("stanley_dc:delay=-1")
    with pytest.raises(ConfigError, match="unexpected keyword|got an unexpected"):
        load_controller("stanley:delay=0.03")  # plain Stanley has no delay


def _reference_steps(p, horizon, vx):
    """A row's RK4 steps: the fewest equal ones of at most max_step and of at most 1.5
    over an upper bound of the model's fastest rate at the speed floor u (the slips'
    relaxation u / sigma; the linear single track's lateral and yaw damping
    (Cf + Cr) / (m u) + (a^2 Cf + b^2 Cr) / (Iz u))."""
    if not horizon > 0.0:
        return 0
    v = p.vehicle
    cf, cr = p.axles[0].stiffness, p.axles[1].stiffness
    u = max(abs(vx), 1.0)
    lateral = ((cf + cr) / v.mass + (v.cg_to_front * v.cg_to_front * cf
                                     + v.cg_to_rear * v.cg_to_rear * cr) / v.yaw_inertia) / u
    rate = max(u / p.sigma, lateral) if p.sigma > 0.0 else lateral
    return max(1, math.ceil(horizon / min(p.max_step, 1.5 / rate) - 1e-9))


def _reference_predict(p, e_y, e_psi, vx, vy, r, delta, kappa, horizon):
    """SingleTrackPredictor.predict in numpy, operation for operation as the core's
    (vdsim/single_track.hpp), a row at a time with its own steps: the slow,
    obviously-correct reference."""
    v, min_speed = p.vehicle, 1.0

    def force(axle, t):
        bt = axle.stiffness / (axle.peak * axle.shape) * t
        return -axle.peak * np.sin(axle.shape * np.arctan(bt - axle.curvature
                                                          * (bt - np.arctan(bt))))

    def slips(vx, vy, r, delta):
        u = np.maximum(vx, min_speed)
        vyf = vy + v.cg_to_front * r
        c, s = np.cos(delta), np.sin(delta)
        return (vyf * c - u * s) / (u * c + vyf * s), (vy - v.cg_to_rear * r) / u

    def deriv(x, delta, kappa):
        e_y, e_psi, vx, vy, r, tf, tr = x
        kf, kr = slips(vx, vy, r, delta)
        if p.sigma > 0.0:
            lam = np.maximum(np.abs(vx), min_speed) / p.sigma
            dtf, dtr = lam * (kf - tf), lam * (kr - tr)
        else:
            tf, tr = kf, kr
            dtf = dtr = np.zeros_like(vx)
        fyf = force(p.axles[0], tf) * np.cos(delta)
        fyr = force(p.axles[1], tr)
        s_dot = (vx * np.cos(e_psi) - vy * np.sin(e_psi)) / (1.0 - kappa * e_y)
        return np.stack([vx * np.sin(e_psi) + vy * np.cos(e_psi), r - kappa * s_dot,
                         np.zeros_like(vx), (fyf + fyr) / v.mass - vx * r,
                         (v.cg_to_front * fyf - v.cg_to_rear * fyr) / v.yaw_inertia,
                         dtf, dtr])

    cols = np.broadcast_arrays(*(np.atleast_1d(np.asarray(c, float)) for c in
                                 (e_y, e_psi, vx, vy, r, delta, kappa, horizon)))
    out = np.empty((5, len(cols[0])))
    for i in range(len(cols[0])):
        e_y, e_psi, vx, vy, r, delta, kappa, horizon = (c[i:i + 1] for c in cols)
        x = np.stack([e_y, e_psi, vx, vy, r, *slips(vx, vy, r, delta)])
        n = _reference_steps(p, float(horizon[0]), float(vx[0]))
        h = horizon / n if n else 0.0
        for _ in range(n):
            k1 = deriv(x, delta, kappa)
            k2 = deriv(x + 0.5 * h * k1, delta, kappa)
            k3 = deriv(x + 0.5 * h * k2, delta, kappa)
            k4 = deriv(x + h * k3, delta, kappa)
            x = x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        out[:, i] = x[:5, 0]
    return out


@pytest.mark.parametrize("relaxation", [True, False])
def test_the_cores_predictor_is_the_numpy_model_on_recorded_observations(relaxation):
    """The core's single-track predictor (vdsim/single_track.hpp) against the numpy
    reference above, within 1e-12, on observations of a Stanley run on ISO 3888-1 pushed
    to the tires' limit (steer and yaw rate scaled), one horizon for all rows and one per
    row (0 included), over 10-200 ms."""
    env = gym.make("VDSim-DLC-v0")
    ctl = stanley_pi(env)
    obs, _ = env.reset(seed=0)
    rows = []
    for _ in range(300):
        a = ctl.predict(obs)[0]
        rows.append(obs)
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    rows = np.array(rows)
    e_y, e_psi, vx, vy, r = (col(env, rows, n) for n in STATE)
    delta = col(env, rows, "prev_steer") * env.unwrapped.vehicle.max_steer * 3.0
    kappa = col(env, rows, "kappa_ref")
    p = SingleTrackPredictor(env.unwrapped.vehicle, relaxation=relaxation)
    rng = np.random.default_rng(0)
    per_row = rng.uniform(0.0, 0.2, len(rows))
    per_row[::7] = 0.0
    for horizon in (0.01, 0.04, 0.2, per_row, 0.0):
        got = p.predict(e_y, e_psi, vx, vy * 3.0, r * 3.0, delta, kappa, horizon)
        want = _reference_predict(p, e_y, e_psi, vx, vy * 3.0, r * 3.0, delta, kappa,
                                  horizon)
        assert got.shape == want.shape == (5, len(rows))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    single = p.predict(e_y[5], e_psi[5], vx[5], vy[5], r[5], delta[5], kappa[5], 0.04)
    np.testing.assert_allclose(single[:, 0], _reference_predict(
        p, e_y[5], e_psi[5], vx[5], vy[5], r[5], delta[5], kappa[5], 0.04)[:, 0],
        rtol=1e-12, atol=1e-12)


def test_the_predictor_copies_and_pickles():
    import copy
    import pickle

    p = SingleTrackPredictor("generic_sedan")
    want = p.predict(0.1, 0.02, 20.0, 0.3, 0.1, 0.05, 0.01, 0.04)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert np.array_equal(q.predict(0.1, 0.02, 20.0, 0.3, 0.1, 0.05, 0.01, 0.04), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_predicted_observation_is_the_numpy_rewrite(dtype):
    """PredictedObservation's one core call against the numpy rewrite it replaced (the
    columns in the batch's dtype times their scales, the reference prediction, the batch
    as float64 with the five columns over their scales; rows without delay as they were),
    within 1e-12, for one delay and per-row delays."""
    from vdsim_gym.controllers.prediction import PredictedObservation

    env = gym.make("VDSim-DLC-v0")
    ctl = stanley_pi(env)
    obs, _ = env.reset(seed=1)
    rows = []
    for _ in range(200):
        rows.append(obs)
        obs, _, term, trunc, _ = env.step(ctl.predict(obs)[0])
        if term or trunc:
            break
    batch = np.array(rows, dtype=dtype)
    pred = PredictedObservation(Stanley.from_env(env).layout, env.unwrapped.vehicle, 0.04)
    per_row = np.random.default_rng(1).uniform(0.0, 0.1, len(batch))
    per_row[::5] = 0.0
    for d in (0.04, per_row):
        pred.set_delays(None if np.isscalar(d) else d)
        got = pred(batch)
        c = {n: batch[:, i] * s for n, (i, s) in pred._cols.items()}
        x = _reference_predict(pred.predictor, c["e_y"], c["e_psi"], c["vx"], c["vy"],
                               c["r"], c["prev_steer"] * pred.predictor.vehicle.max_steer,
                               c["kappa_ref"], d)
        want = np.array(batch, dtype=float)
        for k, name in enumerate(STATE):
            i, s = pred._cols[name]
            want[:, i] = x[k] / s
        if not np.isscalar(d):
            want[d == 0.0] = batch[d == 0.0]
        assert got.dtype == np.float64 and got.shape == batch.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        if not np.isscalar(d):
            assert np.array_equal(got[d == 0.0], batch[d == 0.0].astype(float))


def test_each_rows_steps_follow_its_speed_and_horizon():
    """The core's step rule is the reference's, on speeds where max_step binds and where
    the model's fastest rate does (the relaxation at high speed, the lateral and yaw
    damping at a crawl), with and without the relaxation length."""
    bound = 0
    for relaxation in (True, False):
        p = SingleTrackPredictor("generic_sedan", relaxation=relaxation)
        for vx in (0.0, 0.5, 1.5, 5.0, 20.0, 35.0, 60.0, -8.0):
            for horizon in (0.0, 0.001, 0.04, 0.06, 0.2):
                n = p.steps(horizon, vx)
                assert n == _reference_steps(p, horizon, vx), (relaxation, vx, horizon)
                bound += n > math.ceil(horizon / p.max_step - 1e-9)
    assert bound > 0  # the rate bound shortened some steps


def test_a_horizon_that_is_not_finite_seconds_is_refused():
    p = SingleTrackPredictor("generic_sedan")
    for bad in (math.inf, math.nan, -0.01):
        with pytest.raises(ConfigError, match="horizon must be finite"):
            p.predict(0.0, 0.0, 20.0, 0.0, 0.0, 0.0, 0.0, bad)
    with pytest.raises(ValueError, match="too many steps"):  # the core's own guard
        p.kernel().predict(np.array([[0.0]] * 7 + [[1e15]]), p.max_step)
    with pytest.raises(ValueError, match="too many steps"):
        p.steps(1e15, 20.0)


def test_the_rate_bound_keeps_fast_tires_stable():
    """A tire with a short relaxation length at 60 m/s relaxes at 1,200 /s: fixed 20 ms
    RK4 steps (z = -24) would diverge; the row's own steps stay within 1e-6 of 0.1 ms
    ones."""
    v = load_vehicle("generic_sedan")
    v = dataclasses.replace(v, tire=dataclasses.replace(v.tire, relaxation_length=0.05))
    state = (0.2, 0.02, 60.0, 0.4, 0.05, 0.01, 0.002)
    fine = SingleTrackPredictor(v, max_step=1e-4).predict(*state, 0.1)
    coarse = SingleTrackPredictor(v)
    assert coarse.steps(0.1, 60.0) > 5  # not the 5 steps of 20 ms
    np.testing.assert_allclose(coarse.predict(*state, 0.1), fine, rtol=0, atol=1e-6)


@pytest.mark.parametrize("env_id", ["VDSim-DLC-v0", "VDSim-PathFollow-v0"])
def test_the_coarse_predictor_keeps_the_fine_ones_task_metrics(env_id):
    """The compensating Stanley with the default predictor (steps of up to 20 ms) against
    0.5 ms steps, closed loop over 20-100 ms of delay: each episode's RMS and maximum
    lateral error within 1e-4 relative (measured against 2.5 ms steps over 320 episodes:
    at most 5e-5), the same steps and cone hits."""
    import functools

    from vdsim_gym.config.delays import parse_delays
    from vdsim_gym.eval import sweep

    runs = [sweep(functools.partial(stanley_dc_pi, predictor=kw), env_id,
                  latencies=parse_delays("20,60,100ms"), seeds=3, progress=False).columns()
            for kw in (None, {"max_step": 5e-4})]
    for key in ("steps", "cone_hits"):
        assert runs[0][key] == runs[1][key]
    for key in ("rms_e_y", "max_abs_e_y"):
        np.testing.assert_allclose(runs[0][key], runs[1][key], rtol=1e-4)
