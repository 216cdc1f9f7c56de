"""Domain randomization (``randomize=``): per-episode draws from np_random, applied to the
core (vehicle, steering actuator, latency model), reported in info and episode_params,
bit for bit against envs built with the drawn parameters, in the single env, the vector
env (against SyncVectorEnv) and the SB3 adapter (against DummyVecEnv); clear errors."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from _helpers import canon
from test_vector import assert_same_infos, make_pair, run_pair

from vdsim_gym import LatencyModel, load_vehicle
from vdsim_gym.sim.randomization import Randomization, parse_randomize_text
from vdsim_gym.wrappers import LatencyWrapper

FULL = {"mass": [0.9, 1.15], "cg_x": [-0.1, 0.1], "friction": [0.8, 1.0],
        "cornering_stiffness": [0.85, 1.15], "actuator_lag": [0.01, 0.06],
        "latency": {"mean": [0.0, 0.04], "jitter": [0.0, 0.5]}}
ACTUATOR = {"time_constant": 0.03, "rate_limit": 3.0}
SHORT = {"course_length": 40.0}


def _rollout(env: gym.Env, seed: int, steps: int = 120) -> tuple[np.ndarray, list[dict]]:
    """Seeded random actions until the episode ends (or ``steps``); obs and infos."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    rows, infos = [obs], [info]
    for _ in range(steps):
        a = rng.uniform(-0.3, 0.3, env.action_space.shape).astype(np.float32)
        obs, r, term, trunc, info = env.step(a)
        rows.append(obs)
        infos.append({k: v for k, v in info.items() if k != "randomization"})
        if term or trunc:
            break
    return np.array(rows), infos


def test_nominal_ranges_are_bit_identical_to_no_randomization():
    """Ranges pinned at the nominal values (scales 1, shift 0, the env's own lag and a
    fixed delay) go through every setter and reproduce the plain env bit for bit."""
    pinned = {"mass": [1, 1], "cg_x": [0, 0], "friction": [1, 1],
              "cornering_stiffness": [1, 1], "actuator_lag": [0.03, 0.03],
              "latency": [0.02, 0.02]}
    for env_id in ("VDSim-DLC-v0", "VDSim-PathFollow-v0"):
        kw = {"actuator": ACTUATOR}
        a = gym.make(env_id, randomize=pinned, **kw)
        b = gym.make(env_id, latency=LatencyModel.fixed(0.02), **kw)
        for seed in (0, 1):
            (o1, i1), (o2, i2) = _rollout(a, seed), _rollout(b, seed)
            np.testing.assert_array_equal(o1, o2)
            assert canon(i1[1:]) == canon(i2[1:])
        assert a.unwrapped.episode_params.values == {
            "mass": 1.0, "cg_x": 0.0, "friction": 1.0, "cornering_stiffness": 1.0,
            "actuator_lag": 0.03, "latency_mean": 0.02, "latency_jitter": 0.0}
    # no ranges at all: None and {} are the plain env
    assert gym.make("VDSim-DLC-v0", randomize={}).unwrapped.randomize is None


