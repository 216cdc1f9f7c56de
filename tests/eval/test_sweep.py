"""Sweeps: rows equal direct single-env rollouts, do not depend on the batch packing,
thread count or backend; the interval math; the CLI; clear errors."""

from __future__ import annotations

import csv
import dataclasses
import importlib
import math

import gymnasium as gym
import numpy as np
import pytest
from _helpers import canon

from vdsim_gym import LatencyModel
from vdsim_gym.cli import main as cli_main
from vdsim_gym.config.delays import parse_delays
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval.stats import mean_interval, t_quantile_975
from vdsim_gym.eval.sweeps import RAY_MISSING, mean_delay_ms, sweep
from vdsim_gym.tracking import ey_stats

ENV_ID = "VDSim-DLC-v0"
SHORT = {"preset": "iso3888_2", "speed": 15.0}  # ~440 steps at 0 ms
# 35 ms > Tc: every step overruns and skips (seed 0 still finishes, 1 and 2 hit a cone);
# uniform: some do. The cone-hitting episodes end early, which keeps the test fast and
# exercises the masking of finished envs.
LATENCIES = [None, LatencyModel.fixed(0.035)]
SEEDS = [0, 1, 2]


def rollout(latency, seed, *, policy_factory=stanley_pi, overrun="skip", **kwargs):
    """Ground truth: one gym.make env, reset(seed), the policy on a batch of one row."""
    env = gym.make(ENV_ID, latency=latency, overrun=overrun, **{**SHORT, **kwargs})
    obs, _ = env.reset(seed=seed)
    policy = policy_factory(env)
    e_y, ret, k = [], 0.0, 0
    while True:
        action, _ = policy.predict(obs[None], episode_start=np.array([k == 0]),
                                   deterministic=True)
        obs, reward, terminated, truncated, info = env.step(action[0])
        k += 1
        e_y.append(info["e_y"])
        ret += reward
        if terminated or truncated:
            break
    env.close()
    rmse, emax = ey_stats(e_y)  # the Python reference of the core's summary
    summary = info.get("episode_summary")
    return {"steps": k, "ey_rmse_m": rmse, "ey_max_m": emax, "episode_return": ret,
            "cone_hits": info["cone_hits"], "n_overrun": info.get("n_overrun", 0),
            "n_skipped": info.get("n_skipped", 0),
            "outcome": "terminated" if terminated else "truncated",
            "end": summary["outcome"] if summary else "time_limit", "summary": summary}


@pytest.fixture(scope="module")
def base():
    return sweep(stanley_pi, ENV_ID, latencies=LATENCIES, seeds=SEEDS, num_envs=4,
                 progress=False, **SHORT)


def test_rows_equal_single_env_rollouts(base):
    assert [(r.cell, r.seed) for r in base.table] == [(c, s) for c in (0, 1) for s in SEEDS]
    for row in base.table:
        ref = rollout(LATENCIES[row.cell], row.seed)
        for key in ("steps", "episode_return", "cone_hits", "n_overrun", "n_skipped",
                    "outcome", "end"):
            assert getattr(row, key) == ref[key], (row, key)
        # the row's metrics are the env's own episode summary, bit for bit ...
        summary = dict(ref["summary"])
        assert summary.pop("outcome") == row.end
        assert (summary.pop("steps"), summary.pop("return")) == (row.steps, row.episode_return)
        assert canon(summary) == canon(row.metrics)
        # ... and agree with the Python reference (a sum of squares in another order)
        assert row.rms_e_y == pytest.approx(ref["ey_rmse_m"], rel=1e-12)
        assert row.max_abs_e_y == ref["ey_max_m"]
        assert row.completed == (row.end == "course_end")
        assert math.isnan(row.pass_speed) != row.completed
    none, late = base.table[0], base.table[4]
    assert none.latency == "none" and none.overrun == "-" and none.completed
    assert late.latency == "fixed 35 ms" and late.mean_delay_ms == 35.0
    assert late.overrun == "skip" and late.n_overrun == late.steps == late.n_skipped
    assert not late.completed and late.end == "cone_hit"


