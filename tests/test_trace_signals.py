"""Traces, exports and renders against signals and hostile inputs (docs/TRACES.md):

- ClosedLoopEval: Ctrl-C or SIGTERM while the trace of a finished run is written, or
  after its last sample while its result is built, leaves the whole trace (not marked
  stopped early), then the interrupt propagates;
- ``vdsim-gym export`` / ``render``: SIGTERM mid-write stops as Ctrl-C does (exit 130, no
  file, no temporary); a SIGKILLed writer's temporary is removed by the next run of the
  same output; a FIFO as the MCAP output is refused, not replaced;
- a null or NaN geometry and a trace with nothing to draw are one clear line.

Every signal is sent by the process to itself from inside the writer (a patched
function), so the point it arrives at is fixed: no sleeps."""

from __future__ import annotations

import json
import math
import os
import signal
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel
from vdsim_gym.cli import main
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.traces.trace import read_trace
from vdsim_gym.wrappers import RecordTrace


def hold(obs, t):
    return (0.01, 800.0 * (20.0 - obs["vx"]))


def plant_eval(path, **kw):
    args = dict(plant_kwargs=dict(level="L2", longitudinal="force"), controller=hold,
                control_period=0.02, duration=0.5, initial_state={"vx": 18.0},
                trace_path=path)
    args.update(kw)
    return ClosedLoopEval(**args)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------ ClosedLoopEval


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("form", ["plant_sync", "plant_async", "env"])
def test_a_signal_while_the_trace_is_written_keeps_the_whole_trace(
        tmp_path, monkeypatch, python_sigint, sig, form):
    """The signal arrives inside the zip writer, after the run completed: the trace is
    written whole (the completed run, not stopped early) and the interrupt is raised
    after it; the handlers are back as they were."""
    path = tmp_path / "run.vdtrace"
    if form == "env":
        env = gym.make("VDSim-DLC-v0", speed=15.0)
        ev = ClosedLoopEval(env=env, policy=stanley_pi(env), duration=0.5, trace_path=path)
    else:
        ev = plant_eval(path, mode="sync" if form == "plant_sync" else "virtual_async",
                        **({} if form == "plant_sync" else
                           {"latency": LatencyModel.fixed(0.005)}))
    term_before = signal.getsignal(signal.SIGTERM)
    real = zipfile.ZipFile.writestr
    sent: list[str] = []

    def writestr(self, name, data, *args, **kwargs):
        if not sent:  # mid-write: the manifest is in, the channels are not
            sent.append(name)
            os.kill(os.getpid(), sig)
        return real(self, name, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", writestr)
    with pytest.raises(KeyboardInterrupt):
        ev.run()
    monkeypatch.undo()
    assert sent  # the signal came during the write
    tr = read_trace(path)
    assert tr.manifest["stopped_early"] is False and tr.manifest["t_stop"] is None
    assert tr["t"][-1] == pytest.approx(0.5)
    assert _files(tmp_path) == ["run.vdtrace"]  # no temporary left
    assert signal.getsignal(signal.SIGTERM) is term_before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    res = ev.run()  # the eval is usable again, and writes the same run
    assert not res.stats["stopped_early"]
    np.testing.assert_array_equal(read_trace(path)["pose"], tr["pose"])


@pytest.mark.parametrize("mode", ["sync", "virtual_async"])
def test_an_interrupt_after_the_last_sample_writes_a_completed_run(tmp_path, monkeypatch,
                                                                   mode):
    """SIGTERM after the run's last sample (while its result is built) is a completed
    run: written whole, stopped_early False, with mode B's timing channels; then the
    interrupt propagates."""
    import vdsim_gym.eval.closed_loop as cl

    real = cl.build_result_columns
    sent: list[bool] = []

    def build(*args, **kwargs):
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(cl, "build_result_columns", build)
    path = tmp_path / "end.vdtrace"
    kw = {} if mode == "sync" else {"latency": LatencyModel.fixed(0.005)}
    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        plant_eval(path, mode=mode, **kw).run()
    monkeypatch.undo()
    assert sent
    tr = read_trace(path)
    assert tr.manifest["stopped_early"] is False and tr.manifest["t_stop"] is None
    assert tr["t"][-1] == pytest.approx(0.5)
    full = plant_eval(tmp_path / "full.vdtrace", mode=mode, **kw)
    full.run()
    ref = read_trace(tmp_path / "full.vdtrace")
    assert set(tr.channels) == set(ref.channels)  # timing channels too in mode B
    np.testing.assert_array_equal(tr["pose"], ref["pose"])


@pytest.mark.parametrize("form", ["plant", "env"])
def test_an_interrupt_in_the_cleanup_after_the_loop_writes_a_completed_run(
        tmp_path, monkeypatch, form):
    """SIGTERM in the cleanup after the last sample (the env handed back without the
    run's latency; the callback form's command env alike): a completed run, written
    whole."""
    from vdsim_gym.envs.command import CommandEnv

    path = tmp_path / "cleanup.vdtrace"
    sent: list[bool] = []

    def signal_once():
        if not sent:
            sent.append(True)
            os.kill(os.getpid(), signal.SIGTERM)

    real_configure = CommandEnv.configure_latency if form == "plant" else None
    if form == "plant":
        def configure_command_env(self, model, *args, **kwargs):
            if model is None:  # the run is over: the env handed back
                signal_once()
            return real_configure(self, model, *args, **kwargs)

        monkeypatch.setattr(CommandEnv, "configure_latency", configure_command_env)
        ev = plant_eval(path, mode="virtual_async", latency=LatencyModel.fixed(0.005))
    else:
        env = gym.make("VDSim-DLC-v0", speed=15.0)
        base = env.unwrapped
        real_env_configure = base.configure_latency

        def configure_latency(model, *args, **kwargs):
            if model is None:  # the run is over: the env handed back
                signal_once()
            return real_env_configure(model, *args, **kwargs)

        monkeypatch.setattr(base, "configure_latency", configure_latency)
        ev = ClosedLoopEval(env=env, policy=stanley_pi(env), duration=0.5, trace_path=path,
                            mode="virtual_async", latency=LatencyModel.fixed(0.005))
    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        ev.run()
    assert sent
    tr = read_trace(path)
    assert tr.manifest["stopped_early"] is False and tr["t"][-1] == pytest.approx(0.5)
    assert "t_apply" in tr.channels  # the completed run's timing channels


def test_an_interrupt_mid_run_is_still_written_stopped_early(tmp_path):
    """The other side: a SIGTERM during the run writes what ran, stopped early."""
    def terminated(obs, t):
        if t >= 0.2:
            os.kill(os.getpid(), signal.SIGTERM)
        return hold(obs, t)

    with pytest.raises(KeyboardInterrupt):
        plant_eval(tmp_path / "mid.vdtrace", controller=terminated).run()
    tr = read_trace(tmp_path / "mid.vdtrace")
    assert tr.manifest["stopped_early"] is True and tr["t"][-1] < 0.5


# ------------------------------------------------------------------ export and render


@pytest.fixture(scope="module")
def dlc_trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("traces") / "dlc.vdtrace"
    env = RecordTrace(gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0), path)
    env.reset(seed=1)
    for k in range(20):
        env.step(np.array([0.3 * math.sin(0.3 * k), 0.3], dtype=np.float32))
    env.close()
    return path