@pytest.mark.parametrize("env_id", ["VDSim-PathFollow-v0", "VDSim-ACC-v0"])
def test_an_episode_equals_an_env_built_with_its_drawn_parameters(env_id):
    """Each episode's rollout equals gym.make with that episode's vehicle, actuator and
    latency model (episode_params), bit for bit; the drawn values are applied as
    documented (mass and yaw inertia scaled, the CG shifted forward, friction at kept
    slip stiffness, cornering stiffness at kept peak)."""
    if env_id == "VDSim-ACC-v0":
        rnd = {k: v for k, v in FULL.items() if k != "actuator_lag"}
        kw: dict[str, Any] = {"duration": 6.0}
    else:
        rnd, kw = FULL, {"actuator": ACTUATOR, **SHORT}
    env = gym.make(env_id, randomize=rnd, **kw)
    nominal = env.unwrapped.vehicle
    seen = set()
    for seed in (3, 4):
        o1, i1 = _rollout(env, seed)
        ep = env.unwrapped.episode_params
        v = ep.values
        assert i1[0]["randomization"] == v
        veh = ep.vehicle
        assert veh.mass == nominal.mass * v["mass"]
        assert veh.yaw_inertia == nominal.yaw_inertia * v["mass"]
        assert veh.cg_to_front == nominal.cg_to_front - v["cg_x"]
        assert math.isclose(veh.wheelbase, nominal.wheelbase, rel_tol=1e-15)
        assert veh.tire.mu == nominal.tire.mu * v["friction"]
        assert veh.tire.longitudinal.B * v["friction"] == pytest.approx(
            nominal.tire.longitudinal.B, rel=1e-15)
        assert veh.tire.lateral.B == pytest.approx(
            nominal.tire.lateral.B / v["friction"] * v["cornering_stiffness"], rel=1e-15)
        session = env.unwrapped._core.session
        assert session.vehicle.mass == veh.mass and session.vehicle.tire.mu == veh.tire.mu
        c, j = v["latency_mean"], v["latency_jitter"]
        assert ep.latency == LatencyModel.uniform(c * (1 - j), c * (1 + j))
        assert env.unwrapped.latency == ep.latency
        for info in i1[1:]:
            assert c * (1 - j) <= info["c_k"] <= c * (1 + j)
        if "actuator_lag" in rnd:
            assert ep.actuator.time_constant == v["actuator_lag"]
            assert ep.actuator.rate_limit == ACTUATOR["rate_limit"]
            assert session.actuator.time_constant == v["actuator_lag"]
        other = {k: x for k, x in kw.items() if k != "actuator"}
        ref = gym.make(env_id, vehicle=veh, actuator=ep.actuator, latency=ep.latency, **other)
        o2, i2 = _rollout(ref, seed)
        np.testing.assert_array_equal(o1, o2)
        assert canon(i1[1:]) == canon(i2[1:])
        seen.add(tuple(v.values()))
    assert len(seen) == 2  # the two seeds drew different parameters


def test_draws_are_reproducible_in_range_and_leave_the_scenario_alone():
    env = gym.make("VDSim-PathFollow-v0", randomize=FULL, actuator=ACTUATOR, **SHORT)
    plain = gym.make("VDSim-PathFollow-v0", actuator=ACTUATOR, **SHORT)
    draws = []
    for seed in range(40):
        _, info = env.reset(seed=seed)
        plain.reset(seed=seed)
        # the course and the start come from np_random before the draws: unchanged
        np.testing.assert_array_equal(env.unwrapped.course.path, plain.unwrapped.course.path)
        np.testing.assert_array_equal(env.unwrapped.state[:6], plain.unwrapped.state[:6])
        draws.append(info["randomization"])
    _, again = env.reset(seed=7)
    assert again["randomization"] == draws[7]
    _, unseeded = env.reset()  # continues the stream: a new draw
    assert unseeded["randomization"] != draws[7]
    r = Randomization.parse(FULL)
    for key, lo, hi in r.ranges:
        vals = np.array([d[key] for d in draws])
        assert np.all((vals >= lo) & (vals <= hi)), key
        assert vals.std() > 0.2 * (hi - lo) / math.sqrt(12), key  # spread over the range
    # the order of the dict does not matter: draws follow the fixed order of NAMES
    flipped = dict(reversed(list(FULL.items())))
    e2 = gym.make("VDSim-PathFollow-v0", randomize=flipped, actuator=ACTUATOR, **SHORT)
    assert e2.reset(seed=7)[1]["randomization"] == draws[7]