def test_rows_do_not_depend_on_packing_or_threads(base):
    for num_envs, threads in ((1, 0), (5, 2), (64, 1)):
        res = sweep(stanley_pi, ENV_ID, latencies=LATENCIES, seeds=SEEDS, num_envs=num_envs,
                    threads=threads, progress=False, **SHORT)
        assert res.table == base.table, (num_envs, threads)
        assert res.meta["n_batches"] == math.ceil(6 / num_envs)
    # a seed's row does not depend on which other seeds run beside it
    alone = sweep(stanley_pi, ENV_ID, latencies=LATENCIES[1:], seeds=[2], progress=False,
                  **SHORT)
    assert alone.table == [dataclasses.replace(base.table[5], cell=0)]


def test_policy_object_and_random_latency_and_scenarios():
    """A policy object (one predict per step for the batch) over two scenarios, random
    delays with the queue policy: rows equal the rollouts."""
    env = gym.make(ENV_ID, **SHORT)
    policy = stanley_pi(env)  # built once: the same course geometry for both scenarios
    lat = LatencyModel.uniform(0.0, 0.03, seed=5)
    scenarios = [{}, {"speed": 12.0}]
    res = sweep(policy, ENV_ID, latencies=[lat], seeds=[4, 9], scenarios=scenarios,
                num_envs=3, overrun="queue", progress=False, **SHORT)
    assert [r.scenario for r in res.table] == ["default"] * 2 + ["speed=12.0"] * 2
    for row, sc in zip(res.table, [{}, {}, *scenarios[1:] * 2], strict=True):
        ref = rollout(lat, row.seed, policy_factory=lambda _e: policy, overrun="queue", **sc)
        assert (row.steps, row.episode_return, row.n_overrun) == \
            (ref["steps"], ref["episode_return"], ref["n_overrun"])
        assert canon(row.metrics) == canon({k: v for k, v in ref["summary"].items()
                                            if k not in ("outcome", "steps", "return")})
        assert row.overrun == "queue" and row.n_skipped == 0
    assert [s.scenario for s in res.summary] == ["default", "speed=12.0"]
    env.close()


def test_summary_math():
    x = [1.0, 2.0, 3.0, 4.0]
    mean, lo, hi = mean_interval(x)
    half = 3.182446305 * np.std(x, ddof=1) / 2.0
    assert mean == 2.5 and lo == pytest.approx(2.5 - half) and hi == pytest.approx(2.5 + half)
    assert mean_interval([5.0])[0] == 5.0 and math.isnan(mean_interval([5.0])[1])
    assert all(math.isnan(v) for v in mean_interval([]))
    assert mean_interval([2.0, 2.0, 2.0]) == (2.0, 2.0, 2.0)


@pytest.mark.parametrize("df", [1, 2, 5, 12, 30, 31, 45, 63, 200, 10_000])
def test_t_quantile_against_the_t_density(df):
    """P(0 < T < q) = 0.475, by integrating the t density (no scipy)."""
    q = t_quantile_975(df)
    logc = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    x = np.linspace(0.0, q, 200_001)
    pdf = np.exp(logc - (df + 1) / 2 * np.log1p(x * x / df))
    assert np.trapezoid(pdf, x) == pytest.approx(0.475, abs=2e-7)
    assert t_quantile_975(df) > t_quantile_975(df + 1)


def test_summary_of_a_sweep(base):
    cells = base.summary
    assert [(s.cell, s.latency, s.n) for s in cells] == [(0, "none", 3), (1, "fixed 35 ms", 3)]
    for s in cells:
        rows = [r for r in base.table if r.cell == s.cell]
        for m in base.metrics:
            values = [v for r in rows if not math.isnan(v := getattr(r, m))]
            assert canon(s.interval(m)) == canon(mean_interval(values)), m
        assert s.n_completed == sum(r.completed for r in rows)
    # 35 ms (beyond the 20 ms period, skip) fails some episodes and passes others
    assert cells[0].n_completed == 3 and 0 < cells[1].n_completed < 3
    late = [r for r in base.table if r.cell == 1]
    assert cells[1].cone_hits_mean == pytest.approx(np.mean([r.cone_hits for r in late]))
    # the pass speed is the mean over the episodes that passed only
    passed = [r.pass_speed for r in late if r.completed]
    assert cells[1].pass_speed_mean == pytest.approx(np.mean(passed), rel=1e-15)
    assert base.metrics == ("episode_return", "n_overrun", "time", "distance", "cone_hits",
                            "rms_e_y", "max_abs_e_y", "pass_speed")
    cols = base.columns()
    assert cols["seed"] == [0, 1, 2, 0, 1, 2] and cols["rms_e_y"][0] == base.table[0].rms_e_y
    assert set(base.metrics) <= set(cols)
    with pytest.raises(ValueError, match="no metric 'ey_rmse_m'.*rms_e_y"):
        cells[0].interval("ey_rmse_m")
    with pytest.raises(AttributeError, match="no field or metric"):
        _ = base.table[0].nope


