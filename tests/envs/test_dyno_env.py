"""VDSim-Dyno-v0 and RobotDriverWrapper: the env's plant against the Python bench and
driver stepped by hand, the vector env against SyncVectorEnv, drive cycles and their
errors, the reward terms, the baseline and a sweep."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from test_vector import make_pair, run_pair

from vdsim_gym import LatencyModel
from vdsim_gym.controllers import cycle_follower
from vdsim_gym.dyno import DynoBench, RobotDriver
from vdsim_gym.dyno.cycles import from_segments, load_cycle
from vdsim_gym.errors import DelayRoundingWarning
from vdsim_gym.eval import sweep
from vdsim_gym.wrappers import RobotDriverWrapper

ID = "VDSim-Dyno-v0"
SHORT = from_segments("short", [[1, 0], [3, 6], [3, 6], [3, 0]])  # 10 s


def test_defaults_spaces_and_names():
    env = gym.make(ID)
    u = env.unwrapped
    assert u.longitudinal == "speed" and u.level == "dyno" and u.control_period == 0.1
    assert u.action_names == ("reference",) and env.observation_space.shape == (10,)
    assert u.obs_names[:2] == ("cycle_0s", "cycle_0.5s") and u.obs_names[-1] == "prev_action"
    assert u.reward_term_names == ("tracking", "pedal_jerk", "energy")
    assert gym.make(ID, driver="accel").unwrapped.action_names == ("reference",)
    assert gym.make(ID, driver=None).unwrapped.action_names == ("pedal",)


def hand_loop(actions, driver_kw, cycle_speeds, substeps=2, dt=0.05, v_max=40.0):
    """The plant by hand: per env step the reference from the action, per substep the
    RobotDriver and the DynoBench; the positive tractive work integrated alongside."""
    bench, drv = DynoBench(v0=float(cycle_speeds[0])), RobotDriver(**driver_kw)
    speeds, energy = [], 0.0
    for a in actions:
        ref = 0.5 * (a + 1.0) * v_max if drv.mode == "speed" else \
            a * (2.0 if a >= 0 else 3.0)
        for _ in range(substeps):
            v0 = bench.speed
            if drv.mode == "speed":
                cmd = drv.step(ref, v0, dt)
            else:
                cmd = drv.step(0.0, v0, dt, a_ref=ref)
            bench.step(*cmd, dt)
            force = sum(bench.axle_torque) / 0.36
            energy += max(force * 0.5 * (v0 + bench.speed), 0.0) * dt
        speeds.append(bench.speed)
    return np.array(speeds), energy


@pytest.mark.parametrize("driver", [{"mode": "speed", "delay_s": 0.2},
                                    {"mode": "accel", "delay_s": 0.1}])
def test_plant_equals_bench_and_driver_stepped_by_hand(driver):
    env = gym.make(ID, cycle=SHORT, driver=driver)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(1)
    actions = rng.uniform(-0.8, 0.8, 100)  # 10 s at 0.1 s
    speeds = []
    for a in actions:
        obs, reward, term, trunc, info = env.step(np.array([a]))
        speeds.append(info["speed"])
        assert reward == pytest.approx(sum(info["reward_terms"].values()), rel=1e-12)
        assert info["throttle"] == 0.0 or info["brake"] == 0.0
    want, energy = hand_loop(actions, driver, SHORT.resample(0.1))
    np.testing.assert_array_equal(speeds, want)  # bit for bit: same laws, same order
    assert trunc and info["outcome"] == "cycle_end"
    assert info["episode_summary"]["energy_wh"] == pytest.approx(energy / 3600, rel=1e-12)
    assert info["t"] == pytest.approx(SHORT.duration)


def test_observation_preview_and_tracking_term():
    env = gym.make(ID, cycle=SHORT)
    u = env.unwrapped
    speeds = SHORT.resample(0.1)
    obs, _ = env.reset(seed=0)
    for k in range(1, 40):
        obs, _, _, _, info = env.step(np.array([0.0]))
        for j, lead in enumerate((0.0, 0.5, 1.0, 2.0, 3.0, 5.0)):
            want = speeds[min(k + round(lead / 0.1), len(speeds) - 1)]
            assert obs[j] * u.obs_scale[j] == pytest.approx(want, rel=1e-6)
        e = info["speed"] - speeds[k]
        assert info["reward_terms"]["tracking"] == pytest.approx(-(e / 2) ** 2, rel=1e-12)
        assert obs[6] * 30 == pytest.approx(info["speed"], rel=1e-6)


@pytest.mark.parametrize("lat", [{}, {"latency": LatencyModel.uniform(0.0, 0.3, seed=3),
                                      "overrun": "skip"}], ids=["none", "uniform_skip"])
def test_vector_env_matches_sync_vector_env(lat):
    vec, ref = make_pair(ID, 3, "next_step", threads=2, cycle=SHORT,
                         driver={"mode": "speed", "delay_s": 0.15}, **lat)
    assert run_pair(vec, ref, seed=4, steps=250, scale=0.6) >= 3
    vec.close()
    ref.close()


def test_cycles_are_drawn_per_episode_from_np_random():
    other = from_segments("other", [[2, 3], [2, 0]])
    env = gym.make(ID, cycle=[SHORT, other])
    names = []
    for seed in range(12):
        env.reset(seed=seed)
        names.append(env.unwrapped.cycle.name)
    assert set(names) == {"short", "other"}
    again = [env.reset(seed=s) and env.unwrapped.cycle.name for s in range(12)]
    assert again == names


def test_packaged_cycles_and_the_baseline():
    for name, length in (("urban_stop_and_go", 184.0), ("highway", 315.0)):
        cyc = load_cycle(name)
        assert cyc.duration == length and cyc.speed.max() < 34.0
        env = gym.make(ID, cycle=name)
        pol = cycle_follower(env, lookahead_s=0.5)
        obs, _ = env.reset(seed=0)
        while True:
            obs, _, term, trunc, info = env.step(pol.predict(obs)[0])
            if term or trunc:
                break
        s = info["episode_summary"]
        assert info["outcome"] == "cycle_end" and s["rms_speed_error"] < 0.5
        assert s["distance_m"] == pytest.approx(np.trapezoid(cyc.speed, cyc.time), rel=0.01)


def test_cycle_csv_and_errors(tmp_path):
    good = tmp_path / "measured.csv"
    good.write_text("time,speed,extra\n0,0,a\n0.3,1.0,b\n1.0,2.0,c\n")
    cyc = load_cycle(good)
    assert cyc.name == "measured" and cyc.duration == 1.0
    np.testing.assert_allclose(cyc.resample(0.5), np.interp([0, 0.5, 1.0], cyc.time,
                                                            cyc.speed))
    for text, match in [("time,speed\n0,0\n0.5,1\n0.4,2\n", r"row 4: time is not increasing"),
                        ("time,v\n0,0\n1,1\n", r"needs columns time \[s\] and speed"),
                        ("time,speed\n0,0\n1,fast\n", r"row 3: time and speed must be"),
                        ("time,speed\n0,0\n1,-3\n", "outside"),
                        ("time,speed\n0.5,0\n1,1\n", "row 2: time must start at 0")]:
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        with pytest.raises(ValueError, match=match):
            gym.make(ID, cycle=bad)
    seg = tmp_path / "bad.yaml"
    seg.write_text("segments:\n  - [0, 5]\n")
    with pytest.raises(ValueError, match="segment 0 has duration 0"):
        load_cycle(seg)
    seg.write_text("segmets: []\n")
    with pytest.raises(ValueError, match="unknown key 'segmets'"):
        load_cycle(seg)
    with pytest.raises(ValueError, match="unknown cycle 'nope'; available: highway"):
        gym.make(ID, cycle="nope")


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"driver": {"mode": "speed", "actuator": abs}}, ValueError,
     "Python actuator cannot run inside the C\\+\\+ env core"),
    ({"driver": "cruise"}, ValueError, "unknown mode 'cruise'"),
    ({"driver": {"delay_s": -1}}, ValueError, "delay_s must be >= 0"),
    ({"pedal_actuator": {"tau": 1}}, ValueError, "unknown key 'tau'"),
    ({"driver": {"mode": "pedal", "kp": 1.0}}, ValueError, "'pedal'.*takes only delay_s"),
    ({"driver": {"mode": "pedal", "delay_s": -0.1}}, ValueError, "delay_s must be >= 0"),
    ({"control_period": 0.12}, ValueError, "not a whole multiple of substep_dt"),
    ({"level": "L1"}, TypeError, "got an unexpected keyword argument 'level'"),
    ({"reward_weights": {"speed": 1}}, ValueError, "unknown reward weight 'speed'"),
])
def test_bad_env_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        gym.make(ID, **kwargs)


def test_delay_not_a_whole_number_of_substeps_warns_and_rounds():
    with pytest.warns(DelayRoundingWarning, match="rounded to 3"):
        env = gym.make(ID, cycle=SHORT, driver={"delay_s": 0.16})
    ref = gym.make(ID, cycle=SHORT, driver={"delay_s": 0.15})
    for e in (env, ref):
        e.reset(seed=0)
    for _ in range(30):
        assert env.step(np.array([0.2]))[4]["speed"] == ref.step(np.array([0.2]))[4]["speed"]


def test_pedal_actuator_lags_the_pedal():
    env = gym.make(ID, cycle=SHORT, driver=None, pedal_actuator={"time_constant": 0.2})
    env.reset(seed=0)
    info = env.step(np.array([1.0]))[4]
    a = 1.0 - math.exp(-0.05 / 0.2)  # the exact hold of a first-order lag (lag.hpp)
    assert info["pedal"] == pytest.approx(1 - (1 - a) ** 2, rel=1e-12)  # two substeps


def test_pedal_mode_robot_presses_the_action_delay_s_late():
    """driver={"mode": "pedal", "delay_s": d}: the pedal of the driverless bench, shifted
    by d / substep_dt substeps (0 before), with the same speeds once shifted; the
    action is named pedal."""
    kw = {"control_period": 0.05, "cycle": SHORT}
    env = gym.make(ID, driver={"mode": "pedal", "delay_s": 0.3}, **kw)
    ref = gym.make(ID, driver=None, **kw)
    assert env.unwrapped.action_names == ("pedal",) and env.unwrapped.longitudinal == "pedal"
    acts = np.random.default_rng(0).uniform(-1, 1, (120, 1)).astype(np.float32)
    env.reset(seed=0)
    ref.reset(seed=0)
    late = [env.step(a)[4]["pedal"] for a in acts]
    now = [ref.step(a)[4]["pedal"] for a in acts]
    assert late[:6] == [0.0] * 6 and late[6:] == now[:-6]
    # a pedal-mode run of the bench: the same as the driverless one fed six zeros first
    env.reset(seed=0)
    ref.reset(seed=0)
    zeros = np.zeros((6, 1), np.float32)
    v_late = [env.step(a)[4]["speed"] for a in acts]
    v_now = [ref.step(a)[4]["speed"] for a in np.concatenate([zeros, acts])][:120]
    assert v_late == v_now


# ------------------------------------------------------------------ RobotDriverWrapper


def test_wrapper_on_a_driverless_bench_equals_the_built_in_driver():
    kw = {"control_period": 0.05, "cycle": SHORT}  # the wrapper's driver steps per env step
    inner = gym.make(ID, driver={"mode": "speed", "delay_s": 0.2}, **kw)
    wrapped = RobotDriverWrapper(gym.make(ID, **kw), "speed", delay_s=0.2)
    assert wrapped.unwrapped.longitudinal == "pedal"
    o1, _ = inner.reset(seed=1)
    wrapped.reset(seed=1)
    pol = cycle_follower(inner, lookahead_s=0.5)
    for _ in range(150):
        a = pol.predict(o1)[0]
        o1, _, t1, u1, i1 = inner.step(a)
        _, _, t2, u2, i2 = wrapped.step(a)
        assert i1["speed"] == i2["speed"] and (t1, u1) == (t2, u2)
        assert i2["driver"]["reference"] == pytest.approx(0.5 * (a[0] + 1) * 40.0)
        if t1 or u1:
            break


def test_wrapper_actuator_has_the_last_word_and_reset_reaches_it():
    seen = []

    class Stuck:
        resets = 0

        def __call__(self, throttle, brake, dt):
            seen.append((throttle, brake))
            return 0.0, 0.0  # the pedal never moves

        def reset(self):
            Stuck.resets += 1

    env = RobotDriverWrapper(gym.make(ID, cycle=SHORT), "speed", actuator=Stuck())
    env.reset(seed=0)
    for _ in range(20):
        info = env.step(np.array([0.5]))[4]
    assert info["pedal"] == 0.0 and info["speed"] == 0.0 and seen[-1][0] > 0.0
    env.reset(seed=0)
    assert Stuck.resets == 2


def test_wrapper_on_the_acc_longitudinal_channel():
    env = RobotDriverWrapper(gym.make("VDSim-ACC-v0", scenario="follow", duration=5.0),
                             "accel", delay_s=0.1)
    assert env.unwrapped.longitudinal == "pedal"
    env.reset(seed=0)
    info = env.step(np.array([0.5]))[4]
    assert info["driver"]["reference"] == pytest.approx(0.5 * 3.0)  # max_acceleration 3
    for _ in range(40):
        info = env.step(np.array([0.5]))[4]
    assert info["ax"] > 0.5  # the driver pushes the pedal towards the target
    # the env's own action check and error (InvalidActionError, a ValueError)
    with pytest.raises(ValueError, match=r"out of range: actions must be in \[-1, 1\]"):
        env.step(np.array([1.5]))


def test_sweep_on_the_dyno():
    res = sweep(cycle_follower, ID, latencies=[None, LatencyModel.fixed(0.3)], seeds=2,
                num_envs=4, progress=False, cycle=SHORT)
    assert {"rms_speed_error", "energy_wh", "distance_m"} <= set(res.metrics)
    assert [s.latency for s in res.summary] == ["none", "fixed 300 ms"]
    assert all(r.rms_speed_error < 1.5 for r in res.table)


def test_closed_loop_eval_runs_on_the_dyno():
    from vdsim_gym.eval import ClosedLoopEval

    env = gym.make(ID, cycle=SHORT)
    res = ClosedLoopEval(env=env, policy=cycle_follower(env), mode="virtual_async",
                         latency=LatencyModel.fixed(0.05), overrun="queue", duration=5.0).run()
    assert res.stats["n_samples"] == 50 and res.meta["level"] == "dyno"
    assert res.meta["driver"] == {"mode": "speed"} and res.meta["accel_conversion"] is None


def test_wrapper_on_a_path_env_keeps_the_steer_and_holds_the_speed():
    env = RobotDriverWrapper(gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0),
                             "speed", delay_s=0.1)
    env.reset(seed=0)
    for _ in range(100):
        info = env.step(np.array([0.0, 0.0]))[4]  # straight, v_ref = 20 m/s
    assert info["driver"]["reference"] == 20.0
    assert env.unwrapped.state[3] == pytest.approx(20.0, abs=0.2)
    assert env.unwrapped.plant_observation()["delta_rw"] == 0.0  # steer 0 passed through
    env.step(np.array([0.5, 0.0]))
    assert env.unwrapped.plant_observation()["delta_rw"] > 0.0
