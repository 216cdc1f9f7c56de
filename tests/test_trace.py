"""The .vdtrace file: round trips, the golden small traces, a reader that needs no
compiled core, bad files, recording from evaluations (every mode) and envs, atomicity, and
rendering (docs/TRACES.md)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from _helpers import seen_in_float32, through_the_action

from vdsim_gym import LatencyModel, Plant
from vdsim_gym.controllers import cycle_follower, stanley_pi
from vdsim_gym.errors import ControllerError
from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.traces.recording import default_decimation
from vdsim_gym.traces.trace import (
    SCHEMA_VERSION,
    TraceError,
    TraceWriter,
    attach_overlay,
    read_trace,
)
from vdsim_gym.wrappers import RecordTrace

FIXTURES = Path(__file__).parent / "fixtures"
MANIFEST = {"producer": {"name": "test", "version": "0"}, "role": "plant",
            "repro": {"seed": 1}}


def hold(obs, t):
    return (0.01, 800.0 * (20.0 - obs["vx"]))


def run(tmp_path, name="run", **kw):
    args = dict(plant_kwargs=dict(level="L2", longitudinal="force"), controller=hold,
                control_period=0.02, duration=0.5, initial_state={"vx": 18.0},
                trace_path=tmp_path / f"{name}.vdtrace")
    args.update(kw)
    return ClosedLoopEval(**args)


# ------------------------------------------------------------------ the file


def test_round_trip_arrays_manifest_and_overlays(tmp_path):
    rng = np.random.default_rng(0)
    w = TraceWriter(tmp_path / "a.vdtrace", {**MANIFEST, "note": "x", "t_stop": None})
    chans = {"t": np.arange(7) * 0.1, "pose": rng.normal(size=(7, 3)),
             "wheel_force": rng.normal(size=(7, 4, 3)), "nan_col": np.full(7, np.nan)}
    for name, arr in chans.items():
        w.add_channel(name, arr, "u")
    w.add_overlay({"name": "ref", "kind": "path2d", "points": [[0, 0], [1, 2]]})
    w.write()
    tr = read_trace(tmp_path / "a.vdtrace")
    for name, arr in chans.items():
        np.testing.assert_array_equal(tr[name], arr)
        assert tr[name].dtype == np.float64
    assert tr.manifest["schema_version"] == SCHEMA_VERSION and tr.manifest["note"] == "x"
    assert tr.manifest["channels"]["wheel_force"]["shape"] == [4, 3]
    assert tr.overlays["ref"]["points"] == [[0, 0], [1, 2]]
    with zipfile.ZipFile(tmp_path / "a.vdtrace") as z:  # stored, not compressed
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        raw = z.read("channels/pose.f64")
    np.testing.assert_array_equal(np.frombuffer(raw, "<f8").reshape(7, 3), chans["pose"])


def test_golden_small_traces_and_unknown_optional_content():
    tr = read_trace(FIXTURES / "small_v05.vdtrace")
    t = np.arange(5) * 0.01
    np.testing.assert_array_equal(tr["t"], t)
    np.testing.assert_array_equal(tr["pose"][:, 0], t * 20)
    np.testing.assert_array_equal(tr["wheel_force"], np.arange(30.0).reshape(5, 2, 3))
    assert tr.manifest["repro"]["seed"] == 7 and tr.manifest["tags"] == ["fixture"]
    extra = read_trace(FIXTURES / "small_v05_extra.vdtrace")  # what a newer writer adds
    np.testing.assert_array_equal(extra["u_steer"], tr["u_steer"])
    assert extra.manifest["channels"]["future_channel"]["optional"]
    assert extra.overlays["heatmap"]["kind"] == "future_kind"  # kept, ignored


def test_reader_needs_no_compiled_core():
    """trace.py loaded on its own (no vdsim_gym package, so no _core) reads a trace."""
    src = Path(__file__).parents[1] / "vdsim_gym" / "traces" / "trace.py"
    code = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('standalone_trace', {str(src)!r})\n"
        "m = importlib.util.module_from_spec(spec); sys.modules['standalone_trace'] = m\n"
        "spec.loader.exec_module(m)\n"
        f"tr = m.read_trace({str(FIXTURES / 'small_v05.vdtrace')!r})\n"
        "assert len(tr.channels['t']) == 5\n"
        "assert not any(k.startswith('vdsim_gym') for k in sys.modules), sys.modules.keys()\n"
        "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, cwd="/")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def _zip(path, files):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return path


@pytest.mark.parametrize("make, match", [
    (lambda p: p.write_text("hello"), "not a .vdtrace"),
    (lambda p: _zip(p, {"a.txt": "x"}), "no manifest.json"),
    (lambda p: _zip(p, {"manifest.json": "{"}), "manifest.json is not JSON"),
    (lambda p: _zip(p, {"manifest.json": json.dumps({**MANIFEST, "schema_version": "0.6",
                                                      "channels": {}})}), "newer"),
    (lambda p: _zip(p, {"manifest.json": json.dumps({**MANIFEST, "schema_version": "1.0",
                                                      "channels": {}})}), "newer"),
    (lambda p: _zip(p, {"manifest.json": json.dumps({"schema_version": "0.5",
                                                      "channels": {}})}), "missing producer"),
    (lambda p: _zip(p, {"manifest.json": json.dumps({**MANIFEST, "schema_version": "0.5",
                                                      "channels": {"t": {"shape": []}}})}),
     "channels/t.f64 is missing"),
    (lambda p: _zip(p, {"manifest.json": json.dumps({**MANIFEST, "schema_version": "0.5",
                                                      "channels": {"t": {"shape": [2]}}}),
                        "channels/t.f64": b"\0" * 24}), "not a whole number of rows"),
])
def test_bad_files_are_clear_errors(make, match, tmp_path):
    path = tmp_path / "bad.vdtrace"
    make(path)
    with pytest.raises(TraceError, match=match) as err:
        read_trace(path)
    assert str(path) in str(err.value)


def test_attach_overlay_and_its_checks(tmp_path):
    res = run(tmp_path)
    res.run()
    path = tmp_path / "run.vdtrace"
    attach_overlay(path, {"name": "mu_patch", "kind": "region",
                          "polygon": [[0, -2], [5, -2], [5, 2], [0, 2]], "mu": 0.4})
    tr = read_trace(path)
    assert tr.overlays["mu_patch"]["mu"] == 0.4 and len(tr["t"]) == 51
    with pytest.raises(ValueError, match="needs 'points'"):
        attach_overlay(path, {"name": "x", "kind": "path2d"})
    with pytest.raises(ValueError, match="finite \\(M, 2\\)"):
        attach_overlay(path, {"name": "x", "kind": "path2d", "points": [1, 2, 3]})
    with pytest.raises(TraceError):
        attach_overlay(tmp_path / "none.vdtrace", {"name": "x", "kind": "event", "t": 1})


def test_default_decimation_keeps_100_hz():
    assert default_decimation(5e-4, 40) == 20
    assert default_decimation(5e-4, 30) == 15
    assert default_decimation(1e-3, 10) == 10
    assert default_decimation(0.05, 2) == 1


# ------------------------------------------------------------------ recording


def test_mode_a_writes_what_a_plain_plant_loop_records(tmp_path):
    run(tmp_path, "a").run()
    plant = Plant(level="L2", longitudinal="force")
    plant.start_trace()
    obs = plant.reset({"vx": 18.0})
    for k in range(25):  # what the callback form does (its float32 row, the action)
        obs = plant.step(through_the_action(plant, hold(seen_in_float32(obs), 0.02 * k)))
    plant.write_trace(tmp_path / "plain.vdtrace")
    a, p = read_trace(tmp_path / "a.vdtrace"), read_trace(tmp_path / "plain.vdtrace")
    assert set(a.channels) == set(p.channels)
    for name in p.channels:
        np.testing.assert_array_equal(a[name], p[name])
    m = a.manifest
    assert m["role"] == "plant" and m["model_level"] == "L2" and m["eval_mode"] == "sync"
    assert m["repro"]["decimation"] == 20 and m["repro"]["substep_dt_s"] == 5e-4
    assert {"wheelbase_m", "track_m", "body_width_m", "mass_kg"} <= set(m["geometry"])
    assert "u_fx" in a.channels and "u_ax" not in a.channels
    assert not ({"t_sample", "c_k", "steer_applied"} & set(a.channels))
    np.testing.assert_allclose(np.diff(a["t"]), 0.01)  # 100 Hz
    assert a["wheel_force"].shape == (51, 4, 3) and a["wheel_slip"].shape == (51, 4, 2)


def test_mode_b_timing_channels_and_options(tmp_path):
    run(tmp_path, "b", mode="virtual_async", latency=LatencyModel.fixed(0.03),
        trace_channels=("steer_applied",)).run()
    tr = read_trace(tmp_path / "b.vdtrace")
    first = int(np.flatnonzero(~np.isnan(tr["c_k"]))[0])
    assert tr["t"][first] == pytest.approx(0.03)  # the first command applies at 30 ms
    assert np.all(np.isnan(tr["t_sample"][:first])) and np.all(tr["overrun"][:first] == 0)
    assert np.all(tr["c_k"][first:] == 0.03) and np.all(tr["overrun"][first:] == 1)
    assert np.all(tr["t_apply"][first:] <= tr["t"][first:] + 1e-12)
    assert "steer_applied" in tr.channels and tr.manifest["channels"]["steer_applied"]["optional"]
    assert tr.manifest["latency_model"] == {"kind": "fixed", "c_s": 0.03}
    accel = run(tmp_path, "ax", plant_kwargs=dict(level="L2", longitudinal="accel"),
                controller=lambda o, t: (0.0, 1.0))
    accel.run()
    ax = read_trace(tmp_path / "ax.vdtrace")
    assert "u_ax" in ax.channels and "u_fx" not in ax.channels
    assert ax.manifest["accel_conversion"]["kp"] > 0
    with pytest.raises(ValueError, match="unknown trace channel 'yaw_acc'"):
        run(tmp_path, trace_channels=("yaw_acc",))
    with pytest.raises(ValueError, match="need trace_path"):
        run(tmp_path, trace_path=None, trace_decimation=10)


def test_mode_c_and_the_env_forms_record(tmp_path):
    run(tmp_path, "c", mode="wallclock").run()
    c = read_trace(tmp_path / "c.vdtrace")
    assert c.manifest["eval_mode"] == "wallclock" and "c_k" in c.channels
    assert c["t"][-1] == pytest.approx(0.5)
    env = gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0, level="L1")
    ClosedLoopEval(env=env, policy=stanley_pi(env), mode="virtual_async", duration=1.0,
                   latency=LatencyModel.fixed(0.01), trace_path=tmp_path / "env.vdtrace").run()
    e = read_trace(tmp_path / "env.vdtrace")
    assert e.manifest["env_id"] == "VDSim-DLC-v0" and set(e.overlays) == {"reference", "cones"}
    assert e["wheel_force"].shape[1] == 2  # L1: two axle wheels
    dyno = gym.make("VDSim-Dyno-v0")
    ClosedLoopEval(env=dyno, policy=cycle_follower(dyno), mode="sync", duration=2.0,
                   trace_path=tmp_path / "dyno.vdtrace").run()
    d = read_trace(tmp_path / "dyno.vdtrace")
    assert {"speed", "pedal", "axle_torque", "u_reference"} <= set(d.channels)
    assert d.manifest["model_level"] == "dyno" and len(d["t"]) == 41  # 20 Hz, every substep


def test_an_exception_or_a_stop_leaves_a_complete_trace(tmp_path):
    def failing(obs, t):
        if t >= 0.2:
            raise RuntimeError("boom")
        return hold(obs, t)

    with pytest.raises(ControllerError):
        run(tmp_path, "err", controller=failing).run()
    tr = read_trace(tmp_path / "err.vdtrace")
    assert tr.manifest["stopped_early"] and tr.manifest["t_stop"] == pytest.approx(0.2)
    assert tr["t"][-1] == pytest.approx(0.2)

    def interrupted(obs, t):
        if t >= 0.1:
            raise KeyboardInterrupt
        return hold(obs, t)

    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, "ki", controller=interrupted, mode="virtual_async").run()
    assert read_trace(tmp_path / "ki.vdtrace").manifest["stopped_early"]

    ev = None

    def stopper(obs, t):
        if t >= 0.3:
            ev.stop()
        return hold(obs, t)

    ev = run(tmp_path, "stop", controller=stopper)
    ev.run()
    st = read_trace(tmp_path / "stop.vdtrace")
    assert st.manifest["stopped_early"] and st.manifest["t_stop"] == pytest.approx(0.3)


def test_sigterm_finalizes_the_trace_as_ctrl_c_does(tmp_path):
    """SIGTERM (a scheduler's stop) during a run raises KeyboardInterrupt there, so the
    trace is written, stopped early; the previous SIGTERM handler is back afterwards.
    The signal is injected by the controller itself at t = 0.2 s (no timing)."""
    import os
    import signal

    before = signal.getsignal(signal.SIGTERM)

    def terminated(obs, t):
        if t >= 0.2:
            os.kill(os.getpid(), signal.SIGTERM)
        return hold(obs, t)

    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        run(tmp_path, "term", controller=terminated, mode="virtual_async").run()
    tr = read_trace(tmp_path / "term.vdtrace")
    assert tr.manifest["stopped_early"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    run(tmp_path, "keep").run()
    before = (tmp_path / "keep.vdtrace").read_bytes()

    def broken(self, name, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", broken)
    with pytest.raises(OSError, match="No space"):
        run(tmp_path, "keep").run()
    monkeypatch.undo()
    assert (tmp_path / "keep.vdtrace").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.vdtrace"]


def test_record_trace_wrapper_episodes(tmp_path):
    env = RecordTrace(gym.make("VDSim-PathFollow-v0", course_length=40.0),
                      tmp_path / "ep_{episode}.vdtrace")
    rng = np.random.default_rng(0)
    ended = 0
    env.reset(seed=3)
    while ended < 2:
        _, _, term, trunc, info = env.step(rng.uniform(-0.2, 0.2, 2))
        if term or trunc:
            ended += 1
            assert Path(info["trace_path"]).name == f"ep_{ended - 1}.vdtrace"
            env.reset()
    for _ in range(5):
        env.step(np.zeros(2))
    env.close()  # the unfinished third episode is written, stopped early
    names = sorted(p.name for p in env.written)
    assert names == ["ep_0.vdtrace", "ep_1.vdtrace", "ep_2.vdtrace"]
    last = read_trace(tmp_path / "ep_2.vdtrace")
    assert last.manifest["stopped_early"] and len(last["t"]) == 11  # 0.1 s at 100 Hz + end
    first = read_trace(tmp_path / "ep_0.vdtrace")
    assert not first.manifest["stopped_early"] and first.manifest["env_seed"] == 3
    assert "reference" in first.overlays


def test_record_trace_carries_the_command_schedule_with_a_latency(tmp_path):
    """With a latency model on the env, each row carries the timing of the command in
    force: its sample time, apply time and delay, from the step infos (the core's
    schedule); without one, no timing channels."""
    env = RecordTrace(gym.make("VDSim-DLC-v0", latency=LatencyModel.uniform(0.0, 0.03,
                                                                           seed=4)),
                      tmp_path / "lat.vdtrace")
    env.reset(seed=0)
    infos = [env.step(np.zeros(2))[4] for _ in range(20)]
    env.close()
    tr = read_trace(tmp_path / "lat.vdtrace")
    dt = env.unwrapped.substep_dt
    applied = sorted((i["apply_tick"], i["t_sample"], i["c_k"]) for i in infos)
    checked = 0
    for j, t in enumerate(tr["t"][:-1]):  # each row: the last command applied by then
        in_force = [a for a in applied if a[0] <= round(t / dt)]
        if not in_force:
            assert np.isnan(tr["c_k"][j])
            continue
        tick, t_sample, c_k = in_force[-1]
        assert (tr["t_sample"][j], tr["c_k"][j]) == (t_sample, c_k)
        assert tr["t_apply"][j] == pytest.approx(tick * dt)
        checked += 1
    assert checked >= 30 and len({a[2] for a in applied}) > 5  # random delays
    plain = RecordTrace(gym.make("VDSim-DLC-v0"), tmp_path / "plain.vdtrace")
    plain.reset(seed=0)
    plain.step(np.zeros(2))
    plain.close()
    assert "c_k" not in read_trace(tmp_path / "plain.vdtrace").channels


def test_record_trace_keeps_recording_through_a_refused_action(tmp_path):
    """The env refuses a NaN action and stays as it was: the recording goes on, and the
    episode's trace holds every step (before, a refused action finalized the trace and
    the rest of the episode was lost)."""
    env = RecordTrace(gym.make("VDSim-PathFollow-v0", course_length=40.0),
                      tmp_path / "ep_{episode}.vdtrace")
    plain = gym.make("VDSim-PathFollow-v0", course_length=40.0)
    env.reset(seed=3)
    plain.reset(seed=3)
    steps = 0
    while True:
        if steps == 10:
            with pytest.raises(ValueError, match="action contains NaN"):
                env.step(np.array([np.nan, 0.0]))
        a = np.array([0.05, 0.1])
        _, _, term, trunc, info = env.step(a)
        plain.step(a)
        steps += 1
        if term or trunc:
            break
    trace = read_trace(Path(info["trace_path"]))
    assert not trace.manifest["stopped_early"]
    assert len(trace["t"]) == steps * 2 + 1  # 100 Hz rows over 20 ms steps, and the end
    env.close()
    plain.close()


# ------------------------------------------------------------------ rendering


def test_render_png_and_gif(tmp_path):
    from vdsim_gym.render.trace import render_gif, render_png

    run(tmp_path, "a").run()
    run(tmp_path, "b", mode="virtual_async", latency=LatencyModel.fixed(0.02)).run()
    paths = [tmp_path / "a.vdtrace", tmp_path / "b.vdtrace"]
    png = render_png(paths, tmp_path / "x.png", labels=["A", "B 20 ms"], at=0.25)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gif = render_gif(paths, tmp_path / "x.gif", fps=10, speed=1.0)
    assert gif.read_bytes()[:6] in (b"GIF89a", b"GIF87a")
    with pytest.raises(ValueError, match="2 labels for 1 traces"):
        render_png(paths[:1], tmp_path / "y.png", labels=["a", "b"])


def test_render_without_matplotlib_names_the_extra(tmp_path, monkeypatch):
    import builtins

    from vdsim_gym.render import trace as trace_render

    real = builtins.__import__

    def no_mpl(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_mpl)
    with pytest.raises(ImportError, match=r"pip install 'vdsim-gym\[plot\]'"):
        trace_render.render_png([FIXTURES / "small_v05.vdtrace"], tmp_path / "x.png")


def test_render_cli(tmp_path, capsys):
    from vdsim_gym.cli import main

    run(tmp_path, "a").run()
    assert main(["render", str(tmp_path / "a.vdtrace"), "--png", str(tmp_path / "a.png")]) == 0
    assert "wrote" in capsys.readouterr().out and (tmp_path / "a.png").exists()
    assert not (tmp_path / "a.gif").exists()  # --png alone: no GIF
    assert math.isfinite(read_trace(tmp_path / "a.vdtrace")["t"][-1])


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_record_trace_keeps_an_episode_whose_write_a_signal_interrupts(tmp_path, monkeypatch,
                                                                      python_sigint, sig):
    """A signal while RecordTrace writes an episode's trace (the atomic writer then removed
    its temporary file: the episode was lost) is held until the trace is on disk, then
    raised as KeyboardInterrupt."""
    import signal

    import vdsim_gym.traces.trace as trace_mod
    from vdsim_gym._signals import sigterm_as_interrupt

    env = RecordTrace(gym.make("VDSim-PathFollow-v0", course_length=40.0),
                      tmp_path / "ep_{episode}.vdtrace")
    env.reset(seed=3)
    for _ in range(5):
        env.step(np.zeros(2))
    real = trace_mod._write_zip

    def signalled(path, files):
        signal.raise_signal(getattr(signal, sig))  # arrives in the middle of the write
        return real(path, files)

    monkeypatch.setattr(trace_mod, "_write_zip", signalled)
    with sigterm_as_interrupt(), pytest.raises(KeyboardInterrupt):
        env.close()
    written = read_trace(tmp_path / "ep_0.vdtrace")
    assert written.manifest["stopped_early"] and len(written["t"]) >= 5
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ep_0.vdtrace"]
