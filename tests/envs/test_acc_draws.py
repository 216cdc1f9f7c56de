"""The ACC scenarios the env core draws (``AccTask::draw_start``) against the numpy
version they replaced (kept here as the slow reference), bit for bit: the family's pick,
every draw in its order, the lead's speed and distance per period, the start, and the
generator's state after them."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.envs.acc_scenarios import LeadScenario
from vdsim_gym.timing import ceil_ticks, nearest_ticks


def draw(family: str, rng: np.random.Generator, *, duration: float, dt: float,
         set_speed: float | None = None) -> LeadScenario:
    """One scenario of ``family`` over ``duration`` [s] at period ``dt`` [s] (the numpy
    reference)."""
    n = nearest_ticks(duration, dt)[0] + 1
    t = np.arange(n) * dt
    v_set = float(rng.uniform(20.0, 30.0)) if set_speed is None else float(set_speed)
    speed = np.full(n, np.nan)
    dist = np.full(n, np.nan)
    v0 = v_set * float(rng.uniform(0.7, 1.0))
    if family == "follow":
        v_l = float(rng.uniform(0.5, 0.9)) * v_set
        amp, period = float(rng.uniform(0.0, 2.0)), float(rng.uniform(8.0, 20.0))
        speed[:] = v_l + amp * np.sin(2 * np.pi * t / period)
        dist[:] = float(rng.uniform(25.0, 60.0))
        v0 = v_l
    elif family == "cut_in":
        t_in = float(rng.uniform(5.0, 10.0))
        on = t >= t_in
        speed[on] = v0 - float(rng.uniform(2.0, 6.0))
        dist[on] = float(rng.uniform(10.0, 20.0))
    elif family == "hard_brake":
        v_l = float(rng.uniform(0.6, 0.9)) * v_set
        t_b, decel = float(rng.uniform(5.0, 10.0)), float(rng.uniform(4.0, 7.0))
        speed[:] = np.maximum(v_l - decel * np.clip(t - t_b, 0.0, None), 0.0)
        dist[:] = float(rng.uniform(30.0, 50.0))
        v0 = v_l
    elif family == "stop_and_go":
        v_max, period = float(rng.uniform(10.0, 15.0)), float(rng.uniform(12.0, 20.0))
        speed[:] = 0.5 * v_max * (1.0 - np.cos(2 * np.pi * t / period))
        dist[:] = float(rng.uniform(15.0, 30.0))
        v0 = 0.0
    elif family == "lead_leaves":
        v_l = float(rng.uniform(0.5, 0.8)) * v_set
        t_out = float(rng.uniform(8.0, 15.0))
        on = t < t_out
        speed[on] = v_l
        dist[on] = float(rng.uniform(25.0, 45.0))
        v0 = v_l
    return LeadScenario(family, speed, dist, v_set, v0)


def reference_reset(env: gym.Env, rng: np.random.Generator) -> LeadScenario:
    """What the env's reset drew before its core did: the family's pick, then its draws."""
    u = env.unwrapped
    family = u.families[int(rng.integers(len(u.families)))]
    return draw(family, rng, duration=u.duration, dt=u.control_period, set_speed=u.set_speed)


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


@pytest.mark.parametrize("kw", [{}, {"set_speed": 25.0}, {"scenario": "follow", "duration": 7.3},
                                {"scenario": ["cut_in", "lead_leaves"], "control_period": 0.05}],
                         ids=["random", "set_speed", "follow", "two_families"])
def test_core_draws_are_the_numpy_reference(kw: dict) -> None:
    env = gym.make("VDSim-ACC-v0", **kw)
    seen = set()
    for seed in range(40):
        _, info = env.reset(seed=seed)
        ref_rng = np.random.default_rng(seed)
        ref = reference_reset(env, ref_rng)
        sc = env.unwrapped.scenario
        assert sc.name == ref.name
        assert same(sc.lead_speed, ref.lead_speed) and same(sc.distance, ref.distance), sc.name
        assert (sc.set_speed, sc.ego_speed0) == (ref.set_speed, ref.ego_speed0)
        assert env.unwrapped.np_random.bit_generator.state == ref_rng.bit_generator.state
        assert info["ego_speed"] == ref.ego_speed0  # the start the core reset to
        seen.add(sc.name)
    assert seen == set(env.unwrapped.families)
    env.close()


def test_time_limit_none_truncates_at_the_scenarios_end() -> None:
    env = gym.make("VDSim-ACC-v0", scenario="cruise", duration=2.0, control_period=0.1)
    env.reset(seed=0)
    u = env.unwrapped
    assert u.time_limit is None
    assert u.core.time_limit_ticks == ceil_ticks(20 * 0.1, u.substep_dt)
    assert np.isnan(u.scenario.lead_speed).all() and len(u.scenario.lead_speed) == 21
    steps = 0
    truncated = False
    while not truncated:
        _, _, terminated, truncated, info = env.step(np.zeros(1, np.float32))
        assert not terminated
        steps += 1
    assert steps == 20 and info["outcome"] == "scenario_end"
    env.close()
