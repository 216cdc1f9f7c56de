"""The SIL server: one env episode driven by a controller in its own process over a
transport (UDP here; docs/SIL.md). The transport only moves datagrams; what the run does
with them (the lockstep loop, the counters, the watchdog) is written once below.

Lockstep (virtual time): the server sends the observation of sample k, waits for the
command answering it, and steps the env with it, so the run is the same bit for bit
whatever the controller's speed: it equals the same controller stepping the env in
process. The command applies after the env's latency model (``LatencyModel.fixed(0)``
by default: at once), or after the controller's measured wall time with
``LatencyModel.measured()`` (mode B with a real controller)."""

from __future__ import annotations

import csv
import ipaddress
import json
import math
import select
import socket
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from vdsim_gym import _files
from vdsim_gym._checks import ACTION_TOL
from vdsim_gym.errors import ConfigError
from vdsim_gym.sil import protocol as wire

LOST_AFTER = 10  # failsafe samples in a row after which the controller counts as gone
SPIN_S = 200e-6  # how long UdpTransport.recv polls before it sleeps [s]


class Transport(Protocol):
    """Datagrams in and out: ``recv`` waits at most ``timeout`` seconds (None: nothing
    came), ``send`` answers an address."""

    def recv(self, timeout: float) -> tuple[bytes, Any] | None: ...

    def send(self, data: bytes, address: Any) -> None: ...

    def close(self) -> None: ...


class UdpTransport:
    """A UDP socket bound to ``host:port`` (port 0: a free one, see ``address``). Binds to
    loopback unless ``allow_remote``: a controller on another machine must be asked for."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *,
                 allow_remote: bool = False) -> None:
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback and not allow_remote:
            raise ConfigError(f"--udp {host}:{port} is not a loopback address: a SIL server "
                              "listens on this machine only unless told otherwise; pass "
                              "--allow-remote to accept controllers from the network")
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.bind((host, port))
        except OSError as e:
            self.sock.close()
            raise ConfigError(f"cannot bind UDP {host}:{port}: {e.strerror}; choose another "
                              "port (0: any free one)") from None
        self.sock.setblocking(False)

    @property
    def address(self) -> tuple[str, int]:
        return self.sock.getsockname()

    def recv(self, timeout: float) -> tuple[bytes, Any] | None:
        # Poll first for up to SPIN_S: a controller answering within it costs no sleep and
        # wake-up of this thread (tens of microseconds each on a loaded machine).
        spin_end = time.perf_counter() + min(SPIN_S, max(timeout, 0.0))
        while True:
            try:
                return self.sock.recvfrom(65536)
            except BlockingIOError:
                pass
            except ConnectionResetError:  # ICMP of a vanished peer
                return None
            if time.perf_counter() >= spin_end:
                break
        remaining = timeout - SPIN_S
        if remaining <= 0:
            return None
        ready, _, _ = select.select([self.sock], [], [], remaining)
        if not ready:
            return None
        try:
            return self.sock.recvfrom(65536)
        except (BlockingIOError, ConnectionResetError):
            return None

    def send(self, data: bytes, address: Any) -> None:
        try:
            self.sock.sendto(data, address)
        except OSError:  # the controller's port is gone: the watchdog ends the run
            pass

    def close(self) -> None:
        self.sock.close()


@dataclass
class SilStats:
    """What a run counted (stats.json): samples sent, commands applied, datagrams dropped
    by kind, fail-safe samples, and the latency from sample to apply [s]."""

    n_samples: int = 0
    n_commands: int = 0
    n_late: int = 0  # an answer to a sample that already took the fail-safe command
    n_stale: int = 0  # an answer to an older sample than one already applied
    n_duplicate: int = 0  # a second answer to a sample
    # bad magic, version, length, n, non-finite or out-of-range values, unknown seq
    n_malformed: int = 0
    n_foreign: int = 0  # from another address than the one that said hello
    n_failsafe: int = 0  # samples that took the fail-safe command (no answer in time)
    end_reason: str = ""
    latency: dict[str, float] = field(default_factory=dict)  # p50, p90, p99, max [s]
    wall_s: float = 0.0  # the run's wall time, from the first observation to the end


def serve_lockstep(env: Any, transport: Transport, *, seed: int | None = 0,
                   duration: float | None = None, timeout: float = 1.0,
                   failsafe: Sequence[float] | None = None, hello_timeout: float = 60.0,
                   out: str | Path | None = None) -> SilStats:
    """Runs one episode of ``env`` (a VDSim env, wrappers allowed) in lockstep with the
    controller that says hello first; returns the run's counters (written to
    ``out/stats.json`` with the samples to ``out/samples.csv`` when ``out`` is given).

    ``timeout`` [s, wall]: how long a sample waits for its command before the fail-safe
    command (``failsafe``, default zeros) applies; ``LOST_AFTER`` of those in a row end
    the run. ``duration`` [s, simulated]: end earlier than the episode."""
    base = env.unwrapped
    n_act = len(base.action_names)
    safe = np.zeros(n_act) if failsafe is None else np.asarray(failsafe, dtype=float)
    if safe.shape != (n_act,) or not np.all(np.abs(safe) <= 1.0):
        raise ConfigError(f"failsafe must be {n_act} values in [-1, 1] (the action "
                          f"{base.action_names}), got {list(safe)}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    max_samples = wire.SEQ_LIMIT - 1 if duration is None else \
        min(wire.SEQ_LIMIT - 1, math.ceil(duration / base.control_period - 1e-9))
    stats = SilStats()
    client = _wait_hello(transport, stats, hello_timeout)
    obs, info = env.reset(seed=seed)
    measured = getattr(base, "_measured", False)
    answered: dict[int, bool] = {}  # seq -> True: a command applied, False: the fail-safe
    rows: list[tuple] = []
    misses = 0
    k = 0
    start = time.perf_counter()
    try:
        while True:
            tick, t_sample = _sample_clock(base)
            transport.send(wire.observation(k, tick, t_sample, obs), client)
            stats.n_samples += 1
            sent = time.perf_counter()
            action = _await_command(transport, client, k, n_act, sent + timeout, answered,
                                    stats)
            wall = time.perf_counter() - sent
            if action is None:
                action, misses = safe, misses + 1
                stats.n_failsafe += 1
                answered[k] = False
            else:
                misses = 0
                stats.n_commands += 1
                answered[k] = True
            if measured:
                base.set_next_delay(wall)
            obs, _, terminated, truncated, info = env.step(action)
            rows.append((k, tick, int(info.get("apply_tick", tick)), t_sample,
                         info.get("t_apply", t_sample), info.get("c_k", 0.0),
                         int(not answered[k]), wall))
            k += 1
            if terminated or truncated:
                stats.end_reason = wire.EndReason.EPISODE_END.name.lower()
                break
            if k >= max_samples:
                stats.end_reason = wire.EndReason.DURATION.name.lower()
                break
            if misses >= LOST_AFTER:
                stats.end_reason = wire.EndReason.CONTROLLER_LOST.name.lower()
                break
    except BaseException:  # Ctrl-C, SIGTERM, an error: the run so far is written
        stats.end_reason = wire.EndReason.STOPPED.name.lower()
        transport.send(wire.end(wire.EndReason.STOPPED), client)
        _finish(stats, rows, start, base.substep_dt, out)
        raise
    transport.send(wire.end(wire.EndReason[stats.end_reason.upper()]), client)
    _drain(transport, client, answered, n_act, stats)
    _finish(stats, rows, start, base.substep_dt, out)
    return stats


def _finish(stats: SilStats, rows: list[tuple], start: float, dt: float,
            out: str | Path | None) -> None:
    """The run's wall time and latency percentiles, then its files."""
    stats.wall_s = time.perf_counter() - start
    # sample to apply, on the substep clock (a lost command's apply tick is -1: none)
    stats.latency = _percentiles([(r[2] - r[1]) * dt for r in rows if r[2] >= 0])
    _write(out, stats, rows)


