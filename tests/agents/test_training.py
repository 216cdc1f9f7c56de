"""agents/train.py and vdsim_gym.training: a PPO smoke run per env (runs, saves, loads,
predicts; the loaded policy's actions equal the trained model's), the run folder, the
hyperparameter files and the errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

pytest.importorskip("stable_baselines3")

from vdsim_gym import make_sb3_vec_env  # noqa: E402
from vdsim_gym.errors import TrainingError  # noqa: E402
from vdsim_gym.policies import (  # noqa: E402
    load_policy,
    shipped_model,
    shipped_models,
)
from vdsim_gym.training import load_hyperparams, parse_latency, train  # noqa: E402

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

    # the task metrics: monitor.csv columns, eval_metrics.npz beside evaluations.npz
    metrics = list(gym.make(env_id).unwrapped.METRIC_LABELS)
    header = [ln for ln in (run / "monitor.csv").read_text().splitlines()
              if not ln.startswith("#")][0]
    assert header.split(",") == ["r", "l", "t", *metrics]
    ev, em = np.load(run / "evaluations.npz"), np.load(run / "eval_metrics.npz")
    np.testing.assert_array_equal(em["timesteps"], ev["timesteps"])
    for k in metrics:
        assert em[k].shape == ev["results"].shape, k
    if env_id != "VDSim-Dyno-v0":  # episodes end within the run (ACC: 300 steps)
        png = plot_learning_curves(run, tmp_path / "curves.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert np.isfinite(em[metrics[0]]).any()
        with pytest.raises(TrainingError, match=f"metric 'e_y' is not in .*{metrics[0]}"):
            plot_learning_curves(run, tmp_path / "curves.png", metric="e_y")
    else:  # an 1840-step cycle: no episode finished yet
        with pytest.raises(TrainingError, match="no finished episode yet"):
            plot_learning_curves(run, tmp_path / "curves.png")
    best = load_policy(run / "best_model.zip")  # with the statistics of its moment
    import pickle

    with (run / "best_vecnormalize.pkl").open("rb") as fh:
        np.testing.assert_array_equal(best.obs_rms.mean, pickle.load(fh).obs_rms.mean)


def test_summary_keys_copy_each_finished_episodes_metrics():
    """What VecMonitor writes to monitor.csv: the episode summary's metrics, flat."""
    from vdsim_gym.training.callbacks import _with_summary_keys

    keys = ("rms_e_y", "cone_hits", "pass_speed")
    venv = _with_summary_keys(make_sb3_vec_env("VDSim-DLC-v0", 2, seed=1), keys)
    venv.reset()
    rng = np.random.default_rng(0)
    ended = 0
    while ended < 3:
        _, _, dones, infos = venv.step(rng.uniform(-1, 1, (2, 2)).astype(np.float32))
        for i in np.flatnonzero(dones):
            s = infos[i]["episode_summary"]
            for k in keys:  # cone_hits is also a step key (the total so far): the same
                assert infos[i][k] == s[k] or (np.isnan(infos[i][k]) and np.isnan(s[k])), k
            ended += 1
        for i in np.flatnonzero(~dones):
            assert not {"rms_e_y", "pass_speed"} & set(infos[i])  # only at an episode's end
    venv.close()


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