def test_latency_only_randomization_and_fixed_delay_per_episode():
    env = gym.make("VDSim-DLC-v0", randomize={"latency": [0.0, 0.04]}, overrun="queue")
    assert env.unwrapped.latency is not None  # the timing keys from the start
    for seed in range(3):
        _, info = env.reset(seed=seed)
        c = info["randomization"]["latency_mean"]
        assert set(info["randomization"]) == {"latency_mean", "latency_jitter"}
        assert env.unwrapped.latency == LatencyModel.fixed(c)
        _, _, _, _, step = env.step(np.zeros(2, np.float32))
        assert step["c_k"] == c
        assert env.unwrapped.episode_params.vehicle is env.unwrapped.vehicle
    # the dyno bench takes the latency range (its plant has no vehicle parameters)
    dyno = gym.make("VDSim-Dyno-v0", randomize={"latency": {"mean": [0.0, 0.05]}})
    dyno.reset(seed=0)
    dyno.step(np.zeros(1, np.float32))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"randomize": {"weight": [1, 2]}}, r"unknown name 'weight'; valid names: mass, cg_x"),
    ({"randomize": {"mass": [1.2, 0.9]}},
     r"randomize\['mass'\]: lo = 1.2 > hi = 0.9; write \[0.9, 1.2\]"),
    ({"randomize": {"mass": [0.9, float("nan")]}}, r"randomize\['mass'\]: bounds must be finite"),
    ({"randomize": {"mass": 1.1}}, r"randomize\['mass'\].*for a fixed value write \[v, v\]"),
    ({"randomize": {"mass": [0.9, 1.1, 1.2]}}, r"randomize\['mass'\]: must be a range"),
    ({"randomize": {"mass": "0.9:1.1"}}, r"randomize\['mass'\]: must be a range"),
    ({"randomize": {"mass": [0, 1]}}, r"randomize\['mass'\]: a scale must be > 0"),
    ({"randomize": {"friction": [-1, 1]}}, r"randomize\['friction'\]: a scale must be > 0"),
    ({"randomize": [("mass", [1, 1])]}, r"randomize must be a dict of named ranges"),
    ({"randomize": {"mass": [0.9, 200.0]}},
     r"at mass=200 the vehicle 'generic_sedan' is invalid: 'mass' = 300000.0 is outside"),
    ({"randomize": {"cg_x": [-0.5, 1.5]}},
     r"at cg_x=1.5 .*'cg_to_front' = -0.3.* outside.*narrow the range of 'cg_x'"),
    ({"randomize": {"friction": [0.8, 4.0]}}, r"at friction=4 .*'tire.mu'"),
    ({"randomize": {"actuator_lag": [0.02, 0.05]}},
     r"actuator_lag.*this env has none: pass actuator=\{'time_constant': 0.05\}"),
    ({"randomize": {"actuator_lag": [0.0, 20.0]}, "actuator": ACTUATOR},
     r"hi = 20.0 s exceeds 10 s.*50 ms is 0.05"),
    ({"randomize": {"latency": [0, 0.04]}, "latency": LatencyModel.fixed(0.01)},
     r"draws the latency model per episode; drop latency="),
    ({"randomize": {"latency": {"mean": [0, 0.04], "jitter": [0, 1.5]}}},
     r"jitter is a fraction of the mean in \[0, 1\]"),
    ({"randomize": {"latency": {"mean": [0, 90]}}}, r"exceeds MAX_DELAY_S.*20 ms is 0.02"),
    ({"randomize": {"latency": {"jitter": [0, 0.5]}}}, r"takes 'mean'"),
    ({"randomize": {"latency": {"mean": [0, 0.04], "sd": [0, 1]}}}, r"takes 'mean'"),
])
def test_bad_randomization_is_a_clear_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("VDSim-DLC-v0", **kwargs)


def test_randomization_refused_where_it_cannot_apply():
    with pytest.raises(ValueError, match=r"VDSim-ACC|does not steer"):
        gym.make("VDSim-ACC-v0", randomize={"actuator_lag": [0.01, 0.02]}, actuator=ACTUATOR)
    with pytest.raises(ValueError, match=r"\['mass'\]: DynoEnv does not run on the vehicle"):
        gym.make("VDSim-Dyno-v0", randomize={"mass": [0.9, 1.1]})
    env = gym.make("VDSim-DLC-v0", randomize={"latency": [0.0, 0.04]})
    with pytest.raises(ValueError, match="draws its latency model per episode"):
        env.unwrapped.configure_latency(LatencyModel.fixed(0.01))
    with pytest.raises(ValueError, match="draws its latency model per episode"):
        LatencyWrapper(env, latency=LatencyModel.fixed(0.01))
    with pytest.raises(ValueError, match="draws the latency model per episode; drop latency="):
        gym.make_vec("VDSim-DLC-v0", num_envs=2, randomize={"latency": [0, 0.04]},
                     per_env_kwargs=[{}, {"latency": LatencyModel.fixed(0.01)}])