# A CLI run in a child process that signals itself from inside the writer, at a fixed
# point: the MCAP writer's 4th signal row, the render's 2nd frame.
_CHILD = textwrap.dedent("""\
    import os, signal, sys
    from vdsim_gym.cli import main
    sig = getattr(signal, sys.argv[1])
    if sys.argv[2] == "export":
        import vdsim_gym.traces._mcap_writer as w
        real = w._signal_rows
        def rows(tr, block=4096):
            for i, row in enumerate(real(tr, block)):
                if i == 3:
                    os.kill(os.getpid(), sig)
                yield row
        w._signal_rows = rows
    else:
        import vdsim_gym.render.trace as r
        real = r._GifStream.add
        n = [0]
        def add(self, image):
            n[0] += 1
            if n[0] == 2:
                os.kill(os.getpid(), sig)
            real(self, image)
        r._GifStream.add = add
    sys.exit(main(sys.argv[2:]))
""")


def _child(tmp_path: Path, sig: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _CHILD, sig, *argv], capture_output=True,
                          text=True, timeout=120, cwd=tmp_path)


def _command(kind: str, trace: Path, out: Path) -> list[str]:
    if kind == "export":
        pytest.importorskip("mcap")
        return ["export", str(trace), "--mcap", str(out)]
    pytest.importorskip("matplotlib")
    return ["render", str(trace), "--out", str(out), "--fps", "5", "--no-progress"]


@pytest.mark.parametrize("kind, name", [("export", "run.mcap"), ("render", "run.gif")])
def test_sigterm_mid_write_stops_cleanly(tmp_path, dlc_trace, kind, name):
    """SIGTERM mid-write: "interrupted", exit 130 (as Ctrl-C), no file, no temporary."""
    out = tmp_path / "out" / name
    out.parent.mkdir()
    done = _child(tmp_path, "SIGTERM", *_command(kind, dlc_trace, out))
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in done.stderr
    assert _files(out.parent) == []


@pytest.mark.parametrize("kind, name", [("export", "run.mcap"), ("render", "run.gif")])
def test_a_sigkilled_writers_temporary_is_removed_by_the_next_run(tmp_path, dlc_trace,
                                                                  capsys, kind, name):
    """SIGKILL leaves the hidden temporary (no cleanup can run); the next export or
    render of the same output removes it before writing, and leaves other files be."""
    out = tmp_path / "out" / name
    out.parent.mkdir()
    other = out.parent / ".other.abc123.tmp.gif"  # another output's: not touched
    other.write_bytes(b"")
    done = _child(tmp_path, "SIGKILL", *_command(kind, dlc_trace, out))
    assert done.returncode == -signal.SIGKILL
    left = [n for n in _files(out.parent) if n != other.name]
    assert len(left) == 1 and left[0].startswith(".run.") and ".tmp" in left[0]
    assert main(_command(kind, dlc_trace, out)) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert _files(out.parent) == sorted([other.name, name])


