"""VDSim-ACC-v0: checkers, determinism, the vector env against SyncVectorEnv, the gap
integrated from positions (never copied from the sensor), the sensor CSV and its errors,
the PID ACC and IDM baselines over the scenario families, a sweep."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from test_vector import make_pair, run_pair

from vdsim_gym import LatencyModel
from vdsim_gym.controllers import acc_pid, idm_follower
from vdsim_gym.envs.acc_scenarios import FAMILIES
from vdsim_gym.eval import sweep

ID = "VDSim-ACC-v0"


def test_checkers_spaces_and_defaults():
    env = gym.make(ID)
    base = env.unwrapped
    assert base.level == "L1" and base.longitudinal == "accel"
    assert env.action_space.shape == (1,) and env.observation_space.shape == (10,)
    assert base.obs_names[:3] == ("ego_speed", "set_speed", "gap")
    check_env(base)
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    sb3.check_env(gym.make(ID), warn=True)


def test_seeded_rollouts_repeat_bit_for_bit():
    runs = []
    for _ in range(2):
        env = gym.make(ID, duration=5.0)
        obs, _ = env.reset(seed=11)
        rng = np.random.default_rng(0)
        out = [obs]
        for _ in range(200):
            obs, r, te, tr, _ = env.step(rng.uniform(-1, 1, 1).astype(np.float32))
            out.append(np.append(obs, r))
            if te or tr:
                obs, _ = env.reset()
        runs.append(np.concatenate(out))
    np.testing.assert_array_equal(*runs)


@pytest.mark.parametrize("lat", [{}, {"latency": LatencyModel.uniform(0.0, 0.1, seed=3),
                                      "overrun": "skip"}], ids=["none", "uniform_skip"])
def test_vector_env_matches_sync_vector_env(lat):
    vec, ref = make_pair(ID, 3, "next_step", threads=2, duration=2.0, **lat)
    assert run_pair(vec, ref, seed=4, steps=250, scale=1.0) >= 3
    vec.close()
    ref.close()


def _csv(tmp_path, rows, name="lead.csv"):
    path = tmp_path / name
    path.write_text("time,lead_speed,distance\n" + "\n".join(rows) + "\n")
    return path


def test_gap_is_integrated_from_positions(tmp_path):
    dt = 0.02
    rows = [f"{k * dt:.2f},," for k in range(50)]  # no lead for 1 s
    rows += [f"{k * dt:.2f},15.0,30.0" for k in range(50, 251)]  # then 15 m/s, 30 m ahead
    env = gym.make(ID, sensor_csv=_csv(tmp_path, rows), set_speed=25.0)
    base = env.unwrapped
    front = base.vehicle.cg_to_front + base.vehicle.front_overhang
    obs, info = env.reset(seed=0)
    assert info["gap"] == math.inf and not info["lead_present"]
    lead_x = None
    for k in range(1, 251):
        obs, _, te, tr, info = env.step(np.array([0.3], np.float32))
        x = base.plant_observation()["X"]
        if k < 50:
            assert info["gap"] == math.inf and info["lead_speed"] == 0.0
            continue
        if lead_x is None:  # appears at its sensor distance ahead of the front bumper
            lead_x = x + front + 30.0
            assert info["gap"] == pytest.approx(30.0, abs=1e-9)
        else:
            lead_x += 15.0 * dt
        assert info["gap"] == pytest.approx(lead_x - (x + front), abs=1e-9)
        if te or tr:
            break
    assert info["outcome"] in ("scenario_end", "collision")
    assert base.duration == pytest.approx(250 * dt)


@pytest.mark.parametrize(("rows", "match"), [
    (["0.00,10,20", "0.04,10,20", "0.02,10,20"], r"row 4: time is not increasing"),
    (["0.00,10,20", "0.02,10,20", "0.05,10,20"], r"irregular"),
    (["0.00,10,20", "0.02,ten,20"], r"row 3: non-numeric"),
    (["0.00,10,", "0.02,10,20"], r"row 2: lead_speed and distance must be both"),
])
def test_sensor_csv_errors_name_file_and_row(tmp_path, rows, match):
    path = _csv(tmp_path, rows)
    with pytest.raises(ValueError, match=match) as err:
        gym.make(ID, sensor_csv=path)
    assert str(path) in str(err.value)


def test_sensor_csv_missing_column_and_bad_kwargs(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("time,speed\n0,1\n")
    with pytest.raises(ValueError, match="missing column.*lead_speed, distance"):
        gym.make(ID, sensor_csv=path)
    with pytest.raises(ValueError, match="unknown scenario 'jam'"):
        gym.make(ID, scenario="jam")
    with pytest.raises(ValueError, match="unknown reward weight 'gapp'"):
        gym.make(ID, reward_weights={"gapp": 1.0})
    with pytest.raises(ValueError, match="duration must be seconds"):
        gym.make(ID, duration=-1.0)


def _reference_terms(info, action, prev, env):
    """The reward terms from the step's info, written out from docs/ENVS.md (ACC)."""
    base = env.unwrapped
    w, v, ax = base.reward_weights, info["ego_speed"], info["ax"]

    def cost(x):
        return x * x / (1 + x * x)

    desired = base.min_distance + base.time_headway * max(v, 0.0)
    present, gap = info["lead_present"], info["gap"]
    span = base.vehicle.max_acceleration if action >= prev else base.vehicle.max_deceleration
    jerk = (action - prev) * span / base.control_period
    over = max(v - base.scenario.set_speed, 0.0) if present else v - base.scenario.set_speed
    ttc = info["ttc"]
    collided = info.get("outcome") == "collision"
    return {"gap": -w["gap"] * cost((gap - desired) / desired) if present else 0.0,
            "speed": -w["speed"] * cost(over / 5.0),
            "jerk": -w["jerk"] * cost(jerk / 2.5),
            "comfort": -w["comfort"] * cost(ax / 3.0),
            "safety": -w["safety"] * (1 - max(ttc, 0.0) / 3.0) if ttc < 3.0 else 0.0,
            "collision": -w["collision"] if collided else 0.0,
            "alive": 0.0 if collided else w["alive"]}