def test_parse_randomize_text(tmp_path):
    assert parse_randomize_text("mass=0.9:1.15,friction=0.8:1.0,latency=0:40ms") == {
        "mass": [0.9, 1.15], "friction": [0.8, 1.0], "latency": {"mean": [0.0, 0.04]}}
    assert parse_randomize_text("latency=0:0.04,latency.jitter=0:0.5,actuator_lag=20ms:0.08s") \
        == {"latency": {"mean": [0.0, 0.04], "jitter": [0.0, 0.5]},
            "actuator_lag": [0.02, 0.08]}
    # a unit on the upper bound covers a bare lower one, as in the delay lists
    assert parse_randomize_text("latency=10:40ms,steer_delay=0:30ms") == {
        "latency": {"mean": [0.01, 0.04]}, "steer_delay": [0.0, 0.03]}
    f = tmp_path / "r.yml"
    f.write_text("mass: [0.9, 1.1]\nlatency: {mean: [0, 0.03], jitter: [0, 0.2]}\n")
    spec = parse_randomize_text(str(f))
    assert Randomization.parse(spec).as_dict() == {
        "mass": [0.9, 1.1], "latency": {"mean": [0.0, 0.03], "jitter": [0.0, 0.2]}}
    for bad, match in (("mass=0.9", "write name=lo:hi"), ("mass=a:1", "'a' is not a number"),
                       ("mass=1ms:2",
                        "'ms' applies to actuator_lag, latency, obs_delay, driver_delay and the"),
                       ("latency.sd=0:1", "latency takes"), ("mass.x=0:1", "no sub-keys"),
                       ("latency.jitter=0:1", "needs a mean range"), ("", "no ranges"),
                       (str(tmp_path / "none.yml"), "cannot read")):
        with pytest.raises(ValueError, match=match):
            parse_randomize_text(bad)


def test_randomized_vehicles_change_the_dynamics():
    """The test can fail: a heavier, lower-grip car under the same actions does not
    drive as the nominal one."""
    env = gym.make("VDSim-DLC-v0", randomize={"mass": [1.3, 1.3], "friction": [0.6, 0.6]})
    plain = gym.make("VDSim-DLC-v0")
    o1, _ = _rollout(env, 0, 60)
    o2, _ = _rollout(plain, 0, 60)
    assert o1.shape == o2.shape and not np.array_equal(o1, o2)
    heavy = dataclasses.replace(load_vehicle("generic_sedan"), mass=1950.0)
    assert env.unwrapped.episode_params.vehicle.mass == heavy.mass


# ---------------------------------------------------------------- vector env and SB3

@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_vector_env_with_randomization_matches_sync_vector_env(mode):
    """Each row draws from its own np_random (seeded s + i) as the single env does;
    reset infos carry "randomization" in Gymnasium's vector convention (nested arrays
    with masks), across autoresets and a partial reset, bit for bit."""
    vec, ref = make_pair("VDSim-PathFollow-v0", 3, mode, threads=2, max_episode_steps=60,
                         randomize=FULL, actuator=ACTUATOR, **SHORT)
    assert run_pair(vec, ref, seed=5, steps=150) >= 4
    _, infos = vec.reset(seed=11)
    r = infos["randomization"]
    assert set(r) == {k for k in FULL if k != "latency"} | {"latency_mean", "latency_jitter"} \
        | {f"_{k}" for k in r if not k.startswith("_")}
    assert infos["_randomization"].all() and r["mass"].dtype == np.float64
    for i in range(3):
        assert r["mass"][i] == vec.envs[i].episode_params.values["mass"]
    assert len(set(r["mass"].tolist())) == 3  # each row its own draw
    mask = np.array([False, True, False])
    o1, i1 = vec.reset(seed=[None, 9, None], options={"reset_mask": mask})
    ref.reset(seed=11)
    o2, i2 = ref.reset(seed=[None, 9, None], options={"reset_mask": mask})
    np.testing.assert_array_equal(o1, o2)
    assert_same_infos(i1, i2)
    np.testing.assert_array_equal(i1["randomization"]["_mass"], mask)
    vec.close()
    ref.close()


