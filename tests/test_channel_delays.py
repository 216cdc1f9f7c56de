"""Per-channel actuation dead times (issue 29): ``channel_delays={"steer": s,
"longitudinal": s}`` on the Plant and every vehicle env. Oracles a reader can check: a
channel's dead time shifts that channel's commands by exactly that time and leaves the
other's on time, equal bit for bit to the undelayed session fed the shifted commands;
zero dead times reproduce today's runs bit for bit."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import Plant, _core
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.physics_options import make_session

P = 40  # substeps per 20 ms control period at 0.5 ms


def _commands(n: int = 60) -> np.ndarray:
    rng = np.random.default_rng(3)
    return np.column_stack([rng.uniform(-0.05, 0.05, n), rng.uniform(-0.6, 0.6, n)])


def _state(session) -> np.ndarray:
    out = np.zeros(_core.STATE_SIZE)
    session.get_state(out)
    return out


@pytest.mark.parametrize("integrator", ["etd3", "etd2", "heun"])
@pytest.mark.parametrize("steer_ticks, lon_ticks", [(40, 0), (0, 120), (60, 20), (7, 13)])
def test_a_channel_dead_time_shifts_that_channel_exactly(integrator, steer_ticks, lon_ticks):
    """The session with dead times (d_s, d_l) against one without, fed whole commands at
    every tick where either channel changes: at k P + d_s the steer of command k, at
    k P + d_l the longitudinal of command k (each channel holding its last value, the
    reset's 0 before). Multirate steps end at the same events, so the runs agree bit for
    bit, tick by tick (the state compared at every period end)."""
    cmds = _commands()
    dt = 5e-4
    step_ticks = {"etd3": 20, "etd2": 10}.get(integrator, 1)
    kw = dict(level="L2", vehicle=Plant().vehicle, substep_dt=dt, longitudinal="pedal",
              actuator=None, integrator=integrator, step_ticks=step_ticks)
    delayed = make_session(**kw, channel_delays=(steer_ticks * dt, lon_ticks * dt))
    plain = make_session(**kw)
    for s in (delayed, plain):
        s.reset(0, 0, 0, 15.0, 0, 0)
    # the reference's events: (tick, channel, value)
    events: dict[int, dict[str, float]] = {}
    for k, (steer, lon) in enumerate(cmds):
        events.setdefault(k * P + steer_ticks, {})["steer"] = steer
        events.setdefault(k * P + lon_ticks, {})["lon"] = lon
    current = {"steer": 0.0, "lon": 0.0}
    for tick in sorted(events):
        current.update(events[tick])
        plain.schedule(tick, current["steer"], current["lon"])
    for k, (steer, lon) in enumerate(cmds):
        delayed.command_now(steer, lon)
        delayed.advance(P)
        plain.advance(P)
        np.testing.assert_array_equal(_state(delayed), _state(plain), err_msg=f"period {k}")
    assert delayed.command == plain.command


def test_zero_dead_times_are_the_run_without_them_bit_for_bit():
    cmds = _commands(40)
    runs = []
    for kw in ({}, {"channel_delays": {"steer": 0.0, "longitudinal": 0.0}}):
        p = Plant(**kw)
        p.reset({"vx": 15.0})
        runs.append([tuple(p.step(c).values()) for c in cmds])
    assert runs[0] == runs[1]


def test_envs_take_channel_delays_and_the_vector_env_equals_sync():
    kw = {"channel_delays": {"steer": 0.02, "longitudinal": 0.06}, "preset": "iso3888_1"}
    env = gym.make("VDSim-DLC-v0", **kw)
    assert env.unwrapped.physics.channel_delays == (0.02, 0.06)
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=2, **kw)
    sync = gym.vector.SyncVectorEnv([lambda: gym.make("VDSim-DLC-v0", **kw)] * 2)
    np.testing.assert_array_equal(venv.reset(seed=5)[0], sync.reset(seed=5)[0])
    rng = np.random.default_rng(1)
    for _ in range(40):
        a = rng.uniform(-0.3, 0.3, (2, 2)).astype(np.float32)
        r1, r2 = venv.step(a), sync.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            np.testing.assert_array_equal(x, y)
    # and the delay acts: the same actions without it give another trajectory
    other = gym.make_vec("VDSim-DLC-v0", num_envs=2, preset="iso3888_1")
    other.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(40):
        o = other.step(rng.uniform(-0.3, 0.3, (2, 2)).astype(np.float32))[0]
    assert not np.array_equal(o, r1[0])


@pytest.mark.parametrize("value, match", [
    ({"brake": 0.02}, "unknown channel 'brake'"),
    ({"steer": -0.01}, r"\[0, 1\] s"),
    ({"steer": 2.0}, r"\[0, 1\] s"),
    ({"longitudinal": 0.0123}, "whole multiple"),
    ({"steer": float("nan")}, "dead time"),
    (0.02, "dict like"),
])
def test_bad_channel_delays_name_the_fix(value, match):
    with pytest.raises(ConfigError, match=match):
        Plant(channel_delays=value)
    with pytest.raises(ConfigError, match=match):
        gym.make("VDSim-ACC-v0", channel_delays=value)


def test_randomized_channel_delays_are_the_fixed_env_at_the_drawn_values():
    """randomize={'steer_delay': [lo, hi], 'longitudinal_delay': [lo, hi]}: each reset
    draws both (snapped to whole substeps, reported in info), and the episode is bit for
    bit the env built with channel_delays at those values (the draws come after the
    task's, so the course and start are the same)."""
    rnd = {"steer_delay": [0.0, 0.03], "longitudinal_delay": [0.02, 0.08]}
    env = gym.make("VDSim-DLC-v0", randomize=rnd, preset="lane_change_3p5_30")
    seen = set()
    for seed in (1, 2, 3):
        obs, info = env.reset(seed=seed)
        d = info["randomization"]
        ticks = (round(d["steer_delay"] / 5e-4), round(d["longitudinal_delay"] / 5e-4))
        assert d["steer_delay"] == ticks[0] * 5e-4 and 0 <= d["steer_delay"] <= 0.03
        assert 0.02 <= d["longitudinal_delay"] <= 0.08
        assert env.unwrapped.episode_params.channel_delays == (d["steer_delay"],
                                                               d["longitudinal_delay"])
        seen.add(ticks)
        fixed = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", channel_delays={
            "steer": d["steer_delay"], "longitudinal": d["longitudinal_delay"]})
        obs2, _ = fixed.reset(seed=seed)
        np.testing.assert_array_equal(obs, obs2)
        rng = np.random.default_rng(seed)
        for _ in range(30):
            a = rng.uniform(-0.3, 0.3, 2).astype(np.float32)
            r1, r2 = env.step(a), fixed.step(a)
            np.testing.assert_array_equal(r1[0], r2[0])
            assert r1[1] == r2[1]
    assert len(seen) == 3  # the draws differ by seed


def test_randomized_channel_delays_vector_env_equals_sync_and_bad_ranges_are_named():
    kw = {"randomize": {"longitudinal_delay": [0.0, 0.05]}, "preset": "iso3888_1"}
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=2, **kw)
    sync = gym.vector.SyncVectorEnv([lambda: gym.make("VDSim-DLC-v0", **kw)] * 2)
    np.testing.assert_array_equal(venv.reset(seed=9)[0], sync.reset(seed=9)[0])
    for _ in range(20):
        a = np.full((2, 2), 0.2, np.float32)
        np.testing.assert_array_equal(venv.step(a)[0], sync.step(a)[0])
    with pytest.raises(ConfigError, match=r"dead time in \[0, 1\] s"):
        gym.make("VDSim-DLC-v0", randomize={"steer_delay": [0.0, 20.0]})
    with pytest.raises(ConfigError, match="does not run on the vehicle Session"):
        gym.make("VDSim-Dyno-v0", randomize={"longitudinal_delay": [0.0, 0.05]})
