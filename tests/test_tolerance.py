"""The delay-tolerance search: the Clopper-Pearson bound against scipy's beta quantile, the
search on synthetic pass/fail curves with known answers, and the command end to end."""

from __future__ import annotations

import csv
import math
import subprocess
import sys

import pytest

from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.tolerance import (
    Point,
    clopper_pearson_lower,
    find_tolerance,
    min_episodes,
    tolerance,
)


@pytest.mark.parametrize("k, n", [(1, 10), (5, 10), (9, 10), (60, 64), (63, 64), (500, 1000),
                                  (999, 1000)])
def test_clopper_pearson_is_the_beta_quantile(k, n):
    from scipy.stats import beta

    # The one-sided lower bound is Beta(k, n - k + 1)'s 5 % quantile.
    assert clopper_pearson_lower(k, n) == pytest.approx(beta.ppf(0.05, k, n - k + 1),
                                                        abs=1e-9)


def test_clopper_pearson_edges_and_the_episodes_needed():
    assert clopper_pearson_lower(0, 64) == 0.0
    assert clopper_pearson_lower(64, 64) == pytest.approx(0.05 ** (1 / 64))
    assert min_episodes() == 59  # 0.05^(1/59) = 0.9505 >= 0.95 > 0.05^(1/58)
    assert 0.05 ** (1 / 59) >= 0.95 > 0.05 ** (1 / 58)
    with pytest.raises(ConfigError):
        clopper_pearson_lower(5, 4)


def curve(edge: int, n: int = 64):
    """A synthetic controller: every episode succeeds at or below ``edge`` ticks, a third
    fail above it; the evaluations are counted."""
    calls = []

    def evaluate(t: int) -> Point:
        calls.append(t)
        k = n if t <= edge else (2 * n) // 3
        lower = clopper_pearson_lower(k, n)
        return Point(t, t * 5e-4, n, k, lower, lower >= 0.95)

    return evaluate, calls


@pytest.mark.parametrize("edge", [0, 1, 37, 80, 137, 999, 1000])
def test_the_search_finds_a_known_edge_to_the_tick(edge):
    evaluate, calls = curve(edge)
    res = find_tolerance(evaluate, max_ticks=1000, start_ticks=40)
    assert res.ticks == edge and res.bounded == (edge < 1000)
    assert len(calls) == len(set(calls)) <= 20  # each delay evaluated once, log-many
    assert [p.ticks for p in res.points] == sorted(calls)


def test_the_search_reports_no_tolerance_and_unbounded_ends():
    evaluate, calls = curve(-1)  # fails even without delay
    res = find_tolerance(evaluate, max_ticks=1000, start_ticks=40)
    assert res.ticks is None and calls == [0]
    evaluate, _ = curve(10**6)
    res = find_tolerance(evaluate, max_ticks=300, start_ticks=40)
    assert res.ticks == 300 and not res.bounded  # passed up to the maximum searched
    evaluate, calls = curve(137)
    res = find_tolerance(evaluate, max_ticks=1000, start_ticks=40, resolution_ticks=10)
    assert 127 <= res.ticks <= 137 and len(calls) < 10


def test_stanley_tolerates_40_ms_on_iso3888_and_compensation_more(tmp_path):
    from vdsim_gym.controllers import stanley_dc_pi, stanley_pi

    plain = tolerance(stanley_pi, "VDSim-DLC-v0", max_delay=0.06, resolution=0.01, log=False)
    assert plain.delay_s == pytest.approx(0.04) and plain.search.bounded
    p = plain.at_tolerance
    assert p.successes == p.n == 64 and p.metric["lo"] <= p.metric["mean"] <= p.metric["hi"]
    comp = tolerance(stanley_dc_pi, "VDSim-DLC-v0", max_delay=0.08, start=0.08, log=False)
    assert comp.delay_s == pytest.approx(0.08) and not comp.search.bounded
    with pytest.raises(ConfigError, match="at least 59"):
        tolerance(stanley_pi, "VDSim-DLC-v0", seeds=16)
    with pytest.raises(ConfigError, match="sets the delay"):
        tolerance(stanley_pi, "VDSim-DLC-v0", latency=None)
    with pytest.raises(ConfigError, match="kind"):
        tolerance(stanley_pi, "VDSim-DLC-v0", kind="network")


