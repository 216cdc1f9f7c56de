"""Thread safety (docs/ENVS.md, "Threads"): one env, vector env or evaluation used from
two threads at once is refused with ConcurrentUseError (the second caller, while the
first is inside its step: injected by blocking the first inside, no timing); different
objects on different threads give bit for bit what they give one after the other."""

from __future__ import annotations

import threading

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.errors import ConcurrentUseError


def _blocked_inside(obj, attr, call, second):
    """Runs ``call`` on a thread with ``obj.attr`` blocked until the main thread has
    tried ``second``; returns the exception ``second`` raised (or None)."""
    inside, release = threading.Event(), threading.Event()
    real = getattr(obj, attr)

    def blocking(*a, **k):
        inside.set()
        release.wait(10)
        return real(*a, **k)

    setattr(obj, attr, blocking)
    worker = threading.Thread(target=call)
    worker.start()
    assert inside.wait(10)
    try:
        second()
        caught = None
    except ConcurrentUseError as exc:
        caught = exc
    finally:
        release.set()
        worker.join(10)
        setattr(obj, attr, real)
    return caught


def test_one_env_on_two_threads_is_refused_and_stays_usable():
    env = gym.make("VDSim-DLC-v0")
    env.reset(seed=0)
    base = env.unwrapped
    a = np.zeros(2, np.float32)
    exc = _blocked_inside(base, "_stepper", lambda: env.step(a), lambda: env.step(a))
    assert exc is not None and "DoubleLaneChangeEnv is in use by another thread" in str(exc)
    assert isinstance(exc, RuntimeError)
    exc = _blocked_inside(base, "_stepper", lambda: env.step(a), lambda: env.reset(seed=1))
    assert exc is not None
    # the refused calls changed nothing: the env steps on from two steps
    _, _, _, _, info = env.step(a)
    assert info["t"] == pytest.approx(3 * base.control_period)


class _Forward:
    """Forwards every attribute to ``inner``, so that one can be blocked on the wrapper."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)


def test_one_vector_env_on_two_threads_is_refused():
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=2)
    venv.reset(seed=0)
    a = np.zeros((2, 2), np.float32)
    session = venv._session
    venv._session = _Forward(session)  # the step's C++ call, blocked inside
    try:
        exc = _blocked_inside(venv._session, "step_fast", lambda: venv.step(a),
                              lambda: venv.step(a))
    finally:
        venv._session = session
    assert exc is not None and "VDSimVectorEnv is in use" in str(exc)
    _, _, _, _, info = venv.step(a)  # the refused call changed nothing
    assert info["t"] == pytest.approx(np.full(2, 2 * venv.envs[0].control_period))
    venv.close()


def test_one_closed_loop_eval_run_twice_at_once_is_refused():
    from vdsim_gym.eval import ClosedLoopEval

    env = gym.make("VDSim-DLC-v0")
    ev = ClosedLoopEval(env=env, policy=stanley_pi(env), duration=1.0)
    exc = _blocked_inside(ev, "_run_guarded", ev.run, ev.run)
    assert exc is not None and "ClosedLoopEval (a run is in progress)" in str(exc)
    assert ev.run().stats["e_y_rmse_m"] > 0  # and runs again after


def _rollout(env_id: str, seed: int, steps: int = 150) -> np.ndarray:
    env = gym.make(env_id)
    policy = stanley_pi(env) if env_id != "VDSim-ACC-v0" else None
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        a = policy.predict(obs)[0] if policy else rng.uniform(-0.5, 0.5, 1).astype(np.float32)
        obs, _, term, trunc, _ = env.step(a)
        out.append(obs)
        if term or trunc:
            obs, _ = env.reset()
    env.close()
    return np.array(out)


def test_different_envs_on_different_threads_are_bit_identical_to_sequential():
    jobs = [("VDSim-DLC-v0", 0), ("VDSim-PathFollow-v0", 1), ("VDSim-ACC-v0", 2),
            ("VDSim-DLC-v0", 3)]
    sequential = [_rollout(e, s) for e, s in jobs]
    threaded: list = [None] * len(jobs)

    def run(i):
        threaded[i] = _rollout(*jobs[i])

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for seq, thr in zip(sequential, threaded, strict=True):
        np.testing.assert_array_equal(seq, thr)
