"""ClosedLoopEval(env=...) without a duration runs to the episode's own end: the env's
time limit rounded onto the substep grid the way the env rounds it (the DLC's default
limit, 1.5 x course length / speed, is off the grid below 18 m/s), or the task's end drawn
at reset (ACC scenario, dyno cycle); checked against the env's own step loop, which must
end at the same step with the same outcome."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel
from vdsim_gym.controllers import cycle_follower, stanley_pi
from vdsim_gym.eval import ClosedLoopEval


def own_loop(env, policy, seed):
    """The env's own episode under ``policy``: (steps, outcome, final time [s])."""
    obs, _ = env.reset(seed=seed)
    n = 0
    while True:
        action = policy.predict(obs, episode_start=np.array([n == 0]), deterministic=True)[0]
        obs, _, terminated, truncated, info = env.step(action)
        n += 1
        if terminated or truncated:
            return n, info["outcome"], env.unwrapped.core.tick * env.unwrapped.substep_dt


@pytest.mark.parametrize("speed", [15.0, 12.3, 17.9, 18.0, 25.0])
def test_the_dlc_eval_takes_its_own_envs_time_limit(speed):
    """Every DLC speed: the default course limit (18.035 s at 15 m/s, off the 0.5 ms grid)
    is taken, rounded up as the env rounds it."""
    env = gym.make("VDSim-DLC-v0", speed=speed)
    ev = ClosedLoopEval(env=env, policy=stanley_pi(env))
    base = env.unwrapped
    assert ev._end_tick == base.core.time_limit_ticks
    assert ev.duration == pytest.approx(base.time_limit, abs=base.substep_dt)
    assert ev.duration >= base.time_limit - 1e-12


def test_the_dlc_at_15_m_s_runs_to_the_same_step_as_the_env():
    env = gym.make("VDSim-DLC-v0", speed=15.0)
    policy = stanley_pi(env)
    res = ClosedLoopEval(env=env, policy=policy, seed=0).run()
    steps, outcome, t_end = own_loop(env, policy, 0)
    assert res.stats["outcome"] == outcome and not res.stats["stopped_early"]
    assert len(res.samples["k"]) == steps and res.trace["t"][-1] == pytest.approx(t_end)


@pytest.mark.parametrize("time_limit", [2.0, 2.01234, 2.0195, 2.0205])
@pytest.mark.parametrize("mode", ["sync", "virtual_async"])
def test_a_time_limit_off_the_grid_ends_both_at_the_same_step(time_limit, mode):
    """The time limit is what ends the episode here: on and off the substep and control
    grids, in modes A and B (a delay within the period), the eval's last sample is the
    env's last step."""
    env = gym.make("VDSim-DLC-v0", speed=15.0, time_limit=time_limit)
    policy = stanley_pi(env)
    kw = {} if mode == "sync" else {"latency": LatencyModel.fixed(0.005)}
    res = ClosedLoopEval(env=env, policy=policy, mode=mode, **kw).run()
    steps, outcome, t_end = own_loop(env, policy, 0)
    assert outcome == "time_limit" == res.stats["outcome"]
    assert len(res.samples["k"]) == steps and res.trace["t"][-1] == pytest.approx(t_end)


@pytest.mark.parametrize("env_id, make_policy, outcome", [
    ("VDSim-ACC-v0", None, "scenario_end"),
    ("VDSim-Dyno-v0", cycle_follower, "cycle_end"),
])
def test_an_env_without_a_time_limit_runs_to_its_tasks_end(env_id, make_policy, outcome):
    """The ACC scenario (30 s) and the dyno cycle (184 s) end the episode, drawn at
    reset: the eval runs to that end, not to a fixed 500 periods."""
    env = gym.make(env_id)

    class Coast:
        def predict(self, obs, episode_start=None, deterministic=True):
            return np.zeros(env.action_space.shape, dtype=np.float32), None

    policy = Coast() if make_policy is None else make_policy(env)
    res = ClosedLoopEval(env=env, policy=policy, seed=3).run()
    steps, own_outcome, t_end = own_loop(env, policy, 3)
    assert own_outcome == outcome == res.stats["outcome"]
    assert len(res.samples["k"]) == steps > 500
    assert res.trace["t"][-1] == pytest.approx(t_end)