def test_the_command_writes_its_table_csvs_and_plot(tmp_path):
    # cwd=tmp_path: outside the repository root, so the installed package is imported
    out = tmp_path / "tol"
    run = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", "tolerance", "--controllers",
                          "stanley", "stanley:gain=6", "--kind", "sensor", "--max-delay",
                          "60ms", "--resolution", "20ms", "--out", str(out), "--quiet"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Delay tolerance on VDSim-DLC-v0 (sensor delay)" in run.stdout
    rows = list(csv.DictReader((out / "tolerance.csv").read_text().splitlines()))
    assert [r["controller"] for r in rows] == ["stanley", "stanley:gain=6"]
    assert all(math.isfinite(float(r["tolerance_ms"])) for r in rows)
    points = list(csv.DictReader((out / "tolerance_points.csv").read_text().splitlines()))
    assert {p["delay_ms"] for p in points} >= {"0.0", "20.0"}
    assert (out / "tolerance.png").stat().st_size > 10_000
    bad = subprocess.run([sys.executable, "-m", "vdsim_gym.cli", "tolerance", "--controllers",
                          "stanley", "--max-delay", "abc", "--out", str(out)],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1


def test_a_controller_that_cannot_be_built_fails_before_any_search(tmp_path, monkeypatch):
    # The MPC without its extra: before, Stanley was searched fully and the MPC failed
    # after; now the command stops at once, naming the controller and the extra, and
    # writes nothing.
    from vdsim_gym.eval.tolerance_report import run_tolerance

    monkeypatch.setitem(sys.modules, "osqp", None)  # as if the mpc extra were missing
    out = tmp_path / "tol"
    with pytest.raises(ConfigError, match=r"--controllers mpc: .*vdsim-gym\[mpc\]"):
        run_tolerance(["stanley", "mpc"], "VDSim-DLC-v0", max_delay=0.04, out=out,
                      make_plot=False, echo=lambda *a: None, log=False)
    assert not out.exists()


def test_a_deterministic_env_with_a_metric_threshold(tmp_path):
    """The dyno: one episode per cycle, and episodes always complete; --confidence none
    takes the rate itself and --max-metric makes the speed error decide. The threshold
    moves the answer the right way, and a controller failing at 0 ms is written too."""
    from vdsim_gym.controllers import cycle_follower
    from vdsim_gym.eval.tolerance_report import run_tolerance

    kw = dict(seeds=1, scenarios=[{"cycle": "urban_stop_and_go"}], confidence=None,
              metric="rms_speed_error", max_delay=0.4, start=0.1, resolution=0.05,
              log=False, driver={"mode": "speed", "delay_s": 0.3})
    loose = tolerance(cycle_follower, "VDSim-Dyno-v0", max_metric=100.0, **kw)
    assert loose.delay_s == pytest.approx(0.4) and not loose.search.bounded
    strict = tolerance(cycle_follower, "VDSim-Dyno-v0", max_metric=0.5, **kw)
    assert strict.delay_s is not None and 0.0 < strict.delay_s < 0.4
    assert strict.at_tolerance.metric["mean"] <= 0.5
    assert tolerance(cycle_follower, "VDSim-Dyno-v0", max_metric=0.01, **kw).delay_s is None
    with pytest.raises(ConfigError, match="confidence=None for a deterministic env"):
        tolerance(cycle_follower, "VDSim-Dyno-v0", **{**kw, "confidence": 0.95})
    results = run_tolerance(["cycle_follower"], "VDSim-Dyno-v0", seeds=1, confidence=None,
                            metric="rms_speed_error", max_metric=0.01, max_delay=0.2,
                            env_kwargs={"driver": {"mode": "speed", "delay_s": 0.3}},
                            scenarios=[{"cycle": "urban_stop_and_go"}], out=tmp_path,
                            log=False, make_plot=False, echo=lambda *a: None)
    assert results[0].delay_s is None
    row = next(csv.DictReader((tmp_path / "tolerance.csv").read_text().splitlines()))
    assert row["tolerance_ms"] == "nan" and row["metric_mean"] == "nan"


def test_an_interrupted_search_keeps_the_delays_it_evaluated(tmp_path, monkeypatch, capsys):
    """Ctrl-C during the third sweep: the points file holds the two delays evaluated before
    it, the first controller's finished row is in tolerance.csv, a previous run's files are
    gone, and the interrupt goes on to the command (which exits 130)."""
    import vdsim_gym.eval.sweeps as sweeps
    from vdsim_gym.eval.tolerance_report import run_tolerance

    real, calls = sweeps.sweep, []

    def flaky(*args, **kwargs):
        calls.append(kwargs["latencies"])
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sweeps, "sweep", flaky)
    (tmp_path / "tolerance.png").write_bytes(b"old")
    kw = dict(seeds=1, confidence=None, metric="rms_speed_error", max_metric=0.5,
              max_delay=0.1, start=0.1, env_kwargs={"driver": {"mode": "speed", "delay_s": 0.3}},
              scenarios=[{"cycle": "urban_stop_and_go"}], out=tmp_path, log=False,
              make_plot=False, echo=lambda *a: None)
    with pytest.raises(KeyboardInterrupt):
        run_tolerance(["cycle_follower", "cycle_follower:lookahead_s=0.3"], "VDSim-Dyno-v0",
                      **kw)
    points = list(csv.DictReader((tmp_path / "tolerance_points.csv").read_text().splitlines()))
    assert [(p["controller"], p["delay_ms"]) for p in points] == [
        ("cycle_follower", "0.0"), ("cycle_follower", "100.0"),
        ("cycle_follower:lookahead_s=0.3", "0.0")]
    rows = list(csv.DictReader((tmp_path / "tolerance.csv").read_text().splitlines()))
    assert [r["controller"] for r in rows] == ["cycle_follower"]
    assert not (tmp_path / "tolerance.png").exists()
    assert "the 3 delays evaluated so far are in" in capsys.readouterr().err


