"""ClosedLoopEval's env form on its fast path (EnvPolicyRun._loop_fast: the core stepped and
each sample recorded by one C++ call, the columns built at the end) against the Python
loop it replaces (EnvPolicyRun._loop, the reference): the same trace, samples and stats,
bit for bit, in every timing configuration, and the same errors."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.controllers import acc_pid, cycle_follower, stanley_pi
from vdsim_gym.errors import ControllerError, InvalidActionError
from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.eval.env_run import EnvPolicyRun


def run(env_id: str, make, fast: bool, monkeypatch, env_kwargs=None, wrap=None, **kw):
    env = gym.make(env_id, **(env_kwargs or {}))
    if wrap is not None:
        env = wrap(env)
    policy = make(env)
    ev = ClosedLoopEval(env=env, policy=policy, seed=0, **kw)
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(EnvPolicyRun, "fast", lambda self: False)
        else:
            assert ev._env_run.fast()
        return ev.run()


def assert_same(a, b) -> None:
    for part in ("trace", "samples"):
        A, B = getattr(a, part), getattr(b, part)
        assert list(A) == list(B), part
        for key in A:
            if key == "t_compute_s":  # wall time
                continue
            x, y = np.asarray(A[key]), np.asarray(B[key])
            assert x.dtype == y.dtype and x.shape == y.shape, (part, key)
            np.testing.assert_array_equal(x, y, err_msg=f"{part}[{key}]")
    # repr: NaN statistics compare equal as text
    assert repr({k: v for k, v in a.stats.items() if k != "t_compute_max_s"}) == \
        repr({k: v for k, v in b.stats.items() if k != "t_compute_max_s"})
    assert a.meta == b.meta


CASES = {
    "sync": ("VDSim-DLC-v0", stanley_pi, {}, dict(mode="sync", duration=3.0)),
    "fixed": ("VDSim-DLC-v0", stanley_pi, {},
              dict(mode="virtual_async", latency=LatencyModel.fixed(0.01), duration=3.0)),
    "queue": ("VDSim-DLC-v0", stanley_pi, {},
              dict(mode="virtual_async", latency=LatencyModel.uniform(0.0, 0.05),
                   overrun="queue", duration=3.0)),
    "skip": ("VDSim-DLC-v0", stanley_pi, {},
             dict(mode="virtual_async", latency=LatencyModel.uniform(0.0, 0.05),
                  overrun="skip", duration=3.0)),
    "sensor": ("VDSim-DLC-v0", stanley_pi, {},
               dict(mode="virtual_async", latency=LatencyModel.fixed(0.01),
                    obs_delay=LatencyModel.uniform(0.0, 0.03), duration=3.0)),
    "network": ("VDSim-DLC-v0", stanley_pi, {},
                dict(mode="virtual_async", latency=LatencyModel.fixed(0.01),
                     network=NetworkModel(drop=0.2, jitter=LatencyModel.uniform(0.0, 0.04)),
                     duration=3.0)),
    "env_network": ("VDSim-DLC-v0", stanley_pi,
                    {"network": NetworkModel(drop=0.1, jitter=LatencyModel.uniform(0, 0.03))},
                    dict(mode="sync", duration=3.0)),
    "episode_end": ("VDSim-DLC-v0", stanley_pi, {},
                    dict(mode="virtual_async", latency=LatencyModel.fixed(0.01),
                         duration=30.0)),
    "acc": ("VDSim-ACC-v0", acc_pid, {},
            dict(mode="virtual_async", latency=LatencyModel.fixed(0.05), duration=15.0)),
    "path_follow": ("VDSim-PathFollow-v0", stanley_pi, {}, dict(mode="sync", duration=4.0)),
    "dyno": ("VDSim-Dyno-v0", cycle_follower, {},
             dict(mode="virtual_async", latency=LatencyModel.uniform(0.0, 0.3),
                  overrun="queue", duration=60.0)),
    "dyno_accel": ("VDSim-Dyno-v0", cycle_follower, {"driver": "accel"},
                   dict(mode="sync", duration=60.0)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fast_env_form_equals_the_python_loop(case, monkeypatch):
    env_id, make, env_kwargs, kw = CASES[case]
    fast = run(env_id, make, True, monkeypatch, env_kwargs, **kw)
    ref = run(env_id, make, False, monkeypatch, env_kwargs, **kw)
    assert_same(fast, ref)
    assert fast.stats["n_samples"] > 50
    if case == "network":
        assert fast.stats["n_lost"] > 0 and fast.stats["n_discarded"] > 0
    if case == "episode_end":
        assert fast.stats["outcome"] == "course_end"
    if case == "queue":
        assert fast.stats["n_overrun"] > 0


def test_measured_latency_on_the_fast_path(monkeypatch):
    res = run("VDSim-DLC-v0", stanley_pi, True, monkeypatch, mode="virtual_async",
              latency=LatencyModel.measured(), duration=1.0)
    c, wall = res.samples["c_k"], res.samples["t_compute_s"]
    np.testing.assert_array_equal(c, wall)  # the measured wall time is the delay
    assert np.all(wall > 0) and len(c) == 50


class StopAt:
    """A Stanley + PI policy that stops its evaluation during its k-th call."""

    def __init__(self, env, k: int) -> None:
        self.inner, self.k, self.calls, self.ev = stanley_pi(env), k, 0, None

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        self.calls += 1
        if self.calls == self.k:
            self.ev.stop()
        return self.inner.predict(obs, state, episode_start, deterministic)


@pytest.mark.parametrize("fast", [True, False])
def test_a_stop_during_a_call_ends_both_forms_alike(fast, monkeypatch):
    results = []
    for use_fast in (fast, False):
        env = gym.make("VDSim-DLC-v0")
        policy = StopAt(env, 40)
        ev = ClosedLoopEval(env=env, policy=policy, seed=0, mode="virtual_async",
                            latency=LatencyModel.fixed(0.01), duration=3.0)
        policy.ev = ev
        with monkeypatch.context() as m:
            if not use_fast:
                m.setattr(EnvPolicyRun, "fast", lambda self: False)
            results.append(ev.run())
    fast_res, ref = results
    assert_same(fast_res, ref)
    assert fast_res.stats["stopped_early"] and fast_res.stats["n_samples"] == 40
    assert not fast_res.samples["applied"][-1]


class Bad:
    def __init__(self, env, what: str, at: int = 5) -> None:
        self.inner, self.what, self.at, self.calls = stanley_pi(env), what, at, 0

    def predict(self, obs, state=None, episode_start=None, deterministic=True):
        self.calls += 1
        action, s = self.inner.predict(obs)
        if self.calls == self.at:
            if self.what == "raise":
                raise RuntimeError("boom")
            if self.what == "nan":
                return np.array([math.nan, 0.0], np.float32), s
            if self.what == "list":  # converted, not refused
                return [float(action[0]), 5.0], s
        return action, s


@pytest.mark.parametrize("what", ["raise", "nan"])
def test_policy_errors_are_the_same_on_both_paths(what, monkeypatch):
    messages = []
    for fast in (True, False):
        env = gym.make("VDSim-DLC-v0")
        ev = ClosedLoopEval(env=env, policy=Bad(env, what), seed=0, mode="virtual_async",
                            latency=LatencyModel.fixed(0.01), duration=1.0)
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(EnvPolicyRun, "fast", lambda self: False)
            with pytest.raises(ControllerError if what == "raise" else InvalidActionError
                               ) as info:
                ev.run()
        messages.append(str(info.value))
        # The env is usable afterwards: the next run goes through.
        ev2 = ClosedLoopEval(env=env, policy=stanley_pi(env), seed=0, mode="sync",
                             duration=0.2)
        assert ev2.run().stats["n_samples"] == 10
    assert messages[0] == messages[1] and "sample k=4" in messages[0]


def test_an_action_that_needs_converting_is_clipped_alike(monkeypatch):
    results = []
    for fast in (True, False):
        env = gym.make("VDSim-DLC-v0")
        ev = ClosedLoopEval(env=env, policy=Bad(env, "list"), seed=0, mode="sync",
                            duration=1.0)
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(EnvPolicyRun, "fast", lambda self: False)
            results.append(ev.run())
    assert_same(*results)
    assert results[0].samples["u_pedal"][4] == 1.0  # 5.0 clipped


class Scaled(gym.ActionWrapper):
    """A wrapper that changes the step: the fast path must not go around it."""

    def action(self, action):
        return np.asarray(action) * 0.5


def test_wrappers_and_rendering_take_the_python_loop():
    env = gym.make("VDSim-DLC-v0")
    assert ClosedLoopEval(env=env, policy=stanley_pi(env), mode="sync",
                          duration=0.1)._env_run.fast()
    wrapped = Scaled(gym.make("VDSim-DLC-v0"))
    ev = ClosedLoopEval(env=wrapped, policy=stanley_pi(wrapped), mode="sync", duration=1.0,
                        seed=0)
    assert not ev._env_run.fast()
    plain = ClosedLoopEval(env=gym.make("VDSim-DLC-v0"), policy=stanley_pi(env),
                           mode="sync", duration=1.0, seed=0).run()
    halved = ev.run()
    assert not np.array_equal(halved.trace["X"], plain.trace["X"])  # the wrapper acted
    rendered = gym.make("VDSim-DLC-v0", render_mode="rgb_array")
    assert not ClosedLoopEval(env=rendered, policy=stanley_pi(rendered), mode="sync",
                              duration=0.1)._env_run.fast()
