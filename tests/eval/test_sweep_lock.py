"""One writer per output folder (``vdsim_gym.eval.sweeps.lock.output_lock``): a second
``sweep`` or ``tolerance`` into the same --out is refused naming the holder, the lock goes
on exit (also Ctrl-C and SIGTERM), a lock left by a run that is gone is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.sweeps.lock import LOCK_NAME, output_lock


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    with output_lock(tmp_path, "vdsim-gym sweep --out x") as path:
        info = json.loads(path.read_text())
        assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
        with pytest.raises(ConfigError) as exc:
            with output_lock(tmp_path, "vdsim-gym tolerance --out x"):
                pass
        msg = str(exc.value)
        assert f"pid {os.getpid()} on {socket.gethostname()}" in msg
        assert "vdsim-gym sweep --out x" in msg and info["started"] in msg
        assert "give another --out" in msg
        assert path.exists()  # the refused run leaves the holder's lock alone
    assert not (tmp_path / LOCK_NAME).exists()  # released on exit
    with output_lock(tmp_path, "again"):  # and free for the next run
        pass


def test_ctrl_c_releases_the_lock(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with output_lock(tmp_path, "run"):
            raise KeyboardInterrupt
    assert not (tmp_path / LOCK_NAME).exists()


def test_a_stale_lock_of_a_gone_pid_is_taken_over_with_a_note(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (tmp_path / LOCK_NAME).write_text(json.dumps({
        "pid": gone.pid, "host": socket.gethostname(), "command": "vdsim-gym sweep (killed)",
        "started": "2026-01-01T00:00:00+00:00"}))
    notes: list[str] = []
    with output_lock(tmp_path, "new run", note=notes.append) as path:
        assert json.loads(path.read_text())["command"] == "new run"
    assert len(notes) == 1 and "took over the lock of a run that is gone" in notes[0]
    assert f"pid {gone.pid}" in notes[0] and "vdsim-gym sweep (killed)" in notes[0]


def test_a_lock_written_on_another_host_is_refused(tmp_path):
    (tmp_path / LOCK_NAME).write_text(json.dumps({
        "pid": 1, "host": "some-other-host", "command": "sweep", "started": "x"}))
    with pytest.raises(ConfigError, match=r"pid 1 on some-other-host.*remove .*\.vdsim-gym\.lock"):
        with output_lock(tmp_path, "here"):
            pass


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix", reason="POSIX")
def test_sigterm_releases_the_lock(tmp_path):
    code = textwrap.dedent(f"""
        import sys, time
        from vdsim_gym.eval.sweeps.lock import output_lock
        with output_lock({str(tmp_path)!r}, "child"):
            print("held", flush=True)
            time.sleep(60)
    """)
    # cwd: not the repository root, whose source tree would shadow an installed package
    with subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, cwd=tmp_path) as child:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(ConfigError, match=f"pid {child.pid} on"):
            with output_lock(tmp_path, "second"):
                pass
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=30)
    assert not (tmp_path / LOCK_NAME).exists()


@pytest.mark.parametrize("command", ["sweep", "tolerance"])
def test_the_cli_refuses_a_second_run_into_the_same_out(command, tmp_path, capsys):
    """Both used to report success, one result gone; the second now stops before any
    work with one line naming the first."""
    from vdsim_gym.cli import main

    out = tmp_path / "out"
    argv = {"sweep": ["sweep", "--controller", "stanley", "--delays", "0ms", "--seeds", "1",
                      "--no-plot", "--no-progress", "--out", str(out)],
            "tolerance": ["tolerance", "--controllers", "stanley", "--seeds", "1",
                          "--no-plot", "--quiet", "--out", str(out)]}[command]
    with output_lock(out, "the first run"):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "is being written by another run" in err
    assert "the first run" in err
    assert not any(p.name.endswith((".csv", ".png")) for p in out.iterdir())


def test_results_csv_is_written_atomically(tmp_path):
    """write_csv goes through _files.atomic_open: a row that fails mid-write leaves the
    previous file whole and no temporary file beside it."""
    from vdsim_gym.eval.sweeps.results import write_csv

    path = write_csv(tmp_path / "sweep.csv", [{"a": 1, "b": 2}])
    before = path.read_bytes()
    with pytest.raises(ValueError, match="fields not in fieldnames"):
        write_csv(path, [{"a": 3, "b": 4}, {"a": 5, "c": 6}])
    assert path.read_bytes() == before == b"a,b\r\n1,2\r\n"
    assert [p.name for p in tmp_path.iterdir()] == ["sweep.csv"]
