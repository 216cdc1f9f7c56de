"""Reading user files with errors that name the file: YAML and CSV (text) inputs of the
workflows, cycles and gains."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, TextIO

import yaml


def read_yaml(path: str | Path, what: str) -> Any:
    """The parsed YAML of ``path``; a ValueError naming the file, ``what`` it is ("the
    gains file") and the cause when it cannot be read or parsed."""
    path = Path(path)
    try:
        return yaml.safe_load(path.read_text())
    except OSError as exc:
        raise ValueError(f"{path}: cannot read {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from None


def open_csv(path: str | Path, what: str, max_bytes: int | None = None) -> TextIO:
    """``path`` opened for the csv module; a ValueError naming it when it cannot be, when
    it is not a regular file (a FIFO would block) or when it is larger than
    ``max_bytes``."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read {what} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path}: {what} must be a regular file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise ValueError(f"{path}: {what} is {st.st_size / 2**20:.1f} MiB, more than the "
                         f"bound of {max_bytes / 2**20:g} MiB; cut it to the run you need")
    try:
        return path.open(newline="")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read {what} ({exc.strerror})") from None


def publish(tmp: str | Path, path: str | Path) -> None:
    """Renames a finished temporary file over ``path`` with the permissions a plainly
    created file gets (mkstemp makes it 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)
    os.replace(tmp, path)


__all__ = ["open_csv", "publish", "read_yaml"]
