"""Files in and out, one mechanism each.

In: every user file (YAML, CSV, a run folder's zip or pickle) is opened through
``open_user_file``, which names the file in its errors and refuses what is not a regular
file (a FIFO or a device would block or never end) or is larger than a bound.

Out: every result file is written by ``atomic_path`` / ``atomic_open``: to a hidden
temporary file beside it (``.<name>.<random>.tmp<suffix>``), flushed to disk, then renamed
over the target, so a signal or a crash at any moment leaves the previous file or the new
one, never a truncated one. ``clean_stale_temps`` removes what a killed writer (SIGKILL)
left behind."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TextIO

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


# Text inputs (YAML configs, CSV cycles and sensor logs) above this are refused unless a
# caller states its own bound: a config is kilobytes, a long sensor log a few MiB.
TEXT_MAX_BYTES = 64 * 2**20


def check_regular(path: str | Path, what: str, max_bytes: int | None = None) -> os.stat_result:
    """``path``'s stat after checking that it is a regular file (following symlinks) no
    larger than ``max_bytes``; a ConfigError naming the file, ``what`` it is and the fix
    otherwise. A FIFO, a socket or a device would block a reader or never end."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"{path}: {what} is a directory; give the file")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: {what} must be a regular file (this is a FIFO, socket "
                          "or device, which would block); copy the data into a file")
    if max_bytes is not None and st.st_size > max_bytes:
        raise ConfigError(f"{path}: {what} is {st.st_size / 2**20:.1f} MiB, more than the "
                          f"bound of {max_bytes / 2**20:g} MiB; cut it to the run you need")
    return st


def open_user_file(path: str | Path, what: str, mode: str = "r",
                   max_bytes: int | None = TEXT_MAX_BYTES) -> IO[Any]:
    """``path`` opened for reading (``mode`` "r": text, "rb": bytes) after
    ``check_regular``; a ConfigError naming the file and ``what`` it is when it cannot be.
    The one way user files are opened."""
    if mode not in ("r", "rb"):
        raise ConfigError(f"open_user_file reads only (mode 'r' or 'rb', not {mode!r})")
    path = Path(path)
    check_regular(path, what, max_bytes)
    try:
        # O_NONBLOCK: a file swapped for a FIFO between the check and the open does not
        # block the open; reads of a regular file ignore the flag.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read {what} ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path}: {what} must be a regular file")
        if mode == "r":
            return os.fdopen(fd, "r", newline="")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_user_bytes(path: str | Path, what: str, max_bytes: int | None = TEXT_MAX_BYTES
                    ) -> bytes:
    """The whole content of a user file (``open_user_file``): what was checked is what
    is read, once."""
    with open_user_file(path, what, "rb", max_bytes) as fh:
        return fh.read()


def read_user_text(path: str | Path, what: str, max_bytes: int | None = TEXT_MAX_BYTES
                   ) -> str:
    """The text of a user file (``open_user_file``); a ConfigError naming it when it is
    binary (not UTF-8, or with NUL bytes) instead of a decoding traceback."""
    data = read_user_bytes(path, what, max_bytes)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: {what} is not text (a byte that is not UTF-8 at offset "
                          f"{exc.start}); give the text file, not a binary one") from None
    if "\0" in text:
        raise ConfigError(f"{path}: {what} is not text (it holds NUL bytes); give the text "
                          "file, not a binary one")
    return text.replace("\r\n", "\n")


def read_yaml(path: str | Path, what: str) -> Any:
    """The parsed YAML of ``path``; a ConfigError naming the file, ``what`` it is ("the
    gains file") and the cause when it cannot be read or parsed."""
    try:
        return load_yaml(read_user_text(path, what))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None


def open_csv(path: str | Path, what: str, max_bytes: int | None = TEXT_MAX_BYTES
             ) -> TextIO:
    """``path``'s text (``read_user_text``: a regular text file no larger than
    ``max_bytes``) as a stream for the csv module."""
    import io

    return io.StringIO(read_user_text(path, what, max_bytes), newline="")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_file(path: str | Path) -> None:
    """``path``'s data flushed to disk."""
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def fsync_dir(folder: str | Path) -> None:
    """``folder``'s entries (a rename into it) flushed to disk, where the file system can."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a directory; the rename stands
    finally:
        os.close(fd)


def pid_alive(pid: Any) -> bool:
    """Whether a process ``pid`` runs on this host (another user's counts; a zombie,
    killed and not yet reaped, does not): the owner check of lock and staging files."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc (not Linux): alive as far as kill says
    return state not in ("Z", "X")


