"""agents/train.py and vdsim_gym.training: a PPO smoke run per env (runs, saves, loads,
predicts; the loaded policy's actions equal the trained model's), the run folder, the
hyperparameter files and the errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("stable_baselines3")

from vdsim_gym import make_sb3_vec_env  # noqa: E402
from vdsim_gym.training import (  # noqa: E402
    TrainingError,
    load_hyperparams,
    load_policy,
    parse_latency,
    shipped_model,
    shipped_models,
    train,
)

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"n_envs": 2, "n_steps": 128, "batch_size": 64, "n_epochs": 2}
ENV_IDS = ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0")


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_ppo_smoke_run_saves_and_the_loaded_policy_acts_alike(env_id, tmp_path):
    res = train("ppo", env_id, timesteps=1024, seed=3, hyperparams=SMALL, out=tmp_path,
                run_name="run", eval_freq=512, eval_episodes=1, checkpoint_freq=512,
                progress_bar=False, tensorboard=False)
    run = res.run_dir
    assert res.timesteps >= 1024
    for name in ("model.zip", "vecnormalize.pkl", "config.yml", "best_model.zip",
                 "best_vecnormalize.pkl", "evaluations.npz", "monitor.csv"):
        assert (run / name).exists(), name
    assert any((run / "checkpoints").iterdir())
    cfg = yaml.safe_load((run / "config.yml").read_text())
    assert (cfg["algo"], cfg["env_id"], cfg["seed"], cfg["timesteps"]) == ("ppo", env_id, 3,
                                                                           1024)
    assert cfg["hyperparams"]["n_steps"] == 128 and cfg["normalize"] == {}

    # observations the policy meets: a few steps of the env
    venv = make_sb3_vec_env(env_id, 4, seed=11)
    obs = venv.reset()
    batch = [obs]
    for _ in range(5):
        obs, *_ = venv.step(np.zeros((4, *venv.action_space.shape), np.float32))
        batch.append(obs)
    obs = np.concatenate(batch)
    venv.close()

    loaded = load_policy(run)
    stats = loaded.obs_rms
    assert stats is not None
    # the trained model (in memory) on the same normalization as the saved statistics
    expected, _ = res.model.predict(loaded.normalize(obs), deterministic=True)
    got, _ = loaded.predict(obs)
    np.testing.assert_array_equal(got, expected)
    # one observation: the same network on a batch of one; matrix products of another
    # shape may round differently in the last bits (BLAS blocking), hence a tolerance
    single, _ = loaded.predict(obs[0])
    np.testing.assert_allclose(single, expected[0], rtol=0, atol=1e-6)
    assert np.all(np.abs(got) <= 1.0)
    # the normalization is VecNormalize's: (obs - mean) / sqrt(var + eps), clipped
    manual = np.clip((obs - stats.mean) / np.sqrt(stats.var + 1e-8), -10, 10)
    np.testing.assert_allclose(loaded.normalize(obs), manual, rtol=1e-6, atol=1e-6)
    from vdsim_gym.training import plot_learning_curves

    if env_id in ("VDSim-DLC-v0", "VDSim-PathFollow-v0"):  # episodes end within the run
        png = plot_learning_curves(run, tmp_path / "curves.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:  # a 1500-step ACC scenario, an 1840-step cycle: no episode finished yet
        with pytest.raises(TrainingError, match="no finished episode yet"):
            plot_learning_curves(run, tmp_path / "curves.png")
    best = load_policy(run / "best_model.zip")  # with the statistics of its moment
    import pickle

    with (run / "best_vecnormalize.pkl").open("rb") as fh:
        np.testing.assert_array_equal(best.obs_rms.mean, pickle.load(fh).obs_rms.mean)


def test_sac_trains_on_a_single_env_and_td3_gets_its_noise(tmp_path):
    res = train("sac", "VDSim-DLC-v0", timesteps=300, hyperparams={"learning_starts": 100,
                "batch_size": 32, "buffer_size": 1000}, out=tmp_path, run_name="sac",
                eval_freq=10_000, progress_bar=False, tensorboard=False)
    assert res.model.n_envs == 1
    td3 = train("td3", "VDSim-DLC-v0", timesteps=200, hyperparams={"learning_starts": 100,
                "batch_size": 32, "buffer_size": 1000}, out=tmp_path, run_name="td3",
                eval_freq=10_000, progress_bar=False, tensorboard=False)
    assert td3.model.action_noise is not None
    with pytest.raises(TrainingError, match="single env; remove n_envs"):
        train("sac", "VDSim-DLC-v0", timesteps=10, hyperparams={"n_envs": 4},
              out=tmp_path, run_name="bad", progress_bar=False)


def test_hyperparameter_files_are_rl_zoo3_blocks_for_every_env():
    for algo in ("ppo", "sac", "td3"):
        for env_id in ENV_IDS:
            block = load_hyperparams(algo, env_id)
            assert block["policy"] == "MlpPolicy" and block["normalize"] is True
            assert block["n_timesteps"] > 0 and isinstance(block["policy_kwargs"], dict)
    with pytest.raises(TrainingError, match="no block for 'CartPole-v1'"):
        load_hyperparams("ppo", "CartPole-v1")
    with pytest.raises(TrainingError, match="unknown algorithm 'a2c'"):
        load_hyperparams("a2c", "VDSim-DLC-v0")


def test_latency_specs():
    from vdsim_gym import LatencyModel

    assert parse_latency(None) is None and parse_latency("none") is None
    assert parse_latency("fixed:20ms") == LatencyModel.fixed(0.02)
    assert parse_latency("20ms") == LatencyModel.fixed(0.02)
    assert parse_latency("uniform:0:40ms") == LatencyModel.uniform(0.0, 0.04)
    assert parse_latency("uniform:0-40ms") == LatencyModel.uniform(0.0, 0.04)
    assert parse_latency("normal:10:5ms") == LatencyModel.normal(0.01, 0.005)
    with pytest.raises(TrainingError, match="--latency 'slow'"):
        parse_latency("slow")
    with pytest.raises(TrainingError, match="one latency model"):
        parse_latency("0,10ms")


def test_train_script_runs_and_reports_errors_in_one_line(tmp_path):
    cmd = [sys.executable, str(ROOT / "agents" / "train.py"), "--algo", "ppo", "--env",
           "VDSim-DLC-v0", "--timesteps", "256", "--out", str(tmp_path), "--name", "cli",
           "--hyperparams", '{"n_envs": 1, "n_steps": 128, "batch_size": 64, "n_epochs": 1}',
           "--latency", "uniform:0:40ms", "--no-progress", "--eval-freq", "100000"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "run folder" in out.stdout
    cfg = yaml.safe_load((tmp_path / "cli" / "config.yml").read_text())
    assert cfg["latency"] == "uniform:0:40ms"
    bad = subprocess.run(cmd[:-2] + ["--latency", "slow"], capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--latency 'slow'" in bad.stderr.strip().splitlines()[-1]


def test_compare_sweeps_a_run_folder_with_its_normalization_beside_a_baseline(tmp_path):
    from vdsim_gym.cli.sweep import load_controller
    from vdsim_gym.training import TrainedPolicy

    res = train("ppo", "VDSim-DLC-v0", timesteps=256, hyperparams={**SMALL, "n_envs": 1},
                out=tmp_path, run_name="mine", eval_freq=100_000, progress_bar=False,
                tensorboard=False)
    for spec in (str(res.run_dir), str(res.run_dir / "model.zip")):
        name, pol = load_controller(spec)
        assert name == "mine" and isinstance(pol, TrainedPolicy) and pol.obs_rms is not None
    out = tmp_path / "cmp"
    cmd = [sys.executable, str(ROOT / "agents" / "compare.py"), "--env", "VDSim-DLC-v0",
           "--policies", str(res.run_dir), "stanley", "--delays", "0,20ms", "--seeds", "2",
           "--num-envs", "4", "--out", str(out), "--no-plot"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert "mine" in done.stdout and "stanley" in done.stdout
    rows = (out / "sweep_summary.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2  # header, 2 controllers x 2 delays
    bad = subprocess.run(cmd[:5] + ["nope.zip", "--seeds", "2"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "nope.zip" in bad.stderr.strip().splitlines()[-1]


def test_a_terminated_run_keeps_its_model(tmp_path):
    """SIGTERM mid-training (a scheduler's stop) writes model.zip and the statistics, as
    Ctrl-C does; the script then exits with the interrupt."""
    import signal
    import time

    cmd = [sys.executable, str(ROOT / "agents" / "train.py"), "--timesteps", "10000000",
           "--out", str(tmp_path), "--name", "stop", "--no-progress", "--eval-freq",
           "100000000", "--hyperparams", '{"n_envs": 2, "n_steps": 128, "batch_size": 64}']
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = tmp_path / "stop"
    deadline = time.monotonic() + 120
    while not (run / "config.yml").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3.0)  # inside learn()
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=120)
    assert proc.returncode != 0
    assert (run / "model.zip").exists() and (run / "vecnormalize.pkl").exists()
    assert load_policy(run).model is not None


def test_the_shipped_dlc_policy_passes_iso3888_1_without_a_cone():
    """agents/models/dlc_ppo and dlc_ppo_latency (docs/RESULTS.md) load with their
    statistics and drive the course to its end without a cone hit at 0 ms (network
    outputs may differ in the last bits between CPUs, a pass of the course does not)."""
    import gymnasium as gym

    env = gym.make("VDSim-DLC-v0")
    for name, seed in (("dlc_ppo", 0), ("dlc_ppo", 1), ("dlc_ppo_latency", 0)):
        policy = load_policy(shipped_model(name))
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = policy.predict(obs)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        assert info["outcome"] == "course_end" and info["cone_hits"] == 0, (name, info)


def test_shipped_models_are_found_by_name():
    """shipped_model finds agents/models/<name> in a source tree and in a wheel (CMake
    installs the folder as vdsim_gym/_data/models); an unknown name lists the shipped
    ones."""
    assert {"dlc_ppo", "dlc_ppo_latency"} <= set(shipped_models())
    run = shipped_model("dlc_ppo")
    assert (run / "model.zip").is_file() and (run / "vecnormalize.pkl").is_file()
    assert run.name == "dlc_ppo"
    with pytest.raises(TrainingError, match=r"no shipped model 'dlc_sac'; the package ships "
                                            r".*dlc_ppo, dlc_ppo_latency"):
        shipped_model("dlc_sac")


def test_missing_extras_are_named_before_any_work(monkeypatch, tmp_path):
    """Without tensorboard the run logs no TensorBoard files (unless asked: then an error
    naming the extra); a progress bar without tqdm/rich is an error naming the fix."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("tensorboard", "tqdm") else
                        real(name, *a))
    with pytest.raises(TrainingError, match=r"needs tensorboard: pip install 'vdsim-gym\[train\]'"):
        train("ppo", "VDSim-DLC-v0", timesteps=64, out=tmp_path, tensorboard=True,
              progress_bar=False)
    with pytest.raises(TrainingError, match="needs tqdm and rich.*--no-progress"):
        train("ppo", "VDSim-DLC-v0", timesteps=64, out=tmp_path, progress_bar=True)
    assert not any(tmp_path.iterdir())  # nothing was started
    res = train("ppo", "VDSim-DLC-v0", timesteps=128, hyperparams={**SMALL, "n_envs": 1},
                out=tmp_path, run_name="no_tb", eval_freq=100_000, progress_bar=False)
    assert not (res.run_dir / "tb").exists() and (res.run_dir / "model.zip").exists()
