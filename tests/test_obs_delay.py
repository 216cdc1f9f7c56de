"""The sensor delay (issue 29): ``obs_delay=LatencyModel`` on every env. Oracles a reader
can check: with open-loop actions, the observation of a run with a fixed sensor delay d (a
multiple of the control period) is the undelayed run's observation d earlier, bit for
bit, with the same rewards (reward and termination stay on the true state); a delay of
half a period is the observation of a run at half the control period, half a period
earlier (a heun plant, whose steps are one substep, so a capture changes nothing); the
capture ticks follow the stated rule, c_j = max(j P - ceil(d_j / dt), c_{j-1}), against a
plain Python version of it; fixed(0) is the run without a sensor delay."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel, NetworkModel, _core
from vdsim_gym.errors import ConfigError

ENVS = ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0")


def _run(env_id: str, n: int = 60, seed: int = 3, actions: np.ndarray | None = None,
         **kw):
    env = gym.make(env_id, **kw)
    obs, info = env.reset(seed=seed)
    if actions is None:
        rng = np.random.default_rng(0)
        actions = rng.uniform(-0.3, 0.3, (n, *env.action_space.shape)).astype(np.float32)
    out_obs, infos, rewards = [obs], [info], []
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out_obs.append(obs)
        infos.append(info)
        rewards.append(r)
        if term or trunc:
            break
    return np.array(out_obs), infos, np.array(rewards), env


@pytest.mark.parametrize("env_id", ENVS)
def test_a_whole_period_sensor_delay_is_the_undelayed_observation_that_much_earlier(env_id):
    obs0, info0, rew0, env = _run(env_id)
    period = env.unwrapped.control_period
    for m in (1, 3):
        obs, info, rew, _ = _run(env_id, obs_delay=LatencyModel.fixed(m * period))
        assert len(obs) == len(obs0)
        for k in range(len(obs)):
            np.testing.assert_array_equal(obs[k], obs0[max(k - m, 0)])
        np.testing.assert_array_equal(rew, rew0)  # scored on the true state
        for k in range(1, len(obs)):
            assert info[k]["obs_tick"] == max(info[k]["sample_tick"] + info[k]["skipped"]
                                              - (m - 1) * env.unwrapped.ticks_per_period, 0)
            assert math.isclose(info[k]["obs_age"], min(m, k) * period)
    # fixed(0): the run without a sensor delay, bit for bit (it reports age 0)
    obs, info, rew, _ = _run(env_id, obs_delay=LatencyModel.fixed(0.0))
    np.testing.assert_array_equal(obs, obs0)
    np.testing.assert_array_equal(rew, rew0)
    assert all(i["obs_age"] == 0.0 for i in info[1:])
    assert [i["t"] for i in info] == [i["t"] for i in info0]


@pytest.mark.parametrize("env_id", ["VDSim-DLC-v0", "VDSim-ACC-v0"])
def test_half_a_period_is_the_observation_of_a_finer_loop_half_a_period_earlier(env_id):
    """Captures between step ends: a 20 ms loop with a 10 ms sensor delay sees what a
    10 ms loop (the same actions held for two of its steps) sees one of its steps before.
    On heun the plant steps one substep at a time, so stopping at a capture changes
    nothing; the lead of ACC moves on within its period (the finer loop's lead moves in
    two halves: equal to rounding)."""
    kw = {"integrator": "heun", "substep_dt": 5e-4}
    coarse = gym.make(env_id, control_period=0.02, obs_delay=LatencyModel.fixed(0.01), **kw)
    fine = gym.make(env_id, control_period=0.01, **kw)
    if env_id == "VDSim-ACC-v0":  # the same lead in both: one speed per 20 ms period,
        # the finer loop given each twice
        c_core, f_core = coarse.unwrapped.core, fine.unwrapped.core
        c_core.set_obs_delay(LatencyModel.fixed(0.01).spec())
        v = 20.0 + np.sin(np.arange(400) / 20.0)
        d = np.full(400, 40.0)
        c_core.set_scenario(v, d)
        f_core.set_scenario(np.repeat(v, 2), np.repeat(d, 2))
        o_c = np.zeros(len(c_core.obs_names), np.float32)
        o_f = o_c.copy()
        i_c, i_f = np.zeros(len(c_core.info_names)), np.zeros(len(f_core.info_names))
        terms = np.zeros(len(c_core.term_names))
        c_core.reset((25.0, 25.0), o_c, i_c, 0)
        f_core.reset((25.0, 25.0), o_f, i_f, 0)
        rng = np.random.default_rng(1)
        for _ in range(100):
            a = float(rng.uniform(-0.5, 0.5))
            c_core.step(a, o_c, terms, i_c, math.nan)
            f_core.step(a, o_f, terms, i_f, math.nan)
            mid = o_f.copy()
            f_core.step(a, o_f, terms, i_f, math.nan)
            np.testing.assert_allclose(o_c, mid, rtol=0, atol=1e-6)
            assert abs(o_c[2] - o_f[2]) > 1e-5  # the gap moved on within the period
        return
    coarse = gym.make(env_id, control_period=0.02, obs_delay=LatencyModel.fixed(0.01),
                      terminate_on_cone=False, **kw)
    fine = gym.make(env_id, control_period=0.01, terminate_on_cone=False, **kw)
    oc, _ = coarse.reset(seed=5)
    of, _ = fine.reset(seed=5)
    np.testing.assert_array_equal(oc, of)
    rng = np.random.default_rng(1)
    for _ in range(100):
        a = rng.uniform(-0.1, 0.1, 2).astype(np.float32)
        oc, *_, ic = coarse.step(a)
        mid, *_ = fine.step(a)
        of, *_ = fine.step(a)
        np.testing.assert_array_equal(oc, mid)
        assert ic["obs_age"] == pytest.approx(0.01)


def _rule(ages: np.ndarray, dt: float, period: int) -> list[int]:
    """The capture ticks of grid samples 1, 2, ... by the stated rule, in plain Python."""
    out, last = [], 0
    for j, d in enumerate(ages, start=1):
        last = max(j * period - math.ceil(round(d / dt, 9)), last)
        out.append(last)
    return out


def test_capture_ticks_follow_the_causal_rule():
    model = LatencyModel.uniform(0.0, 0.07, seed=9)  # up to 3.5 periods: clamps happen
    dt, period = 5e-4, 40
    sched = _core.SensorSchedule(model.spec(), dt, period)
    sched.reset(123)
    sched.plan(40 * 500)
    got = [t for _, t in sched.captures()]
    sampler = _core.LatencySampler(model.spec())
    sampler.reseed(model.seed ^ 123)
    want = _rule(np.asarray(sampler.draw_many(len(got))), dt, period)
    assert got == want
    assert all(b >= a for a, b in zip(got, got[1:], strict=False))
    clamped = sum(1 for j in range(1, len(got)) if got[j] == got[j - 1])
    assert clamped > 10  # the rule's max is exercised
    # the env reports the same rule: observation ticks never go back, ages within the model
    _, info, _, env = _run("VDSim-DLC-v0", n=200, obs_delay=model,
                           latency=LatencyModel.uniform(0.0, 0.03, seed=1))
    ticks = [i["obs_tick"] for i in info[1:]]
    assert all(b >= a for a, b in zip(ticks, ticks[1:], strict=False))
    ages = np.array([i["obs_age"] for i in info[1:]])
    assert ages.min() >= 0.0 and ages.max() <= 0.07 + 1e-12  # clamps make it younger
    for i in info[1:]:
        end = i["sample_tick"] + (1 + i["skipped"]) * period
        assert i["obs_age"] == pytest.approx((end - i["obs_tick"]) * dt)


def test_ages_below_a_period_are_drawn_per_sample_on_the_substep_grid():
    """Ages shorter than a period never clamp: each is ceil(d / dt) substeps of a draw, and
    their distribution is the model's (mean within 4 SE)."""
    lo, hi = 0.002, 0.018
    from vdsim_gym.controllers import stanley_pi

    env = gym.make("VDSim-PathFollow-v0", obs_delay=LatencyModel.uniform(lo, hi, 4),
                   course_length=400.0)
    policy = stanley_pi(env)  # tracks the course for the whole run
    obs, _ = env.reset(seed=3)
    ages_l = []
    for _ in range(400):
        obs, _, term, trunc, info = env.step(policy.predict(obs)[0])
        ages_l.append(info["obs_age"])
        assert not term
    ages = np.array(ages_l[1:])
    assert len(ages) > 300
    ticks = np.round(ages / 5e-4)
    np.testing.assert_allclose(ages, ticks * 5e-4, atol=1e-12)
    assert ticks.min() >= math.ceil(lo / 5e-4) and ticks.max() <= math.ceil(hi / 5e-4)
    mean = 0.5 * (lo + hi) + 0.5 * 5e-4  # ceil adds half a substep on average
    se = (hi - lo) / math.sqrt(12 * len(ages))
    assert abs(ages.mean() - mean) < 4 * se
    assert len(np.unique(ticks)) > 20