@pytest.mark.parametrize("family", ["hard_brake", "lead_leaves", "stop_and_go"])
def test_reward_terms_match_a_python_reference(family):
    """Every term against its formula, over random pedal actions that also collide."""
    env = gym.make(ID, scenario=family, duration=20.0,
                   reward_weights={"gap": 0.5, "collision": 70.0})
    rng = np.random.default_rng(1)
    checked = collisions = 0
    for seed in range(3):
        env.reset(seed=seed)
        prev, done = 0.0, False
        while not done:
            a = float(np.float32(rng.uniform(-0.3, 1.0)))
            _, r, te, tr, info = env.step(np.array([a], np.float32))
            ref = _reference_terms(info, a, prev, env)
            got = info["reward_terms"]
            assert set(got) == set(ref)
            for k in ref:
                assert got[k] == pytest.approx(ref[k], rel=1e-9, abs=1e-12), (k, info["t"])
            assert r == pytest.approx(sum(got.values()), rel=1e-12, abs=1e-12)
            prev, done, checked = a, te or tr, checked + 1
        collisions += info["outcome"] == "collision"
    assert checked > 500 and collisions >= 1  # the random drive also reached the collision


def test_surviving_always_pays_more_than_colliding():
    """The invariant behind the ACC reward (docs/ENVS.md): the costs saturate at their
    weights, which sum to at most `alive`, so no step survived earns less than 0 and a
    collision's return is below any episode that survives its steps."""
    env = gym.make(ID, scenario="hard_brake", duration=15.0)
    w = env.unwrapped.reward_weights
    assert sum(w[k] for k in ("gap", "speed", "jerk", "comfort", "safety")) <= w["alive"]
    rng = np.random.default_rng(2)
    for seed in range(3):
        env.reset(seed=seed)
        done = False
        while not done:
            _, r, te, tr, info = env.step(rng.uniform(-1, 1, 1).astype(np.float32))
            done = te or tr
            assert r >= 0.0 or info.get("outcome") == "collision"


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("make_policy", [acc_pid, idm_follower], ids=["pid", "idm"])
def test_baselines_follow_without_collision(family, make_policy):
    env = gym.make(ID, scenario=family, duration=20.0)
    policy = make_policy(env)
    for seed in (0, 1):
        obs, _ = env.reset(seed=seed)
        first, done = True, False
        while not done:
            action, _ = policy.predict(obs, episode_start=np.array([first]))
            obs, _, te, tr, info = env.step(action)
            first, done = False, te or tr
        assert info["outcome"] == "scenario_end", (family, seed, info["episode_summary"])
        gap = info["episode_summary"]["min_gap"]
        assert math.isnan(gap) if family == "cruise" else gap > 1.0


def test_sweep_rows_carry_the_acc_summary():
    res = sweep(acc_pid, ID, latencies=[None, LatencyModel.fixed(0.1)], seeds=2,
                scenarios=[{"scenario": "hard_brake"}], num_envs=4, progress=False,
                duration=12.0)
    assert {"min_gap", "collision", "rms_jerk", "rms_time_gap_error"} <= set(res.metrics)
    assert all(r.collision == 0 and r.min_gap > 0 for r in res.table)
    assert [s.latency for s in res.summary] == ["none", "fixed 100 ms"]


def test_sweep_cli_with_the_car_following_baselines(tmp_path, capsys):
    import csv

    from vdsim_gym.cli import main as cli_main

    base = ["sweep", "--env", ID, "--delays", "0,100ms", "--seeds", "2", "--out",
            str(tmp_path), "--no-plot", "--no-progress", "--env-kwargs", '{"duration": 3.0}']
    rc = cli_main([*base, "--controller", "acc_pid", "--compare", "idm:time_headway=1.2",
                   "--scenarios", '[{"scenario": "follow"}, {"scenario": "cut_in"}]'])
    assert rc == 0
    out = capsys.readouterr().out
    assert "min gap [m] (95 %)" in out and "idm:time_headway=1.2" in out
    with (tmp_path / "sweep.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2 * 2 * 2 * 2  # controllers x scenarios x delays x seeds
    assert {r["scenario"] for r in rows} == {"scenario=follow", "scenario=cut_in"}
    for extra, match in (
            (["--controller", "idm:tau=1"], "unknown parameter 'tau'; idm takes"),
            (["--controller", "idm:time_headway=-1"], "time_headway must be a positive"),
            (["--controller", "acc_pid:gains=/nope.yaml"], "cannot read the gains file"),
            (["--controller", "acc_pid", "--scenarios", "{}"], "JSON array of objects"),
            (["--controller", "acc_pid", "--metric", "rms_e_y"], "not a metric of")):
        with pytest.raises(SystemExit) as exit_:
            cli_main([*base, *extra])
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert match in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
