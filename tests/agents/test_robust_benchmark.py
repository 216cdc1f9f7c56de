"""``vdsim-gym benchmark robust`` (vdsim_gym.training.robust): the benchmark's definition,
a delay-following controller given each episode's own delay in a sweep, the aggregation
against plain reference computations, a learned group end to end, and the refusals."""

from __future__ import annotations

import math
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
import yaml

pytest.importorskip("stable_baselines3")
pytest.importorskip("rliable")

from vdsim_gym.errors import ConfigError  # noqa: E402
from vdsim_gym.eval.sweeps import sweep  # noqa: E402
from vdsim_gym.policies.loading import load_controller  # noqa: E402
from vdsim_gym.training import train  # noqa: E402
from vdsim_gym.training.robust import (  # noqa: E402
    NOMINAL_DELAY,
    ROBUST_RANDOMIZE,
    SEED_BASE,
    TASKS,
    Entry,
    decision_costs,
    run_robust,
    summarize,
    task,
)


def test_the_benchmark_is_the_issue_s_definition():
    assert ROBUST_RANDOMIZE == {
        "friction": [0.6, 1.0], "mass": [0.9, 1.25], "cornering_stiffness": [0.8, 1.2],
        "latency": {"mean": [0.0, 0.06], "jitter": [0.0, 0.5]}, "loss": [0.0, 0.05]}
    assert NOMINAL_DELAY == 0.03 and SEED_BASE == 10**6
    dlc = gym.make(TASKS["dlc"].env_id, **TASKS["dlc"].env_kwargs)
    assert dlc.unwrapped.speed == 20.0  # ISO 3888-1 at 20 m/s
    dlc.close()
    acc = task("acc")
    assert acc.env_kwargs["control_period"] == 0.1 and len(acc.scenarios) == 6
    for t in TASKS.values():  # every told-the-nominal baseline says so in its spec
        told = [b for b in t.baselines if "delay=" in b]
        assert told and all(f"delay={NOMINAL_DELAY:g}" in b or "delay=0.045" in b
                            for b in told)
    with pytest.raises(ConfigError, match="unknown robust task"):
        task("parking")


def test_a_delay_following_controller_gets_each_episode_s_own_delay_in_a_sweep():
    """stanley_dc without delay= on a latency randomization: each episode is the one
    stanley_dc told that episode's mean delay drives (the slow reference: one sweep per
    seed, the delay read from a single env reset with that seed)."""
    rand = {"latency": {"mean": [0.0, 0.06], "jitter": [0.0, 0.5]}}
    seeds = [SEED_BASE + k for k in range(4)]
    res = sweep(load_controller("stanley_dc")[1], "VDSim-DLC-v0", latencies=[None],
                seeds=seeds, progress=False, randomize=rand)
    env = gym.make("VDSim-DLC-v0", randomize=rand)
    delays = set()
    for row, s in zip(res.table, seeds, strict=True):
        env.reset(seed=s)
        d = env.unwrapped.episode_params.latency.mean_delay
        delays.add(round(d, 6))
        one = sweep(load_controller(f"stanley_dc:delay={d!r}")[1], "VDSim-DLC-v0",
                    latencies=[None], seeds=[s], progress=False, randomize=rand)
        assert one.table[0].metrics == row.metrics
    assert len(delays) == 4  # four different delays, each followed
    env.close()


def _fake_entry(name, kind, values):
    return Entry(name, kind, tuple(f"r{k}" for k in range(len(values["rms_e_y"])))
                 if kind == "learned" else (), {m: np.asarray(v, float)
                                               for m, v in values.items()})


