"""The envs under the clients users run them with: Gymnasium's vector wrappers
(RecordEpisodeStatistics, NormalizeObservation, as CleanRL scripts stack them) on
gym.make_vec, and SB3's VecMonitor / VecNormalize / EvalCallback on make_sb3_vec_env, for
the path, ACC and dyno tasks and the speed test task. Episode statistics the clients
compute agree with the core's episode summary."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import speed_task_env

from vdsim_gym.dyno.cycles import from_segments

SPEED = speed_task_env.register_speed_env()
CASES = [("VDSim-PathFollow-v0", {"course_length": 40.0}), (SPEED, {"time_limit": 0.6}),
         ("VDSim-ACC-v0", {"duration": 1.0}),
         ("VDSim-Dyno-v0", {"cycle": from_segments("c", [[1.0, 3.0], [1.0, 0.0]])})]
IDS = ["path", "speed", "acc", "dyno"]


@pytest.mark.parametrize(("env_id", "kw"), CASES, ids=IDS)
def test_gymnasium_vector_wrappers_cleanrl_style(env_id, kw):
    vec = gym.make_vec(env_id, num_envs=3, **kw)
    envs = gym.wrappers.vector.RecordEpisodeStatistics(vec)
    envs = gym.wrappers.vector.NormalizeObservation(envs)
    obs, _ = envs.reset(seed=1)
    rng = np.random.default_rng(0)
    seen = 0
    for _ in range(150):
        a = rng.uniform(-0.3, 0.3, (3, *vec.single_action_space.shape)).astype(np.float32)
        obs, reward, term, trunc, infos = envs.step(a)
        assert obs.dtype == np.float32 and np.all(np.isfinite(obs))
        if "episode" in infos:  # CleanRL: infos["episode"]["r"][infos["_episode"]]
            done = infos["_episode"]
            np.testing.assert_array_equal(done, term | trunc)
            summary = infos["episode_summary"]
            np.testing.assert_array_equal(infos["episode"]["l"][done], summary["steps"][done])
            np.testing.assert_allclose(infos["episode"]["r"][done], summary["return"][done],
                                       rtol=1e-12)
            seen += int(done.sum())
    assert seen >= 3
    envs.close()


@pytest.mark.parametrize(("env_id", "kw"), CASES, ids=IDS)
def test_sb3_vec_monitor_vec_normalize_eval_callback(env_id, kw, tmp_path):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.callbacks import EvalCallback
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from vdsim_gym import make_sb3_vec_env

    def make(seed):
        return VecNormalize(VecMonitor(make_sb3_vec_env(env_id, 2, seed=seed, **kw)),
                            norm_reward=True)

    train, evaluation = make(0), make(100)
    evaluation.training = False
    cb = EvalCallback(evaluation, eval_freq=64, n_eval_episodes=2, log_path=str(tmp_path),
                      verbose=0)
    model = PPO("MlpPolicy", train, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                device="cpu")
    model.learn(256, callback=cb)
    results = np.load(tmp_path / "evaluations.npz")
    assert results["results"].shape[0] >= 1 and np.all(np.isfinite(results["results"]))

    # VecMonitor's episode return and length are the core's summary (float32 rewards
    # summed in float64 by VecMonitor: within float32 rounding).
    mon = VecMonitor(make_sb3_vec_env(env_id, 2, seed=3, **kw))
    mon.reset()
    rng = np.random.default_rng(2)
    checked = 0
    while checked < 2:
        a = rng.uniform(-0.3, 0.3, (2, *mon.action_space.shape)).astype(np.float32)
        _, _, dones, infos = mon.step(a)
        for i in np.flatnonzero(dones):
            ep, summary = infos[i]["episode"], infos[i]["episode_summary"]
            assert ep["l"] == summary["steps"]
            assert ep["r"] == pytest.approx(summary["return"], rel=1e-5, abs=1e-5)
            checked += 1
    mon.close()
    train.close()
    evaluation.close()


# Gymnasium warns before the env refuses a render mode it does not list: expected here.
@pytest.mark.filterwarnings("ignore:.*not in the possible render_modes")
@pytest.mark.parametrize(("env_id", "kw"), CASES, ids=IDS)
def test_sb3_make_vec_env_with_its_render_mode_default(env_id, kw):
    """SB3's make_vec_env asks gym.make for render_mode="rgb_array" and retries without it
    only on a TypeError: an env that does not render refuses with one (a ValueError too),
    so make_vec_env works on every env as it comes."""
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv

    classes = (None, SubprocVecEnv) if env_id == "VDSim-ACC-v0" else (None,)
    for cls in classes:  # a subprocess pool once, for the env that used to fail in each
        # fork: the workers inherit this test's warning filter (a forkserver started
        # earlier would turn Gymnasium's render-mode warning into an error there)
        venv = make_vec_env(env_id, n_envs=2, vec_env_cls=cls, env_kwargs=kw,
                            vec_env_kwargs={"start_method": "fork"} if cls else None)
        obs = venv.reset()
        obs, rewards, dones, infos = venv.step(
            np.stack([venv.action_space.sample() for _ in range(2)]))
        assert obs.shape[0] == 2 and np.all(np.isfinite(obs)) and len(infos) == 2
        venv.close()


def test_unknown_keyword_is_worded_as_pythons_own():
    """TorchRL's GymEnv retries without frameskip only on Python's own wording
    ("unexpected keyword argument 'frameskip'"); gym.make re-raises the same class with
    its context appended, so the class takes a single message."""
    from vdsim_gym.errors import UnknownKeywordError

    for env_id in ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0"):
        with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'") as e:
            gym.make(env_id, frameskip=4)
        assert isinstance(e.value, UnknownKeywordError)
        assert "valid keywords: " in str(e.value) and "render_mode" in str(e.value)
