"""A run's best model as one unit: ``best_model.zip``, ``best_vecnormalize.pkl`` (with
normalization) and ``best.json`` describe each other, so a new best replaces all three
or none.

The writer (``BestStaging``, the training's evaluation callback) puts the new files into
the hidden staging folder ``<run>/.best.new/`` (first a file naming its writer, host and
pid), flushes them to disk, writes the marker ``.best.new/COMPLETE`` (the list of the
files, written last and atomically), then moves each file over its old one and removes
the folder. A stop at any moment leaves either an incomplete staging folder (the old
trio stands; the folder is discarded) or a complete one (the move is finished by
``recover_best``, which every reader and writer of the best files calls first).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Sequence
from pathlib import Path

from vdsim_gym._files import fsync_dir, fsync_file, pid_alive, write_atomic
from vdsim_gym.errors import VDSimError

STAGING = ".best.new"
COMPLETE = "COMPLETE"
OWNER = "owner"
BEST_FILES = ("best_model.zip", "best_vecnormalize.pkl", "best.json")


def _owner_alive(staging: Path) -> bool:
    """Whether the staging folder's writer is another process that still runs (on this
    host; a writer on another host counts as running: its folder is left alone)."""
    try:
        host, pid_text = (staging / OWNER).read_text().split()
        pid = int(pid_text)
    except (OSError, ValueError):
        return False  # no owner yet (killed at the very start) or unreadable: stale
    if host != socket.gethostname():
        return True
    if pid == os.getpid():
        return False  # our own, left by an interrupted write: stale
    return pid_alive(pid)


def _roll_forward(run: Path, staging: Path, files: Sequence[str]) -> None:
    for name in files:
        src = staging / name
        if src.exists():  # moved already by an earlier, interrupted roll-forward
            os.replace(src, run / name)
    fsync_dir(run)
    (staging / COMPLETE).unlink(missing_ok=True)
    shutil.rmtree(staging, ignore_errors=True)


def recover_best(run_dir: str | Path) -> str | None:
    """Finishes or discards what a stopped writer left of a new best model in
    ``run_dir/.best.new/``: a complete staging folder (its ``COMPLETE`` marker written) is
    moved into place, an incomplete one removed (unless its writer, another process,
    still runs: then it is left to it). Returns "rolled forward", "discarded", "in
    progress", or None when there is nothing staged. Call it before reading
    best_model.zip, best_vecnormalize.pkl or best.json; cheap when nothing is staged."""
    run = Path(run_dir)
    staging = run / STAGING
    if not staging.is_dir() or staging.is_symlink():
        return None
    marker = staging / COMPLETE
    if marker.is_file():
        try:
            listed = json.loads(marker.read_text())
            files = [n for n in listed if n in BEST_FILES]
        except (OSError, ValueError, TypeError):
            files = []  # the marker is written atomically: unreadable means tampered
        if files:
            _roll_forward(run, staging, files)
            return "rolled forward"
    if _owner_alive(staging):
        return "in progress"
    shutil.rmtree(staging, ignore_errors=True)
    return "discarded"


class BestStaging:
    """The writer's side: ``begin()`` makes an empty staging folder (after recovering
    what an earlier writer left) and returns it; the new files are written into it under
    their final names; ``commit(files)`` publishes them as one unit; ``discard()`` drops
    them (no new best, or an error or interrupt while writing)."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run = Path(run_dir)
        self.path = self.run / STAGING

    def begin(self) -> Path:
        recover_best(self.run)
        shutil.rmtree(self.path, ignore_errors=True)  # an incomplete one of ours
        self.path.mkdir(parents=True)
        (self.path / OWNER).write_text(f"{socket.gethostname()} {os.getpid()}\n")
        return self.path

    def commit(self, files: Sequence[str]) -> None:
        missing = [n for n in files if not (self.path / n).is_file()]
        unknown = [n for n in files if n not in BEST_FILES]
        if missing or unknown:
            raise VDSimError(f"best model staging: {missing or unknown} not written (a bug in "
                             "the caller: stage only best_model.zip, best_vecnormalize.pkl "
                             "and best.json, each written before the commit)")
        for name in files:
            fsync_file(self.path / name)
        fsync_dir(self.path)
        write_atomic(self.path / COMPLETE, json.dumps(list(files)))
        _roll_forward(self.run, self.path, files)

    def discard(self) -> None:
        """Drops an incomplete staging folder; a complete one (stopped while it was
        moved into place) is left for ``recover_best`` to finish."""
        if (self.path / COMPLETE).is_file():
            return
        shutil.rmtree(self.path, ignore_errors=True)


__all__ = ["BEST_FILES", "COMPLETE", "STAGING", "BestStaging", "recover_best"]