def test_mean_delay():
    assert mean_delay_ms(None) == 0.0
    assert mean_delay_ms(LatencyModel.fixed(0.01)) == pytest.approx(10.0)
    assert mean_delay_ms(LatencyModel.uniform(0.0, 0.02)) == pytest.approx(10.0)
    # max(0, N(0, sd^2)) has mean sd / sqrt(2 pi)
    assert mean_delay_ms(LatencyModel.normal(0.0, 0.01)) == \
        pytest.approx(10 / math.sqrt(2 * math.pi))
    assert mean_delay_ms(LatencyModel.normal(0.01, 0.001)) == pytest.approx(10.0)


@pytest.mark.parametrize("model", [
    LatencyModel.fixed(0.012), LatencyModel.uniform(0.0, 0.03), LatencyModel.normal(0.0, 0.01),
    LatencyModel.normal(0.004, 0.01)])
def test_mean_delay_is_the_mean_of_what_the_core_draws(model):
    """The formula against 200 000 draws of the core's own generator (5 standard errors)."""
    draws = np.asarray(model.sampler(seed=1).draw_many(200_000))
    tol = 5 * draws.std() / math.sqrt(draws.size) + 1e-15
    assert abs(draws.mean() - model.mean_delay) <= tol


def test_parse_delays():
    fx = LatencyModel.fixed
    assert parse_delays("0,5,10,20,40ms") == [fx(0.0), fx(0.005), fx(0.01), fx(0.02), fx(0.04)]
    assert parse_delays("0.01s,20ms") == [fx(0.01), fx(0.02)]
    assert parse_delays("none,uniform:0-20ms@3,normal:10,5ms,normal:10+-5ms") == [
        None, LatencyModel.uniform(0.0, 0.02, seed=3), LatencyModel.normal(0.01, 0.005),
        LatencyModel.normal(0.01, 0.005)]
    # one grammar with agents/train.py --latency: colon forms and fixed: read the same
    assert parse_delays("uniform:0:40ms,normal:10:5ms,fixed:20ms") == [
        LatencyModel.uniform(0.0, 0.04), LatencyModel.normal(0.01, 0.005), fx(0.02)]
    for bad, match in (("-5ms", "negative"), ("0,5,10", "no unit"), ("", "empty"),
                       ("5,,10ms", "empty item"), ("abcms", "not a number"),
                       ("uniform:20ms", "LO-HI"), ("gamma:1ms", "unknown kind"),
                       ("uniform:20-10ms", "lo <= hi")):
        with pytest.raises(ValueError, match=match):
            parse_delays(bad)


