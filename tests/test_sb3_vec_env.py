"""make_sb3_vec_env: SB3's VecEnv protocol on the C++ vector session, checked bit for bit
against SB3's own DummyVecEnv over single envs (the obviously-correct reference)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from _helpers import canon

from vdsim_gym import LatencyModel, NetworkModel, make_sb3_vec_env

pytest.importorskip("stable_baselines3")
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv  # noqa: E402

KW = {"course_length": 40.0, "max_episode_steps": 50}


@pytest.mark.parametrize("delays", [
    {}, {"latency": LatencyModel.uniform(0.005, 0.04, seed=4)},
    # every delay of issue 29 at once: sensor, computation, network, actuation channels
    {"latency": LatencyModel.uniform(0.005, 0.04, seed=4),
     "obs_delay": LatencyModel.uniform(0.0, 0.05, seed=2),
     "network": NetworkModel(drop=0.1, jitter=LatencyModel.uniform(0.0, 0.01, seed=3)),
     "channel_delays": {"steer": 0.01, "longitudinal": 0.03}}],
    ids=["none", "latency", "all"])
def test_sb3_vec_env_matches_dummy_vec_env(delays: dict) -> None:
    n, env_id = 3, "VDSim-PathFollow-v0"
    ours = make_sb3_vec_env(env_id, n, seed=7, threads=2, **delays, **KW)
    ref = DummyVecEnv([lambda: gym.make(env_id, **delays, **KW) for _ in range(n)])
    ref.seed(7)
    assert isinstance(ours, VecEnv) and ours.num_envs == n
    np.testing.assert_array_equal(ours.reset(), ref.reset())
    assert [r["e_y"] for r in ours.reset_infos] == [r["e_y"] for r in ref.reset_infos]
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(130):
        a = rng.uniform(-0.3, 0.3, (n, 2)).astype(np.float32)
        o1, r1, d1, i1 = ours.step(a)
        o2, r2, d2, i2 = ref.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        assert r1.dtype == r2.dtype and d1.dtype == d2.dtype
        np.testing.assert_array_equal(d1, d2)
        for x, y in zip(i1, i2, strict=True):
            # Everything DummyVecEnv's rows carry (episode_summary and pass_speed at an
            # episode end included), with the same values and types.
            assert set(x) == set(y), set(x) ^ set(y)
            for key in y:
                if key == "terminal_observation":
                    np.testing.assert_array_equal(x[key], y[key])
                elif isinstance(y[key], dict):
                    assert canon(x[key]) == canon(y[key]), key
                    assert [type(v) for v in x[key].values()] == \
                        [type(v) for v in y[key].values()], key
                else:
                    assert canon(x[key]) == canon(y[key]) and type(x[key]) is type(y[key]), key
            if "terminal_observation" in x:
                np.testing.assert_array_equal(x["terminal_observation"],
                                              y["terminal_observation"])
        for i in np.flatnonzero(d1):
            assert ours.reset_infos[i]["e_y"] == ref.reset_infos[i]["e_y"]
        ends += int(d1.sum())
    assert ends >= 3
    ours.close()


@pytest.mark.parametrize("env_id,kw", [
    ("VDSim-DLC-v0", {"latency": LatencyModel.fixed(0.02)}),
    ("VDSim-Dyno-v0", {"cycle": ["urban_stop_and_go", "highway"]}),
    ("VDSim-ACC-v0", {}),
], ids=["dlc", "dyno", "acc"])
def test_sb3_vec_env_rows_reset_in_cpp_match_dummy_vec_env(env_id: str, kw: dict) -> None:
    """Rows that reset in C++ (CoreEnv.resets_in_core): the ended rows' resets, their
    reset infos and the observations after them as DummyVecEnv's, every 4 steps."""
    n = 3
    ours = make_sb3_vec_env(env_id, n, seed=2, max_episode_steps=4, **kw)
    ref = DummyVecEnv([lambda: gym.make(env_id, max_episode_steps=4, **kw) for _ in range(n)])
    ref.seed(2)
    np.testing.assert_array_equal(ours.reset(), ref.reset())
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(13):
        a = rng.uniform(-0.5, 0.5, (n, *ours.action_space.shape)).astype(np.float32)
        o1, r1, d1, i1 = ours.step(a)
        o2, r2, d2, i2 = ref.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        for i in np.flatnonzero(d1):
            np.testing.assert_array_equal(i1[i]["terminal_observation"],
                                          i2[i]["terminal_observation"])
            assert canon(ours.reset_infos[i]) == canon(ref.reset_infos[i])
            assert [type(v) for v in ours.reset_infos[i].values()] == \
                [type(v) for v in ref.reset_infos[i].values()]
        ends += int(d1.sum())
    assert ends == 9
    ours.close()
    ref.close()