@pytest.mark.parametrize("algo", ["tqc", "crossq"])
def test_sb3_contrib_algorithms_train_a_residual_save_and_load(algo, tmp_path):
    """TQC and CrossQ (sb3-contrib) train through the same run folder, and load_policy
    and a sweep's controller spec rebuild the trained residual: its actions equal base +
    scale * the model's own."""
    pytest.importorskip("sb3_contrib")
    import sb3_contrib

    from vdsim_gym.policies import ResidualPolicy, load_controller

    small = {"learning_starts": 100, "batch_size": 32, "buffer_size": 1000,
             "policy_kwargs": "dict(net_arch=[32, 32])"}
    res = train(algo, "VDSim-DLC-v0", timesteps=300, hyperparams=small, out=tmp_path,
                run_name=algo, eval_freq=10_000, progress_bar=False, tensorboard=False,
                residual="stanley", residual_scale=[0.1, 0.0])
    cls = {"tqc": sb3_contrib.TQC, "crossq": sb3_contrib.CrossQ}[algo]
    assert type(res.model) is cls and res.model.n_envs == 1
    policy = load_policy(res.run_dir)
    assert isinstance(policy, ResidualPolicy) and type(policy.inner.model) is cls
    env = gym.make("VDSim-DLC-v0")
    obs, _ = env.reset(seed=0)
    for _ in range(20):
        a, _ = policy.predict(obs)
        obs, *_ = env.step(a)
    assert np.all(np.abs(a) <= 1.0)
    assert load_controller(str(res.run_dir / "model.zip"))[0] == algo
    res.model.save(tmp_path / "bare.zip")  # a model file alone: each algorithm is tried
    assert type(load_controller(str(tmp_path / "bare.zip"))[1]) is cls