def test_summaries_are_the_iqm_over_runs_and_the_mean_over_episodes():
    from scipy import stats

    rng = np.random.default_rng(0)
    t = task("dlc")
    runs = rng.uniform(0.005, 0.02, (6, 10))
    cones = (rng.uniform(size=(6, 10)) < 0.2).astype(float)
    learned = _fake_entry("ppo", "learned", {"rms_e_y": runs, "max_abs_e_y": runs * 3,
                                             "cone_hit": cones,
                                             "completed": 1 - cones})
    base = rng.uniform(0.008, 0.012, (1, 20))
    baseline = _fake_entry("mpc", "baseline", {"rms_e_y": base, "max_abs_e_y": base * 3,
                                               "cone_hit": np.zeros((1, 20)),
                                               "completed": np.ones((1, 20))})
    rows = summarize([baseline, learned], t, reps=200)
    b, lr = rows
    assert b["rms_e_y"] == pytest.approx(base.mean())
    assert b["rms_e_y_lo"] < b["rms_e_y"] < b["rms_e_y_hi"]
    assert b["cone_hit_episodes"] == 0
    want = stats.trim_mean(runs.mean(axis=1), 0.25)
    assert lr["rms_e_y"] == pytest.approx(want)
    assert lr["rms_e_y_lo"] <= lr["rms_e_y"] <= lr["rms_e_y_hi"]
    assert lr["cone_hit_episodes"] == int(cones.sum())
    assert lr["runs"] == 6 and lr["episodes"] == 10


def test_decision_costs_are_measured_for_every_controller():
    t = task("dlc")
    named = [(n, load_controller(n)[1]) for n in ("stanley", "stanley_dc")]
    cost = decision_costs(t, named, samples=20, repeats=2)
    assert set(cost) == {"stanley", "stanley_dc"}
    for lo, med, hi in cost.values():
        assert 0.0 < lo <= med <= hi and math.isfinite(hi)


def test_a_learned_group_is_scored_per_run_beside_the_baselines(tmp_path):
    runs = []
    for s in (0, 1):
        res = train("ppo", "VDSim-DLC-v0", timesteps=128, seed=s, out=tmp_path,
                    run_name=f"tiny_s{s}", eval_freq=64, eval_episodes=1,
                    hyperparams={"n_envs": 2, "n_steps": 64, "batch_size": 64,
                                 "n_epochs": 1},
                    progress_bar=False, tensorboard=False, randomize=ROBUST_RANDOMIZE,
                    features="predicted_state", known_delay=0.03)
        runs.append(str(res.run_dir))
    lines: list[str] = []
    rows = run_robust("dlc", baselines=["stanley"], groups=[runs], seeds=2,
                      out=tmp_path / "rob", make_plot=False, echo=lines.append,
                      progress=False)
    assert [r["controller"] for r in rows] == ["stanley", "tiny"]
    assert rows[1]["runs"] == 2 and rows[1]["episodes"] == 2
    assert len(rows[1]["rms_e_y_per_run"].split()) == 2
    assert all(math.isfinite(r["us_per_decision"]) for r in rows)
    assert (tmp_path / "rob" / "robust_dlc.csv").exists()
    assert "robust benchmark 'dlc'" in lines[0]


def test_runs_whose_seeds_reach_the_benchmark_s_are_refused(tmp_path):
    run = tmp_path / "x_s0"
    run.mkdir()
    (run / "config.yml").write_text(yaml.safe_dump({"seed": SEED_BASE, "env_id":
                                                    "VDSim-DLC-v0"}))
    (run / "best_model.zip").write_bytes(b"")
    with pytest.raises(ConfigError, match="reach the benchmark's seeds"):
        run_robust("dlc", baselines=[], groups=[[str(run)]], seeds=1, out=tmp_path / "o",
                   make_plot=False, costs=False, echo=lambda s: None, progress=False)


def test_the_command_refuses_an_unknown_task_in_one_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", "benchmark", "robust",
                          "--task", "parking"], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)  # outside the source tree, which would shadow it
    assert out.returncode == 2 and "invalid choice: 'parking'" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_near_miss_fails_an_episode_in_the_pick():
    from vdsim_gym.training.callbacks import selection_score

    eps = [{"outcome": "scenario_end", "collision": 0, "min_gap": g, "rms_time_gap_error": e}
           for g, e in ((3.0, 0.5), (1.2, 0.3), (8.0, 0.7))]
    assert selection_score(eps, "rms_time_gap_error", "scenario_end") == (0, pytest.approx(0.5))
    assert selection_score(eps, "rms_time_gap_error", "scenario_end", 2.0)[0] == 1
    assert selection_score(eps, "rms_time_gap_error", "scenario_end", 5.0)[0] == 2
    # an episode without a lead has no time-gap error: left out, not infinite
    cruise = {"outcome": "scenario_end", "collision": 0, "min_gap": float("nan"),
              "rms_time_gap_error": float("nan")}
    assert selection_score([*eps, cruise], "rms_time_gap_error", "scenario_end") == \
        (0, pytest.approx(0.5))
    assert selection_score([cruise], "rms_time_gap_error", "scenario_end")[1] == float("inf")