def test_action_history_stays_current_and_episodes_reseed():
    kw = {"obs_delay": LatencyModel.uniform(0.0, 0.06, seed=2), "action_history": 2}
    env = gym.make("VDSim-DLC-v0", **kw)
    names = env.unwrapped.obs_names
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    prev = np.zeros(2, np.float32)
    for _ in range(30):
        a = rng.uniform(-0.3, 0.3, 2).astype(np.float32)
        obs, *_ = env.step(a)
        np.testing.assert_array_equal(obs[names.index("action_1_steer")], a[0])
        np.testing.assert_array_equal(obs[names.index("action_2_steer")], prev[0])
        prev = a

    def obs_ticks(seed: int) -> list[int]:
        env.reset(seed=seed)
        return [env.step(np.zeros(2, np.float32))[4]["obs_tick"] for _ in range(20)]

    assert obs_ticks(4) == obs_ticks(4)  # the reset seed reseeds the ages
    assert obs_ticks(4) != obs_ticks(5)


def test_vector_env_equals_sync_with_every_delay_on():
    kw = {"obs_delay": LatencyModel.uniform(0.0, 0.05, seed=3),
          "latency": LatencyModel.uniform(0.0, 0.03, seed=1),
          "network": NetworkModel(drop=0.1, seed=2), "preset": "iso3888_1"}
    for threads in (1, 2):
        venv = gym.make_vec("VDSim-DLC-v0", num_envs=3, threads=threads, **kw)
        sync = gym.vector.SyncVectorEnv([lambda: gym.make("VDSim-DLC-v0", **kw)] * 3)
        np.testing.assert_array_equal(venv.reset(seed=2)[0], sync.reset(seed=2)[0])
        rng = np.random.default_rng(0)
        for _ in range(60):
            a = rng.uniform(-0.3, 0.3, (3, 2)).astype(np.float32)
            r1, r2 = venv.step(a), sync.step(a)
            for x, y in zip(r1[:4], r2[:4], strict=True):
                np.testing.assert_array_equal(x, y)
            for key in ("obs_age", "obs_tick", "lost", "apply_tick"):
                np.testing.assert_array_equal(r1[4][key], r2[4][key])


