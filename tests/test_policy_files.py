"""Loading a run folder or a user file safely and with clear errors (vdsim_gym.policies,
vdsim_gym.dyno.cycles): FIFOs are refused instead of blocking, a pickled payload in a run
folder does not run without ``trust=True``, and each broken file is one error naming it
and the fix. Tiny SB3 models are built (not trained) in a tmp folder."""

from __future__ import annotations

import base64
import json
import os
import pickle
import shutil
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml

import vdsim_gym  # noqa: F401  (registers the envs)
from vdsim_gym.errors import ConfigError, TrainingError
from vdsim_gym.policies import (
    ResidualPolicy,
    TrainedPolicy,
    load_controller,
    load_policy,
    shipped_model,
)

sb3 = pytest.importorskip("stable_baselines3")


def _config(**extra):
    return {"algo": "ppo", "env_id": "Pendulum-v1", "action_history": 0, **extra}


@pytest.fixture(scope="module")
def good_run(tmp_path_factory) -> Path:
    """A run folder as vdsim-gym train writes it: model.zip, vecnormalize.pkl, config.yml."""
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    folder = tmp_path_factory.mktemp("run") / "good"
    folder.mkdir()
    venv = VecNormalize(DummyVecEnv([lambda: gym.make("Pendulum-v1")]))
    venv.obs_rms.mean = np.array([0.5, -0.25, 1.0])
    venv.obs_rms.var = np.array([2.0, 3.0, 4.0])
    model = sb3.PPO("MlpPolicy", venv, n_steps=64, batch_size=32, device="cpu", seed=0)
    model.save(folder / "model.zip")
    venv.save(str(folder / "vecnormalize.pkl"))
    (folder / "config.yml").write_text(yaml.safe_dump(_config()))
    return folder


@pytest.fixture
def run(good_run, tmp_path) -> Path:
    folder = tmp_path / "run"
    shutil.copytree(good_run, folder)
    return folder


OBS = np.array([[0.3, -0.2, 0.7], [1.0, 0.5, -2.0]], np.float32)


def test_a_good_run_loads_the_same_with_and_without_trust(run):
    safe = load_policy(run)
    trusted = load_policy(run, trust=True)
    assert isinstance(safe, TrainedPolicy) and type(safe.model) is sb3.PPO
    np.testing.assert_array_equal(safe.obs_rms.mean, [0.5, -0.25, 1.0])
    np.testing.assert_array_equal(safe.predict(OBS)[0], trusted.predict(OBS)[0])
    assert safe.model.observation_space == trusted.model.observation_space
    assert safe.model.action_space == trusted.model.action_space