def test_bad_input_gives_clear_errors():
    ok = dict(latencies=[None], seeds=1, progress=False)
    with pytest.raises(ValueError, match="unknown env id 'VDSim-Nope-v0'.*VDSim-DLC-v0"):
        sweep(stanley_pi, "VDSim-Nope-v0", **ok)
    with pytest.raises(ValueError, match="latencies is empty"):
        sweep(stanley_pi, ENV_ID, latencies=[], seeds=1)
    with pytest.raises(ValueError, match=r"LatencyModel.fixed\(0.01\)"):
        sweep(stanley_pi, ENV_ID, latencies=[0.01], seeds=1)
    with pytest.raises(ValueError, match="not reproducible"):
        sweep(stanley_pi, ENV_ID, latencies=[LatencyModel.measured()], seeds=1)
    with pytest.raises(ValueError, match="seeds must be >= 1"):
        sweep(stanley_pi, ENV_ID, latencies=[None], seeds=0)
    with pytest.raises(ValueError, match="duplicates"):
        sweep(stanley_pi, ENV_ID, latencies=[None], seeds=[1, 1])
    with pytest.raises(ValueError, match="num_envs"):
        sweep(stanley_pi, ENV_ID, latencies=[None], seeds=1, num_envs=0)
    with pytest.raises(ValueError, match="backend"):
        sweep(stanley_pi, ENV_ID, backend="dask", **ok)
    with pytest.raises(ValueError, match="overrun"):
        sweep(stanley_pi, ENV_ID, overrun="drop", **ok)
    with pytest.raises(ValueError, match="sweep arguments"):
        sweep(stanley_pi, ENV_ID, scenarios=[{"latency": None}], **ok)
    with pytest.raises(ValueError, match="preset"):  # the env's own message, up front
        sweep(stanley_pi, ENV_ID, scenarios=[{"preset": "nope"}], **ok)
    with pytest.raises(TypeError, match="predict"):
        sweep(42, ENV_ID, **ok)


def test_ray_missing_names_the_extra(block_import):
    block_import("ray")
    with pytest.raises(ImportError, match=r"pip install 'vdsim-gym\[ray\]'") as info:
        sweep(stanley_pi, ENV_ID, latencies=[None], seeds=1, backend="ray", progress=False)
    assert str(info.value) == RAY_MISSING


def test_progress_without_tqdm_prints(block_import, capsys):
    block_import("tqdm")
    sweep(stanley_pi, ENV_ID, latencies=[LatencyModel.fixed(0.03)], seeds=2, num_envs=1,
          progress=True, **SHORT)
    out, err = capsys.readouterr()
    assert "[sweep] 1/2 episodes" in err and "[sweep] 2/2 episodes" in err
    assert out == ""  # stdout keeps the tables
    sweep(stanley_pi, ENV_ID, latencies=[LatencyModel.fixed(0.03)], seeds=1,
          progress_label="mine", **SHORT)
    assert "[mine] 1/1 episodes" in capsys.readouterr().err
    with pytest.raises(ValueError, match="progress_label must be a string"):
        sweep(stanley_pi, ENV_ID, latencies=[None], seeds=1, progress_label=3, **SHORT)


def test_cli_progress_names_each_controller(block_import, tmp_path, capsys):
    """One bar per controller, labelled with its name and k/n (no-tqdm fallback)."""
    block_import("tqdm")
    assert cli_main(["sweep", "--compare", "stanley:gain=2", "--delays", "30ms", "--seeds", "2",
                     "--num-envs", "1", "--out", str(tmp_path), "--no-plot",
                     "--env-kwargs", '{"preset": "iso3888_2", "speed": 15.0}']) == 0
    out, err = capsys.readouterr()
    assert "[sweep 1/2: stanley] 1/2 episodes" in err
    assert "[sweep 1/2: stanley] 2/2 episodes" in err
    assert "[sweep 2/2: stanley:gain=2] 2/2 episodes" in err
    assert "[sweep" not in out and "stanley:gain=2" in out


# The guarantee for neural policies with predict="batch" (docs/SWEEPS.md): rows agree
# with any packing within this relative tolerance on the float metrics, and exactly on
# the discrete ones. An MLP's output for a row moves by ~1e-9 with its position in a
# batch on some CPUs (BLAS blocking follows the vector width), not more.
NEURAL_RTOL = 1e-6


def _close_rows(a, b, rtol):
    for ra, rb in zip(a, b, strict=True):
        da, db = ra.as_dict(), rb.as_dict()
        assert da.keys() == db.keys()
        for name, va in da.items():
            vb = db[name]
            if isinstance(va, float) and math.isnan(va):
                assert math.isnan(vb), (name, ra, rb)
            elif isinstance(va, float):
                assert va == pytest.approx(vb, rel=rtol, abs=1e-12), (name, ra, rb)
            else:
                assert va == vb, (name, ra, rb)


@pytest.fixture(scope="module")
def untrained_ppo():
    sb3 = pytest.importorskip("stable_baselines3")
    env = gym.make(ENV_ID, **SHORT)
    model = sb3.PPO("MlpPolicy", env, seed=0, device="cpu")
    env.close()
    return model