@pytest.mark.parametrize("mixed", [False, True], ids=["one_call_step", "general_path"])
def test_sb3_vec_env_with_randomization_matches_dummy_vec_env(mixed):
    """Reset infos (at reset and for the rows an episode end resets) carry the draws as
    DummyVecEnv's do; rows with and without latency take the adapter's general path."""
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.vec_env import DummyVecEnv

    from vdsim_gym import make_sb3_vec_env

    rnd = {k: v for k, v in FULL.items() if k != "latency"} if mixed else FULL
    per = [{}, {"latency": LatencyModel.fixed(0.01)}, {}] if mixed else [{}, {}, {}]
    kw = {"randomize": rnd, "actuator": ACTUATOR, "max_episode_steps": 50, **SHORT}
    n = 3
    ours = make_sb3_vec_env("VDSim-PathFollow-v0", n, seed=7, per_env_kwargs=per, **kw)
    assert ours.venv._fast is not mixed
    ref = DummyVecEnv([lambda p=p: gym.make("VDSim-PathFollow-v0", **kw, **p) for p in per])
    ref.seed(7)
    np.testing.assert_array_equal(ours.reset(), ref.reset())
    assert canon(ours.reset_infos) == canon(ref.reset_infos)
    assert "randomization" in ours.reset_infos[0]
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(120):
        a = rng.uniform(-0.3, 0.3, (n, 2)).astype(np.float32)
        o1, r1, d1, i1 = ours.step(a)
        o2, r2, d2, i2 = ref.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(d1, d2)
        for x, y in zip(i1, i2, strict=True):
            assert set(x) == set(y)
        for i in np.flatnonzero(d1):
            assert canon(ours.reset_infos[i]) == canon(ref.reset_infos[i])
        ends += int(d1.sum())
    assert ends >= 3
    ours.close()


# ---------------------------------------------------------------- the dyno's driver delay

@pytest.mark.parametrize("driver", ["speed", {"mode": "pedal", "delay_s": 0.0}])
def test_dyno_driver_delay_draws_equal_an_env_built_with_that_delay(driver):
    """Each episode's drawn transport delay, snapped to whole driver steps, is what an env
    built with ``driver={..., "delay_s": d}`` drives bit for bit; the draws span the range
    and are reported in info and episode_params."""
    kw = {"cycle": "urban_stop_and_go", "time_limit": 40.0}
    env = gym.make("VDSim-Dyno-v0", driver=driver, randomize={"driver_delay": [0.2, 0.6]}, **kw)
    mode = driver if isinstance(driver, str) else driver["mode"]
    seen = set()
    for seed in range(6):
        o1, i1 = _rollout(env, seed, 300)
        d = env.unwrapped.episode_params.driver_delay
        _, info = env.reset(seed=seed)
        assert info["randomization"] == {"driver_delay": d}
        steps = round(d / 0.05)
        assert math.isclose(d, steps * 0.05) and 4 <= steps <= 12
        assert env.unwrapped._core.driver_delay_steps == steps
        seen.add(steps)
        built = gym.make("VDSim-Dyno-v0", driver={"mode": mode, "delay_s": steps * 0.05}, **kw)
        o2, i2 = _rollout(built, seed, 300)
        np.testing.assert_array_equal(o1, o2)
        assert canon(i1[1:]) == canon(i2[1:])
        assert built.unwrapped.episode_params.driver_delay == pytest.approx(d)
    assert len(seen) >= 3  # the test can fail: the draws do change the delay
    plain = gym.make("VDSim-Dyno-v0", driver=driver, **kw)
    o3, _ = _rollout(plain, 0, 300)
    o4, _ = _rollout(env, 0, 300)
    assert not np.array_equal(o3, o4)  # 0 s against the drawn delay


def test_dyno_driver_delay_in_the_vector_env_matches_sync_vector_env():
    vec, ref = make_pair("VDSim-Dyno-v0", 3, "next_step", threads=2, time_limit=8.0,
                         randomize={"driver_delay": [0.3, 0.5]})
    assert run_pair(vec, ref, seed=3, steps=200) >= 3
    _, infos = vec.reset(seed=4)
    d = infos["randomization"]["driver_delay"]
    assert [vec.envs[i].episode_params.driver_delay for i in range(3)] == d.tolist()
    vec.close()
    ref.close()


