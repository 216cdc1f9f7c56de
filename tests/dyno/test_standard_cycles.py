"""The standard cycles a dyno lab runs (envs/cycles): WLTC classes 1, 2, 3a and 3b (UN
GTR No. 15, Annex 1) and the NEDC (UNECE R83, Annex 4a), checked against the published
facts a reader can look up: each phase's duration and maximum speed, the class 3b
phases' distances and the NEDC's, every WLTC phase's speed checksum as the JRC's `wltp`
package publishes it; and the cycle-file formats (speeds at dt, points, km/h, phases)
with their errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.dyno.cycles import KMH, available_cycles, load_cycle
from vdsim_gym.errors import ConfigError

WLTC_PHASES = ("low", "medium", "high", "extra_high")
# (phase, duration s, maximum speed km/h) of each class, GTR No. 15 Annex 1
PUBLISHED = {
    "wltc_class1": [("low", 589, 49.1), ("medium", 433, 64.4), ("low", 589, 49.1)],
    "wltc_class2": list(zip(WLTC_PHASES, (589, 433, 455, 323), (51.4, 74.7, 85.2, 123.1),
                            strict=True)),
    "wltc_class3a": list(zip(WLTC_PHASES, (589, 433, 455, 323), (56.5, 76.6, 97.4, 131.3),
                             strict=True)),
    "wltc_class3b": list(zip(WLTC_PHASES, (589, 433, 455, 323), (56.5, 76.6, 97.4, 131.3),
                             strict=True)),
    "nedc": [("urban", 780, 50.0), ("extra_urban", 400, 120.0)],
}


def test_every_standard_cycle_loads_by_name_with_its_phases_and_source() -> None:
    assert set(PUBLISHED) <= set(available_cycles())
    for name, phases in PUBLISHED.items():
        cycle = load_cycle(name)
        assert cycle.name == name and cycle.source.startswith(("UN GTR No. 15", "UNECE"))
        assert [p[0] for p in cycle.phases] == [p[0] for p in phases]
        assert [p[2] - p[1] for p in cycle.phases] == [p[1] for p in phases]
        assert cycle.duration == sum(p[1] for p in phases)
        for (phase, start, end), (_, _, v_max) in zip(cycle.phases, phases, strict=True):
            assert cycle.max_speed(start, end) / KMH == pytest.approx(v_max, abs=1e-9), phase


def test_the_wltc_class_3b_and_nedc_distances_are_the_published_ones() -> None:
    """Class 3b: 3,095 / 4,756 / 7,162 / 8,254 m (23,266 m); NEDC: the extra-urban cycle
    6,955 m, the whole 11,007 m; each within 0.1 %. (The urban part computed from R83's
    operations is 4,058 m against the 4 x 1,013 m the regulation states: 0.15 %.)"""
    c = load_cycle("wltc_class3b")
    got = [c.distance(start, end) for _, start, end in c.phases]
    np.testing.assert_allclose(got, [3095, 4756, 7162, 8254], rtol=1e-3)
    assert c.distance() == pytest.approx(23266, rel=1e-3)
    n = load_cycle("nedc")
    assert n.distance(780, 1180) == pytest.approx(6955, rel=1e-3)
    assert n.distance() == pytest.approx(11007, rel=1e-3)
    urban = [n.distance(195 * k, 195 * (k + 1)) for k in range(4)]  # four ECE-15 cycles
    assert max(urban) - min(urban) < 1e-9


# Each phase's sum of the 1 Hz speeds [km/h] and the whole cycle's, as the JRC's `wltp`
# package (github.com/JRCSTU/wltp, wltp/cycles/class1.py, class2.py, class3.py at commit
# 18650f3: `part_checksums` and `checksum`) publishes them for the GTR's tables; class 2
# lists three parts, its extra-high phase is the total less them. Every phase starts and
# ends at standstill, so a phase's distance is its checksum / 3.6 m.
JRC_CHECKSUMS = {
    "wltc_class1": ([11988.4, 17162.8, 11988.4], 41139.6),
    "wltc_class2": ([11162.2, 17054.3, 24450.6, 81536.9 - 11162.2 - 17054.3 - 24450.6],
                    81536.9),
    "wltc_class3a": ([11140.3, 16995.7, 25646.0, 29714.9], 83496.9),
    "wltc_class3b": ([11140.3, 17121.2, 25782.2, 29714.9], 83758.6),
}


@pytest.mark.parametrize("name", sorted(JRC_CHECKSUMS))
def test_every_wltc_phase_has_the_published_speed_checksum_and_distance(name: str) -> None:
    """The distances of classes 1, 2 and 3a follow: 3,330.1 / 4,767.4 / 3,330.1 m;
    3,100.6 / 4,737.3 / 6,791.8 / 8,019.4 m; 3,094.5 / 4,721.0 / 7,123.9 / 8,254.1 m."""
    c = load_cycle(name)
    parts, total = JRC_CHECKSUMS[name]
    np.testing.assert_array_equal(np.diff(c.time), 1.0)  # the GTR's 1 Hz rows
    kmh = c.speed / KMH
    assert kmh.sum() == pytest.approx(total, abs=0.05)
    for (phase, start, end), checksum in zip(c.phases, parts, strict=True):
        rows = kmh[int(start):int(end) + 1]
        assert rows[0] == 0.0 and rows[-1] == 0.0, phase  # at standstill at both ends
        assert rows.sum() == pytest.approx(checksum, abs=0.05), phase
        assert c.distance(start, end) == pytest.approx(checksum / 3.6, rel=1e-9), phase


def test_distance_is_the_interpolation_integral() -> None:
    c = load_cycle("wltc_class2")
    t = np.linspace(0.0, c.duration, 200_001)
    v = np.interp(t, c.time, c.speed)
    assert c.distance() == pytest.approx(np.trapezoid(v, t), rel=1e-7)
    assert c.distance(100.5, 700.25) == pytest.approx(
        np.trapezoid(v[(t >= 100.5) & (t <= 700.25)], t[(t >= 100.5) & (t <= 700.25)]),
        rel=1e-4)


def test_the_dyno_drives_a_standard_cycle() -> None:
    env = gym.make("VDSim-Dyno-v0", cycle="wltc_class3b")
    env.reset(seed=0)
    assert env.unwrapped.cycle.name == "wltc_class3b"
    assert env.unwrapped.time_limit is None or env.unwrapped.time_limit >= 1800.0
    for _ in range(5):
        obs, *_ = env.step(np.zeros(1))
    assert np.isfinite(obs).all()


def test_user_cycle_files_in_km_per_hour(tmp_path) -> None:
    points = tmp_path / "mine.yaml"
    points.write_text("name: mine\nunit: km/h\nphases: [[a, 0, 10], [b, 10, 20]]\n"
                      "points: [[0, 0], [10, 36], [20, 0]]\n")
    c = load_cycle(points)
    assert c.speed.max() == pytest.approx(10.0) and c.phases[1] == ("b", 10.0, 20.0)
    assert c.distance() == pytest.approx(100.0)
    sampled = tmp_path / "sampled.yaml"
    sampled.write_text("unit: km/h\ndt: 0.5\nspeeds: [0, 18, 36, 18, 0]\n")
    assert load_cycle(sampled).duration == 2.0
    csv = tmp_path / "lab.csv"
    csv.write_text("time,speed_kmh\n0,0\n1,3.6\n2,0\n")
    assert load_cycle(csv).speed[1] == pytest.approx(1.0)


@pytest.mark.parametrize("text, match", [
    ("points: [[0, 0], [1, 1]]\nspeeds: [0, 1]\ndt: 1\n", "one way"),
    ("unit: mph\npoints: [[0, 0], [1, 1]]\n", "unit 'mph'"),
    ("speeds: [0, 1, 0]\n", "needs 'dt'"),
    ("points: [[0, 0], [1, 1]]\nphases: [[a, 0, 0.5]]\n", "phases must run from 0"),
    ("points: [[0, 0], [1, 1]]\nphases: [[a, 0, 0.5], [b, 0.6, 1]]\n", "phases must run"),
    ("points: [[0, 0], [1, 'x']]\n", "not a number"),
    ("points: [[0, 0], [0, 1]]\n", "point 1: time is not increasing"),
    ("points: [[0, 0], [1, 1]]\ncolour: red\n", "unknown key 'colour'"),
])
def test_bad_cycle_files_are_clear_errors(tmp_path, text: str, match: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_cycle(bad)


def _reference_band(cycle, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The tolerance band by brute force: the cycle's continuous speed sampled finely
    within 1 s of each grid time, 2 km/h beyond its extremes."""
    grid = np.arange(int(round(cycle.duration / dt)) + 1) * dt
    lo, hi = [], []
    for t in grid:
        window = np.linspace(max(t - 1.0, 0.0), min(t + 1.0, cycle.duration), 401)
        v = np.interp(window, cycle.time, cycle.speed)
        lo.append(v.min() - 2 * KMH)
        hi.append(v.max() + 2 * KMH)
    return np.array(lo), np.array(hi)


