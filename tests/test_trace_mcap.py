"""MCAP export of traces (vdsim_gym.traces.mcap, ``vdsim-gym export``; docs/TRACES.md "Open
a run in Foxglove or PlotJuggler"): real recorded traces (a DLC episode with the reference
and cones, a dyno episode) written and read back with mcap's reader, every message checked
against its schema and against the trace it came from."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym.cli import main
from vdsim_gym.traces.trace import TraceWriter, read_trace
from vdsim_gym.wrappers import RecordTrace

mcap_reader = pytest.importorskip("mcap.reader")
jsonschema = pytest.importorskip("jsonschema")

FOXGLOVE = {"/tf": "foxglove.FrameTransform", "/vehicle/pose": "foxglove.PoseInFrame",
            "/vdsim/scene": "foxglove.SceneUpdate", "/vdsim/signals": "vdsim.Signals"}


def record(path: Path, env_id: str, steps: int, **kwargs) -> Path:
    env = RecordTrace(gym.make(env_id, **kwargs), path)
    env.reset(seed=1)
    for k in range(steps):  # a steer that swings both ways: psi, vy and the slips move
        a = np.full(env.action_space.shape, 0.3, dtype=np.float32)
        a[0] = 0.4 * math.sin(0.3 * k)
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            break
    env.close()
    return path


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("traces")
    return {"dlc": record(d / "dlc.vdtrace", "VDSim-DLC-v0", 40, preset="iso3888_1",
                          speed=20.0, level="L2"),
            "dyno": record(d / "dyno.vdtrace", "VDSim-Dyno-v0", 30)}


def read_back(path: Path):
    """(summary, {topic: [(log_time, publish_time, sequence, decoded message)]},
    {topic: schema dict}, metadata {name: dict})."""
    with open(path, "rb") as fh:
        reader = mcap_reader.make_reader(fh)
        summary = reader.get_summary()
        msgs: dict[str, list] = {}
        schemas: dict[str, dict] = {}
        for schema, channel, m in reader.iter_messages():
            assert schema.encoding == "jsonschema" and channel.message_encoding == "json"
            schemas[channel.topic] = json.loads(schema.data)
            assert schemas[channel.topic]["title"] == schema.name
            msgs.setdefault(channel.topic, []).append(
                (m.log_time, m.publish_time, m.sequence, json.loads(m.data)))
        meta = {r.name: dict(r.metadata) for r in reader.iter_metadata()}
    return summary, msgs, schemas, meta


def ns(t) -> list[int]:
    return [round(float(x) * 1e9) for x in t]


def test_a_vehicle_run_exports_its_pose_scene_and_signals(traces, tmp_path):
    tr = read_trace(traces["dlc"])
    n = len(tr["t"])
    assert n > 20 and np.ptp(tr["pose"][:, 2]) > 1e-3  # the car yawed: psi is checked
    out = tmp_path / "dlc.mcap"
    from vdsim_gym.traces.trace import to_mcap  # the lazy re-export

    assert to_mcap(tr.path, out) == out
    summary, msgs, schemas, meta = read_back(out)
    topics = {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}
    assert topics == FOXGLOVE
    counts = {summary.channels[cid].topic: k
              for cid, k in summary.statistics.channel_message_counts.items()}
    assert counts == {"/tf": n, "/vehicle/pose": n, "/vdsim/signals": n, "/vdsim/scene": 1}
    for topic, rows in msgs.items():  # every message is what its schema says
        validator = jsonschema.Draft202012Validator(schemas[topic])
        for *_, msg in rows:
            validator.validate(msg)

    want = ns(tr["t"])
    for topic in ("/tf", "/vehicle/pose", "/vdsim/signals"):
        assert [r[0] for r in msgs[topic]] == want  # log times: the trace's t in ns
        assert [r[1] for r in msgs[topic]] == want
        assert [r[2] for r in msgs[topic]] == list(range(n))
    X, Y, psi = tr["pose"].T
    tf = [r[3] for r in msgs["/tf"]]
    assert {(m["parent_frame_id"], m["child_frame_id"]) for m in tf} == {("world",
                                                                           "base_link")}
    assert [m["timestamp"]["sec"] * 10**9 + m["timestamp"]["nsec"] for m in tf] == want
    np.testing.assert_allclose([m["translation"]["x"] for m in tf], X, rtol=0, atol=1e-12)
    np.testing.assert_allclose([m["translation"]["y"] for m in tf], Y, rtol=0, atol=1e-12)
    q = [m["rotation"] for m in tf]
    np.testing.assert_allclose([2 * math.atan2(r["z"], r["w"]) for r in q], psi, atol=1e-12)
    np.testing.assert_allclose([r["x"] ** 2 + r["y"] ** 2 + r["z"] ** 2 + r["w"] ** 2
                                for r in q], 1.0, atol=1e-12)
    poses = [r[3] for r in msgs["/vehicle/pose"]]
    assert {m["frame_id"] for m in poses} == {"world"}
    np.testing.assert_allclose([m["pose"]["position"]["x"] for m in poses], X, atol=1e-12)
    np.testing.assert_allclose([2 * math.atan2(m["pose"]["orientation"]["z"],
                                               m["pose"]["orientation"]["w"])
                                for m in poses], psi, atol=1e-12)

    sig = [r[3] for r in msgs["/vdsim/signals"]]
    assert set(sig[0]) == set(tr.channels) and next(iter(sig[0])) == "t"
    np.testing.assert_array_equal([m["t"] for m in sig], tr["t"])
    np.testing.assert_array_equal([m["v_body"]["vy"] for m in sig], tr["v_body"][:, 1])
    np.testing.assert_array_equal([m["u_steer"] for m in sig], tr["u_steer"])
    cols = tr.manifest["channels"]["wheel_force"]["columns"]  # [[FL, FR, RL, RR], [fx..]]
    np.testing.assert_array_equal([m["wheel_force"][cols[0][2]][cols[1][1]] for m in sig],
                                  tr["wheel_force"][:, 2, 1])
    assert "[m/s]" in schemas["/vdsim/signals"]["properties"]["v_body"]["description"]

    (ts, _, _, scene), = msgs["/vdsim/scene"]
    assert ts == want[0]
    ents = {e["id"]: e for e in scene["entities"]}
    assert set(ents) == {"overlay/reference", "overlay/cones", "vehicle/body"}
    ref = ents["overlay/reference"]
    assert ref["frame_id"] == "world" and ref["lines"][0]["type"] == 0  # LINE_STRIP
    np.testing.assert_array_equal([[p["x"], p["y"]] for p in ref["lines"][0]["points"]],
                                  tr.overlays["reference"]["points"])
    cones = ents["overlay/cones"]["cylinders"]
    np.testing.assert_array_equal([[c["pose"]["position"]["x"], c["pose"]["position"]["y"]]
                                   for c in cones], tr.overlays["cones"]["points"])
    assert {c["top_scale"] for c in cones} == {0.0}  # cones, not cylinders
    body = ents["vehicle/body"]
    geo = tr.manifest["geometry"]
    assert body["frame_id"] == "base_link" and body["frame_locked"]
    assert body["cubes"][0]["size"]["x"] == pytest.approx(geo["body_length_m"])
    assert body["cubes"][0]["size"]["y"] == pytest.approx(geo["body_width_m"])
    assert json.loads(meta["vdtrace"]["manifest"])["repro"] == tr.manifest["repro"]


def test_a_dyno_run_exports_its_signals_only(traces, tmp_path):
    tr = read_trace(traces["dyno"])
    out = tmp_path / "dyno.mcap"
    from vdsim_gym.traces.mcap import to_mcap

    to_mcap(tr, out)  # a Trace, not a path
    summary, msgs, schemas, _ = read_back(out)
    assert set(msgs) == {"/vdsim/signals"} and len(summary.channels) == 1
    rows = msgs["/vdsim/signals"]
    assert [r[0] for r in rows] == ns(tr["t"])
    sig = [r[3] for r in rows]
    assert set(sig[0]) == set(tr.channels)
    np.testing.assert_array_equal([m["speed"] for m in sig], tr["speed"])
    np.testing.assert_array_equal([m["throttle_brake"]["brake"] for m in sig],
                                  tr["throttle_brake"][:, 1])
    np.testing.assert_array_equal([m["axle_torque"]["rear"] for m in sig],
                                  tr["axle_torque"][:, 1])
    validator = jsonschema.Draft202012Validator(schemas["/vdsim/signals"])
    for m in sig:
        validator.validate(m)


def small(path: Path) -> Path:
    """A trace of what a recorder may hold beyond the envs: NaN timing, a column-less
    2-D channel, a region overlay, a broken overlay, no geometry."""
    t = np.arange(6) * 0.05
    w = TraceWriter(path, {"producer": {"name": "test", "version": "0"}, "role": "plant",
                           "repro": {"seed": 1}})
    w.add_channel("t", t, "s")
    w.add_channel("pose", np.column_stack((t * 10, t, 0.2 * t)), "m, m, rad",
                  columns=["X", "Y", "psi"])
    w.add_channel("t_sample", np.where(t < 0.1, np.nan, t), "s", optional=True)
    w.add_channel("grid", np.arange(24.0).reshape(6, 2, 2), "-")
    w.add_overlay({"name": "patch", "kind": "region",
                   "polygon": [[0, 0], [5, 0], [5, 2], [0, 2]]})
    w.add_overlay({"name": "mark", "kind": "event", "t": 0.1})
    w.write()
    return path


def test_nan_null_arrays_regions_and_a_start_time(tmp_path):
    tr = read_trace(small(tmp_path / "s.vdtrace"))
    from vdsim_gym.traces.mcap import to_mcap

    start = 1_767_225_600 * 10**9
    to_mcap(tr, tmp_path / "s.mcap", start_time_ns=start)
    _, msgs, schemas, _ = read_back(tmp_path / "s.mcap")
    sig = [r[3] for r in msgs["/vdsim/signals"]]
    assert [r[0] for r in msgs["/vdsim/signals"]] == [start + x for x in ns(tr["t"])]
    assert [m["t_sample"] for m in sig][:3] == [None, None, 0.1]  # NaN: null, not NaN
    assert sig[1]["grid"] == tr["grid"][1].tolist()  # no column names: nested arrays
    jsonschema.Draft202012Validator(schemas["/vdsim/signals"]).validate(sig[0])
    stamp = msgs["/tf"][0][3]["timestamp"]
    assert stamp == {"sec": 1_767_225_600, "nsec": 0}
    (_, _, _, scene), = msgs["/vdsim/scene"]
    patch, = scene["entities"]  # no geometry: no body; an event is not drawn
    assert patch["lines"][0]["type"] == 1  # LINE_LOOP
    assert [[p["x"], p["y"]] for p in patch["lines"][0]["points"]] == \
        tr.overlays["patch"]["polygon"]


def test_the_write_is_atomic(traces, tmp_path, monkeypatch):
    """A write that fails midway leaves the previous file as it was and no temporary."""
    import vdsim_gym.traces._mcap_writer as writer
    import vdsim_gym.traces.mcap as tm

    out = tmp_path / "run.mcap"
    out.write_bytes(b"the previous export")
    real = writer._signal_rows

    def failing(tr, block=4096):
        for i, row in enumerate(real(tr, block)):
            if i == 3:
                raise RuntimeError("disk on fire")
            yield row

    monkeypatch.setattr(writer, "_signal_rows", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        tm.to_mcap(traces["dyno"], out)
    assert out.read_bytes() == b"the previous export"
    assert [p.name for p in tmp_path.iterdir()] == ["run.mcap"]  # no temporary left


def test_reading_traces_does_not_import_mcap(tmp_path):
    code = ("import sys, vdsim_gym.traces.trace as t, vdsim_gym.traces.mcap; "
            "assert 'mcap' not in sys.modules, 'mcap imported'; print(callable(t.to_mcap))")
    # cwd outside the checkout: from its root, a non-editable install's Python would import
    # the source tree (no compiled core) instead of the installed package
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=tmp_path)
    assert out.stdout.strip() == "True"


def test_the_cli_exports_and_reports(traces, tmp_path, capsys):
    out = tmp_path / "run.mcap"
    assert main(["export", str(traces["dlc"]), "--mcap", str(out)]) == 0
    text = capsys.readouterr().out
    n = len(read_trace(traces["dlc"])["t"])
    assert f"wrote {out}" in text and len(text.strip().splitlines()) == 2
    for topic, schema in FOXGLOVE.items():
        k = 1 if topic == "/vdsim/scene" else n
        assert f"{topic} {k} ({schema})" in text
    summary, *_ = read_back(out)
    assert summary.statistics.message_count == 3 * n + 1


def test_the_cli_default_output_is_beside_the_trace(traces, tmp_path, capsys):
    trace = tmp_path / "d.vdtrace"
    trace.write_bytes(traces["dyno"].read_bytes())
    assert main(["export", str(trace)]) == 0
    assert (tmp_path / "d.mcap").is_file()
    assert "/vdsim/signals" in capsys.readouterr().out


@pytest.mark.parametrize("case,expect", [
    ("missing", "no such trace file"),
    ("not_a_trace", "not a .vdtrace"),
    ("no_dir", "does not exist"),
    ("dir", "is a folder"),
    ("itself", "is the trace itself"),
    ("no_mcap", "pip install 'vdsim-gym[export]'"),
])
def test_the_cli_bad_input_is_one_line(traces, tmp_path, capsys, block_import, case, expect):
    trace, out = str(traces["dyno"]), str(tmp_path / "o.mcap")
    if case == "missing":
        trace = str(tmp_path / "none.vdtrace")
    elif case == "not_a_trace":
        trace = str(tmp_path / "notes.vdtrace")
        Path(trace).write_text("not a zip")
    elif case == "no_dir":
        out = str(tmp_path / "no" / "o.mcap")
    elif case == "dir":
        out = str(tmp_path)
    elif case == "itself":
        out = trace
    else:
        block_import("mcap")
    with pytest.raises(SystemExit) as exc:
        main(["export", trace, "--mcap", out])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("vdsim-gym export: error: ") and expect in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not Path(tmp_path / "o.mcap").exists()