def test_sb3_policy_rows_within_tolerance_of_packing(untrained_ppo):
    """predict="batch": an (untrained) SB3 MLP's rows agree across packings within
    NEURAL_RTOL; the discrete outcomes are equal."""
    kw = dict(latencies=[None, LatencyModel.fixed(0.01)], seeds=[0, 1, 2], progress=False,
              max_episode_steps=80, **SHORT)
    a = sweep(untrained_ppo, ENV_ID, num_envs=6, **kw)
    b = sweep(untrained_ppo, ENV_ID, num_envs=5, **kw)
    _close_rows(a.table, b.table, NEURAL_RTOL)
    assert {r.end for r in a.table} <= {"time_limit", "off_corridor", "cone_hit"}
    assert any(r.end == "time_limit" and r.steps == 80 and not r.completed for r in a.table)


def test_sb3_policy_rows_exact_per_row(untrained_ppo):
    """predict="row": one predict call per row, so rows are bit-identical whatever the
    packing, and equal to a single-env rollout predicting one observation at a time."""
    kw = dict(latencies=[None, LatencyModel.fixed(0.01)], seeds=[0, 1, 2], progress=False,
              max_episode_steps=40, predict="row", **SHORT)
    a = sweep(untrained_ppo, ENV_ID, num_envs=6, **kw)
    b = sweep(untrained_ppo, ENV_ID, num_envs=4, **kw)
    assert a.table == b.table and a.meta["predict"] == "row"
    env = gym.make(ENV_ID, latency=LatencyModel.fixed(0.01), max_episode_steps=40, **SHORT)
    obs, _ = env.reset(seed=2)
    e_y, done = [], False
    while not done:
        action, _ = untrained_ppo.predict(obs[None], episode_start=np.full(1, not e_y),
                                          deterministic=True)
        obs, _, term, trunc, info = env.step(action[0])
        e_y.append(info["e_y"])
        done = term or trunc
    row = a.table[5]
    assert (row.latency, row.seed, row.steps) == ("fixed 10 ms", 2, len(e_y))
    assert row.rms_e_y == pytest.approx(ey_stats(e_y)[0], rel=1e-12)


def test_predict_mode_is_checked():
    with pytest.raises(ValueError, match="predict must be one of"):
        sweep(stanley_pi, ENV_ID, latencies=[None], seeds=1, predict="rows", progress=False)


