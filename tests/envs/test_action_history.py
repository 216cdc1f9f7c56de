"""``action_history=k``: the last k actions appended to the observation by the env core,
with LatencyWrapper's semantics and column names, in the single env, the wrapper, the
vector env and the SB3 adapter."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from _helpers import canon
from test_vector import make_pair, run_pair

from vdsim_gym import LatencyModel
from vdsim_gym.wrappers import LatencyWrapper

SHORT = {"course_length": 40.0}


class _Reference:
    """LatencyWrapper's history as it was written in numpy before the core did it: k
    actions, clipped, float32, oldest first, zeros after reset, shifted after every step
    the env accepted."""

    def __init__(self, k: int, m: int) -> None:
        self.h = np.zeros((k, m), np.float32)

    def reset(self, obs: np.ndarray) -> np.ndarray:
        self.h[:] = 0.0
        return np.concatenate([obs, self.h.ravel()])

    def step(self, obs: np.ndarray, action: np.ndarray) -> np.ndarray:
        self.h[:-1] = self.h[1:]
        self.h[-1] = np.clip(np.asarray(action, np.float64).reshape(-1), -1.0, 1.0)
        return np.concatenate([obs, self.h.ravel()])


@pytest.mark.parametrize(("env_id", "kw"), [
    ("VDSim-DLC-v0", {"latency": LatencyModel.uniform(0.01, 0.05, seed=3)}),
    ("VDSim-PathFollow-v0", SHORT),
    ("VDSim-ACC-v0", {"duration": 5.0}),
])
def test_history_equals_the_numpy_reference_bit_for_bit(env_id, kw):
    k = 3
    env = gym.make(env_id, action_history=k, **kw)
    plain = gym.make(env_id, **kw)
    m = env.action_space.shape[0]
    names = env.unwrapped.action_names
    assert env.unwrapped.obs_names[-k * m:] == tuple(
        f"action_{i}_{n}" for i in range(k, 0, -1) for n in names)
    n_task = len(plain.unwrapped.obs_names)
    space = env.observation_space
    assert space.shape == (n_task + k * m,)
    assert np.all(space.low[n_task:] == -1) and np.all(space.high[:n_task] == 10)
    scale = env.unwrapped.obs_scale
    assert len(scale) == n_task + k * m and np.all(scale[n_task:] == 1.0)
    np.testing.assert_array_equal(scale[:n_task], plain.unwrapped.obs_scale)
    ref = _Reference(k, m)
    rng = np.random.default_rng(1)
    for seed in (0, 1):
        o1, _ = env.reset(seed=seed)
        o2, _ = plain.reset(seed=seed)
        np.testing.assert_array_equal(o1, ref.reset(o2))
        for t in range(80):
            # beyond [-1, 1] within the tolerance (clipped), float64 and float32, lists
            a = rng.uniform(-1.0, 1.0, m) * (1 + 1e-7)
            a = [a, a.astype(np.float32), a.tolist()][t % 3]
            s1, s2 = env.step(a), plain.step(a)
            np.testing.assert_array_equal(s1[0], ref.step(s2[0], a))
            assert s1[1:4] == s2[1:4] and canon(s1[4]) == canon(s2[4])
            if s1[2] or s1[3]:
                break
        assert t > 5 and np.any(s1[0][n_task:] != 0)


def test_latency_wrapper_history_is_the_kwarg():
    lat = LatencyModel.fixed(0.03)
    wrapped = LatencyWrapper(gym.make("VDSim-DLC-v0"), latency=lat, action_history=2)
    direct = gym.make("VDSim-DLC-v0", latency=lat, action_history=2)
    assert wrapped.obs_names == direct.unwrapped.obs_names
    assert wrapped.observation_space == direct.observation_space
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(wrapped.reset(seed=4)[0], direct.reset(seed=4)[0])
    for _ in range(60):
        a = rng.uniform(-0.1, 0.1, 2).astype(np.float32)
        (o1, r1, te, tr, _), (o2, r2, *_) = wrapped.step(a), direct.step(a)
        np.testing.assert_array_equal(o1, o2)
        assert r1 == r2
        assert np.array_equal(o1[-2:], a)  # action_1 is the last action
        if te or tr:
            break


def test_history_in_the_vector_env_matches_sync_vector_env():
    for mode in ("next_step", "same_step"):
        vec, ref = make_pair("VDSim-PathFollow-v0", 3, mode, max_episode_steps=60,
                             action_history=2, **SHORT)
        assert vec.single_observation_space.shape == (16 + 4,)
        assert vec.obs_names[-1] == "action_1_longitudinal"
        assert run_pair(vec, ref, seed=2, steps=120) >= 3
        vec.close()
        ref.close()


def test_history_in_the_sb3_adapter():
    pytest.importorskip("stable_baselines3")
    from vdsim_gym import make_sb3_vec_env

    venv = make_sb3_vec_env("VDSim-DLC-v0", 2, seed=0, action_history=4)
    obs = venv.reset()
    assert obs.shape == (2, 16 + 8) and not obs[:, 16:].any()
    a = np.array([[0.2, -0.1], [0.3, 0.4]], np.float32)
    obs, *_ = venv.step(a)
    np.testing.assert_array_equal(obs[:, -2:], a)
    np.testing.assert_array_equal(obs[:, 16:-2], 0.0)
    venv.close()


def test_action_history_bad_input():
    for bad in (-1, 2.5, True, "3", 1001):
        with pytest.raises(ValueError, match=r"action_history must be an integer in \[0, 1000\]"):
            gym.make("VDSim-DLC-v0", action_history=bad)
    env = gym.make("VDSim-DLC-v0", action_history=2)
    with pytest.raises(ValueError, match="already appends an action history"):
        LatencyWrapper(env, latency=LatencyModel.fixed(0.01), action_history=3)
    normalized = gym.wrappers.NormalizeObservation(gym.make("VDSim-DLC-v0"))
    with pytest.raises(TypeError, match="NormalizeObservation changes the observations"):
        LatencyWrapper(normalized, latency=LatencyModel.fixed(0.01), action_history=2)
    with pytest.raises(ValueError, match="changes the observation or action space"):
        gym.make_vec("VDSim-DLC-v0", num_envs=2, per_env_kwargs=[{}, {"action_history": 1}])