def test_randomized_sensor_delay_is_the_env_with_that_delay_bit_for_bit():
    kw = {"preset": "lane_change_3p5_30", "terminate_on_cone": False}
    env = gym.make("VDSim-DLC-v0", randomize={"obs_delay": [0.0, 0.08]}, **kw)
    for seed in (1, 2):
        obs, info = env.reset(seed=seed)
        d = info["randomization"]["obs_delay"]
        assert 0.0 <= d <= 0.08 and env.unwrapped.episode_params.obs_delay.c == d
        fixed = gym.make("VDSim-DLC-v0", obs_delay=LatencyModel.fixed(d), **kw)
        np.testing.assert_array_equal(obs, fixed.reset(seed=seed)[0])
        for _ in range(30):
            a = np.array([0.05, 0.1], np.float32)
            r1, r2 = env.step(a), fixed.step(a)
            np.testing.assert_array_equal(r1[0], r2[0])
            assert r1[4]["obs_age"] == r2[4]["obs_age"]


@pytest.mark.parametrize("kw, match", [
    ({"obs_delay": 0.03}, r"LatencyModel.fixed\(0.03\)"),
    ({"obs_delay": LatencyModel.measured()}, "drawn from a model"),
    ({"obs_delay": "30ms"}, "must be a LatencyModel"),
    ({"obs_delay": LatencyModel.fixed(0.03), "randomize": {"obs_delay": [0.0, 0.05]}},
     "drop obs_delay="),
    ({"randomize": {"obs_delay": [0.0, 90.0]}}, "sensor age in"),
])
def test_bad_sensor_delays_name_the_fix(kw, match):
    with pytest.raises(ConfigError, match=match):
        gym.make("VDSim-DLC-v0", **kw)


def test_configure_obs_delay_requires_a_reset_and_keeps_the_env_usable():
    env = gym.make("VDSim-ACC-v0")
    env.reset(seed=0)
    env.unwrapped.configure_obs_delay(LatencyModel.fixed(0.04))
    with pytest.raises(gym.error.ResetNeeded, match="sensor delay changed"):
        env.step(np.zeros(1, np.float32))
    env.reset(seed=0)
    assert env.step(np.zeros(1, np.float32))[4]["obs_age"] == pytest.approx(0.02)
    assert env.step(np.zeros(1, np.float32))[4]["obs_age"] == pytest.approx(0.04)
    env.unwrapped.configure_obs_delay(None)
    env.reset(seed=0)
    assert "obs_age" not in env.step(np.zeros(1, np.float32))[4]


def test_sweep_cli_obs_delay_axis(tmp_path, capsys):
    """vdsim-gym sweep --obs-delays 0,20ms,60ms: one scenario column per sensor delay (0
    without one), the error growing with the age; a bad value is one line."""
    import csv

    from vdsim_gym.cli import main as cli_main

    assert cli_main(["sweep", "--delays", "10ms", "--obs-delays", "0,20ms,60ms", "--seeds",
                     "3", "--num-envs", "9", "--out", str(tmp_path), "--no-plot",
                     "--no-progress"]) == 0
    with open(tmp_path / "sweep_summary.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["scenario"] for r in rows] == [
        "default", "obs_delay=fixed 20 ms", "obs_delay=fixed 60 ms"]
    rmse = [float(r["rms_e_y_mean"]) for r in rows]
    assert rmse[0] < rmse[1] < rmse[2]
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        cli_main(["sweep", "--obs-delays", "0,twenty", "--seeds", "1"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--obs-delays" in err[0]


def test_train_randomize_text_takes_obs_delay_in_milliseconds():
    from vdsim_gym.training.options import parse_randomize

    r = parse_randomize("obs_delay=0:50ms,loss=0:0.1")
    assert r.range("obs_delay") == (0.0, 0.05) and r.changes_obs_delay
    assert r.as_dict()["obs_delay"] == [0.0, 0.05]
