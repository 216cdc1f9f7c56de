"""The privileged critic and the controller features (docs/TRAINING.md, "A privileged
critic", "Observation features"): the features against the prediction's closed forms, the
VecEnv wrappers' columns (terminal observations included), the asymmetric policies' actor
blind to the privileged columns, tiny training runs loaded without trust and acting on the
plain observation, and the options' errors."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
import yaml

pytest.importorskip("stable_baselines3")
import torch as th  # noqa: E402

from vdsim_gym import make_sb3_vec_env  # noqa: E402
from vdsim_gym.controllers.features import (  # noqa: E402
    ObservationFeatures,
    PredictedStateFeatures,
    check_features,
)
from vdsim_gym.errors import ConfigError, TrainingError  # noqa: E402
from vdsim_gym.policies import load_policy  # noqa: E402
from vdsim_gym.training import train  # noqa: E402
from vdsim_gym.training.observation import (  # noqa: E402
    FeatureVecEnv,
    PrivilegedColumns,
    PrivilegedVecEnv,
)
from vdsim_gym.training.pipeline import parse_known_delay  # noqa: E402

RANDOMIZE = {"friction": [0.6, 1.0], "mass": [0.9, 1.25],
             "latency": {"mean": [0.0, 0.06], "jitter": [0.0, 0.5]}, "loss": [0.0, 0.05]}
SMALL = {"n_envs": 2, "n_steps": 128, "batch_size": 64, "n_epochs": 1}


def _layout(env):
    base = env.unwrapped
    return {n: (i, float(base.obs_scale[i])) for i, n in enumerate(base.obs_names)}


def test_path_features_drift_straight_as_the_kinematics_say():
    """On a straight path with no steer, no lateral speed and no yaw rate the tires make no
    force, so across d the car keeps its heading and e_y grows by vx sin(e_psi) d."""
    env = gym.make("VDSim-DLC-v0")
    cols = _layout(env)
    n = len(cols)
    obs = np.zeros((3, n), np.float32)
    e_psi = np.array([0.0, 0.05, -0.1])
    vx = 20.0
    for name, values in (("e_y", [0.3, -0.2, 0.0]), ("e_psi", e_psi), ("vx", [vx] * 3)):
        i, s = cols[name]
        obs[:, i] = np.asarray(values) / s
    d = 0.04
    f = PredictedStateFeatures(env, d)
    assert f.names == ("pred_e_y", "pred_e_psi", "pred_vy", "pred_r")
    out = f(obs)
    e_y0 = obs[:, cols["e_y"][0]].astype(float) * cols["e_y"][1]
    # e_psi is held; its float32 column is what the prediction starts from
    e_psi32 = obs[:, cols["e_psi"][0]].astype(float) * cols["e_psi"][1]
    want = e_y0 + vx * np.sin(e_psi32) * d
    np.testing.assert_allclose(out[:, 0] * cols["e_y"][1], want, rtol=0, atol=2e-6)
    np.testing.assert_allclose(out[:, 1] * cols["e_psi"][1], e_psi32, atol=2e-7)
    np.testing.assert_allclose(out[:, 2:], 0.0, atol=1e-7)
    # delay 0: the observation's own columns
    zero = PredictedStateFeatures(env, 0.0)(obs)
    idx = [cols[c][0] for c in ("e_y", "e_psi", "vy", "r")]
    np.testing.assert_array_equal(zero, obs[:, idx])
    env.close()


def test_acc_features_follow_the_closed_form():
    """ACC: v' = max(v + a d, 0), rel' = rel - (v' - v), gap' = gap + rel d - (v' - v) d / 2
    with the acceleration in flight (acc_dc's law), each column over the env's scale."""
    env = gym.make("VDSim-ACC-v0")
    veh = env.unwrapped.vehicle
    cols = _layout(env)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    batch = np.repeat(obs[None], 6, axis=0).astype(np.float32)
    batch[:, cols["prev_accel"][0]] = rng.uniform(-1, 1, 6).astype(np.float32)
    batch[:, cols["lead_present"][0]] = 1.0
    d = 0.05
    out = PredictedStateFeatures(env, d)(batch)
    phys = {k: batch[:, cols[k][0]].astype(float) * cols[k][1]
            for k in ("ego_speed", "gap", "rel_speed")}
    pa = batch[:, cols["prev_accel"][0]].astype(float)
    a = pa * np.where(pa >= 0, veh.max_acceleration, veh.max_deceleration)
    v = phys["ego_speed"]
    v2 = np.maximum(v + a * d, 0.0)
    want = (v2, phys["gap"] + phys["rel_speed"] * d - (v2 - v) * d / 2,
            phys["rel_speed"] - (v2 - v))
    for j, name in enumerate(("ego_speed", "gap", "rel_speed")):
        np.testing.assert_allclose(out[:, j] * cols[name][1], want[j], rtol=1e-6, atol=1e-6)
    env.close()


def test_feature_options_are_checked():
    assert check_features("predicted_state, predicted_state") == ("predicted_state",)
    assert check_features(None) == ()
    with pytest.raises(ConfigError, match="unknown feature 'lidar'"):
        check_features("lidar")
    env = gym.make("VDSim-Dyno-v0")
    with pytest.raises(ConfigError, match="applies to the path envs and the ACC"):
        PredictedStateFeatures(env, 0.03)
    env.close()
    env = gym.make("VDSim-DLC-v0")
    with pytest.raises(ConfigError, match="finite number of seconds"):
        ObservationFeatures(env, "predicted_state", -0.01)
    env.close()
    assert parse_known_delay("30ms") == pytest.approx(0.03)
    assert parse_known_delay(0.02) == 0.02
    with pytest.raises(TrainingError, match="one fixed delay"):
        parse_known_delay("uniform:0:40ms")
    with pytest.raises(TrainingError, match="known-delay"):
        parse_known_delay("fast")


def _rollout(venv, steps, seed=0):
    rng = np.random.default_rng(seed)
    out = [venv.reset()]
    records = []
    for _ in range(steps):
        a = rng.uniform(-1, 1, (venv.num_envs, *venv.action_space.shape)).astype(np.float32)
        obs, _, dones, infos = venv.step(a)
        out.append(obs)
        records.append((obs, dones, infos))
    return out, records


def test_feature_vec_env_appends_the_features_to_every_observation():
    env = gym.make("VDSim-DLC-v0")
    feats = ObservationFeatures(env, "predicted_state", 0.03)
    env.close()
    plain = make_sb3_vec_env("VDSim-DLC-v0", 2, seed=5, time_limit=0.5)
    wrapped = FeatureVecEnv(make_sb3_vec_env("VDSim-DLC-v0", 2, seed=5, time_limit=0.5),
                             feats)
    assert wrapped.observation_space.shape == (plain.observation_space.shape[0] + 4,)
    _, a = _rollout(plain, 60)
    _, b = _rollout(wrapped, 60)
    n = plain.observation_space.shape[0]
    ended = 0
    for (o1, d1, i1), (o2, _d2, i2) in zip(a, b, strict=True):
        np.testing.assert_array_equal(o2[:, :n], o1)
        np.testing.assert_array_equal(o2[:, n:], feats(o1))
        for i in np.flatnonzero(d1):
            t1, t2 = i1[i]["terminal_observation"], i2[i]["terminal_observation"]
            np.testing.assert_array_equal(t2, feats.append(t1[None])[0])
            ended += 1
    assert ended > 0  # 0.5 s episodes: at least two ends per row
    plain.close()
    wrapped.close()


def test_privileged_vec_env_gives_each_episode_its_draws_and_each_step_its_delay():
    from vdsim_gym.sim.randomization import Randomization

    rand = Randomization.parse(RANDOMIZE)
    cols = PrivilegedColumns(rand, 0.02)
    assert cols.names == ("priv_mass", "priv_friction", "priv_latency_mean",
                          "priv_latency_jitter", "priv_loss", "priv_c_k", "priv_lost",
                          "priv_obs_age")
    inner = make_sb3_vec_env("VDSim-DLC-v0", 2, seed=7, randomize=RANDOMIZE)
    venv = PrivilegedVecEnv(inner, cols)
    n = inner.observation_space.shape[0]

    def mapped(values):  # the slow reference: each draw to [-1, 1] over its range
        return [2 * (values[k] - lo) / (hi - lo) - 1 for k, lo, hi in rand.ranges]

    obs = venv.reset()
    current = [mapped(inner.reset_infos[i]["randomization"]) for i in range(2)]
    np.testing.assert_allclose(obs[:, n:n + 5], current, rtol=1e-6)
    assert (obs[:, n + 5:] == 0).all()
    rng = np.random.default_rng(1)
    ended = 0
    for _ in range(80):
        obs, _, dones, infos = venv.step(rng.uniform(-1, 1, (2, 2)).astype(np.float32))
        for i in range(2):
            if dones[i]:  # the terminal observation keeps the ended episode's draws
                t = infos[i]["terminal_observation"]
                np.testing.assert_allclose(t[n:n + 5], current[i], rtol=1e-6)
                assert t[n + 5] == pytest.approx(infos[i]["c_k"] / 0.02, rel=1e-6)
                current[i] = mapped(inner.reset_infos[i]["randomization"])
                assert (obs[i, n + 5:] == 0).all()
                ended += 1
            else:
                assert obs[i, n + 5] == pytest.approx(infos[i]["c_k"] / 0.02, rel=1e-6)
                assert obs[i, n + 6] == float(infos[i]["lost"])
            np.testing.assert_allclose(obs[i, n:n + 5], current[i], rtol=1e-6)
            assert np.all(np.abs(obs[i, n:n + 5]) <= 1.0 + 1e-6)
    assert ended > 0
    venv.close()


@pytest.mark.parametrize("algo", ["ppo", "sac", "tqc"])
def test_the_actor_never_reads_the_privileged_columns(algo):
    """Any values in the privileged columns leave the action (and its gradient) alone,
    while the critic's value moves with them."""
    from stable_baselines3.common.vec_env import DummyVecEnv

    from vdsim_gym.policies.algos import algo_class
    from vdsim_gym.policies.asymmetric import privileged_policy_class

    n, p = 6, 4
    space = gym.spaces.Box(-np.inf, np.inf, (n + p,), np.float32)

    class Dummy(gym.Env):
        observation_space = space
        action_space = gym.spaces.Box(-1, 1, (2,), np.float32)

        def reset(self, *, seed=None, options=None):
            return np.zeros(n + p, np.float32), {}

        def step(self, action):
            return np.zeros(n + p, np.float32), 0.0, False, False, {}

    kwargs = {"learning_starts": 0} if algo != "ppo" else {"n_steps": 16, "batch_size": 16}
    model = algo_class(algo)(privileged_policy_class(algo), DummyVecEnv([Dummy]), seed=0,
                             policy_kwargs={"actor_columns": n}, **kwargs)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(32, n + p)).astype(np.float32)
    junk = obs.copy()
    junk[:, n:] = rng.normal(scale=10.0, size=(32, p))
    a1, _ = model.predict(obs, deterministic=True)
    a2, _ = model.predict(junk, deterministic=True)
    np.testing.assert_array_equal(a1, a2)
    x = th.as_tensor(junk, dtype=th.float32).requires_grad_(True)
    act = model.policy._predict(x, deterministic=True)
    act.sum().backward()
    assert x.grad is not None and float(x.grad[:, n:].abs().max()) == 0.0
    assert float(x.grad[:, :n].abs().max()) > 0.0
    with th.no_grad():
        t_obs, t_junk = th.as_tensor(obs), th.as_tensor(junk)
        if algo == "ppo":
            v1, v2 = model.policy.predict_values(t_obs), model.policy.predict_values(t_junk)
        else:
            act_t = th.as_tensor(a1)
            v1 = th.cat(model.critic(t_obs, act_t), dim=1) if algo == "sac" else \
                model.critic(t_obs, act_t)
            v2 = th.cat(model.critic(t_junk, act_t), dim=1) if algo == "sac" else \
                model.critic(t_junk, act_t)
    assert not th.equal(v1, v2)


@pytest.mark.parametrize("algo,env_id", [("ppo", "VDSim-DLC-v0"), ("sac", "VDSim-ACC-v0")])
def test_a_privileged_run_with_features_loads_and_acts_on_the_plain_observation(
        algo, env_id, tmp_path):
    hyper = SMALL if algo == "ppo" else {"learning_starts": 64, "batch_size": 32}
    res = train(algo, env_id, timesteps=256 if algo == "ppo" else 160, seed=1,
                hyperparams=hyper, out=tmp_path, run_name="run", eval_freq=10_000,
                progress_bar=False, tensorboard=False, randomize=RANDOMIZE,
                critic="privileged", features="predicted_state", known_delay="30ms")
    cfg = yaml.safe_load((res.run_dir / "config.yml").read_text())
    assert cfg["critic"] == "privileged" and cfg["features"] == ["predicted_state"]
    assert cfg["known_delay"] == pytest.approx(0.03)
    assert len(cfg["privileged_columns"]) == 8
    policy = load_policy(res.run_dir)  # without trust: the asymmetric class is allowed
    assert type(policy.model.policy).__name__.startswith("Privileged")
    env = gym.make(env_id)
    obs, _ = env.reset(seed=3)
    batch = [obs]
    for _ in range(5):
        obs, *_ = env.step(env.action_space.sample())
        batch.append(obs)
    plain = np.stack(batch).astype(np.float32)
    k = len(policy.features)
    assert policy.extra_columns == k + 8
    # the model's input: the observation, its features, zeros; normalized as trained
    x = np.concatenate([plain, policy.features(plain), np.zeros((len(plain), 8),
                                                                np.float32)], axis=1)
    want = res.model.predict(policy.normalize(x), deterministic=True)[0]
    got = policy.predict(plain)[0]
    np.testing.assert_array_equal(got, want)
    one = policy.predict(plain[2])[0]
    np.testing.assert_allclose(one, want[2], atol=1e-6)
    env.close()


def test_a_residual_run_with_features_and_a_privileged_critic_binds(tmp_path):
    """The order is the env's observation, the base command, the features, the privileged
    columns: the residual policy bound to a plain env gives the model that input."""
    res = train("ppo", "VDSim-DLC-v0", timesteps=256, seed=2, hyperparams=SMALL,
                out=tmp_path, run_name="res", eval_freq=10_000, progress_bar=False,
                tensorboard=False, randomize=RANDOMIZE, critic="privileged",
                features="predicted_state", known_delay=0.03, residual="stanley",
                residual_scale=0.1)
    env = gym.make("VDSim-DLC-v0")
    policy = load_policy(res.run_dir, env=env)
    obs, _ = env.reset(seed=0)
    action, _ = policy.predict(obs)
    assert action.shape == (2,) and np.all(np.isfinite(action))
    assert res.model.observation_space.shape[0] == len(obs) + 2 + 4 + 8
    env.close()


@pytest.mark.parametrize("kwargs,match", [
    ({"critic": "privileged", "algo": "td3"}, "supports ppo, sac and tqc"),
    ({"critic": "privileged", "randomize": None}, "nothing the actor does not"),
    ({"critic": "smart"}, "use plain or privileged"),
    ({"known_delay": "30ms"}, "give --features predicted_state with it"),
    ({"features": "predicted_state"}, "give the delay the controller is told"),
    ({"features": "predicted_state", "env_id": "VDSim-Dyno-v0", "randomize": None},
     "applies to the path envs and the ACC"),
])
def test_bad_options_fail_before_the_run_folder(kwargs, match, tmp_path):
    kw = {"algo": "ppo", "env_id": "VDSim-DLC-v0", "randomize": RANDOMIZE, **kwargs}
    with pytest.raises(TrainingError, match=match):
        train(kw.pop("algo"), kw.pop("env_id"), timesteps=128, out=tmp_path,
              run_name="bad", progress_bar=False, tensorboard=False, **kw)
    assert not (tmp_path / "bad").exists()


def test_the_features_default_to_the_envs_own_fixed_delay(tmp_path):
    from vdsim_gym import LatencyModel

    res = train("ppo", "VDSim-DLC-v0", timesteps=256, hyperparams=SMALL, out=tmp_path,
                run_name="fixed", eval_freq=10_000, progress_bar=False, tensorboard=False,
                env_kwargs={"latency": LatencyModel.fixed(0.02)},
                features="predicted_state")
    cfg = yaml.safe_load((res.run_dir / "config.yml").read_text())
    assert math.isclose(cfg["known_delay"], 0.02) and cfg["critic"] == "plain"
    assert cfg["privileged_columns"] == []