@pytest.mark.parametrize("kwargs,match", [
    ({"select_by": "return", "select_min_gap": 2.0}, "give --select-by METRIC"),
    ({"select_by": "rms_time_gap_error", "select_min_gap": -1.0}, "finite number of metres"),
])
def test_select_min_gap_is_checked(kwargs, match, tmp_path):
    from vdsim_gym.errors import TrainingError

    with pytest.raises(TrainingError, match=match):
        train("ppo", "VDSim-ACC-v0", timesteps=128, out=tmp_path, run_name="bad",
              progress_bar=False, tensorboard=False, **kwargs)
    with pytest.raises(TrainingError, match="give --select-by METRIC"):
        train("ppo", "VDSim-DLC-v0", timesteps=128, out=tmp_path, run_name="bad",
              progress_bar=False, tensorboard=False, select_by="rms_e_y",
              select_min_gap=2.0)
    assert not (tmp_path / "bad").exists()


def test_the_randomization_file_is_the_benchmark_s():
    from pathlib import Path

    from vdsim_gym.sim.randomization import Randomization
    from vdsim_gym.training.options import parse_randomize

    root = Path(__file__).resolve().parents[2]
    parsed = Randomization.parse(parse_randomize(str(root / "agents" /
                                                     "robust_randomize.yml")))
    assert parsed.as_dict() == Randomization.parse(ROBUST_RANDOMIZE).as_dict()


def test_the_shipped_robust_dlc_policy_acts_on_the_benchmark_env():
    """agents/models/dlc_robust (docs/RESULTS.md): plain predict in the benchmark's env
    built with its required kwargs; on four held-out episodes it completes most and
    tracks the line within a few centimetres (network outputs may differ in the last bits
    between CPUs; these bounds hold with a wide margin)."""
    from vdsim_gym.policies import load_policy, shipped_model

    policy = load_policy(shipped_model("dlc_robust"))
    assert policy.required_env_kwargs == {"action_history": 3}
    env = gym.make("VDSim-DLC-v0", randomize=ROBUST_RANDOMIZE, **policy.required_env_kwargs)
    errors, completed = [], 0
    for seed in range(SEED_BASE, SEED_BASE + 4):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            obs, _, term, trunc, info = env.step(policy.predict(obs)[0])
            done = term or trunc
        errors.append(info["episode_summary"]["rms_e_y"])
        completed += info["outcome"] == "course_end"
    env.close()
    assert completed >= 3 and np.mean(errors) < 0.03, (errors, completed)


def test_the_shipped_robust_acc_policy_acts_on_the_benchmark_env():
    """agents/models/acc_robust (docs/RESULTS.md): plain predict in the benchmark's ACC
    env (0.1 s, its required kwargs); a held-out seed of each family without a collision
    (network outputs may differ in the last bits between CPUs; its smallest gap over the
    benchmark's 192 episodes is 0.86 m)."""
    from vdsim_gym.policies import load_policy, shipped_model

    policy = load_policy(shipped_model("acc_robust"))
    assert policy.required_env_kwargs == {"action_history": 3}
    t = task("acc")
    for scenario in t.scenarios:
        env = gym.make(t.env_id, **t.env_kwargs, **scenario, **policy.required_env_kwargs)
        obs, _ = env.reset(seed=SEED_BASE)
        done = False
        while not done:
            obs, _, term, trunc, info = env.step(policy.predict(obs)[0])
            done = term or trunc
        env.close()
        assert info["outcome"] == "scenario_end", (scenario, info["episode_summary"])
