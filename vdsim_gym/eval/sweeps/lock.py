"""One writer per output folder: ``output_lock(folder, command)``.

Two runs writing into one folder (``vdsim-gym sweep --out X`` twice, or a sweep and a
tolerance search) would both report success while each replaces the other's files. The
first run holds ``folder/.vdsim-gym.lock`` for as long as it writes: the file names it
(pid, host, command, start time) and carries an exclusive ``flock`` on it, which the
kernel drops when the process ends however it ends. A second run is refused with one
line naming the holder. The lock is released when the block ends, also on Ctrl-C and on
SIGTERM (turned into KeyboardInterrupt while the lock is held). A lock file left by a
run that is gone (killed with SIGKILL: its flock is gone, its pid no longer runs on this
host) is taken over, with a note. A lock file written on another host is refused unless
its flock is held by nobody here and the user removes it: whether that run still goes
cannot be told from this host.

The one lock mechanism of the command lines that write results (``compare.run_sweep``,
``vdsim_gym.eval.tolerance_report.run_tolerance``); others take it the same way.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shlex
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from vdsim_gym._files import pid_alive
from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.errors import ConfigError

try:
    import fcntl
except ImportError:  # Windows: the lock file alone (O_EXCL), no kernel lock
    fcntl = None  # type: ignore[assignment]

LOCK_NAME = ".vdsim-gym.lock"


def _holder_text(info: dict[str, Any]) -> str:
    return (f"pid {info.get('pid', '?')} on {info.get('host', '?')}, started "
            f"{info.get('started', '?')}: {info.get('command', '?')}")


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _note(text: str) -> None:
    sys.stderr.write(text + "\n")


def _refuse(folder: Path, path: Path, info: dict[str, Any]) -> ConfigError:
    return ConfigError(
        f"{folder} is being written by another run ({_holder_text(info)}); wait for it to "
        f"end or give another --out (if that run is gone, remove {path})")


def _try_acquire(path: Path) -> int | None:
    """An open fd of ``path`` holding its exclusive lock, or None when another process
    holds it. Retries when the file was replaced or removed between open and lock."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        if fcntl is None:
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder released and removed it meanwhile: lock the new one


@contextlib.contextmanager
def output_lock(folder: str | Path, command: str | None = None,
                note: Callable[[str], None] = _note) -> Iterator[Path]:
    """Holds ``folder``'s lock for the block (module doc); the folder is created. A
    ConfigError naming the holder when another run holds it. ``command``: how this run
    is named in the lock (default: the process's command line); ``note``: where the
    takeover of a stale lock is reported (default: stderr)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_NAME
    host = socket.gethostname()
    fd = _try_acquire(path)
    if fd is None:
        raise _refuse(folder, path, _read(path))
    try:
        old = _read(path)
        if old:  # a lock file nobody holds: its run ended without removing it
            pid = old.get("pid")
            if old.get("host") not in (None, host) or (
                    fcntl is None and pid != os.getpid() and pid_alive(pid)):
                raise _refuse(folder, path, old)
            note(f"note: {folder}: took over the lock of a run that is gone "
                 f"({_holder_text(old)})")
        info = {"pid": os.getpid(), "host": host,
                "command": command or shlex.join(sys.argv),
                "started": _dt.datetime.now().astimezone().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        raise
    try:
        with sigterm_as_interrupt():  # a scheduler's stop releases it as Ctrl-C does
            yield path
    finally:
        try:
            if _read(path).get("pid") == os.getpid():
                path.unlink(missing_ok=True)
        finally:
            os.close(fd)


__all__ = ["LOCK_NAME", "output_lock"]