def test_sigterm_stops_the_command_with_its_points_kept(tmp_path):
    """A scheduler's SIGTERM mid-search: exit 130, one line naming the files, and the
    points evaluated so far on disk (as with Ctrl-C)."""
    import signal
    import time

    out = tmp_path / "tol"
    proc = subprocess.Popen([sys.executable, "-m", "vdsim_gym.cli", "tolerance", "--controllers",
                             "stanley", "stanley_dc", "--max-delay", "400ms", "--out", str(out),
                             "--no-plot"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=tmp_path)
    points = out / "tolerance_points.csv"
    deadline = time.monotonic() + 120
    while not points.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the search ended before the signal"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "delays evaluated so far are in" in err and err.strip().endswith("interrupted")
    rows = list(csv.DictReader(points.read_text().splitlines()))
    assert rows and rows[0]["controller"] == "stanley"


def test_a_pass_above_the_tolerance_is_warned_about():
    from vdsim_gym.eval.tolerance import Point, Tolerance, ToleranceSearch
    from vdsim_gym.eval.tolerance_report import non_monotone

    def point(ticks, successes):
        return Point(ticks, ticks * 5e-4, 64, successes, 0.0, successes >= 63)

    # the case: 41.0 ms the tolerance, 42.5 ms failed (33/64), 45 ms passed (63/64)
    pts = (point(0, 64), point(40, 64), point(80, 64), point(82, 64), point(85, 33),
           point(90, 63), point(160, 10))
    r = Tolerance("stanley", "computation", ToleranceSearch(82, True, pts), 5e-4, "rms_e_y")
    text = non_monotone(r)
    assert text is not None and "45.0 ms (63/64) passed above the tolerance" in text
    assert "42.5 ms (33/64) failed below that" in text
    clean = (point(0, 64), point(40, 64), point(82, 64), point(85, 33), point(160, 10))
    assert non_monotone(Tolerance("stanley", "computation", ToleranceSearch(82, True, clean),
                                  5e-4, "rms_e_y")) is None


def test_numpy_integers_count_and_booleans_do_not():
    """np.int64 counts were refused (isinstance int) and True passed as 1 trial."""
    import numpy as np

    from vdsim_gym.errors import ConfigError
    from vdsim_gym.eval.tolerance import clopper_pearson_lower, find_tolerance

    assert clopper_pearson_lower(np.int64(59), np.int64(59)) == \
        clopper_pearson_lower(59, 59)
    assert clopper_pearson_lower(59, 59, np.float32(0.95)) == pytest.approx(
        clopper_pearson_lower(59, 59, 0.95), rel=1e-6)
    for k, n in ((True, 1), (1, True)):
        with pytest.raises(ConfigError, match="need 0 <= k <= n"):
            clopper_pearson_lower(k, n)
    with pytest.raises(ConfigError, match="max_ticks must be an integer >= 1, got True"):
        find_tolerance(lambda t: None, max_ticks=True, start_ticks=1)