def test_cli_writes_csv_and_png(tmp_path, capsys):
    out = tmp_path / "sw"
    rc = cli_main(["sweep", "--controller", "stanley", "--compare", "stanley:gain=2",
                   "--delays", "0,30ms", "--seeds", "2", "--num-envs", "4", "--out", str(out),
                   "--env-kwargs", '{"preset": "iso3888_2", "speed": 15.0}', "--no-progress"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "fixed 30 ms" in text and "stanley:gain=2" in text
    with (out / "sweep.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8 and rows[0]["controller"] == "stanley"
    assert {"seed", "rms_e_y", "max_abs_e_y", "cone_hits", "episode_return", "n_overrun",
            "outcome", "completed"} <= set(rows[0])
    with (out / "sweep_summary.csv").open() as fh:
        summary = list(csv.DictReader(fh))
    assert [(s["controller"], s["latency"]) for s in summary] == [
        ("stanley", "fixed 0 ms"), ("stanley", "fixed 30 ms"),
        ("stanley:gain=2", "fixed 0 ms"), ("stanley:gain=2", "fixed 30 ms")]
    assert (out / "sweep.png").stat().st_size > 10_000


def test_cli_errors(tmp_path, capsys):
    """Exit 2 and one line naming the cause (tests/test_cli_errors.py has every case)."""
    base = ["sweep", "--seeds", "1", "--out", str(tmp_path / "o"), "--no-progress"]
    for extra, match in ((["--delays=-5ms"], "negative"),
                         (["--env", "VDSim-Nope-v0"], "unknown env id"),
                         (["--seeds", "0"], "--seeds: must be an integer >= 1"),
                         (["--controller", "nope.zip"], "no such SB3 model"),
                         (["--controller", "stanley:gian=2"], "gian"),
                         (["--env-kwargs", "{bad"], "not JSON")):
        with pytest.raises(SystemExit) as info:
            cli_main(base + extra)
        err = capsys.readouterr().err
        assert info.value.code == 2 and match in err and len(err.splitlines()) == 1, err
    assert not (tmp_path / "o").exists()


def test_sb3_model_file_in_the_cli(tmp_path, capsys):
    sb3 = pytest.importorskip("stable_baselines3")
    env = gym.make(ENV_ID, **SHORT)
    sb3.PPO("MlpPolicy", env, seed=0, device="cpu").save(tmp_path / "ppo_dlc.zip")
    env.close()
    rc = cli_main(["sweep", "--controller", str(tmp_path / "ppo_dlc.zip"), "--delays", "0ms",
                   "--seeds", "2", "--out", str(tmp_path / "o"), "--no-plot", "--no-progress",
                   "--env-kwargs", '{"preset": "iso3888_2", "max_episode_steps": 40}'])
    assert rc == 0 and "ppo_dlc" in capsys.readouterr().out


@pytest.mark.ray
@pytest.mark.filterwarnings("ignore")
def test_ray_backend_equals_local(base):
    pytest.importorskip("ray")
    res = sweep(stanley_pi, ENV_ID, latencies=LATENCIES, seeds=SEEDS, num_envs=4,
                backend="ray", progress=False, **SHORT)
    assert res.table == base.table
    assert res.summary == base.summary and res.meta["backend"] == "ray"


@pytest.mark.ray
@pytest.mark.filterwarnings("ignore")
def test_ray_started_by_the_caller_stays_up(base):
    ray = pytest.importorskip("ray")
    ray.init(include_dashboard=False, log_to_driver=False, num_cpus=2)
    try:
        res = sweep(stanley_pi, ENV_ID, latencies=LATENCIES, seeds=SEEDS, num_envs=2,
                    backend="ray", batches_per_task=2, progress=False, **SHORT)
        assert res.table == base.table
        assert ray.is_initialized()
    finally:
        ray.shutdown()


def test_exports():
    import vdsim_gym.eval

    mod = importlib.import_module("vdsim_gym.eval.sweeps")
    assert set(mod.__all__) <= set(dir(mod))
    with pytest.raises(ModuleNotFoundError):  # the name is the function's, not a module's
        importlib.import_module("vdsim_gym.eval.sweep")
    assert vdsim_gym.eval.sweep is sweep and vdsim_gym.eval.SweepResult is mod.SweepResult


def test_csv_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """An interrupt while the rows are written leaves the previous file whole (a
    temporary file is renamed over it only when complete) and no temporary behind."""
    import csv as _csv

    from vdsim_gym.eval.sweeps.results import write_csv

    path = tmp_path / "sweep.csv"
    write_csv(path, [{"a": i, "b": 2 * i} for i in range(50)])
    before = path.read_text()
    real = _csv.DictWriter.writerows

    def interrupted(self, rows):
        for i, row in enumerate(rows):
            if i == 40:
                raise KeyboardInterrupt
            self.writerow(row)

    monkeypatch.setattr(_csv.DictWriter, "writerows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_csv(path, [{"a": i, "b": 0} for i in range(80)])
    monkeypatch.setattr(_csv.DictWriter, "writerows", real)
    assert path.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sweep.csv"]


def test_progress_uses_tqdm_on_a_terminal_only(monkeypatch, capsys):
    """A log file or a pipe gets one line per batch; tqdm's carriage-return redraws (its
    100 % line drawn twice) only on a terminal."""
    pytest.importorskip("tqdm")
    import sys as _sys

    from vdsim_gym.eval.sweeps.backends import _Progress

    monkeypatch.setattr(_sys.stderr, "isatty", lambda: False, raising=False)
    bar = _Progress(2, True, "piped")
    bar.update(2)
    bar.close()
    assert capsys.readouterr().err == "[piped] 2/2 episodes\n"
    monkeypatch.setattr(_sys.stderr, "isatty", lambda: True, raising=False)
    bar = _Progress(2, True, "tty")
    assert bar._bar is not None  # tqdm
    bar.close()