def test_the_speed_trace_tolerance_is_the_regulations_band() -> None:
    c = load_cycle("nedc")
    lo, hi = c.tolerance_band(0.1)
    ref_lo, ref_hi = _reference_band(c, 0.1)
    np.testing.assert_allclose(lo, ref_lo, atol=1e-9)
    np.testing.assert_allclose(hi, ref_hi, atol=1e-9)


def test_trace_violations_and_phases_count_what_the_infos_show(tmp_path) -> None:
    """A driver that lags the cycle (a 1.5 s robot delay): the summary's violation seconds
    and per-phase speed-error RMS are what the step infos give, recomputed here from the
    infos' speeds against the brute-force band, phase by phase."""
    path = tmp_path / "two.yaml"
    path.write_text("unit: km/h\nphases: [[go, 0, 20], [stop, 20, 40]]\n"
                    "points: [[0, 0], [8, 50], [20, 50], [28, 0], [30, 0], [34, 30], "
                    "[40, 0]]\n")
    env = gym.make("VDSim-Dyno-v0", cycle=str(path), driver={"delay_s": 1.5})
    cycle = load_cycle(path)
    dt = env.unwrapped.control_period
    lo, hi = _reference_band(cycle, dt)
    env.reset(seed=0)
    infos = []
    while True:
        _, _, term, trunc, info = env.step(np.array([0.0]))  # 20 m/s asked, at once
        infos.append(info)
        if term or trunc:
            break
    s = info["episode_summary"]
    k = np.array([round(i["t"] / dt) for i in infos])
    speed = np.array([i["speed"] for i in infos])
    out = (speed < lo[k] - 1e-12) | (speed > hi[k] + 1e-12)
    np.testing.assert_array_equal(out, [i["out_of_band"] for i in infos])
    assert s["trace_violations_s"] == pytest.approx(out.sum() * dt) and out.sum() > 10
    phase = np.array([i["phase"] for i in infos])
    np.testing.assert_array_equal(phase, (k * dt >= 20 - 1e-9).astype(int))
    err = np.array([i["speed_error"] for i in infos])
    for p, name in enumerate(("go", "stop")):
        rms = float(np.sqrt(np.mean(err[phase == p] ** 2)))
        assert s[f"phase_rms_speed_error_{p}"] == pytest.approx(rms, rel=1e-12)
        assert env.unwrapped.phase_summary(s)[name]["trace_violations_s"] == pytest.approx(
            out[phase == p].sum() * dt)
    assert np.isnan(s["phase_rms_speed_error_2"]) and s["cycle_index"] == 0


