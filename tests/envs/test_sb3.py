"""stable-baselines3 end to end: a policy trains on the env and predicts through it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)


@pytest.mark.parametrize("env_id", ["VDSim-DLC-v0", "VDSim-PathFollow-v0"])
def test_sb3_ppo_learns_a_few_steps_and_predicts(env_id: str) -> None:
    from stable_baselines3 import PPO

    env = gym.make(env_id)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    before = {k: v.clone() for k, v in model.policy.state_dict().items()}
    model.learn(total_timesteps=128)
    assert model.num_timesteps == 128  # two rollouts of n_steps=64 ran on the env
    changed = [k for k, v in model.policy.state_dict().items() if not (v == before[k]).all()]
    assert changed, "learn() did not update the policy"
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, deterministic=True)
    again, _ = model.predict(obs, deterministic=True)
    assert action.shape == (2,) and action.dtype == np.float32
    np.testing.assert_array_equal(action, again)
    _, reward, _, _, info = env.step(action)
    assert reward == pytest.approx(sum(info["reward_terms"].values()))
    env.close()
