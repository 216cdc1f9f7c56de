"""The reference ACC workflow (vdsim_gym.eval.acc_workflow) and its segmented metrics
(vdsim_gym.eval.acc_metrics): the reference checklist's items, each against a slow,
hand-written reference or a file whose answers are known by construction."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from vdsim_gym._data import data_dir, scenarios_dir
from vdsim_gym.controllers.acc import ACCController, ACCGains, load_gains
from vdsim_gym.eval.acc_metrics import read_results, segmented_metrics, segments
from vdsim_gym.eval.acc_workflow import COLUMNS, load_config, run_workflow
from vdsim_gym.sim.plant import Plant

CONFIG = {
    "vehicle": {"max_acceleration": 3.0, "max_deceleration": 8.0},
    "acc": {"set_speed": 30.0, "time_headway": 1.5, "min_distance": 10.0,
            "emergency_ttc_threshold": 3.0},
    "simulation": {"dt": 0.5, "duration": 10.0, "initial_speed": 12.5},
}


def write_config(tmp_path: Path, **changes: dict) -> Path:
    data = {b: dict(v) for b, v in CONFIG.items()}
    for block, values in changes.items():
        data[block].update(values)
    path = tmp_path / "acc.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def write_sensor(tmp_path: Path, rows: list[tuple], name: str = "lead.csv") -> Path:
    path = tmp_path / name
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(("time", "lead_speed", "distance"))
        w.writerows(rows)
    return path


def sensor_rows(dt: float = 0.5, n: int = 21) -> list[tuple]:
    """No lead for 2 s, a lead at 40 m and 10 m/s until 6 s (its sensor distance after
    the first row deliberately wrong: 999), gone for 1 s, back at 25 m and 8 m/s."""
    rows = []
    for k in range(n):
        t = k * dt
        if t < 2.0 or 6.0 <= t < 7.0:
            rows.append((t, "", ""))
        elif t < 6.0:
            rows.append((t, 10.0, 40.0 if t == 2.0 else 999.0))
        else:
            rows.append((t, 8.0, 25.0 if t == 7.0 else 999.0))
    return rows


def read_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def num(cell: str) -> float | None:
    return None if cell == "" else float(cell)


def test_results_csv_format_logging_order_and_integrated_distance(tmp_path):
    cfg, sensor = write_config(tmp_path), write_sensor(tmp_path, sensor_rows())
    res = run_workflow(cfg, sensor, None, tmp_path / "out.csv")
    header, rows = read_rows(res.path)
    assert tuple(header) == COLUMNS
    assert len(rows) == res.rows == 10.0 / 0.5 + 1  # duration / dt + 1
    times = [float(r[0]) for r in rows]
    assert times == [k * 0.5 for k in range(21)]  # monotonic, on the grid
    assert rows[0][:2] == ["0", "12.5"]  # the first row is the initial state
    # The reference's kinematics by hand, from the logged commands: x += v dt, then
    # v = max(v + a dt, 0); the lead placed on (re)appearance, then integrated.
    x, v, lead_x, dt = 0.0, 12.5, None, 0.5
    sensor_table = sensor_rows()
    for k, row in enumerate(rows):
        _, v_lead, d_sensor = sensor_table[k]
        present = v_lead != ""
        if present and lead_x is None:
            lead_x = x + d_sensor
        elif not present:
            lead_x = None
        assert float(row[1]) == pytest.approx(v, abs=1e-8)
        if lead_x is None:  # blanks without a lead, mode cruise
            assert row[3] == "cruise" and row[4:] == ["", "", ""]
        else:
            assert float(row[5]) == pytest.approx(lead_x - x, abs=1e-7)
            assert row[3] in ("follow", "emergency")
            assert (row[6] == "") == (v <= v_lead)  # TTC only when closing
        a = float(row[2])
        assert -8.0 <= a <= 3.0  # clamped to the limits
        x += v * dt
        v = max(v + a * dt, 0.0)
        if lead_x is not None:
            lead_x += v_lead * dt
    # the lead's re-appearance used the new sensor distance, not the stale position
    assert float(rows[14][5]) == pytest.approx(25.0)


def test_csv_rows_equal_the_controller_on_a_hand_stepped_plant(tmp_path):
    """L1 through the cascade: the CSV equals a plain loop of Plant + ACCController."""
    cfg, sensor = write_config(tmp_path), write_sensor(tmp_path, sensor_rows())
    res = run_workflow(cfg, sensor, None, tmp_path / "l1.csv", plant="L1")
    _, rows = read_rows(res.path)
    plant = Plant(level="L1", control_period=0.5, longitudinal="accel")
    obs = plant.reset({"vx": 12.5})
    ctrl = ACCController(load_config(cfg).acc, ACCGains())
    lead_x = None
    for k, (_, v_lead, d) in enumerate(sensor_rows()):
        if v_lead != "" and lead_x is None:
            lead_x = obs["X"] + d
        elif v_lead == "":
            lead_x = None
        dist = None if lead_x is None else lead_x - obs["X"]
        out = ctrl.compute(obs["vx"], v_lead if v_lead != "" else None, dist, 0.5)
        assert float(rows[k][1]) == pytest.approx(obs["vx"], rel=1e-9)
        assert float(rows[k][2]) == pytest.approx(out.acceleration, rel=1e-9, abs=1e-12)
        assert rows[k][3] == out.mode
        if dist is not None:
            assert float(rows[k][5]) == pytest.approx(dist, rel=1e-9)
        obs = plant.step((0.0, out.acceleration))
        if lead_x is not None:
            lead_x += v_lead * 0.5


@pytest.mark.parametrize("plant", ["point_mass", "L1", "L2"])
def test_packaged_example_runs_collision_free_on_every_plant(plant, tmp_path):
    res = run_workflow(scenarios_dir() / "acc.yaml", data_dir() / "acc_lead.csv",
                       scenarios_dir() / "acc_gains.yaml", tmp_path / "r.csv", plant=plant)
    assert res.rows == 1201 and set(res.mode_counts) == {"cruise", "follow", "emergency"}
    metrics = segmented_metrics(read_results(res.path), set_speed=30.0, dt=0.1)
    assert metrics["validation"]["passed"], metrics
    assert metrics["min_distance"] > 10.0  # never below the configured min distance
    assert 9.0 <= metrics["rise_time_90"] < 11.0  # 27 m/s at <= 3 m/s^2 takes >= 9 s


def test_packaged_gains_file_is_the_default_gains():
    assert load_gains(scenarios_dir() / "acc_gains.yaml") == ACCGains()


def test_duration_defaults_to_the_sensor_span_and_must_fit_it(tmp_path):
    sensor = write_sensor(tmp_path, sensor_rows(n=9))  # 4 s
    cfg = tmp_path / "c.yaml"
    data = {b: dict(v) for b, v in CONFIG.items()}
    del data["simulation"]["duration"]
    cfg.write_text(yaml.safe_dump(data))
    assert run_workflow(cfg, sensor, None, tmp_path / "a.csv").rows == 9
    with pytest.raises(ValueError, match=r"longer than the sensor file \(4 s\)"):
        run_workflow(write_config(tmp_path), sensor, None, tmp_path / "b.csv")
    with pytest.raises(ValueError, match="not a whole number of periods"):
        run_workflow(write_config(tmp_path, simulation={"duration": 1.25}), sensor, None,
                     tmp_path / "c.csv")
    assert not (tmp_path / "b.csv").exists() and not (tmp_path / "c.csv").exists()


@pytest.mark.parametrize("change, match", [
    ({"acc": {"set_speed": None}}, r"'acc.set_speed' = None is outside its range"),
    ({"vehicle": {"max_deceleration": -8.0}}, "positive magnitude, write 8"),
    ({"acc": {"bogus": 1}}, r"unknown key 'acc.bogus'; valid: set_speed"),
    ({"simulation": {"dt": 0}}, r"'simulation.dt' = 0 is outside its range"),
    ({"acc": {"time_headway": "1.5"}}, "'acc.time_headway' = '1.5'"),
])
def test_config_errors_name_the_file_and_key(change, match, tmp_path):
    with pytest.raises(ValueError, match=match) as info:
        load_config(write_config(tmp_path, **change))
    assert "acc.yaml" in str(info.value)


def test_config_missing_field_block_and_unknown_block(tmp_path):
    path = tmp_path / "c.yaml"
    for data, match in [
        ({"vehicle": CONFIG["vehicle"], "acc": {"set_speed": 30}, "simulation": {"dt": 0.1}},
         "'acc.time_headway' is missing"),
        ({"vehicle": CONFIG["vehicle"], "acc": CONFIG["acc"]}, "missing block 'simulation'"),
        ({**CONFIG, "extra": {}}, "unknown block 'extra'"),
        ([1, 2], "expected blocks vehicle, acc, simulation"),
    ]:
        path.write_text(yaml.safe_dump(data))
        with pytest.raises(ValueError, match=match):
            load_config(path)
    path.write_text("vehicle: [unclosed")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_config(path)


@pytest.mark.parametrize("rows, match", [
    ([(0.0, "", ""), (0.5, "", ""), (0.4, "", "")], r"row 4: time is not increasing"),
    ([(0.0, "", ""), (0.5, "", ""), (1.2, "", "")], r"row 4: time must start at 0 and step"),
    ([(0.0, "", ""), (0.5, "fast", "3")], r"row 3: non-numeric cell"),
    ([(0.0, "", ""), (0.5, 10.0, "")], r"row 3: lead_speed and distance must be both"),
])
def test_sensor_errors_name_the_row_and_leave_no_output(rows, match, tmp_path):
    out = tmp_path / "out.csv"
    with pytest.raises(ValueError, match=match):
        run_workflow(write_config(tmp_path), write_sensor(tmp_path, rows), None, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.yaml", "lead.csv"]


def test_sensor_missing_column(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("time,lead_speed\n0,\n")
    with pytest.raises(ValueError, match="missing column.*distance"):
        run_workflow(write_config(tmp_path), path, None, tmp_path / "o.csv")


def test_gains_out_of_range_and_vehicle_limits_are_refused(tmp_path):
    gains = tmp_path / "g.yaml"
    gains.write_text(yaml.safe_dump({"pid_speed": {"kp": 50, "ki": 0, "kd": 0},
                                     "pid_distance": {"kp": 1, "ki": 0, "kd": 0}}))
    sensor = write_sensor(tmp_path, sensor_rows())
    with pytest.raises(ValueError, match=r"pid_speed.kp = 50 is outside its allowed range"):
        run_workflow(write_config(tmp_path), sensor, gains, tmp_path / "o.csv")
    cfg = write_config(tmp_path, vehicle={"max_deceleration": 12.0})
    with pytest.raises(ValueError, match=r"exceeds the generic_sedan vehicle's "
                                         r"max_deceleration = 8.*--plant point_mass"):
        run_workflow(cfg, sensor, None, tmp_path / "o.csv", plant="L2")
    with pytest.raises(ValueError, match="unknown plant 'L3'"):
        run_workflow(cfg, sensor, None, tmp_path / "o.csv", plant="L3")
    assert not (tmp_path / "o.csv").exists()


def test_an_interrupted_run_leaves_the_old_file_untouched(tmp_path, monkeypatch):
    out = tmp_path / "out.csv"
    out.write_text("previous results\n")
    calls = {"n": 0}
    original = ACCController.compute

    def interrupted(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 10:
            raise KeyboardInterrupt
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ACCController, "compute", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run_workflow(write_config(tmp_path), write_sensor(tmp_path, sensor_rows()), None, out)
    assert out.read_text() == "previous results\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acc.yaml", "lead.csv", "out.csv"]


# ------------------------------------------------------------------ segmented metrics


def hand_built(tmp_path: Path) -> Path:
    """dt 0.1: cruise 0-20 s (a ramp 0 -> 30 m/s reaching 27 at exactly 9 s, an overshoot
    to 31.5 m/s, then 30.3 m/s), follow 20-45 s (distance_error 5 m, then 1.2 m for the
    last 10 s; min distance 17.5 m), emergency 45-46 s (distance 12 m, its error -20 m:
    never in a follow window), follow 46-48 s, cruise 48-50 s at 32 m/s (above the set
    speed: the longest cruise segment is still the first)."""
    rows = []
    for k in range(501):
        t = round(k * 0.1, 9)
        if t < 20.0:
            v = 3.0 * t if t <= 10.0 else (31.5 if t < 12.0 else 30.3)
            rows.append((t, v, 1.0, "cruise", "", "", ""))
        elif t < 45.0:
            e = 5.0 if t < 35.0 - 1e-9 else 1.2
            rows.append((t, 20.0, 0.0, "follow", e, 17.5 if t == 30.0 else 40.0, ""))
        elif t < 46.0:
            rows.append((t, 20.0, -8.0, "emergency", -20.0, 12.0, 1.5))
        elif t < 48.0:
            rows.append((t, 20.0, 0.0, "follow", 0.0, 30.0, ""))
        else:
            rows.append((t, 32.0, 0.0, "cruise", "", "", ""))
    path = tmp_path / "hand.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLUMNS)
        w.writerows(rows)
    return path


def test_segmented_metrics_on_a_hand_built_csv(tmp_path):
    m = segmented_metrics(read_results(hand_built(tmp_path)), set_speed=30.0, dt=0.1,
                          follow_stable_window=10.0)
    assert m["rise_time_90"] == pytest.approx(9.0)
    # cruise rows only: 31.5 m/s in the first segment, 32 m/s in the last one
    assert m["overshoot_pct_cruise"] == pytest.approx((32.0 - 30.0) / 30.0 * 100)
    assert m["speed_ss_error_cruise"] == pytest.approx(0.3)  # last 5 s of the first cruise
    assert m["windows"]["speed_ss"] == pytest.approx([15.0, 19.9])
    assert m["distance_ss_error_follow"] == pytest.approx(1.2)  # not the emergency's -20
    assert m["windows"]["distance_ss"] == pytest.approx([35.0, 44.9])
    assert m["min_distance"] == pytest.approx(12.0)
    assert m["mode_rows"] == {"cruise": 221, "follow": 270, "emergency": 10}
    v = m["validation"]
    assert v["passed"] and v["row_count_matches_duration"] and v["follow_window_settled"]
    strict = segmented_metrics(read_results(hand_built(tmp_path)), set_speed=30.0, dt=0.1,
                               min_safe_distance=15.0)
    assert not strict["validation"]["min_distance_above_threshold"]
    assert not strict["validation"]["passed"]


def test_short_follow_segment_falls_back_to_its_later_half(tmp_path):
    m = segmented_metrics(read_results(hand_built(tmp_path)), set_speed=30.0, dt=0.1,
                          follow_stable_window=30.0)
    assert m["validation"]["follow_window_settled"] is False
    assert m["windows"]["distance_ss"] == pytest.approx([32.5, 44.9])  # 125 of 250 rows
    assert m["distance_ss_error_follow"] == pytest.approx((25 * 5.0 + 100 * 1.2) / 125)


def test_validation_flags_irregular_time_and_inconsistent_blanks(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text(",".join(COLUMNS) + "\n0,10,0,cruise,,,\n0.1,10,0,follow,1,,\n"
                    "0.3,10,0,follow,1,20,\n")
    m = segmented_metrics(read_results(path), set_speed=30.0, dt=0.1)
    v = m["validation"]
    assert not v["dt_consistent"] and not v["row_count_matches_duration"]
    assert not v["distance_blank_iff_no_lead"] and not v["passed"]
    assert v["time_monotonic"] and v["time_starts_at_zero"]
    assert m["rise_time_90"] is None  # 10 m/s never reaches 27


@pytest.mark.parametrize("text, match", [
    ("time,ego_speed\n0,1\n", "columns must be exactly time, ego_speed, acceleration_cmd"),
    ("time,ego_speed,acceleration_cmd,mode,distance_error,distance,ttc\n",
     "no data rows"),
    ("time,ego_speed,acceleration_cmd,mode,distance_error,distance,ttc\n0,1,0,cruising,,,\n",
     r"row 2: unknown mode 'cruising'; valid: cruise, follow, emergency"),
    ("time,ego_speed,acceleration_cmd,mode,distance_error,distance,ttc\n0,x,0,cruise,,,\n",
     r"row 2: ego_speed = 'x' is not a number"),
    ("time,ego_speed,acceleration_cmd,mode,distance_error,distance,ttc\n0,,0,cruise,,,\n",
     r"row 2: ego_speed is blank"),
    ("time,ego_speed,acceleration_cmd,mode,distance_error,distance,ttc\n0,1,0,cruise,,\n",
     r"row 2: 6 cells, expected 7"),
    ("time,ego_speed,acceleration_cmd,mode,distance_error,distance,ttc\n0,1,0,cruise,,,inf\n",
     r"row 2: ttc = 'inf' is not finite; write a blank"),
])
def test_results_reader_errors_name_the_row(text, match, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_results(path)


def test_segments_are_maximal_runs():
    assert segments(("cruise", "cruise", "follow", "cruise")) == [
        ("cruise", 0, 2), ("follow", 2, 3), ("cruise", 3, 4)]
    assert segments(("follow",)) == [("follow", 0, 1)]


def test_metrics_without_a_lead_have_no_follow_figures(tmp_path):
    path = tmp_path / "r.csv"
    lines = [",".join(COLUMNS)] + [f"{k / 10:g},{min(3 * k / 10, 30):g},0,cruise,,,"
                                   for k in range(201)]
    path.write_text("\n".join(lines) + "\n")
    m = segmented_metrics(read_results(path), set_speed=30.0, dt=0.1)
    assert m["distance_ss_error_follow"] is None and m["min_distance"] is None
    assert m["validation"]["follow_window_settled"] is None and m["validation"]["passed"]
    assert m["rise_time_90"] == pytest.approx(9.0)
    assert math.isclose(m["overshoot_pct_cruise"], 0.0)
    assert np.isclose(m["speed_ss_error_cruise"], 0.0)