def test_a_cycle_with_more_phases_than_the_dyno_reports_is_refused(tmp_path) -> None:
    path = tmp_path / "many.yaml"
    path.write_text("points: [[0, 0], [5, 1]]\nphases: [[a, 0, 1], [b, 1, 2], [c, 2, 3], "
                    "[d, 3, 4], [e, 4, 5]]\n")
    with pytest.raises(ConfigError, match="5 phases; the dyno reports at most 4"):
        gym.make("VDSim-Dyno-v0", cycle=str(path))


def test_a_sweep_reports_each_cycles_phases_by_name(tmp_path) -> None:
    """``vdsim-gym sweep`` on the dyno: sweep_phases.csv and the printed table give each
    cell's cycles phase by phase, named (a repeated name numbered), with the mean over the
    episodes on that cycle of what each episode's own ``phase_summary`` gives; a cycle
    without phases adds no row; the phase fields' labels name their phase."""
    import csv

    from vdsim_gym.controllers import cycle_follower
    from vdsim_gym.eval.sweeps.compare import run_sweep
    from vdsim_gym.eval.sweeps.report import metric_label

    two = tmp_path / "two.yaml"
    two.write_text("unit: km/h\nphases: [[go, 0, 10], [stop, 10, 16], [go, 16, 24]]\n"
                   "points: [[0, 0], [6, 40], [10, 40], [14, 0], [16, 0], [20, 30], "
                   "[24, 0]]\n")
    scen = [{"cycle": [str(two), "urban_stop_and_go"], "driver": {"delay_s": 0.4}},
            {"cycle": str(two), "driver": {"delay_s": 1.0}}]
    lines: list[str] = []
    res = run_sweep(["cycle_follower"], "VDSim-Dyno-v0", "0ms", seeds=4, num_envs=4,
                    scenarios=scen, out=tmp_path / "out", make_plot=False, progress=False,
                    echo=lines.append)["cycle_follower"]
    with open(tmp_path / "out" / "sweep_phases.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    # the first cell's episodes on `two` (cycle 0), then the second cell's
    on_two = [r for r in res.table if r.cell == 0 and r.metrics["cycle_index"] == 0]
    assert 0 < len(on_two) < 4  # both cycles drawn among the four seeds
    assert [(r["cell"], r["cycle"], r["name"], int(r["n"])) for r in rows] == [
        ("0", "two", "go", len(on_two)), ("0", "two", "stop", len(on_two)),
        ("0", "two", "go_2", len(on_two)), ("1", "two", "go", 4), ("1", "two", "stop", 4),
        ("1", "two", "go_2", 4)]
    for cell, d in ((0, 0.4), (1, 1.0)):  # each episode again, by hand
        env = gym.make("VDSim-Dyno-v0", cycle=str(two), driver={"delay_s": d})
        ctrl = cycle_follower(env)
        obs, _ = env.reset(seed=0)
        while True:
            obs, _, term, trunc, info = env.step(ctrl.predict(obs)[0])
            if term or trunc:
                break
        mine = env.unwrapped.phase_summary(info["episode_summary"])
        got = {r["name"]: r for r in rows if r["cell"] == str(cell)}
        assert set(mine) == set(got)
        for name, m in mine.items():  # the cycle-follower is deterministic: every seed alike
            assert float(got[name]["rms_speed_error_mean"]) == pytest.approx(
                m["rms_speed_error"], rel=1e-9)
            assert float(got[name]["trace_violations_s_mean"]) == pytest.approx(
                m["trace_violations_s"], abs=1e-9)
    assert any(float(r["trace_violations_s_mean"]) > 0 for r in rows)  # not all zeros
    text = "\n".join(lines)
    assert "Per phase:" in text and "go_2" in text
    assert metric_label("VDSim-Dyno-v0", "phase_rms_speed_error_2", {"cycle": str(two)}) \
        == "speed error RMS [m/s], phase 2 (go_2)"
    assert metric_label("VDSim-Dyno-v0", "phase_trace_violations_s_0",
                        {"cycle": [str(two), "nedc"]}) \
        == "outside the speed-trace tolerance [s], phase 0"  # go / urban: no one name
