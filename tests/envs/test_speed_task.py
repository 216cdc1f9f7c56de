"""A second task on the env core (tests/speed_task_env.py: one longitudinal action on
``_core.SpeedEnvCore``) runs through every generic part unchanged: gym.make and
check_env, the C++ vector env against SyncVectorEnv, the SB3 adapter against
DummyVecEnv, LatencyWrapper against gym.make(latency=...), ClosedLoopEval(env=, policy=)
and eval.sweep. The task's own numbers are checked against a Plant loop and Python
arithmetic."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import speed_task_env
from _helpers import canon
from gymnasium.utils.env_checker import check_env
from test_vector import make_pair, run_pair

from vdsim_gym import LatencyModel, Plant
from vdsim_gym.eval import ClosedLoopEval, sweep
from vdsim_gym.eval.sweeps.report import summary_table
from vdsim_gym.wrappers import LatencyWrapper

ENV_ID = speed_task_env.register_speed_env()
KW = {"time_limit": 2.0}


class SpeedP:
    """A proportional speed controller with SB3's predict, batched."""

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        obs = np.asarray(obs, dtype=np.float32)
        return np.clip(-2.0 * obs[..., 2:3], -1.0, 1.0), state


def test_spec_spaces_and_check_env():
    env = gym.make(ENV_ID, **KW)
    base = env.unwrapped
    assert base.action_names == ("longitudinal",)
    assert env.action_space.shape == (1,) and env.observation_space.shape == (5,)
    assert base.summary_names == ("steps", "return", "time", "rms_speed_error",
                                  "max_abs_speed_error")
    check_env(base)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="NaN"):
        env.step(np.array([np.nan], np.float32))
    with pytest.raises(ValueError, match="longitudinal"):  # names the action columns
        env.step(np.zeros(2, np.float32))
    env.close()


@pytest.mark.parametrize("longitudinal", ["pedal", "force"])
def test_rollout_equals_a_plant_loop_and_python_scoring(longitudinal):
    """The env's plant is the vehicle Session driven straight: the same as a Plant
    stepping (0, command) from the same start, bit for bit; obs, reward and summary as
    the task's formulas give them from the Plant's numbers."""
    env = gym.make(ENV_ID, longitudinal=longitudinal, **KW)
    obs, info = env.reset(seed=3)
    v_set = info["vx"] - info["speed_error"]  # (obs[1] is float32 v_set / 30)
    plant = Plant(level="L2", longitudinal=longitudinal)
    plant.reset({"vx": info["vx"]})
    rng = np.random.default_rng(0)
    prev, errors, ret, k = 0.0, [], 0.0, 0
    while True:
        a = float(rng.uniform(-1.0, 1.0))
        obs, reward, term, trunc, info = env.step(np.array([a], np.float32))
        a = float(np.float32(a))
        command = env.unwrapped._core.session.command
        p_obs = plant.step((0.0, command[1]))
        k += 1
        e = p_obs["vx"] - v_set
        assert info["vx"] == p_obs["vx"] and info["speed_error"] == e
        expected = np.clip([p_obs["vx"] / 30.0, v_set / 30.0, e / 5.0, p_obs["ax"] / 5.0, a],
                           -10.0, 10.0).astype(np.float32)
        np.testing.assert_array_equal(obs, expected)
        assert reward == pytest.approx(-(e / 5.0) ** 2 - 0.05 * (a - prev) ** 2, rel=1e-15)
        prev, ret = a, ret + reward
        errors.append(e)
        if term or trunc:
            break
    assert info["outcome"] == "time_limit" and k == 100
    s = info["episode_summary"]
    assert (s["steps"], s["time"]) == (k, 2.0) and s["return"] == ret
    assert s["rms_speed_error"] == pytest.approx(math.sqrt(np.mean(np.square(errors))),
                                                 rel=1e-12)
    assert s["max_abs_speed_error"] == max(abs(x) for x in errors)
    env.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("lat", [{}, {"latency": LatencyModel.uniform(0.005, 0.05, seed=1),
                                      "overrun": "queue"}], ids=["none", "uniform_q"])
