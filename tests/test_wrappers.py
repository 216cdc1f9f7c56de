"""LatencyWrapper: same core implementation as the kwargs, action history, checkers."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from _helpers import canon
from gymnasium.utils.env_checker import check_env as gym_check_env

from vdsim_gym import LatencyModel
from vdsim_gym.envs.path_env import OBS_NAMES
from vdsim_gym.wrappers import LatencyWrapper


def rollout(env: gym.Env, seed: int, n: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out: list[tuple] = [(obs,)]
    for _ in range(n):
        step = env.step(rng.uniform(-0.4, 0.4, 2).astype(np.float32))
        out.append(step)
        if step[2] or step[3]:
            out.append(env.reset()[:1])
    return out


def assert_same(a: list[tuple], b: list[tuple]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        assert canon(x[1:]) == canon(y[1:])


@pytest.mark.parametrize("overrun", ["skip", "queue"])
def test_wrapper_equals_kwargs_bit_for_bit(overrun: str) -> None:
    model = LatencyModel.uniform(0.005, 0.045, seed=9)
    kwargs_env = gym.make("VDSim-DLC-v0", latency=model, overrun=overrun)
    wrapped = LatencyWrapper(gym.make("VDSim-DLC-v0"), latency=model, overrun=overrun)
    a, b = rollout(kwargs_env, 4, 120), rollout(wrapped, 4, 120)
    assert_same(a, b)
    assert any(step[4]["overrun"] for step in a if len(step) > 1)
    assert wrapped.unwrapped.latency == model and wrapped.latency == model
    assert wrapped.unwrapped.overrun == wrapped.overrun == overrun


def test_wrapper_overrides_kwargs_latency() -> None:
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.05), overrun="queue")
    wrapped = LatencyWrapper(env, LatencyModel.fixed(0.0), overrun="skip")
    assert_same(rollout(wrapped, 1, 30), rollout(
        gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.0)), 1, 30))


def test_wrapper_action_history_columns_are_the_previous_actions() -> None:
    k = 3
    env = LatencyWrapper(gym.make("VDSim-DLC-v0"), LatencyModel.fixed(0.01), action_history=k)
    base_n = len(OBS_NAMES)
    assert env.observation_space.shape == (base_n + 2 * k,)
    assert env.obs_names[:base_n] == OBS_NAMES
    assert env.obs_names[base_n:] == (
        "action_3_steer", "action_3_longitudinal", "action_2_steer", "action_2_longitudinal",
        "action_1_steer", "action_1_longitudinal")
    np.testing.assert_array_equal(env.observation_space.low[base_n:], -1.0)
    np.testing.assert_array_equal(env.observation_space.high[base_n:], 1.0)
    obs, _ = env.reset(seed=0)
    np.testing.assert_array_equal(obs[base_n:], 0.0)
    rng = np.random.default_rng(0)
    actions = []
    for _ in range(5):
        a = rng.uniform(-0.5, 0.5, 2).astype(np.float32)
        obs, *_ = env.step(a)
        actions.append(a)
        hist = ([np.zeros(2, np.float32)] * k + actions)[-k:]  # oldest first
        np.testing.assert_array_equal(obs[base_n:], np.concatenate(hist))
        assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    obs, _ = env.reset()
    np.testing.assert_array_equal(obs[base_n:], 0.0)
    # The base columns are the unwrapped env's (prev_steer is the last action too).
    assert obs[base_n - 7] == 0.0


def test_wrapper_without_history_keeps_the_observation() -> None:
    env = LatencyWrapper(gym.make("VDSim-DLC-v0"), LatencyModel.fixed(0.01))
    assert env.observation_space == env.env.observation_space
    assert env.obs_names == OBS_NAMES


@pytest.mark.parametrize("history", [0, 2])
def test_wrapper_passes_gymnasium_and_sb3_checkers(history: int) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    model = LatencyModel.uniform(0.0, 0.05, seed=1)
    # The bare env and gym.make's stack (TimeLimit, OrderEnforcing, PassiveEnvChecker).
    for inner, overrun in ((gym.make("VDSim-DLC-v0").unwrapped, "skip"),
                           (gym.make("VDSim-DLC-v0"), "queue")):
        env = LatencyWrapper(inner, model, overrun=overrun, action_history=history)
        with warnings.catch_warnings():
            # gymnasium notes that the env is wrapped; checking the wrapper is the point.
            warnings.filterwarnings("ignore", message=".*is different from the unwrapped")
            gym_check_env(env, skip_render_check=True)
            sb3_check_env(env, warn=True)


def test_wrapper_set_next_delay_forwards_for_measured() -> None:
    env = LatencyWrapper(gym.make("VDSim-DLC-v0"), LatencyModel.measured(), action_history=1)
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match="set_next_delay"):
        env.step(np.zeros(2, np.float32))
    env.set_next_delay(0.012)
    obs, _, _, _, info = env.step(np.array([0.1, 0.0], np.float32))
    assert info["c_k"] == 0.012 and obs[-2] == np.float32(0.1)


def test_wrapper_rejects_non_vdsim_env() -> None:
    with pytest.raises(TypeError, match="supports the VDSim envs.*CartPoleEnv"):
        LatencyWrapper(gym.make("CartPole-v1"), LatencyModel.fixed(0.01))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"latency": 0.01}, r"latency=LatencyModel.fixed\(0.01\)"),
        ({"latency": None}, r"latency must be a LatencyModel, e.g. LatencyModel.fixed"),
        ({"latency": LatencyModel.fixed(0.01), "overrun": "later"}, "overrun must be one of"),
        ({"latency": LatencyModel.fixed(0.01), "action_history": -1}, "action_history must"),
        ({"latency": LatencyModel.fixed(0.01), "action_history": 1.5}, "action_history must"),
    ],
)
def test_wrapper_bad_inputs_raise_naming_the_fix(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LatencyWrapper(gym.make("VDSim-DLC-v0"), **kwargs)
