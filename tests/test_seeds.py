"""Multi-seed training statistics: the IQM and rliable's stratified bootstrap intervals on
known scores, failed runs counted, and the commands end to end on tiny runs."""

from __future__ import annotations

import csv
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("rliable")

from vdsim_gym.training.seeds import SeedScores, aggregate, iqm  # noqa: E402


def test_iqm_is_the_25_percent_trimmed_mean():
    from scipy.stats import trim_mean

    rng = np.random.default_rng(0)
    for n in (4, 5, 8, 20):
        x = rng.normal(size=n)
        assert iqm(x) == pytest.approx(trim_mean(x, 0.25))
    assert iqm([1.0, 2.0, 3.0, 100.0]) == pytest.approx(2.5)  # the outlier does not count


def scores(values, clean=None):
    v = np.asarray(values, float)
    c = np.ones_like(v, bool) if clean is None else np.asarray(clean, bool)
    return SeedScores("cfg", tuple(f"r{i}" for i in range(len(v))), ("0 ms", "40 ms"),
                      "rms_e_y", v, c)


def test_aggregate_brackets_the_iqm_and_counts_failed_runs():
    v = [[0.010, 0.020], [0.011, 0.030], [0.012, 0.025], [0.013, 0.090], [0.014, 0.022]]
    clean = [[True, True], [True, False], [True, True], [True, False], [True, True]]
    a = aggregate(scores(v, clean))
    assert a.n_runs == 5 and list(a.failed) == [0, 2]
    for j in range(2):
        col = np.array(v)[:, j]
        assert a.iqm[j] == pytest.approx(iqm(col))
        assert a.lo[j] <= a.iqm[j] <= a.hi[j]
        assert col.min() <= a.lo[j] and a.hi[j] <= col.max()
        assert a.mean[j] == pytest.approx(col.mean())
    again = aggregate(scores(v, clean))  # a fixed random state: the same interval
    assert np.array_equal(again.lo, a.lo) and np.array_equal(again.hi, a.hi)
    np.random.seed(5)
    expected = np.random.random()
    np.random.seed(5)
    aggregate(scores(v, clean))  # numpy's global generator is left as it was
    assert np.random.random() == expected
    same = aggregate(scores([[0.5, 0.5]] * 4))  # identical runs: no spread
    assert same.lo == pytest.approx([0.5, 0.5]) and same.hi == pytest.approx([0.5, 0.5])


def test_train_seeds_and_the_report_end_to_end(tmp_path):
    # cwd=tmp_path: outside the repository root, so the installed package is imported
    cmd = [sys.executable, "-m", "vdsim_gym.cli"]
    run = subprocess.run([*cmd, "train", "--seeds", "0,1", "--timesteps", "2048",
                          "--eval-freq", "1024", "--hyperparams",
                          '{"n_envs": 2, "n_steps": 512, "batch_size": 256}',
                          "--out", str(tmp_path), "--name", "tiny", "--no-progress"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "final evaluation (2048 steps, 5 episodes)" in run.stdout, run.stdout  # per seed
    assert (tmp_path / "tiny_s0" / "model.zip").exists()
    assert (tmp_path / "tiny_s1" / "model.zip").exists()
    again = subprocess.run([*cmd, "train", "--seeds", "1-2", "--timesteps", "2048",
                            "--out", str(tmp_path), "--name", "tiny", "--no-progress"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 2 and "tiny_s1 exists" in again.stderr  # before any training
    assert not (tmp_path / "tiny_s2").exists()
    par = subprocess.run([*cmd, "train", "--seeds", "2-3", "--jobs", "2", "--timesteps", "1024",
                          "--eval-freq", "100000", "--hyperparams",
                          '{"n_envs": 2, "n_steps": 512, "batch_size": 256}',
                          "--out", str(tmp_path), "--name", "par", "--no-progress"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert par.returncode == 0, par.stderr  # two worker processes, one run folder each
    assert (tmp_path / "par_s2" / "model.zip").exists()
    assert (tmp_path / "par_s3" / "model.zip").exists()
    out = tmp_path / "rep"
    rep = subprocess.run([*cmd, "seeds-report", "--runs", str(tmp_path / "tiny_s*"),
                          "--delays", "0,40ms", "--seeds", "8", "--baselines", "stanley",
                          "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    assert "e_y RMSE [m] [95 %]" in rep.stdout, rep.stdout  # the metric and its unit
    assert "tiny_s0 (1/2)" in rep.stderr and "stanley (baseline)" in rep.stderr  # progress
    rows = list(csv.DictReader((out / "seeds_report.csv").read_text().splitlines()))
    trained = [r for r in rows if r["kind"] == "trained"]
    assert [r["delay"] for r in trained] == ["fixed 0 ms", "fixed 40 ms"]
    assert all(r["runs"] == "2" and len(r["per_run"].split()) == 2 for r in trained)
    assert float(trained[0]["lo"]) <= float(trained[0]["iqm"]) <= float(trained[0]["hi"])
    assert [r["controller"] for r in rows if r["kind"] == "baseline"] == ["stanley"] * 2
    assert (out / "seeds_report.png").exists() and (out / "learning_curves.png").exists()
    missing = subprocess.run([*cmd, "seeds-report", "--runs", str(tmp_path / "nothing"),
                              "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1


def test_sigterm_stops_parallel_seeds_and_keeps_their_runs(tmp_path):
    """train --seeds --jobs 2 stopped by SIGTERM: both workers are stopped, each saves its
    run folder (model.zip), none is left running, and the command exits with 130."""
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-m", "vdsim_gym.cli", "train", "--seeds", "0,1",
                             "--jobs", "2", "--timesteps", "1000000", "--hyperparams",
                             '{"n_envs": 2, "n_steps": 256, "batch_size": 256}',
                             "--out", str(tmp_path), "--name", "stop", "--no-progress"],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 120  # both workers training: their config.yml written
    while not all((tmp_path / f"stop_s{s}" / "config.yml").exists() for s in (0, 1)):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    for s in (0, 1):
        assert (tmp_path / f"stop_s{s}" / "model.zip").exists()
        assert (tmp_path / f"stop_s{s}" / "train_time.json").exists()


def test_the_report_table_has_one_precision_per_column():
    from vdsim_gym.training.seeds_report import table

    rows = [{"controller": "a", "kind": "trained", "delay": "fixed 0 ms", "runs": 5,
             "iqm": 0.01234, "lo": 0.0119, "hi": 0.0131, "mean": 0.0124, "failed_runs": 0},
            {"controller": "b", "kind": "baseline", "delay": "fixed 0 ms", "runs": 1,
             "iqm": float("nan"), "lo": 0.1, "hi": 0.2133, "mean": 0.15, "failed_runs": 1}]
    text = table(rows, "VDSim-DLC-v0", 8, "e_y RMSE [m]")
    assert "e_y RMSE [m] [95 %]" in text.splitlines()[1]
    # the largest value (0.2133) gets four significant digits: four decimals throughout
    assert "0.0123 [0.0119, 0.0131]" in text and "0.1500 [0.1000, 0.2133]" in text


def test_reports_label_metrics_with_their_units():
    from vdsim_gym.eval.sweeps.report import metric_label

    assert metric_label("VDSim-DLC-v0", "rms_e_y") == "e_y RMSE [m]"
    assert metric_label("VDSim-DLC-v0", "episode_return") == "episode return"
    assert metric_label("VDSim-DLC-v0", "not_a_metric") == "not_a_metric"