def test_vector_env_matches_sync_vector_env(lat, mode):
    vec, ref = make_pair(ENV_ID, 3, mode, threads=2, time_limit=0.5, **lat)
    assert run_pair(vec, ref, seed=2, steps=80, scale=1.0) >= 3 * 2
    vec.close()
    ref.close()


def test_sb3_adapter_matches_dummy_vec_env():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from vdsim_gym import make_sb3_vec_env

    ours = make_sb3_vec_env(ENV_ID, 2, seed=4, time_limit=0.5)
    ref = DummyVecEnv([lambda: gym.make(ENV_ID, time_limit=0.5) for _ in range(2)])
    ref.seed(4)
    np.testing.assert_array_equal(ours.reset(), ref.reset())
    rng = np.random.default_rng(1)
    for _ in range(60):
        a = rng.uniform(-1, 1, (2, 1)).astype(np.float32)
        (o1, r1, d1, i1), (o2, r2, d2, i2) = ours.step(a), ref.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        for x, y in zip(i1, i2, strict=True):
            assert set(x) == set(y)
            assert canon({k: v for k, v in x.items() if k != "terminal_observation"}) == \
                canon({k: v for k, v in y.items() if k != "terminal_observation"})
    ours.close()
    ref.close()


def test_latency_wrapper_equals_the_latency_kwarg():
    lat = LatencyModel.fixed(0.03)
    wrapped = LatencyWrapper(gym.make(ENV_ID, **KW), latency=lat, action_history=2)
    plain = gym.make(ENV_ID, latency=lat, **KW)
    assert wrapped.obs_names[-2:] == ("action_2_longitudinal", "action_1_longitudinal")
    o1, _ = wrapped.reset(seed=5)
    o2, _ = plain.reset(seed=5)
    np.testing.assert_array_equal(o1[:5], o2)
    for k in range(40):
        a = np.array([0.5 if k % 7 < 3 else -0.4], np.float32)
        (o1, r1, *_, i1), (o2, r2, *_, i2) = wrapped.step(a), plain.step(a)
        np.testing.assert_array_equal(o1[:5], o2)
        assert r1 == r2 and i1["n_overrun"] == i2["n_overrun"] == k + 1
    assert o1[-1] == np.float32(a[0])


def test_closed_loop_eval_env_form():
    res = ClosedLoopEval(env=ENV_ID, env_kwargs=KW, policy=SpeedP(), mode="virtual_async",
                         latency=LatencyModel.fixed(0.01), overrun="skip", seed=2).run()
    assert res.stats["outcome"] == "time_limit"
    assert "u_longitudinal" in res.trace and "speed_error" in res.trace
    summary = res.stats["episode_summary"]
    assert summary["steps"] == len(res.samples["k"]) == 100
    # the P controller closes most of the initial error
    assert abs(res.trace["speed_error"][-1]) < 0.3 * abs(res.trace["speed_error"][0])


def test_sweep_rows_carry_the_task_summary():
    lats = [None, LatencyModel.fixed(0.05)]
    res = sweep(SpeedP(), ENV_ID, latencies=lats, seeds=[0, 1], num_envs=3, progress=False,
                **KW)
    assert res.metrics == ("episode_return", "n_overrun", "time", "rms_speed_error",
                           "max_abs_speed_error")
    for row in res.table:
        env = gym.make(ENV_ID, latency=lats[row.cell], **KW)
        obs, _ = env.reset(seed=row.seed)
        policy, done = SpeedP(), False
        while not done:
            obs, _, term, trunc, info = env.step(policy.predict(obs[None])[0][0])
            done = term or trunc
        s = info["episode_summary"]
        assert (row.steps, row.episode_return, row.end) == (s["steps"], s["return"],
                                                             s["outcome"])
        assert row.rms_speed_error == s["rms_speed_error"] and row.completed is False
        env.close()
    table = summary_table({"p": res})
    assert "speed error RMS [m/s] (95 %)" in table and "fixed 50 ms" in table
