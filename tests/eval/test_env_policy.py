"""ClosedLoopEval(env=..., policy=...): a policy written for a path env, in every mode."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import LatencyModel
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval import ClosedLoopEval


def make(**kw):
    return gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", terminate_on_cone=False, **kw)


def test_env_policy_sync_reproduces_the_env_rollout_bit_for_bit():
    env = make()
    policy = stanley_pi(env)
    res = ClosedLoopEval(env=make(), policy=stanley_pi(env), seed=3, duration=4.0).run()
    obs, _ = env.reset(seed=3)
    first = True
    for _ in range(200):
        action, _ = policy.predict(obs, episode_start=np.array([first]))
        first = False
        obs, *_ = env.step(action)
    xy = env.unwrapped.trajectory
    np.testing.assert_array_equal(res.trace["X"][: len(xy)], xy[:, 0])
    np.testing.assert_array_equal(res.trace["Y"][: len(xy)], xy[:, 1])
    assert res.meta["env_id"] == "VDSim-DLC-v0" and res.meta["env_seed"] == 3
    assert res.stats["n_samples"] == 200


def test_env_policy_runs_unchanged_in_both_modes_and_delay_hurts():
    env = make()
    policy = stanley_pi(env)
    a = ClosedLoopEval(env=env, policy=policy, duration=6.0).run()
    b0 = ClosedLoopEval(env=env, policy=policy, duration=6.0, mode="virtual_async",
                        latency=LatencyModel.fixed(0.0), overrun="queue").run()
    b40 = ClosedLoopEval(env=env, policy=policy, duration=6.0, mode="virtual_async",
                         latency=LatencyModel.fixed(0.04), overrun="skip").run()
    np.testing.assert_array_equal(a.trace["X"], b0.trace["X"])
    assert b40.stats["n_overrun"] > 0 and b40.stats["n_skipped"] > 0
    assert b40.stats["e_y_rmse_m"] > a.stats["e_y_rmse_m"]


def test_env_policy_sb3_model_predicts_through_the_eval():
    from stable_baselines3 import PPO

    env = make()
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=16, n_epochs=1, seed=0, device="cpu")
    res = ClosedLoopEval(env=env, policy=model, duration=0.5, mode="virtual_async",
                         latency=LatencyModel.uniform(0.0, 0.01, seed=1)).run()
    assert res.stats["n_samples"] == 25 and np.all(np.isfinite(res.trace["X"]))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"policy": object()}, ValueError, r"predict\(obs\)"),
        ({"policy": "P", "controller": lambda o, t: (0, 0)}, ValueError, "not both"),
        ({"policy": "P", "env_kwargs": {"latency": LatencyModel.fixed(0.01)}}, ValueError,
         "give latency= and overrun= to ClosedLoopEval"),
        ({"policy": "P", "control_period": 0.01}, ValueError, "differs from the env's"),
    ],
)
def test_env_policy_bad_input(kwargs, error, match):
    env_for_policy = make()
    if kwargs.get("policy") == "P":
        kwargs["policy"] = stanley_pi(env_for_policy)
    with pytest.raises(error, match=match):
        ClosedLoopEval(env="VDSim-DLC-v0", **kwargs)


def test_policy_without_env_names_the_fix():
    with pytest.raises(ValueError, match="policy= runs on an env"):
        ClosedLoopEval(policy=stanley_pi(make()))