def _sample_clock(base: Any) -> tuple[int, float]:
    """The next sample's grid tick and time (the step's ``sample_tick``: with latency the
    timeline's next grid index, which skips overrun periods)."""
    k = int(base.core.next_sample[0])
    tick = k * base.ticks_per_period
    return tick, tick * base.substep_dt


def _wait_hello(transport: Transport, stats: SilStats, timeout: float) -> Any:
    deadline = time.perf_counter() + timeout
    while True:
        got = transport.recv(deadline - time.perf_counter())
        if got is None:
            raise ConfigError(f"no controller said hello within {timeout:g} s")
        data, address = got
        if wire.is_hello(data):
            return address
        stats.n_malformed += 1


def _await_command(transport: Transport, client: Any, k: int, n_act: int, deadline: float,
                   answered: dict[int, bool], stats: SilStats) -> np.ndarray | None:
    """The command answering sample k, or None at the deadline; every other datagram
    counted by kind and dropped."""
    while True:
        got = transport.recv(deadline - time.perf_counter())
        if got is None:
            return None
        data, address = got
        if not _classify(data, address, client, k, n_act, answered, stats):
            continue
        return wire.parse_command(data, n_act)[1]


def _classify(data: bytes, address: Any, client: Any, k: int, n_act: int,
              answered: dict[int, bool], stats: SilStats) -> bool:
    """Whether ``data`` is the command of sample k; else counts why not."""
    if address != client:
        stats.n_foreign += 1
        return False
    try:
        seq, values = wire.parse_command(data, n_act)
    except wire.Malformed:
        stats.n_malformed += 1
        return False
    if np.any(np.abs(values) > ACTION_TOL):  # outside the action space: never applied
        stats.n_malformed += 1
        return False
    if seq == k:
        return True
    if seq > k or seq not in answered:  # answers no sample sent
        stats.n_malformed += 1
    elif answered[seq]:
        stats.n_duplicate += 1
    else:
        stats.n_late += 1
    return False


def _drain(transport: Transport, client: Any, answered: dict[int, bool], n_act: int,
           stats: SilStats) -> None:
    """Counts what is already in the socket after the run (a late answer to the last
    sample), without waiting; an answer to the sample after the last, never sent, is
    malformed."""
    while (got := transport.recv(0.0)) is not None:
        if _classify(got[0], got[1], client, len(answered), n_act, answered, stats):
            stats.n_malformed += 1


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    a = np.asarray(values)
    return {"p50": float(np.percentile(a, 50)), "p90": float(np.percentile(a, 90)),
            "p99": float(np.percentile(a, 99)), "max": float(a.max())}


SAMPLE_COLUMNS = ("k", "sample_tick", "apply_tick", "t_sample", "t_apply", "c_k", "failsafe",
                  "wall_s")


def _write(out: str | Path | None, stats: SilStats, rows: list[tuple]) -> None:
    """``out/stats.json`` and ``out/samples.csv`` (one row per sample: its seq, sample and
    apply ticks and times, delay, whether it took the fail-safe command, the controller's
    wall time), written atomically."""
    if out is None:
        return
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    _files.write_atomic(folder / "stats.json", json.dumps(asdict(stats), indent=2) + "\n")
    with _files.atomic_open(folder / "samples.csv", "w") as f:
        w = csv.writer(f)
        w.writerow(SAMPLE_COLUMNS)
        w.writerows([*r[:3], *(repr(float(x)) for x in r[3:6]), r[6], repr(r[7])]
                     for r in rows)
