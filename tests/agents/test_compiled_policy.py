"""vdsim_gym.policies.compiled: a trained actor in one C++ call agrees with torch's
predict to float32's rounding (PPO with features and a privileged critic, SAC, TQC), one
observation or a batch, and refuses what it cannot take."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from vdsim_gym.errors import ConfigError  # noqa: E402
from vdsim_gym.policies import load_policy  # noqa: E402
from vdsim_gym.policies.compiled import compile_policy  # noqa: E402
from vdsim_gym.training import train  # noqa: E402

RAND = {"friction": [0.6, 1.0], "latency": {"mean": [0.0, 0.06]}}
TOL = 1e-5  # of the action range: float32 (torch) against float64 (the kernel)


def _observations(env_id, policy, n=150):
    env = gym.make(env_id, **policy.required_env_kwargs)
    obs, _ = env.reset(seed=5)
    seen = []
    for _ in range(n):
        seen.append(obs)
        a, _ = policy.predict(obs)
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            obs, _ = env.reset()
    env.close()
    return np.array(seen, np.float32)


@pytest.mark.parametrize("algo,env_id,extra", [
    ("ppo", "VDSim-DLC-v0", {"critic": "privileged", "features": "predicted_state",
                             "known_delay": 0.03, "action_history": 2}),
    ("sac", "VDSim-ACC-v0", {"critic": "privileged"}),
    ("tqc", "VDSim-DLC-v0", {}),
])
def test_the_compiled_actor_acts_as_torch_does(algo, env_id, extra, tmp_path):
    hyper = {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1} if algo == "ppo" \
        else {"learning_starts": 32, "batch_size": 32,
              "policy_kwargs": {"net_arch": [32, 32]}}
    res = train(algo, env_id, timesteps=192, seed=0, out=tmp_path, run_name="r",
                eval_freq=10_000, progress_bar=False, tensorboard=False, hyperparams=hyper,
                randomize=RAND, **extra)
    policy = load_policy(res.run_dir)
    fast = compile_policy(policy)
    obs = _observations(env_id, policy)
    want, _ = policy.predict(obs)
    got, _ = fast.predict(obs)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, atol=TOL, rtol=0)
    one, _ = fast.predict(obs[3])
    np.testing.assert_allclose(one, want[3], atol=TOL, rtol=0)
    as_list, _ = fast.predict(obs[3].tolist())  # converted as TrainedPolicy converts
    np.testing.assert_array_equal(as_list, one)
    assert fast.required_env_kwargs == policy.required_env_kwargs


def test_what_it_cannot_take_is_refused(tmp_path):
    res = train("ppo", "VDSim-DLC-v0", timesteps=128, out=tmp_path, run_name="res",
                eval_freq=10_000, progress_bar=False, tensorboard=False,
                hyperparams={"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 1},
                residual="stanley")
    with pytest.raises(ConfigError, match="takes a TrainedPolicy"):
        compile_policy(load_policy(res.run_dir))
    from vdsim_gym import _core

    with pytest.raises(ValueError, match="does not chain"):
        _core.MlpPolicyKernel([[1.0, 2.0]], [[0.0, 0.0]], [2, 1], "tanh", [], [], 0.0, False)
    with pytest.raises(ValueError, match="tanh or relu"):
        _core.MlpPolicyKernel([[1.0, 2.0]], [[0.0]], [2, 1], "gelu", [], [], 0.0, False)
    k = _core.MlpPolicyKernel([[1.0, 2.0]], [[0.5]], [2, 1], "tanh", [], [], 0.0, False)
    np.testing.assert_allclose(k(np.array([0.1, 0.2], np.float32)), [1.0])  # clipped
    np.testing.assert_allclose(k(np.array([[0.1, -0.2]])), [[0.2]], rtol=1e-6)
    with pytest.raises(ValueError, match="fewer columns"):
        k(np.zeros(1))