def test_dyno_driver_delay_errors():
    with pytest.raises(ValueError, match=r"DoubleLaneChangeEnv has none \(only VDSim-Dyno-v0"):
        gym.make("VDSim-DLC-v0", randomize={"driver_delay": [0.3, 0.5]})
    with pytest.raises(ValueError, match=r"no robot driver \(driver=None.*pass driver='speed'"):
        gym.make("VDSim-Dyno-v0", driver=None, randomize={"driver_delay": [0.3, 0.5]})
    with pytest.raises(ValueError, match=r"driver_delay'\]: a transport delay in \[0, MAX"):
        gym.make("VDSim-Dyno-v0", randomize={"driver_delay": [-0.1, 0.5]})
    env = gym.make("VDSim-Dyno-v0", randomize={"driver_delay": [0.3, 0.5]})
    with pytest.raises(ValueError, match="it needs a driver"):
        env.unwrapped.set_driver(None)
    env.reset(seed=0)  # still usable
    env.step(np.zeros(1, np.float32))
    assert parse_randomize_text("driver_delay=300:500ms") == {"driver_delay": [0.3, 0.5]}
    with pytest.raises(ValueError, match="steps must be in"):
        env.unwrapped._core.set_driver_delay_steps(-1)


def test_dyno_observe_driver_delay_is_the_episodes_delay_and_nothing_else_changes():
    """``observe_driver_delay=True`` appends ``driver_delay`` [s]: each episode's drawn
    delay (episode_params) at reset and every step, in the single and the vector env; the
    other columns, rewards and infos are bit for bit the env without it."""
    kw = {"cycle": "urban_stop_and_go", "time_limit": 20.0,
          "randomize": {"driver_delay": [0.275, 0.525]}}
    env = gym.make("VDSim-Dyno-v0", observe_driver_delay=True, **kw)
    plain = gym.make("VDSim-Dyno-v0", **kw)
    assert env.unwrapped.obs_names == (*plain.unwrapped.obs_names, "driver_delay")
    assert env.observation_space.shape == (11,)
    assert env.unwrapped.obs_scale[-1] == 1.0
    seen = set()
    for seed in range(5):
        o1, i1 = _rollout(env, seed, 150)
        o2, i2 = _rollout(plain, seed, 150)
        d = env.unwrapped.episode_params.driver_delay
        seen.add(round(d, 6))
        np.testing.assert_array_equal(o1[:, :-1], o2)
        np.testing.assert_array_equal(o1[:, -1], np.float32(d))
        assert canon(i1) == canon(i2)
    assert len(seen) >= 3  # the column does follow the draws
    fixed = gym.make("VDSim-Dyno-v0", observe_driver_delay=True,
                     driver={"mode": "speed", "delay_s": 0.35})
    obs, _ = fixed.reset(seed=0)
    assert obs[-1] == np.float32(0.35)
    vec, ref = make_pair("VDSim-Dyno-v0", 3, "next_step", threads=2, time_limit=8.0,
                         observe_driver_delay=True, randomize={"driver_delay": [0.3, 0.5]})
    assert run_pair(vec, ref, seed=5, steps=200) >= 3
    obs, infos = vec.reset(seed=6)
    np.testing.assert_array_equal(obs[:, -1], infos["randomization"]["driver_delay"]
                                  .astype(np.float32))
    vec.close()
    ref.close()


def test_dyno_observe_driver_delay_errors():
    with pytest.raises(ValueError, match=r"has none \(driver=None.*pass driver='speed'"):
        gym.make("VDSim-Dyno-v0", driver=None, observe_driver_delay=True)
    with pytest.raises(ValueError, match="observe_driver_delay must be True or False"):
        gym.make("VDSim-Dyno-v0", observe_driver_delay="yes")
    env = gym.make("VDSim-Dyno-v0", observe_driver_delay=True)
    with pytest.raises(ValueError, match="observe_driver_delay=True observes"):
        env.unwrapped.set_driver(None)
    assert env.unwrapped.physics.driver is not None  # refused before any change
    env.reset(seed=0)
    obs, *_ = env.step(np.zeros(1, np.float32))
    assert obs.shape == (11,)


