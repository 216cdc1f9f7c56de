"""Reading user files with errors that name the file: YAML and CSV (text) inputs of the
workflows, cycles and gains."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, TextIO

import yaml

from vdsim_gym.errors import ConfigError


class _StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping (the safe loader
    keeps the last one silently)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<: *anchor": merged keys may be overridden below it
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue  # the base class names an unhashable key
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found the key {key!r} twice (first at line {seen[key].line + 1}); "
                    "give each key once", key_node.start_mark)
            seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str | TextIO) -> Any:
    """``yaml.safe_load`` that refuses duplicate keys and turns a nesting too deep to
    parse into a YAMLError (instead of a RecursionError)."""
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a safe loader)
    except RecursionError:
        raise yaml.YAMLError("nested too deeply to parse") from None


def read_yaml(path: str | Path, what: str) -> Any:
    """The parsed YAML of ``path``; a ValueError naming the file, ``what`` it is ("the
    gains file") and the cause when it cannot be read or parsed."""
    path = Path(path)
    try:
        return load_yaml(path.read_text())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None


def open_csv(path: str | Path, what: str, max_bytes: int | None = None) -> TextIO:
    """``path`` opened for the csv module; a ValueError naming it when it cannot be, when
    it is not a regular file (a FIFO would block) or when it is larger than
    ``max_bytes``."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: {what} must be a regular file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise ConfigError(f"{path}: {what} is {st.st_size / 2**20:.1f} MiB, more than the "
                          f"bound of {max_bytes / 2**20:g} MiB; cut it to the run you need")
    try:
        return path.open(newline="")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from None


def publish(tmp: str | Path, path: str | Path) -> None:
    """Renames a finished temporary file over ``path`` with the permissions a plainly
    created file gets (mkstemp makes it 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)
    os.replace(tmp, path)


__all__ = ["load_yaml", "open_csv", "publish", "read_yaml"]