def test_hyperparameter_files_are_rl_zoo3_blocks_for_every_env():
    from vdsim_gym.policies import ALGOS

    assert set(ALGOS) == {"ppo", "sac", "td3", "tqc", "crossq"}
    for algo in ALGOS:
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
    before = sorted(tmp_path.iterdir())
    bad = subprocess.run(cmd[:11] + ["cli2"] + cmd[12:] + ["--num-threads", "0"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "num_threads must be an integer >= 1" in bad.stderr.strip().splitlines()[-1]
    assert sorted(tmp_path.iterdir()) == before  # refused before any run folder


def test_compare_sweeps_a_run_folder_with_its_normalization_beside_a_baseline(tmp_path):
    from vdsim_gym.policies import TrainedPolicy, load_controller

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


def test_own_env_sweeps_a_run_on_its_training_env_and_baselines_on_the_given_one(tmp_path):
    import csv

    from vdsim_gym.eval.sweeps.compare import run_sweep

    res = train("ppo", "VDSim-ACC-v0", timesteps=256, hyperparams={**SMALL, "n_envs": 1},
                env_kwargs={"duration": 2.0, "control_period": 0.1}, out=tmp_path,
                run_name="mine", eval_freq=100_000, progress_bar=False, tensorboard=False)
    assert load_policy(res.run_dir).env_kwargs == {"duration": 2.0, "control_period": 0.1}
    lines: list[str] = []
    for own in (True, False):
        out = tmp_path / f"own{own}"
        run_sweep([str(res.run_dir), "idm"], "VDSim-ACC-v0", "0ms", seeds=2, num_envs=4,
                  out=out, env_kwargs={"duration": 4.0}, make_plot=False, progress=False,
                  own_env=own, echo=lines.append)
        text = (out / "sweep_summary.csv").read_text().splitlines()
        rows = {r["controller"]: r for r in csv.DictReader(text)}
        assert float(rows["idm"]["time_mean"]) == pytest.approx(4.0)
        assert float(rows["mine"]["time_mean"]) == pytest.approx(2.0 if own else 4.0)
    assert "mine: on its training env kwargs control_period=0.1, duration=2.0" in lines


def test_compare_runs_the_acc_scenario_families_as_columns(tmp_path):
    out = tmp_path / "acc"
    cmd = [sys.executable, str(ROOT / "agents" / "compare.py"), "--env", "VDSim-ACC-v0",
           "--policies", "acc_pid", "idm", "--delays", "0ms", "--seeds", "2", "--num-envs", "4",
           "--env-kwargs", '{"duration": 4.0, "control_period": 0.1}', "--out", str(out),
           "--no-plot", "--scenarios", '[{"scenario": "follow"}, {"scenario": "hard_brake"}]']
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows = (out / "sweep_summary.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2  # 2 controllers x 2 families
    assert sum("hard_brake" in r for r in rows) == 2
    bad = subprocess.run(cmd[:-1] + ['{"scenario": "follow"}'], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "JSON array of objects" in bad.stderr


def test_a_terminated_run_keeps_its_model(tmp_path):
    """SIGTERM mid-training (a scheduler's stop) writes model.zip and the statistics, as
    Ctrl-C does; the script (``vdsim-gym train`` under its name) then says "interrupted"
    and exits with 130, as every ``vdsim-gym`` command does on Ctrl-C."""
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
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "interrupted", err
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


def test_the_shipped_randomized_dlc_policy_passes_on_a_randomized_car():
    """agents/models/dlc_ppo_dr (docs/RESULTS.md) takes its action history from the run
    (required_env_kwargs) and passes ISO 3888-1 without a cone on randomized cars."""
    policy = load_policy(ROOT / "agents" / "models" / "dlc_ppo_dr")
    assert policy.required_env_kwargs == {"action_history": 2}
    env = gym.make("VDSim-DLC-v0", **policy.required_env_kwargs, randomize={
        "mass": [0.9, 1.15], "cg_x": [-0.1, 0.1], "friction": [0.8, 1.0],
        "cornering_stiffness": [0.85, 1.15]})
    for seed in (0, 1, 2):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
            done = terminated or truncated
        assert info["outcome"] == "course_end" and info["cone_hits"] == 0, (seed, info)


def test_the_shipped_acc_policy_follows_every_family_without_a_collision():
    """agents/models/acc_ppo (docs/RESULTS.md) at its 0.1 s control period: a seed of each
    scenario family to the scenario's end, no collision, at least 2 m of gap."""
    import math

    from vdsim_gym.envs.acc_scenarios import FAMILIES

    policy = load_policy(ROOT / "agents" / "models" / "acc_ppo")
    for family in FAMILIES:
        env = gym.make("VDSim-ACC-v0", scenario=family, control_period=0.1)
        obs, _ = env.reset(seed=0)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
            done = terminated or truncated
        gap = info["episode_summary"]["min_gap"]
        assert info["outcome"] == "scenario_end", (family, info["episode_summary"])
        assert math.isnan(gap) if family == "cruise" else gap > 2.0, (family, gap)


def test_the_shipped_latency_trained_acc_policy_survives_200ms():
    """agents/models/acc_ppo_latency (docs/RESULTS.md): trained under 0-200 ms of delay
    with a two-action history, it follows a cut-in and a hard brake at 200 ms without a
    collision (the policy trained without delay hit the cut-in car there)."""
    from vdsim_gym import LatencyModel

    policy = load_policy(ROOT / "agents" / "models" / "acc_ppo_latency")
    assert policy.required_env_kwargs == {"action_history": 2}
    for family in ("cut_in", "hard_brake"):
        env = gym.make("VDSim-ACC-v0", scenario=family, control_period=0.1,
                       latency=LatencyModel.fixed(0.2), **policy.required_env_kwargs)
        for seed in (0, 1):
            obs, _ = env.reset(seed=seed)
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
                done = terminated or truncated
            assert info["outcome"] == "scenario_end", (family, seed, info["episode_summary"])
            assert info["episode_summary"]["min_gap"] > 2.0


def test_the_shipped_dyno_policy_tracks_the_urban_cycle_through_the_delay():
    """agents/models/dyno_ppo (docs/RESULTS.md) presses the pedal through the robot's 0.3 s
    transport delay and follows the urban cycle within 0.5 m/s RMS; at 0.5 s, where the
    PI robot driver oscillates (above 1 m/s), it still does."""
    policy = load_policy(ROOT / "agents" / "models" / "dyno_ppo")  # the run's best model
    assert policy.env_kwargs["driver"] == {"mode": "pedal", "delay_s": 0.3}
    for delay in (0.3, 0.5):
        env = gym.make("VDSim-Dyno-v0", cycle="urban_stop_and_go",
                       driver={"mode": "pedal", "delay_s": delay})
        obs, _ = env.reset(seed=0)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
            done = terminated or truncated
        assert info["outcome"] == "cycle_end"
        assert info["episode_summary"]["rms_speed_error"] < 0.5, delay


def test_shipped_models_are_found_by_name():
    """shipped_model finds agents/models/<name> in a source tree and in a wheel (CMake
    installs the folder as vdsim_gym/_data/models); an unknown name lists the shipped
    ones."""
    assert {"dlc_ppo", "dlc_ppo_latency", "dlc_ppo_dr", "acc_ppo", "acc_ppo_latency",
            "dyno_ppo", "dlc_res_stanley_dc", "acc_res", "dyno_res", "dlc_robust",
            "acc_robust"} <= set(
        shipped_models())
    run = shipped_model("dlc_ppo")
    assert (run / "model.zip").is_file() and (run / "vecnormalize.pkl").is_file()
    assert run.name == "dlc_ppo"
    with pytest.raises(TrainingError, match=r"no shipped model 'dlc_sac'; the package ships "
                                            r".*acc_ppo_latency, acc_res, acc_robust, "
                                            r"dlc_ppo, dlc_ppo_dr"):
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


def test_randomize_and_action_history_are_trained_recorded_and_rebuilt(tmp_path):
    """--randomize and --action-history reach the training and evaluation envs, go into
    config.yml, and load_policy rebuilds the observation (action_history) for the sweep
    and ClosedLoopEval; a conflicting action_history is refused."""
    from vdsim_gym.eval.sweeps import sweep

    res = train("ppo", "VDSim-DLC-v0", timesteps=2048, seed=1, hyperparams=SMALL,
                randomize="mass=0.9:1.15,friction=0.8:1.0,latency=0:40ms",
                action_history=2, out=tmp_path, run_name="dr", eval_freq=1024,
                eval_episodes=1, progress_bar=False, tensorboard=False)
    cfg = yaml.safe_load((res.run_dir / "config.yml").read_text())
    assert cfg["randomize"] == {"mass": [0.9, 1.15], "friction": [0.8, 1.0],
                                "latency": {"mean": [0.0, 0.04], "jitter": [0.0, 0.0]}}
    assert cfg["action_history"] == 2 and "action_history" not in cfg["env_kwargs"]
    venv = res.model.get_env()
    assert res.model.observation_space.shape == (16 + 4,)
    params = venv.get_attr("episode_params")
    assert len({p.values["mass"] for p in params}) == 2  # each env its own draw
    assert all(0.9 <= p.values["mass"] <= 1.15 and p.latency.kind == "fixed" for p in params)

    policy = load_policy(res.run_dir)
    assert policy.required_env_kwargs == {"action_history": 2}
    result = sweep(policy, "VDSim-DLC-v0", latencies=[None], seeds=2, num_envs=2,
                   progress=False)
    assert result.meta["env_kwargs"]["action_history"] == 2 and len(result.table) == 2
    with pytest.raises(ValueError, match="trained with action_history=2"):
        sweep(policy, "VDSim-DLC-v0", latencies=[None], seeds=1, progress=False,
              action_history=0)
    from vdsim_gym.eval import ClosedLoopEval

    run = ClosedLoopEval(env="VDSim-DLC-v0", policy=policy, seed=0, duration=0.2).run()
    assert run.stats["n_samples"] == 10
    # a run without the options records none and needs none
    plain = load_policy(ROOT / "agents" / "models" / "dlc_ppo")
    assert plain.required_env_kwargs == {}


def test_a_dyno_run_that_observes_the_driver_delay_requires_it_of_its_env(tmp_path):
    """observe_driver_delay shapes the dyno's observation (OBSERVATION_KWARGS): a run
    trained with it records it, load_policy requires it, and the sweep builds its env
    with it (11 columns, the last the drawn delay) and refuses the env without it."""
    from vdsim_gym.eval.sweeps import sweep

    res = train("ppo", "VDSim-Dyno-v0", timesteps=2048, seed=0, hyperparams=SMALL,
                randomize="driver_delay=0.3:0.5",
                env_kwargs={"observe_driver_delay": True, "time_limit": 10.0},
                out=tmp_path, run_name="dd", eval_freq=100_000, progress_bar=False,
                tensorboard=False)
    assert res.model.observation_space.shape == (11,)
    policy = load_policy(res.run_dir)
    assert policy.required_env_kwargs == {"observe_driver_delay": True}
    result = sweep(policy, "VDSim-Dyno-v0", latencies=[None], seeds=2, num_envs=2,
                   progress=False, time_limit=10.0, driver={"delay_s": 0.35})
    assert result.meta["env_kwargs"]["observe_driver_delay"] is True
    assert len(result.table) == 2
    with pytest.raises(ValueError, match="trained with observe_driver_delay=True"):
        sweep(policy, "VDSim-Dyno-v0", latencies=[None], seeds=1, progress=False,
              observe_driver_delay=False)


def test_eval_scenarios_evaluate_a_fixed_grid_one_episode_each(tmp_path):
    """--eval-scenarios: every evaluation runs one episode per scenario, on the training
    env's kwargs without its randomization and with the scenario's on top (here each
    cycle at its own driver delay: the evaluation's metrics are the ones a sweep of the
    same model gives), recorded in config.yml; --eval-episodes another number and a bad
    scenario are refused before any run folder exists."""
    from vdsim_gym.eval.sweeps import sweep

    grid = [{"cycle": "urban_stop_and_go", "driver": {"delay_s": 0.3}},
            {"cycle": "highway", "driver": {"delay_s": 0.5}}]
    kw = {"driver": {"mode": "speed", "delay_s": 0.4}, "observe_driver_delay": True,
          "cycle": ["urban_stop_and_go", "highway"]}
    res = train("ppo", "VDSim-Dyno-v0", timesteps=2048, seed=0, hyperparams=SMALL,
                randomize="driver_delay=0.3:0.5", env_kwargs=kw, residual="cycle_follower",
                eval_scenarios=grid, eval_freq=1024, select_by="rms_speed_error",
                out=tmp_path, run_name="grid", progress_bar=False, tensorboard=False)
    cfg = yaml.safe_load((res.run_dir / "config.yml").read_text())
    assert cfg["eval_scenarios"] == grid and cfg["eval_episodes"] == 2
    got = np.load(res.run_dir / "eval_metrics.npz")["rms_speed_error"]
    assert got.shape == (2, 2)  # two evaluations, one episode per scenario
    best = yaml.safe_load((res.run_dir / "best.json").read_text())
    policy = load_policy(res.run_dir, which="best_model")
    again = sweep(policy, "VDSim-Dyno-v0", latencies=[None], seeds=1, progress=False,
                  scenarios=grid, cycle="highway")
    mine = [r.metrics["rms_speed_error"] for r in again.table]
    assert best["rms_speed_error"] == pytest.approx(np.mean(mine), rel=1e-6)
    # the commands' controller check builds a residual run's env as its observation needs
    from vdsim_gym.eval.sweeps.specs import load_controllers

    [(_, factory)] = load_controllers([str(res.run_dir)], None, env_id="VDSim-Dyno-v0",
                                      env_kwargs={"cycle": "highway"})
    assert factory.required_env_kwargs == {"observe_driver_delay": True}
    with pytest.raises(TrainingError, match="one episode per scenario \\(2\\); drop "
                                            "--eval-episodes 5"):
        train("ppo", "VDSim-Dyno-v0", timesteps=64, eval_scenarios=grid, eval_episodes=5,
              out=tmp_path / "no", progress_bar=False)
    with pytest.raises(TrainingError, match=r"--eval-scenarios \[1\].*colour"):
        train("ppo", "VDSim-Dyno-v0", timesteps=64, env_kwargs={"driver": "speed"},
              eval_scenarios=[{}, {"colour": "red"}], out=tmp_path / "no",
              progress_bar=False)
    with pytest.raises(TrainingError, match="non-empty list of env-kwargs mappings"):
        train("ppo", "VDSim-Dyno-v0", timesteps=64, eval_scenarios={"cycle": "highway"},
              out=tmp_path / "no", progress_bar=False)
    assert not (tmp_path / "no").exists() or not any((tmp_path / "no").iterdir())


def test_randomize_options_and_their_errors(tmp_path):
    from vdsim_gym.training import parse_randomize

    assert parse_randomize(None) is None and parse_randomize("none") is None
    r = parse_randomize("cg_x=-0.1:0.1,latency=0:20ms,latency.jitter=0:0.5")
    assert r.as_dict() == {"cg_x": [-0.1, 0.1],
                           "latency": {"mean": [0.0, 0.02], "jitter": [0.0, 0.5]}}
    f = tmp_path / "dr.yml"
    f.write_text("mass: [0.95, 1.05]\n")
    assert parse_randomize(str(f)).as_dict() == {"mass": [0.95, 1.05]}
    assert parse_randomize({"mass": [1, 1]}).as_dict() == {"mass": [1.0, 1.0]}
    for bad, match in (("mass=1.2:0.9", r"--randomize 'mass=1.2:0.9': randomize\['mass'\]: lo"),
                       ("weight=1:2", "unknown name 'weight'"),
                       ("mass=0.9", "write name=lo:hi")):
        with pytest.raises(TrainingError, match=match):
            parse_randomize(bad)
    kw = {"timesteps": 64, "out": tmp_path, "progress_bar": False, "tensorboard": False}
    with pytest.raises(TrainingError, match="--latency and --randomize latency"):
        train("ppo", "VDSim-DLC-v0", latency="20ms", randomize="latency=0:40ms", **kw)
    with pytest.raises(TrainingError, match="action_history must be an integer"):
        train("ppo", "VDSim-DLC-v0", action_history=-1, **kw)
    with pytest.raises(TrainingError, match="action_history is given twice"):
        train("ppo", "VDSim-DLC-v0", action_history=2, env_kwargs={"action_history": 3}, **kw)
    with pytest.raises(TrainingError, match="this env has none: pass actuator="):
        train("ppo", "VDSim-DLC-v0", randomize="actuator_lag=0:50ms", **kw)
    assert not any(tmp_path.glob("VDSim*"))  # nothing was started


def test_train_script_takes_randomize_and_action_history(tmp_path):
    cmd = [sys.executable, str(ROOT / "agents" / "train.py"), "--env", "VDSim-DLC-v0",
           "--timesteps", "128", "--out", str(tmp_path), "--name", "cli", "--no-progress",
           "--hyperparams", '{"n_envs": 1, "n_steps": 128, "batch_size": 64, "n_epochs": 1}',
           "--eval-freq", "100000", "--randomize", "mass=0.9:1.1,cornering_stiffness=0.9:1.1",
           "--action-history", "1"]
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    cfg = yaml.safe_load((tmp_path / "cli" / "config.yml").read_text())
    assert cfg["randomize"] == {"mass": [0.9, 1.1], "cornering_stiffness": [0.9, 1.1]}
    assert cfg["action_history"] == 1
    bad = subprocess.run(cmd[:-4] + ["--randomize", "mass=2:1"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "--randomize 'mass=2:1'" in bad.stderr.strip().splitlines()[-1]


def test_ppo_rounds_timesteps_up_to_whole_rollouts_and_says_so(tmp_path, capsys):
    """PPO collects whole rollouts (n_steps x n_envs): 100 steps asked with 2 x 128 train
    256, say so on stderr and record both in config.yml (the progress bar then reads
    256/256, not 256/100)."""
    import yaml

    res = train("ppo", "VDSim-DLC-v0", timesteps=100, hyperparams=SMALL, out=tmp_path,
                eval_freq=100_000, progress_bar=False)
    assert res.timesteps == 256
    assert "training 256 steps for the 100 asked" in capsys.readouterr().err
    cfg = yaml.safe_load((res.run_dir / "config.yml").read_text())
    assert (cfg["timesteps"], cfg["timesteps_requested"]) == (256, 100)


def test_select_by_a_task_metric_keeps_the_evaluation_with_the_lowest_mean(tmp_path):
    """--select-by rms_e_y: best_model.zip is the checkpoint of the evaluation with the
    fewest failed episodes and then the lowest mean e_y RMSE (recomputed here from
    eval_metrics.npz), best.json names it; by return EvalCallback's pick is kept and
    best.json names it too. A metric the env does not have is an error before any run
    folder exists."""
    import json

    from stable_baselines3 import PPO

    kw = dict(timesteps=2048, seed=1, hyperparams=SMALL, out=tmp_path, eval_freq=256,
              eval_episodes=2, checkpoint_freq=256, progress_bar=False, tensorboard=False,
              residual="stanley", residual_scale=0.3,
              env_kwargs={"reward_weights": {"tracking": 100.0}})
    run = train("ppo", "VDSim-DLC-v0", run_name="metric", select_by="rms_e_y", **kw).run_dir
    em = np.load(run / "eval_metrics.npz")
    scores = [(f, m) for f, m in zip(em["failed_episodes"], em["rms_e_y"].mean(axis=1),
                                     strict=True)]
    i = min(range(len(scores)), key=lambda j: scores[j])
    assert len(set(scores)) > 1  # the test can fail: the evaluations differ
    best = json.loads((run / "best.json").read_text())
    assert best["select_by"] == "rms_e_y" and best["timesteps"] == int(em["timesteps"][i])
    assert best["rms_e_y"] == pytest.approx(float(scores[i][1]))
    assert best["failed_episodes"] == int(scores[i][0])
    ckpt = PPO.load(run / "checkpoints" / f"model_{best['timesteps']}_steps.zip", device="cpu")
    picked = PPO.load(run / "best_model.zip", device="cpu")
    for a, b in zip(ckpt.policy.parameters(), picked.policy.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert yaml.safe_load((run / "config.yml").read_text())["select_by"] == "rms_e_y"

    by_return = train("ppo", "VDSim-DLC-v0", run_name="return", **kw).run_dir
    ev = np.load(by_return / "evaluations.npz")
    best = json.loads((by_return / "best.json").read_text())
    assert best["timesteps"] == int(ev["timesteps"][np.argmax(ev["results"].mean(axis=1))])
    # a policy that does not change (nor its normalization): by a metric every evaluation
    # drives the same episodes (the same numbers), by return they go on through new ones
    frozen = dict(kw, hyperparams={**SMALL, "learning_rate": 0.0, "normalize": False},
                  timesteps=1024)
    for select_by, same in (("rms_e_y", True), ("return", False)):
        run = train("ppo", "VDSim-DLC-v0", run_name=f"frozen_{select_by}",
                    select_by=select_by, **frozen).run_dir
        rows = np.load(run / "eval_metrics.npz")["rms_e_y"]
        assert len(rows) >= 3
        assert all(np.array_equal(r, rows[0]) for r in rows) is same, select_by
    with pytest.raises(TrainingError, match=r"--select-by 'e_y'.*one of this env's task "
                                            r"metrics \(.*rms_e_y"):
        train("ppo", "VDSim-DLC-v0", run_name="bad", select_by="e_y", **kw)
    assert not (tmp_path / "bad").exists()
