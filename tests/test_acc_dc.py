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