# ------------------------------------------------------- the draws in C++ against Python

def _python_randomize_episode(env: Any) -> None:
    """The slow, obviously correct reference of the core's randomize_episode
    (vdsim/randomization.hpp): Randomization.draw from np_random, then each draw applied
    through the core's setters, as CoreEnv did before the draws moved into the core."""
    from vdsim_gym import _core
    from vdsim_gym.sim.physics_options import actuator_params
    from vdsim_gym.sim.randomization import EpisodeParams

    r = env.randomize
    values = r.draw(env.np_random)
    vehicle, actuator, latency = env.vehicle, env.actuator, env.latency
    if r.changes_vehicle:
        vehicle = r.vehicle(env.vehicle, values)
        env._core.set_vehicle(vehicle.to_core())
    if r.changes_actuator:
        actuator = r.actuator(env.actuator, values)
        env._core.set_actuator(*actuator_params(actuator, env.substep_dt))
    if r.changes_latency:
        latency = r.latency(values)
        env._core.set_latency(latency.spec(), getattr(_core.OverrunPolicy, env.overrun))
        env.latency = latency
    channels = getattr(env.physics, "channel_delays", (0.0, 0.0))
    if r.changes_channels:
        ticks = r.channel_delays(channels, values, env.substep_dt)
        env._core.set_channel_delays(*ticks)
        channels = (ticks[0] * env.substep_dt, ticks[1] * env.substep_dt)
    if r.changes_network:
        env.network = r.network(env._nominal_network, values)
        env._core.set_network(env.network.spec(), getattr(_core.OverrunPolicy, env.overrun))
    if r.changes_obs_delay:
        env.obs_delay = r.obs_delay(values)
        env._core.set_obs_delay(env.obs_delay.spec())
    driver_delay = getattr(env.physics, "delay_s", None)
    if r.changes_driver:
        env._core.set_driver_delay_steps(r.driver_delay(values, env.substep_dt))
        driver_delay = values["driver_delay"]
    env._episode_params = EpisodeParams(values, vehicle, actuator, latency, channels,
                                        env.network, env.obs_delay, driver_delay)
    env._reset_extra = {"randomization": dict(values)}


REFERENCE_CASES = [
    ("VDSim-DLC-v0", {"actuator": ACTUATOR, "overrun": "queue", "randomize": {
        **FULL, "steer_delay": [0.0, 0.03], "longitudinal_delay": [0.01, 0.05],
        "loss": [0.0, 0.2], "obs_delay": [0.0, 0.03]}}),
    ("VDSim-PathFollow-v0", {**SHORT, "randomize": {"mass": [0.8, 1.2], "friction": [0.7, 1.0],
                                                    "latency": [0.0, 0.05]}}),
    ("VDSim-ACC-v0", {"randomize": {"mass": [0.9, 1.1], "loss": [0.0, 0.3]}}),
    ("VDSim-Dyno-v0", {"randomize": {"driver_delay": [0.2, 0.5], "latency": [0.0, 0.05]}}),
]


@pytest.mark.parametrize("env_id,kw", REFERENCE_CASES, ids=[c[0] for c in REFERENCE_CASES])
def test_the_draws_in_cpp_equal_the_python_reference(env_id: str, kw: dict,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The core's randomize_episode draws what Randomization.draw draws and applies it as
    the Python setters do: the same values (snapped alike), the same generator state after
    them, the same episodes bit for bit."""
    fast = gym.make(env_id, **kw)
    ref = gym.make(env_id, **kw)
    monkeypatch.setattr(ref.unwrapped, "_randomize_episode",
                        lambda: _python_randomize_episode(ref.unwrapped))
    for seed in (0, 1, 2):
        (o1, i1), (o2, i2) = _rollout(fast, seed, 60), _rollout(ref, seed, 60)
        np.testing.assert_array_equal(o1, o2)
        assert canon(i1) == canon(i2)
        # the reference's core draws nothing itself: its Python record of the episode
        assert fast.unwrapped.episode_params == ref.unwrapped._episode_params
        assert fast.unwrapped.np_random.bit_generator.state == \
            ref.unwrapped.np_random.bit_generator.state