def _finishes(call, fifos, timeout=10.0):
    """Runs ``call`` in a thread and returns (finished in time, its exception); a reader
    blocked on one of ``fifos`` is released by opening the write end."""
    out: list = []

    def target():
        try:
            call()
            out.append(None)
        except BaseException as exc:  # noqa: BLE001
            out.append(exc)

    t = threading.Thread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    finished = not t.is_alive()
    if not finished:
        for f in fifos:
            try:
                os.close(os.open(f, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        t.join(5)
    return finished, (out[0] if out else None)


@pytest.mark.parametrize("name", ["model.zip", "vecnormalize.pkl", "config.yml"])
def test_a_fifo_in_a_run_folder_is_refused_not_read(run, name):
    (run / name).unlink()
    os.mkfifo(run / name)
    finished, exc = _finishes(lambda: load_policy(run), [run / name])
    assert finished, f"load_policy blocked on the FIFO {name}"
    assert isinstance(exc, ConfigError) and "FIFO" in str(exc) and name in str(exc)


def test_a_fifo_given_as_a_model_or_cycle_is_refused(tmp_path):
    from vdsim_gym.dyno import load_cycle

    for name, call in (("m.zip", lambda p: load_controller(str(p))),
                       ("c.yaml", load_cycle), ("c.csv", load_cycle)):
        path = tmp_path / name
        os.mkfifo(path)
        finished, exc = _finishes(lambda c=call, p=path: c(p), [path])
        assert finished, f"blocked on the FIFO {name}"
        assert isinstance(exc, ConfigError) and "FIFO" in str(exc) and name in str(exc)


def test_a_binary_csv_cycle_is_named_not_a_decoding_traceback(tmp_path):
    from vdsim_gym.dyno import load_cycle

    path = tmp_path / "measured.csv"
    path.write_bytes(b"time,speed\n0,1\n\x89PNG\x00\xff\xfe")
    with pytest.raises(ConfigError, match=r"measured\.csv: the cycle file is not text"):
        load_cycle(path)


# ------------------------------------------------------------------ trust


class _Payload:
    """Unpickling this makes the directory ``marker``: code the file chose."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return os.mkdir, (self.marker,)


def _rewrite_entry(zip_path: Path, key: str, obj) -> None:
    """``zip_path`` with the data entry ``key`` replaced by ``obj`` pickled the way SB3
    serializes (``:serialized:``)."""
    with zipfile.ZipFile(zip_path) as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    data = json.loads(entries["data"])
    data[key] = {":type:": "<class 'x'>",
                 ":serialized:": base64.b64encode(pickle.dumps(obj)).decode()}
    entries["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(zip_path, "w") as zf:
        for n, b in entries.items():
            zf.writestr(n, b)


def test_a_pickled_payload_in_a_model_does_not_run_without_trust(run, tmp_path):
    marker = tmp_path / "ran"
    # in an entry a prediction does not need: left out, the model loads
    _rewrite_entry(run / "model.zip", "lr_schedule", _Payload(marker))
    with pytest.warns(UserWarning, match=r"the saved entry 'lr_schedule' was left out, not "
                                         r"unpickled \(it names posix\.mkdir"):
        pol = load_policy(run)
    assert not marker.exists()
    assert pol.predict(OBS)[0].shape == (2, 1)
    # in the policy class: refused, naming the file, what it names and the way out
    _rewrite_entry(run / "model.zip", "policy_class", _Payload(marker))
    with pytest.raises(TrainingError, match=r"model\.zip: the saved entry 'policy_class' is "
                                            r"pickled code: it names posix\.mkdir.*trust=True"):
        load_policy(run)
    assert not marker.exists()
    with pytest.raises(ConfigError, match="trust=True"):  # the sweep's spec, too
        load_controller(str(run))
    assert not marker.exists()


def test_a_pickled_payload_in_vecnormalize_does_not_run_without_trust(run, tmp_path):
    marker = tmp_path / "ran"
    (run / "vecnormalize.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(TrainingError, match=r"vecnormalize\.pkl: not the run's statistics: "
                                            r"it names posix\.mkdir.*trust=True"):
        load_policy(run)
    assert not marker.exists()
    with pytest.raises(TrainingError):  # trusted: it runs (and is then not statistics)
        load_policy(run, trust=True)
    assert marker.is_dir()


# ------------------------------------------------------------------ clear errors


def test_a_truncated_or_foreign_model_zip_is_one_clear_error(run):
    raw = (run / "model.zip").read_bytes()
    (run / "model.zip").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(TrainingError, match=r"model\.zip: not a readable SB3 model .*the file "
                                            r"is truncated"):
        load_policy(run)
    (run / "model.zip").write_bytes(b"")
    with pytest.raises(TrainingError, match="truncated or corrupt"):
        load_policy(run)
    with zipfile.ZipFile(run / "model.zip", "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(TrainingError, match=r"not a readable SB3 model \(a zip without SB3's "
                                            r"'data' entry\); the file is truncated"):
        load_policy(run)


@pytest.mark.parametrize("text, match", [
    ("- algo\n- ppo\n", r"config\.yml: must be a mapping of keys .* got a list"),
    ("algo: [ppo\n", r"config\.yml: not valid YAML"),
    ("algo: ppo\nalgo: sac\n", "found the key 'algo' twice"),
    ("algo: dqn\n", r"config\.yml: unknown algorithm 'dqn'"),
    ("algo: ppo\nenv_kwargs: [1, 2]\n", "env_kwargs must be a mapping"),
    ("algo: ppo\naction_history: two\n", "action_history must be a whole number"),
    ("algo: ppo\nenv_id: VDSim-DLC-v0\nresidual: {scale: 0.1}\n",
     r"residual must be a mapping with base .* got \{'scale': 0\.1\}"),
    ("algo: ppo\nresidual: {base: stanley, scale: 0.1}\n", "a residual run needs env_id"),
    ("algo: ppo\nenv_id: VDSim-DLC-v0\nresidual: {base: stanley, scale: true}\n",
     r"config\.yml: residual scale must be a number"),
])
def test_a_broken_config_yml_is_one_error_naming_it(run, text, match):
    (run / "config.yml").write_text(text)
    with pytest.raises(ConfigError, match=match):  # TrainingError is a ConfigError
        load_policy(run)


def test_a_model_of_another_algorithm_is_named(run, tmp_path):
    sac = sb3.SAC("MlpPolicy", "Pendulum-v1", buffer_size=100, device="cpu")
    sac.save(run / "model.zip")
    with pytest.raises(TrainingError, match=r"model\.zip: the model was saved by SAC, not PPO "
                                            r"\(config\.yml says algo: ppo\); load it as sac"):
        load_policy(run)
    with pytest.raises(TrainingError, match="saved by SAC, not PPO"):
        load_policy(run, trust=True)  # checked before SB3 unpickles anything
    (run / "config.yml").unlink()  # no config.yml: the algorithm the file names
    assert type(load_policy(run).model) is sb3.SAC
    (run / "vecnormalize.pkl").unlink()
    sac.save(tmp_path / "bare.zip")
    with pytest.raises(ConfigError, match=r"bare\.zip.*saved by SAC, not TD3 \(--algo td3\)"):
        load_controller(str(tmp_path / "bare.zip"), algo="td3")
    name, model = load_controller(str(tmp_path / "bare.zip"))  # the algorithm guessed
    assert name == "bare" and type(model) is sb3.SAC


def test_an_empty_or_foreign_vecnormalize_is_named(run):
    stats = run / "vecnormalize.pkl"
    stats.write_bytes(b"")
    with pytest.raises(TrainingError, match=r"vecnormalize\.pkl: empty"):
        load_policy(run)
    stats.write_bytes(pickle.dumps({"mean": [0.0, 0.0, 0.0]}))
    with pytest.raises(TrainingError, match=r"vecnormalize\.pkl: holds a dict, not SB3's "
                                            "VecNormalize statistics"):
        load_policy(run)
    stats.write_bytes(pickle.dumps(np.arange(3.0))[:-5])
    with pytest.raises(TrainingError, match="truncated or corrupt"):
        load_policy(run)


def test_statistics_of_another_run_are_named(run, tmp_path):
    import gymnasium as gym
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    other = VecNormalize(DummyVecEnv([lambda: gym.make("CartPole-v1")]))
    other.save(str(run / "vecnormalize.pkl"))
    with pytest.raises(TrainingError, match=r"shape \(4,\), but model\.zip takes \(3,\)"):
        load_policy(run)


# ------------------------------------------------------------------ residual policies


def test_a_residual_policy_with_a_delay_following_base_is_bound_before_predict():
    """The shipped dlc_res_stanley_dc: unbound, predict would build its stanley_dc base
    for the run's env (no delay) and not compensate the user's 40 ms."""
    import gymnasium as gym

    from vdsim_gym import LatencyModel

    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.04))
    obs, _ = env.reset(seed=0)
    pol = load_policy(shipped_model("dlc_res_stanley_dc"))
    assert isinstance(pol, ResidualPolicy) and not pol.bound
    with pytest.raises(ConfigError, match=r"for_env\(env\), or load_policy\(run, env=env\)"):
        pol.predict(obs)
    bound = load_policy(shipped_model("dlc_res_stanley_dc"), env=env)
    assert bound.bound
    assert np.array_equal(bound.predict(obs)[0], pol.for_env(env).predict(obs)[0])
    assert bound._rule.base.lateral.prediction.delays.delay == pytest.approx(0.04)
    # bound to an env without delay it commands otherwise: the delay is what binding buys
    no_delay = pol.for_env(gym.make("VDSim-DLC-v0"))
    assert no_delay._rule.base.lateral.prediction.delays.delay == 0.0


def test_a_residual_base_that_cannot_drive_the_env_is_named():
    import gymnasium as gym

    pol = load_policy(shipped_model("dlc_res_stanley_dc"))
    with pytest.raises(ConfigError, match=r"base 'stanley_dc'\) cannot drive VDSim-ACC-v0 "
                                          r"\(observation has no column 'e_y'.*its run "
                                          r"\(VDSim-DLC-v0\)"):
        pol.for_env(gym.make("VDSim-ACC-v0"))
    acc = load_policy(shipped_model("acc_res"))
    with pytest.raises(ConfigError, match="cannot drive VDSim-DLC-v0"):
        acc.for_env(gym.make("VDSim-DLC-v0"))
    with pytest.raises(TypeError, match="supports the VDSim envs.*CartPoleEnv"):
        acc.for_env(gym.make("CartPole-v1"))
    with pytest.raises(ConfigError, match="model takes 18 inputs"):  # another observation
        pol.for_env(gym.make("VDSim-DLC-v0", action_history=2))
