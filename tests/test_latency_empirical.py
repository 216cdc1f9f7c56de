"""LatencyModel.empirical / from_wallclock (issue 29, measured distributions): draws from
recorded delays, seeded and reproducible, in the core's sampler, the envs, the vector env
and ClosedLoopEval; the distribution checked with a Kolmogorov-Smirnov test."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel
from vdsim_gym.config.delays import parse_delays
from vdsim_gym.config.latency import MAX_DELAY_S, FixedLatency
from vdsim_gym.errors import ConfigError


def _ks_statistic(draws: np.ndarray, samples: np.ndarray) -> float:
    """sup |F_draws - F_samples| over the pooled points (two empirical CDFs)."""
    grid = np.union1d(draws, samples)
    fa = np.searchsorted(np.sort(draws), grid, side="right") / draws.size
    fb = np.searchsorted(np.sort(samples), grid, side="right") / samples.size
    return float(np.max(np.abs(fa - fb)))


def test_draws_reproduce_the_recorded_distribution():
    """A log-normal set of 5000 'measured' delays; 20 000 draws at seed 7 pass a
    two-sample KS test at the 1 % level (critical value 1.63 sqrt((n + m) / (n m))), and
    every draw is one of the recorded delays."""
    rng = np.random.default_rng(1)
    samples = np.exp(rng.normal(np.log(0.012), 0.35, 5000))
    model = LatencyModel.empirical(samples, seed=7)
    draws = np.array(model.sampler().draw_many(20_000))
    n, m = draws.size, samples.size
    assert _ks_statistic(draws, samples) < 1.63 * math.sqrt((n + m) / (n * m))
    assert np.isin(draws, samples).all()
    assert model.mean_delay == pytest.approx(samples.mean(), rel=1e-12)
    assert model.max_delay == samples.max()
    # the KS check can fail: a shifted distribution does
    shifted = np.array(LatencyModel.empirical(samples * 1.1, seed=7).sampler().draw_many(20_000))
    assert _ks_statistic(shifted, samples) > 1.63 * math.sqrt((n + m) / (n * m))


def test_seeded_order_free_and_checked():
    a = LatencyModel.empirical([0.03, 0.01, 0.02], seed=5)
    b = LatencyModel.empirical(np.array([0.01, 0.02, 0.03]), seed=5)
    assert a == b and hash(a) == hash(b) and a.samples == (0.01, 0.02, 0.03)
    np.testing.assert_array_equal(a.sampler().draw_many(50), b.sampler().draw_many(50))
    assert (a.sampler().draw_many(50)
            != LatencyModel.empirical(a.samples, seed=6).sampler().draw_many(50)).any()
    assert "n=3" not in repr(a)  # the samples are not dumped into reprs
    assert a.describe()["n"] == 3
    for bad, match in (([], "non-empty"), ([0.01, -0.001], "sample 1"),
                       ([0.01, math.nan], "finite"), ([MAX_DELAY_S + 1], "MAX_DELAY_S"),
                       ("0.01", "cannot read an empirical latency CSV"), ([[0.01, 0.02]], "1-D")):
        with pytest.raises(ConfigError, match=match):
            LatencyModel.empirical(bad)
    with pytest.raises(TypeError, match="samples"):
        FixedLatency(0.01, samples=(0.01,))


def test_csv_column_and_the_delay_grammar(tmp_path):
    path = tmp_path / "delays.csv"
    path.write_text("k,c_k,other\n0,0.010,1\n1,0.030,2\n2,0.020,3\n")
    a = LatencyModel.empirical(path, seed=2)
    assert a.samples == (0.01, 0.02, 0.03)
    assert LatencyModel.empirical(str(path), column="other").samples == (1.0, 2.0, 3.0)
    with pytest.raises(ConfigError, match="no column 'x'"):
        LatencyModel.empirical(path, column="x")
    (tmp_path / "bad.csv").write_text("c_k\n0.01\nfast\n")
    with pytest.raises(ConfigError, match="line 3"):
        LatencyModel.empirical(tmp_path / "bad.csv")
    models = parse_delays(f"0,10ms,empirical:{path}@2,empirical:{path}:other")
    assert models[0] == LatencyModel.fixed(0.0) and models[1] == LatencyModel.fixed(0.01)
    assert models[2] == a
    assert models[3].samples == (1.0, 2.0, 3.0)


def test_envs_vector_env_and_closed_loop_take_it():
    """An env with an empirical model applies the drawn delays (its info's c_k are
    recorded values), reproducibly per seed, and the vector env equals SyncVectorEnv."""
    model = LatencyModel.empirical([0.004, 0.012, 0.025, 0.031], seed=3)
    env = gym.make("VDSim-DLC-v0", latency=model)
    env.reset(seed=4)
    cks = [env.step(np.zeros(2, np.float32))[4]["c_k"] for _ in range(40)]
    assert set(cks) <= set(model.samples) and len(set(cks)) > 1
    env.reset(seed=4)
    assert [env.step(np.zeros(2, np.float32))[4]["c_k"] for _ in range(40)] == cks

    kw = {"latency": model, "preset": "lane_change_3p5_30"}
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=3, **kw)
    sync = gym.vector.SyncVectorEnv([lambda: gym.make("VDSim-DLC-v0", **kw)] * 3)
    o1, _ = venv.reset(seed=11)
    o2, _ = sync.reset(seed=11)
    np.testing.assert_array_equal(o1, o2)
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.uniform(-0.2, 0.2, (3, 2)).astype(np.float32)
        r1, r2 = venv.step(a), sync.step(a)
        np.testing.assert_array_equal(r1[0], r2[0])
        np.testing.assert_array_equal(r1[1], r2[1])
        np.testing.assert_array_equal(r1[4]["c_k"], r2[4]["c_k"])

    from vdsim_gym.controllers import stanley_pi
    from vdsim_gym.eval import ClosedLoopEval

    env2 = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30")
    res = ClosedLoopEval(env=env2, policy=stanley_pi(env2), mode="virtual_async",
                         latency=model, duration=2.0, seed=1).run()
    assert set(np.asarray(res.samples["c_k"]).tolist()) <= set(model.samples)


def test_from_wallclock_takes_the_runs_applied_delays():
    class Result:  # the shape of an EvalResult: samples and meta
        samples = {"c_k": np.array([0.002, 0.004, 0.009]),
                   "applied": np.array([True, False, True])}
        meta = {"eval_mode": "wallclock"}

    m = LatencyModel.from_wallclock(Result(), seed=4)
    assert m.samples == (0.002, 0.009) and m.seed == 4
    Result.meta = {"eval_mode": "virtual_async"}
    with pytest.raises(ConfigError, match="mode-C run"):
        LatencyModel.from_wallclock(Result())
    with pytest.raises(ConfigError, match="EvalResult"):
        LatencyModel.from_wallclock(object())


def test_sweep_label_names_the_distribution():
    from vdsim_gym.eval.sweeps.grid import latency_label, mean_delay_ms

    m = LatencyModel.empirical([0.004, 0.012, 0.025, 0.018], seed=3)
    assert latency_label(m) == "empirical n=4 mean 14.75 ms (seed 3)"
    assert mean_delay_ms(m) == pytest.approx(14.75)