def test_sb3_vec_env_time_limit_flag_and_terminal_observation() -> None:
    env = make_sb3_vec_env("VDSim-DLC-v0", 2, seed=0, max_episode_steps=3)
    obs = env.reset()
    for _ in range(3):
        last = obs
        obs, rewards, dones, infos = env.step(np.zeros((2, 2), np.float32))
    assert dones.all() and rewards.dtype == np.float32
    for i, info in enumerate(infos):
        assert info["TimeLimit.truncated"] is True
        term = info["terminal_observation"]
        assert term.shape == (16,) and not np.array_equal(term, obs[i])
        assert term[9] == 0.0 and last[i][0] != term[0]  # prev_steer of the final step
    env.close()


def test_sb3_vec_env_attr_methods_and_clear_errors() -> None:
    env = make_sb3_vec_env("VDSim-DLC-v0", 3, per_env_kwargs=[{"speed": s} for s in (10, 15, 20)])
    assert env.get_attr("speed") == [10.0, 15.0, 20.0]
    assert env.get_attr("control_period", indices=[1]) == [0.02]
    assert env.get_attr("obs_names")[0][0] == "e_y"
    assert env.env_method("action_to_command", [1.0, 0.0], indices=0)[0][0] > 0
    assert env.env_is_wrapped(gym.Wrapper) == [False] * 3
    with pytest.raises(NotImplementedError, match="fixed when it is built"):
        env.set_attr("speed", 5.0)
    with pytest.raises(NotImplementedError, match="desynchronize"):
        env.env_method("reset")
    with pytest.raises(NotImplementedError, match="does not render"):
        env.get_images()
    assert env.seed(3) == [3, 4, 5]
    env.reset()
    env.close()


def test_sb3_vec_env_ppo_learns() -> None:
    from stable_baselines3 import PPO

    env = make_sb3_vec_env("VDSim-DLC-v0", 4, seed=0, threads=2)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=256)
    assert model.num_timesteps == 256  # one rollout of n_steps=64 on each of the 4 envs
    obs = env.reset()
    action, _ = model.predict(obs, deterministic=True)
    assert action.shape == (4, 2)
    env.close()


def test_a_second_thread_is_refused_while_a_step_is_in_flight() -> None:
    """Two threads stepping one adapter used to mix their actions (about 2 % of rows
    came back with the other thread's action): a step now holds the adapter from
    step_async to the end of step_wait, and another thread's step or reset raises
    ConcurrentUseError, as the env and the vector env do. Deterministic: one thread
    holds the step (step_async) until the main thread has been refused."""
    import threading

    from vdsim_gym.errors import ConcurrentUseError

    env = make_sb3_vec_env("VDSim-PathFollow-v0", 2, seed=0, **KW)
    env.reset()
    held, checked = threading.Event(), threading.Event()
    out: dict = {}

    def owner() -> None:
        env.step_async(np.full((2, 2), 0.5, np.float32))
        held.set()
        checked.wait(10)
        out["step"] = env.step_wait()

    t = threading.Thread(target=owner)
    t.start()
    assert held.wait(10)
    try:
        with pytest.raises(ConcurrentUseError, match="VDSimSB3VecEnv is in use by another "
                                                      "thread"):
            env.step_async(np.zeros((2, 2), np.float32))
        with pytest.raises(ConcurrentUseError):
            env.step_wait()
        with pytest.raises(ConcurrentUseError):
            env.reset()
        with pytest.raises(ConcurrentUseError):  # SB3's step() = step_async + step_wait
            env.step(np.zeros((2, 2), np.float32))
    finally:
        checked.set()
        t.join(10)
    obs, rewards, dones, infos = out["step"]
    assert obs.shape == (2, env.observation_space.shape[0])
    # the owner's action (0.5 steer) is what its step applied, not the refused zeros
    ref = make_sb3_vec_env("VDSim-PathFollow-v0", 2, seed=0, **KW)
    ref.reset()
    ref_obs, *_ = ref.step(np.full((2, 2), 0.5, np.float32))
    np.testing.assert_array_equal(obs, ref_obs)
    env.step(np.zeros((2, 2), np.float32))  # free again for this thread
    env.close()
    ref.close()


def test_the_sb3_adapter_builds_no_row_env_it_is_not_asked_for():
    """SB3's VecEnv constructor asks every row for its render_mode: the answer is the
    vector env's, so rows copied in C++ stay without a Python env until asked."""
    venv = make_sb3_vec_env("VDSim-DLC-v0", 6, seed=0)
    assert venv.venv.envs.n_built() == 1
    assert venv.get_attr("render_mode") == [None] * 6 and venv.render_mode is None
    assert venv.get_attr("control_period", [3]) == [venv.venv.envs[3].control_period]
    assert venv.venv.envs.n_built() == 2
    venv.close()
