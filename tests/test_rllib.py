"""Ray RLlib on the envs (pytest -m ray; needs ray[rllib]): PPO trains one iteration on
a local Ray instance, with the env named "vdsim_gym:VDSim-DLC-v0" (Gymnasium imports the
module in each worker, which registers the ids) and through tune.register_env
(docs/TRAINING.md, "Ray RLlib")."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.filterwarnings("ignore")]


def _one_iteration(env: str) -> int:
    from ray.rllib.algorithms.ppo import PPOConfig

    cfg = (PPOConfig().environment(env)
           .env_runners(num_env_runners=1, num_envs_per_env_runner=1,
                        rollout_fragment_length=128)
           .training(train_batch_size_per_learner=256, minibatch_size=64, num_epochs=1))
    algo = cfg.build_algo()
    try:
        result = algo.train()
    finally:
        algo.stop()
    return int(result["env_runners"]["num_env_steps_sampled"])


def test_rllib_ppo_trains_an_iteration_by_module_qualified_id_and_register_env():
    ray = pytest.importorskip("ray")
    pytest.importorskip("ray.rllib")
    from ray import tune

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        assert _one_iteration("vdsim_gym:VDSim-DLC-v0") >= 256

        def creator(config):
            import gymnasium as gym

            import vdsim_gym  # noqa: F401  (registration, in the worker)

            return gym.make("VDSim-ACC-v0", **config)

        tune.register_env("vdsim_acc", creator)
        assert _one_iteration("vdsim_acc") >= 256
    finally:
        ray.shutdown()
