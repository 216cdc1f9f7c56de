"""Same seed, same result, bit for bit, on any BLAS/OpenMP thread count and in any process
(every delay of a loop on, too: sensor, computation, network, actuation channels).

The rollouts below run in fresh subprocesses under different thread settings (so every
course is built anew there, not taken from this process's cache) and must hash equal to
each other and to this process. The linear algebra of course building (the smooth DLC
line's QP and the spline) runs in the core in plain loops; its solvers are checked here
against numpy's on well-conditioned problems.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

from vdsim_gym import _core

ROLLOUT = r"""
import hashlib, sys
import gymnasium as gym
import numpy as np
import vdsim_gym
from vdsim_gym import LatencyModel, NetworkModel
from vdsim_gym.controllers import stanley_pi

# every delay of a loop at once: sensor, computation, network, actuation channels
ALL = {"obs_delay": LatencyModel.uniform(0.0, 0.05, seed=2),
       "latency": LatencyModel.uniform(0.0, 0.03, seed=4),
       "network": NetworkModel(drop=0.1, burst=(0.05, 0.5),
                               jitter=LatencyModel.uniform(0.0, 0.01, seed=1)),
       "channel_delays": {"steer": 0.01, "longitudinal": 0.03}}
h = hashlib.sha256()
for env_id, kw in (("VDSim-DLC-v0", {"preset": "iso3888_1", "level": "L2"}),
                   ("VDSim-DLC-v0", {"preset": "iso3888_2", "level": "L1",
                                     "latency": LatencyModel.uniform(0.0, 0.03, seed=4)}),
                   ("VDSim-DLC-v0", {"preset": "iso3888_1", **ALL}),
                   ("VDSim-PathFollow-v0", {"level": "L1"})):
    env = gym.make(env_id, **kw)
    policy = stanley_pi(env)
    obs, _ = env.reset(seed=7)
    h.update(env.unwrapped.course.path.tobytes())
    for _ in range(60):
        obs, reward, term, trunc, info = env.step(policy.predict(obs)[0])
        h.update(obs.tobytes())
        h.update(np.float64(reward).tobytes())
        if term or trunc:
            break
venv = gym.make_vec("VDSim-DLC-v0", num_envs=3, preset="lane_change_3p5_30")
obs, _ = venv.reset(seed=1)
for _ in range(20):
    obs, rew, *_ = venv.step(np.tile([0.05, 0.1], (3, 1)))
    h.update(obs.tobytes())
    h.update(rew.tobytes())
venv.close()
venv = gym.make_vec("VDSim-DLC-v0", num_envs=3, threads=2, preset="lane_change_3p5_30", **ALL)
obs, _ = venv.reset(seed=1)
for _ in range(30):
    obs, rew, term, trunc, info = venv.step(np.tile([0.05, 0.1], (3, 1)))
    h.update(obs.tobytes())
    h.update(info["obs_tick"].tobytes())
venv.close()
sys.stdout.write(h.hexdigest())
"""

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _digest_in_subprocess(threads: int | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    if threads is not None:
        env.update({k: str(threads) for k in THREAD_VARS})
    # cwd outside the repository: `python -c` puts the cwd first on sys.path, and the
    # source tree has no built core (the installed package must be the one imported).
    out = subprocess.run([sys.executable, "-c", ROLLOUT], env=env, capture_output=True,
                         text=True, timeout=300, check=False, cwd=tempfile.gettempdir())
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_rollouts_bit_identical_across_blas_thread_counts():
    digests = {threads: _digest_in_subprocess(threads) for threads in (1, 2, 3, None)}
    here: dict[str, str] = {}
    exec(compile(ROLLOUT.replace("sys.stdout.write(h.hexdigest())",
                                 "here['d'] = h.hexdigest()"), "<rollout>", "exec"),
         {"here": here})
    assert len(set(digests.values())) == 1, json.dumps(digests)
    assert here["d"] == digests[1]


def test_banded_solve_matches_numpy():
    rng = np.random.default_rng(0)
    n = 40
    mat = np.zeros((n, n))
    for d, scale in ((0, 6.0), (1, 1.0), (2, 0.5), (3, 0.25)):
        band = rng.uniform(0.5, 1.0, n - d) * scale
        mat += np.diag(band, -d) + (np.diag(band, d) if d else 0.0)
    rhs = rng.normal(size=n)
    x = _core.solve_spd_banded(mat, rhs)
    np.testing.assert_allclose(mat @ x, rhs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(x, np.linalg.solve(mat, rhs), rtol=1e-12, atol=1e-14)


def test_banded_solve_refuses_indefinite_matrix():
    with pytest.raises(ValueError, match="not positive definite"):
        _core.solve_spd_banded(np.array([[1.0, 2.0], [2.0, 1.0]]), np.ones(2))


def test_box_qp_matches_the_closed_form():
    """min 1/2 |y - c|^2 with 0 <= y_i <= 1 and y_0 fixed: the answer is clip(c) with y_0
    replaced (H = I, A = I), which the ADMM iteration must reach to its tolerance."""
    n = 12
    c = np.linspace(-1.0, 2.0, n)
    hess = np.eye(n)
    # 1/2 |y - c|^2 = 1/2 y'y - c'y + const: put -c'y in through a fixed extra unknown
    # y_n = 1 coupled by H[i, n] = -c_i.
    big = np.zeros((n + 1, n + 1))
    big[:n, :n] = hess
    big[:n, n] = big[n, :n] = -c
    big[n, n] = 1.0
    a = np.hstack([np.eye(n), np.zeros((n, 1))])
    y, iters, primal, dual = _core.solve_box_qp(
        big, a, np.zeros(n), np.ones(n), np.array([0, n]), np.array([0.25, 1.0]), rho=1.0,
        tol=1e-10, max_iter=20000)
    expected = np.clip(c, 0.0, 1.0)
    expected[0] = 0.25
    assert iters < 20000 and primal < 1e-10 and dual < 1e-10
    np.testing.assert_allclose(y[:n], expected, atol=1e-8)
    assert hashlib.sha256(y.tobytes()).hexdigest() == hashlib.sha256(
        _core.solve_box_qp(big, a, np.zeros(n), np.ones(n), np.array([0, n]),
                           np.array([0.25, 1.0]), rho=1.0, tol=1e-10,
                           max_iter=20000)[0].tobytes()).hexdigest()
