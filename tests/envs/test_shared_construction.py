"""What envs share to be cheap to build by the thousand (issue 30), and what they must not:
spaces equal to gymnasium's own but each env with its own sampling RNG, one copy of the
column names, one C++ spec per task (copied on write when an action history changes it),
and a vector env's rows on row 0's spaces."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.envs.vector import VDSimVectorEnv


def test_spaces_equal_gymnasiums_own_and_sample_independently():
    a, b = gym.make("VDSim-DLC-v0").unwrapped, gym.make("VDSim-DLC-v0").unwrapped
    assert a.action_space is not b.action_space
    assert a.action_space == gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    n = len(a.obs_names)
    assert a.observation_space == gym.spaces.Box(-10.0, 10.0, (n,), np.float32)
    assert repr(a.observation_space) == repr(gym.spaces.Box(-10.0, 10.0, (n,), np.float32))
    a.action_space.seed(0)
    b.action_space.seed(0)
    first = a.action_space.sample()
    np.testing.assert_array_equal(first, b.action_space.sample())  # same seed, own RNG
    assert not np.array_equal(a.action_space.sample(), first)  # a's RNG moved, b's did not
    with pytest.raises(ValueError, match="read-only"):
        a.observation_space.low[0] = 0.0  # shared bounds cannot change under another env


def test_an_action_history_gets_its_own_bounds_and_spec():
    plain = gym.make("VDSim-DLC-v0").unwrapped
    names = plain.obs_names
    hist = gym.make("VDSim-DLC-v0", action_history=2).unwrapped
    n_task = len(names)
    assert len(hist.obs_names) == n_task + 4 and hist.obs_names[:n_task] == names
    low = np.full(n_task + 4, -10.0, np.float32)
    low[n_task:] = -1.0
    assert hist.observation_space == gym.spaces.Box(low, -low, dtype=np.float32)
    # The first env's core spec is untouched by the second's history (copy on write).
    assert tuple(plain.core.obs_names) == names
    assert plain.observation_space.shape == (n_task,)
    plain.set_action_history(1)
    assert len(plain.obs_names) == n_task + 2 and len(hist.obs_names) == n_task + 4
    assert tuple(gym.make("VDSim-DLC-v0").unwrapped.core.obs_names) == names


def test_names_are_one_copy_across_envs():
    a, b = gym.make("VDSim-DLC-v0").unwrapped, gym.make("VDSim-DLC-v0").unwrapped
    assert a.info_names is b.info_names and a.obs_names is b.obs_names
    assert a.info_names == tuple(a.core.info_names)


def test_vector_rows_share_row_zeros_spaces():
    venv = VDSimVectorEnv("VDSim-DLC-v0", 4)
    spaces = {id(e.observation_space) for e in venv.envs} | \
        {id(e.action_space) for e in venv.envs}
    assert len(spaces) == 2
    obs, _ = venv.reset(seed=0)
    assert venv.single_observation_space.contains(obs[0])
    venv.close()
    mixed = VDSimVectorEnv("VDSim-DLC-v0", 2, per_env_kwargs=[{}, {"preset": "iso3888_2"}])
    assert mixed.envs[1].observation_space is mixed.envs[0].observation_space
    mixed.close()