def test_export_onto_a_fifo_is_refused_not_replaced(tmp_path, dlc_trace, capsys,
                                                   monkeypatch):
    """Refused before anything is written (no export whose rename would replace the
    FIFO), in one line; the FIFO stays a FIFO."""
    pytest.importorskip("mcap")
    import vdsim_gym.traces._mcap_writer as writer

    def never(*args, **kwargs):
        raise AssertionError("the export was written before the target was checked")

    monkeypatch.setattr(writer, "_signal_rows", never)
    fifo = tmp_path / "run.mcap"
    os.mkfifo(fifo)
    with pytest.raises(SystemExit) as exc:
        main(["export", str(dlc_trace), "--mcap", str(fifo)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("vdsim-gym export: error: ") and "not a regular file" in err
    assert len(err.strip().splitlines()) == 1 and "give another output path" in err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the FIFO
    assert _files(tmp_path) == ["run.mcap"]  # and no temporary


def _rewrite(src: Path, dst: Path, manifest=None, drop=(), channels=None) -> Path:
    with zipfile.ZipFile(src) as z:
        files = {n: z.read(n) for n in z.namelist()}
    if manifest is not None:
        m = json.loads(files["manifest.json"])
        manifest(m)
        files["manifest.json"] = json.dumps(m).encode()  # NaN as the JSON literal NaN
    for n in [n for n in files if n.startswith(drop)] if drop else []:
        del files[n]
    for name, arr in (channels or {}).items():
        files[f"channels/{name}.f64"] = np.asarray(arr, "<f8").tobytes()
    with zipfile.ZipFile(dst, "w") as z:
        for n, data in files.items():
            z.writestr(n, data)
    return dst


def _nan_front(m):
    m["geometry"]["cg_to_front_m"] = float("nan")


def _null(m):
    m["geometry"] = None


@pytest.mark.parametrize("command", ["export", "render"])
@pytest.mark.parametrize("edit, expect", [
    (_nan_front, "geometry has cg_to_front_m = nan, not a finite length"),
    (_null, "geometry is null, not an object of the vehicle's dimensions"),
])
def test_a_null_or_nan_geometry_is_one_clear_line(tmp_path, dlc_trace, capsys, command,
                                                  edit, expect):
    bad = _rewrite(dlc_trace, tmp_path / "bad.vdtrace", manifest=edit)
    out = tmp_path / ("bad.mcap" if command == "export" else "bad.png")
    argv = ["export", str(bad), "--mcap", str(out)] if command == "export" else \
        ["render", str(bad), "--png", str(out)]
    pytest.importorskip("mcap" if command == "export" else "matplotlib")
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"vdsim-gym {command}: error: {bad}: ") and expect in err
    assert "write the trace again" in err  # the fix
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _files(tmp_path) == ["bad.vdtrace"]


def test_render_with_nothing_to_draw_is_one_clear_line(tmp_path, dlc_trace, capsys):
    """No course overlay and no finite pose: nothing for the overview."""
    pytest.importorskip("matplotlib")
    n = len(read_trace(dlc_trace)["t"])
    empty = _rewrite(dlc_trace, tmp_path / "empty.vdtrace", drop=("overlays/",),
                     channels={"pose": np.full((n, 3), np.nan)})
    with pytest.raises(SystemExit) as exc:
        main(["render", str(empty), "--png", str(tmp_path / "e.png")])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "nothing to draw in the bird's-eye view" in err and "attach its course" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    # without the geometry key no body is drawn, and that renders
    plain = _rewrite(dlc_trace, tmp_path / "plain.vdtrace",
                     manifest=lambda m: m.pop("geometry"))
    assert main(["render", str(plain), "--png", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").stat().st_size > 0


def test_a_course_with_nan_coordinates_names_the_row(tmp_path, dlc_trace):
    """An overlay (a course's reference or cones) with a NaN point: refused naming the
    overlay, the row and the fix; the trace is left as it was."""
    from vdsim_gym.traces.trace import TraceError, attach_overlay

    path = tmp_path / "run.vdtrace"
    path.write_bytes(dlc_trace.read_bytes())
    before = path.read_bytes()
    with pytest.raises(TraceError, match=r"overlay 'reference': points row 1 is \(1.0, nan\)"
                                         r", not finite coordinates; drop the non-finite"):
        attach_overlay(path, {"name": "reference", "kind": "path2d",
                              "points": [[0.0, 0.0], [1.0, float("nan")], [2.0, 0.0]]})
    assert path.read_bytes() == before and _files(tmp_path) == ["run.vdtrace"]