def publish(tmp: str | Path, path: str | Path) -> None:
    """Makes a finished temporary file ``path``: its data flushed to disk, the
    permissions a plainly created file gets (mkstemp makes it 0600), renamed over
    ``path`` (one atomic step) and the rename flushed. The target must not be a FIFO or
    a device (``check_target``)."""
    tmp, path = Path(tmp), Path(path)
    check_target(path)
    fsync_file(tmp)
    os.chmod(tmp, 0o666 & ~_umask())
    os.replace(tmp, path)
    fsync_dir(path.parent)


TEMP_MARK = ".tmp"


def check_target(path: str | Path) -> None:
    """A ConfigError when ``path`` exists and is not a regular file: renaming over a
    FIFO, a socket or a device would replace it (a directory cannot be replaced)."""
    path = Path(path)
    try:
        st = path.stat()
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode):
        raise ConfigError(f"{path}: is a directory; give a file name to write")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{path}: exists and is not a regular file (a FIFO, socket or "
                          "device); give another output path")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (hidden, the same suffix: libraries that append
    one, np.savez's ".npz" or SB3's ".zip", find it there) for a writer that takes a
    path; when the block ends without error the file is published over ``path``
    (``publish``), on any error or interrupt it is removed and ``path`` is untouched."""
    path = Path(path)
    check_target(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.",
                               suffix=f"{TEMP_MARK}{path.suffix}")
    os.close(fd)
    try:
        yield Path(tmp)
        publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """``open(path, mode)`` written atomically (``atomic_path``); text modes write
    ``newline=""`` (the csv module's convention; give line ends explicitly)."""
    if mode not in ("w", "wb"):
        raise ConfigError(f"atomic_open writes only (mode 'w' or 'wb', not {mode!r})")
    with atomic_path(path) as tmp:
        with (open(tmp, "w", newline="") if mode == "w" else open(tmp, "wb")) as fh:
            yield fh


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """``data`` written to ``path`` atomically (``atomic_path``)."""
    with atomic_open(path, "wb") as fh:
        fh.write(data.encode() if isinstance(data, str) else data)
    return Path(path)


def _temp_of(entry: str, name: str | None) -> bool:
    """Whether ``entry`` is a temporary file of ``atomic_path`` (of the target ``name``,
    when given): ``.<stem>.<random>.tmp<suffix>``, or the earlier writers'
    ``.<name>.<random>.tmp`` left by an older version."""
    if not entry.startswith(".") or TEMP_MARK not in entry:
        return False
    if name is None:
        return True
    target = Path(name)
    new = entry.startswith(f".{target.stem}.") and entry.endswith(f"{TEMP_MARK}{target.suffix}")
    old = entry.startswith(f".{target.name}.") and entry.endswith(TEMP_MARK)
    return new or old


def clean_stale_temps(folder: str | Path, name: str | None = None) -> list[Path]:
    """Removes the temporary files ``atomic_path`` left in ``folder`` when its writer was
    killed (SIGKILL: no cleanup ran): all of them, or those of the target ``name`` (its
    stem and suffix: ``run.gif``'s, not those of a ``run.vdtrace`` being written beside
    it). Returns what it removed."""
    folder = Path(folder)
    removed: list[Path] = []
    try:
        entries = list(folder.iterdir())
    except OSError:
        return removed
    for p in entries:
        if not _temp_of(p.name, name) or not p.is_file() or p.is_symlink():
            continue
        p.unlink(missing_ok=True)
        removed.append(p)
    return removed


__all__ = ["TEXT_MAX_BYTES", "atomic_open", "atomic_path", "check_regular", "check_target",
           "clean_stale_temps", "fsync_dir", "fsync_file", "load_yaml", "open_csv",
           "open_user_file", "pid_alive", "publish", "read_user_bytes", "read_user_text",
           "read_yaml", "write_atomic"]
