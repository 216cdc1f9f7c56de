"""Delay-compensated car following: the prediction law by hand, zero delay = the baseline
bit for bit, the spec registry."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registers the envs)
from vdsim_gym import LatencyModel
from vdsim_gym.controllers import acc_pid, acc_pid_dc, idm_dc
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies import load_controller


def env(**kw):
    return gym.make("VDSim-ACC-v0", control_period=0.1, **kw)


def physical(e, **values):
    u = e.unwrapped
    o = np.zeros(len(u.obs_names))
    for k, v in values.items():
        i = u.obs_names.index(k)
        o[i] = v / u.obs_scale[i]
    return o


def test_the_prediction_is_the_law_by_hand():
    e = env()
    pol = acc_pid_dc(e, delay=0.2)
    v = e.unwrapped.vehicle
    o = physical(e, ego_speed=20.0, gap=30.0, rel_speed=-4.0, lead_present=1.0,
                 prev_accel=-0.5, set_speed=25.0)
    out = pol.prediction(o[None])[0]
    a = -0.5 * v.max_deceleration
    v2 = 20.0 + a * 0.2
    got = dict(zip(e.unwrapped.obs_names, out * e.unwrapped.obs_scale, strict=True))
    assert got["ego_speed"] == pytest.approx(v2)
    assert got["rel_speed"] == pytest.approx(-4.0 - (v2 - 20.0))
    assert got["gap"] == pytest.approx(30.0 - 4.0 * 0.2 - 0.5 * (v2 - 20.0) * 0.2)
    assert got["set_speed"] == pytest.approx(25.0)  # the other columns are kept
    # No lead: the gap and closing speed stay; a stopped car does not roll back.
    o = physical(e, ego_speed=0.5, lead_present=0.0, prev_accel=-1.0)
    got = dict(zip(e.unwrapped.obs_names, pol.prediction(o[None])[0] * e.unwrapped.obs_scale,
                   strict=True))
    assert got["ego_speed"] == 0.0 and got["gap"] == 0.0


@pytest.mark.parametrize("scenario", ["cut_in", "stop_and_go"])
def test_zero_delay_is_the_pid_acc_bit_for_bit(scenario):
    e = env(scenario=scenario)
    a, b = acc_pid(e), acc_pid_dc(e)
    assert b.delay == 0.0
    obs, _ = e.reset(seed=1)
    start, done = True, False
    while not done:
        ua, _ = a.predict(obs, episode_start=np.array([start]))
        ub, _ = b.predict(obs, episode_start=np.array([start]))
        assert np.array_equal(ua, ub)
        obs, _, term, trunc, _ = e.step(ua)
        start, done = False, term or trunc


def test_the_delay_comes_from_the_env_and_the_spec():
    assert acc_pid_dc(env(latency=LatencyModel.fixed(0.2))).delay == pytest.approx(0.2)
    assert idm_dc(env(), delay=0.3).delay == 0.3
    name, factory = load_controller("acc_pid_dc:delay=0.1,emergency_hysteresis=0")
    pol = factory(env())
    assert name.startswith("acc_pid_dc") and pol.delay == 0.1
    assert load_controller("idm_dc")[1](env(latency=LatencyModel.fixed(0.3))).delay == \
        pytest.approx(0.3)
    with pytest.raises(ConfigError, match="unknown parameter"):
        load_controller("acc_pid_dc:nonsense=1")
    with pytest.raises(ConfigError, match="delay must be"):
        load_controller("acc_pid_dc:delay=-1")
    with pytest.raises(ConfigError, match="delay must be"):
        acc_pid_dc(env(), delay=float("inf"))


def reference_gap_prediction(layout, a_max: float, d_max: float, obs: np.ndarray, d):
    """The numpy prediction the core's (vdsim/gap_prediction.hpp) replaced: the slow,
    obviously-correct reference."""
    cols = {n: (layout.index(n), float(layout.scale[layout.index(n)]))
            for n in ("ego_speed", "gap", "rel_speed", "lead_present", "prev_accel")}
    c = {n: obs[:, i] * s for n, (i, s) in cols.items()}
    u = c["prev_accel"]
    a = np.where(u >= 0.0, u * a_max, u * d_max)
    v = c["ego_speed"]
    v2 = np.maximum(v + a * d, 0.0)
    dv = v2 - v
    lead = c["lead_present"] > 0.5
    out = np.array(obs, dtype=float)
    for name, value in (("ego_speed", v2),
                        ("gap", np.where(lead, c["gap"] + c["rel_speed"] * d - 0.5 * dv * d,
                                         c["gap"])),
                        ("rel_speed", np.where(lead, c["rel_speed"] - dv, c["rel_speed"]))):
        i, s = cols[name]
        out[:, i] = value / s
    if not np.isscalar(d):
        out[d == 0.0] = obs[d == 0.0]
    return out


def test_the_core_prediction_is_the_numpy_reference_bit_for_bit():
    """Recorded observations of every scenario family (and their edge rows: no lead, a
    stop, braking in flight) through the core's prediction and the numpy one, for one
    delay and per-row delays (zeros among them)."""
    from vdsim_gym.controllers.base import ObsLayout

    e = env()
    pol, base = acc_pid_dc(e, delay=0.15), acc_pid(e)
    obs_rows = []
    for seed in range(12):
        obs, _ = e.reset(seed=seed)
        start, done = True, False
        while not done and len(obs_rows) < 600 * (seed + 1):
            obs_rows.append(obs)
            act, _ = base.predict(obs, episode_start=np.array([start]))
            obs, _, term, trunc, _ = e.step(act)
            start, done = False, term or trunc
    batch = np.asarray(obs_rows, dtype=float)
    u = e.unwrapped
    layout = ObsLayout.from_env(u)
    v = u.vehicle
    assert (batch[:, u.obs_names.index("lead_present")] == 0).any()
    got = pol.prediction(batch)
    want = reference_gap_prediction(layout, v.max_acceleration, v.max_deceleration, batch, 0.15)
    np.testing.assert_array_equal(got, want)
    d = np.random.default_rng(0).uniform(0.0, 0.3, len(batch))
    d[::7] = 0.0
    pol.set_delays(d)
    np.testing.assert_array_equal(
        pol.prediction(batch),
        reference_gap_prediction(layout, v.max_acceleration, v.max_deceleration, batch, d))
