"""The SIL wire format (docs/SIL.md, "Wire format"): little-endian messages, one per UDP
datagram, between the simulator (``vdsim-gym serve``) and a controller in its own
process. A message that does not parse raises :class:`Malformed` naming why; the server
counts and drops it, never crashes on it."""

from __future__ import annotations

import enum
import functools
import math
import struct

import numpy as np

VERSION = 1
HELLO_MAGIC, OBS_MAGIC, COMMAND_MAGIC, END_MAGIC = b"VDSH", b"VDSO", b"VDSC", b"VDSE"
HELLO = struct.Struct("<4sH")  # magic, version
OBS_HEAD = struct.Struct("<4sHHIQd")  # magic, version, n, seq, sample_tick, t_sample
COMMAND_HEAD = struct.Struct("<4sHHI")  # magic, version, n, seq
END = struct.Struct("<4sHH")  # magic, version, reason
MAX_VALUES = 1024  # values in one message: an observation or an action, far below a datagram
SEQ_LIMIT = 2**32  # seq is a u32: a run has fewer samples


class EndReason(enum.IntEnum):
    """Why the simulator ended a run (the end message's reason code)."""

    EPISODE_END = 0  # the env's episode ended (terminated or truncated)
    DURATION = 1  # the run's duration was reached
    CONTROLLER_LOST = 2  # no command for several timeouts in a row
    STOPPED = 3  # the server was stopped (Ctrl-C, SIGTERM)


class Malformed(ValueError):
    """A datagram that is not a valid message of the expected kind; the text says why."""


def hello() -> bytes:
    return HELLO.pack(HELLO_MAGIC, VERSION)


def is_hello(data: bytes) -> bool:
    """Whether ``data`` is exactly a hello of this version."""
    return len(data) == HELLO.size and HELLO.unpack(data) == (HELLO_MAGIC, VERSION)


def observation(seq: int, sample_tick: int, t_sample: float, values: np.ndarray) -> bytes:
    v = np.ascontiguousarray(values, dtype="<f8")
    return OBS_HEAD.pack(OBS_MAGIC, VERSION, v.size, seq, sample_tick, t_sample) + v.tobytes()


def command(seq: int, values: np.ndarray) -> bytes:
    v = np.ascontiguousarray(values, dtype="<f8")
    return COMMAND_HEAD.pack(COMMAND_MAGIC, VERSION, v.size, seq) + v.tobytes()


def end(reason: int) -> bytes:
    return END.pack(END_MAGIC, VERSION, int(reason))


@functools.lru_cache(maxsize=64)
def _f64s(n: int) -> struct.Struct:
    return struct.Struct(f"<{n}d")


def _values(data: bytes, head: struct.Struct, n: int, what: str) -> tuple[float, ...]:
    if n > MAX_VALUES:
        raise Malformed(f"{what}: n = {n} values, more than {MAX_VALUES}")
    if len(data) != head.size + 8 * n:
        raise Malformed(f"{what}: {len(data)} bytes, a header and {n} f64 values are "
                        f"{head.size + 8 * n}")
    return _f64s(n).unpack_from(data, head.size)


def _head(data: bytes, head: struct.Struct, magic: bytes, what: str) -> tuple:
    if len(data) < head.size:
        raise Malformed(f"{what}: {len(data)} bytes, shorter than its {head.size}-byte header")
    fields = head.unpack_from(data)
    if fields[0] != magic:
        raise Malformed(f"{what}: magic {fields[0]!r}, expected {magic!r}")
    if fields[1] != VERSION:
        raise Malformed(f"{what}: version {fields[1]}, this simulator speaks {VERSION}")
    return fields


def parse_command(data: bytes, n_actions: int) -> tuple[int, tuple[float, ...]]:
    """(seq, action values) of a command with ``n_actions`` finite values."""
    _, _, n, seq = _head(data, COMMAND_HEAD, COMMAND_MAGIC, "command")
    if n != n_actions:
        raise Malformed(f"command: n = {n} values, the env's action has {n_actions}")
    values = _values(data, COMMAND_HEAD, n, "command")
    if not all(math.isfinite(x) for x in values):
        raise Malformed(f"command {seq}: non-finite values {list(values)}")
    return seq, values


def parse_observation(data: bytes) -> tuple[int, int, float, np.ndarray]:
    """(seq, sample_tick, t_sample, values) of an observation."""
    _, _, n, seq, tick, t = _head(data, OBS_HEAD, OBS_MAGIC, "observation")
    return seq, tick, t, np.array(_values(data, OBS_HEAD, n, "observation"))


def parse_end(data: bytes) -> EndReason:
    _, _, reason = _head(data, END, END_MAGIC, "end")
    if len(data) != END.size:
        raise Malformed(f"end: {len(data)} bytes, expected {END.size}")
    try:
        return EndReason(reason)
    except ValueError:
        raise Malformed(f"end: unknown reason code {reason}") from None
