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
import os
import select
import socket
import time
from collections.abc import Callable, Sequence
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
            os.sched_yield()  # a controller on this core runs now, not after our slice
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


class ShmTransport:
    """The shared-memory region ``name`` (``/dev/shm/name``, mode 0600), created here and
    removed on ``close``: a sequence-locked slot per direction holding one message of the
    wire format (docs/SIL.md, "Shared memory"). A message's address is its writer's pid,
    so a second controller's messages count as foreign as on UDP."""

    def __init__(self, name: str) -> None:
        from vdsim_gym import _core

        try:
            self.link = _core.ShmLink(name, True)
        except (RuntimeError, ValueError) as e:
            raise ConfigError(f"--shm {name}: {e}") from None
        self.name = name

    @property
    def address(self) -> str:
        return f"shm:{self.name}"

    def recv(self, timeout: float) -> tuple[bytes, Any] | None:
        return self.link.recv(max(timeout, 0.0), SPIN_S)

    def send(self, data: bytes, address: Any) -> None:
        self.link.send(data)

    def close(self) -> None:
        self.link.close()


@dataclass
class SilStats:
    """What a run counted (stats.json): samples sent, commands applied, datagrams dropped
    by kind, fail-safe samples, and the latency from sample to apply [s]."""

    mode: str = "lockstep"
    n_samples: int = 0
    n_commands: int = 0
    n_late: int = 0  # an answer to a sample that took the fail-safe command (none after)
    n_stale: int = 0  # an answer to an older sample than one already applied
    n_duplicate: int = 0  # a second answer to a sample
    # bad magic, version, length, n, non-finite or out-of-range values, unknown seq
    n_malformed: int = 0
    n_foreign: int = 0  # from another address than the one that said hello
    n_failsafe: int = 0  # samples that took the fail-safe command (no answer in time)
    n_overrun: int = 0  # commands applied later than one control period after their sample
    end_reason: str = ""
    latency: dict[str, float] = field(default_factory=dict)  # p50, p90, p99, max [s]
    wall_s: float = 0.0  # the run's wall time, from the first observation to the end
    # the wall-clock mode's timing (mode C's: docs/EVAL_MODES.md, "C")
    wallclock: dict[str, Any] = field(default_factory=dict)


class _Stopped(Exception):
    """The run was asked to stop while a sample waited for its command."""


class _Exchange:
    """The controller's side of a run: sends each observation, waits for the command
    answering it, and counts every other message by kind."""

    def __init__(self, transport: Transport, client: Any, n_act: int, safe: np.ndarray,
                 stats: SilStats, stopping: Callable[[], bool] = lambda: False) -> None:
        self.transport, self.client, self.n_act, self.safe = transport, client, n_act, safe
        self.stats, self.stopping = stats, stopping
        self.answered: dict[int, bool] = {}  # seq -> True: a command applied, False: fail-safe
        self.last_applied = -1
        self.misses = 0  # fail-safe samples in a row

    def ask(self, k: int, tick: int, t_sample: float, obs: Any, timeout: float
            ) -> tuple[np.ndarray, bool, float]:
        """Sample k's command, whether it is the fail-safe one (no answer within
        ``timeout`` wall seconds), and the wall time from the send to the answer."""
        self.transport.send(wire.observation(k, tick, t_sample, obs), self.client)
        self.stats.n_samples += 1
        sent = time.perf_counter()
        action = self._await(k, sent + timeout)
        wall = time.perf_counter() - sent
        if action is None:
            self.misses += 1
            self.stats.n_failsafe += 1
            self.answered[k] = False
            return self.safe, True, wall
        self.misses = 0
        self.stats.n_commands += 1
        self.answered[k] = True
        self.last_applied = k
        return action, False, wall

    @property
    def lost(self) -> bool:
        return self.misses >= LOST_AFTER

    def _await(self, k: int, deadline: float) -> np.ndarray | None:
        """The command answering sample k, or None at the deadline; waits in slices of at
        most 50 ms, between which a stop is noticed (``_Stopped``)."""
        while True:
            left = deadline - time.perf_counter()
            got = self.transport.recv(min(left, 0.05))
            if got is None:
                if self.stopping():
                    raise _Stopped
                if left <= 0.05:
                    return None
                continue
            values = self._classify(*got, k)
            if values is not None:
                return np.array(values)

    def _classify(self, data: bytes, address: Any, k: int) -> tuple[float, ...] | None:
        """The values of ``data`` if it is the command of sample k; else counts why not."""
        stats = self.stats
        if address != self.client:
            stats.n_foreign += 1
            return None
        try:
            seq, values = wire.parse_command(data, self.n_act)
        except wire.Malformed:
            stats.n_malformed += 1
            return None
        if any(abs(v) > ACTION_TOL for v in values):  # outside the action space: never applied
            stats.n_malformed += 1
            return None
        if seq == k:
            return values
        answered = self.answered.get(seq)
        if seq > k or answered is None:  # answers no sample sent
            stats.n_malformed += 1
        elif answered:
            stats.n_duplicate += 1
        elif seq < self.last_applied:
            stats.n_stale += 1
        else:
            stats.n_late += 1
        return None

    def drain(self) -> None:
        """Counts what is already in the transport after the run (a late answer to the
        last sample), without waiting; an answer to the sample after the last, never
        sent, is malformed."""
        next_k = max(self.answered, default=-1) + 1
        while (got := self.transport.recv(0.0)) is not None:
            if self._classify(got[0], got[1], next_k) is not None:
                self.stats.n_malformed += 1

    def end(self, reason: str) -> None:
        self.transport.send(wire.end(wire.EndReason[reason.upper()]), self.client)


def _check_run(base: Any, failsafe: Sequence[float] | None, timeout: float) -> np.ndarray:
    n_act = len(base.action_names)
    safe = np.zeros(n_act) if failsafe is None else np.asarray(failsafe, dtype=float)
    if safe.shape != (n_act,) or not np.all(np.abs(safe) <= 1.0):
        raise ConfigError(f"failsafe must be {n_act} values in [-1, 1] (the action "
                          f"{base.action_names}), got {list(safe)}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    return safe


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
    safe = _check_run(base, failsafe, timeout)
    max_samples = wire.SEQ_LIMIT - 1 if duration is None else \
        min(wire.SEQ_LIMIT - 1, math.ceil(duration / base.control_period - 1e-9))
    stats = SilStats(mode="lockstep")
    client = _wait_hello(transport, stats, hello_timeout)
    ex = _Exchange(transport, client, len(base.action_names), safe, stats)
    obs, info = env.reset(seed=seed)
    measured = getattr(base, "_measured", False)
    rows: list[tuple] = []
    k = 0
    start = time.perf_counter()
    try:
        while True:
            tick, t_sample = _sample_clock(base)
            action, failsafe_used, wall = ex.ask(k, tick, t_sample, obs, timeout)
            if measured:
                base.set_next_delay(wall)
            obs, _, terminated, truncated, info = env.step(action)
            stats.n_overrun += bool(info.get("overrun", False))
            rows.append((k, tick, int(info.get("apply_tick", tick)), t_sample,
                         info.get("t_apply", t_sample), info.get("c_k", 0.0),
                         int(failsafe_used), wall))
            k += 1
            if terminated or truncated:
                stats.end_reason = wire.EndReason.EPISODE_END.name.lower()
                break
            if k >= max_samples:
                stats.end_reason = wire.EndReason.DURATION.name.lower()
                break
            if ex.lost:
                stats.end_reason = wire.EndReason.CONTROLLER_LOST.name.lower()
                break
    except BaseException:  # Ctrl-C, SIGTERM, an error: the run so far is written
        stats.end_reason = wire.EndReason.STOPPED.name.lower()
        ex.end(stats.end_reason)
        _finish(stats, rows, start, base.substep_dt, out)
        raise
    ex.end(stats.end_reason)
    ex.drain()
    _finish(stats, rows, start, base.substep_dt, out)
    return stats


class _RemoteController:
    """The policy of a wall-clock run (``ClosedLoopEval``'s env form, mode C): each sample
    goes to the controller with its slot index and time (``predict_sample``); its answer,
    or the fail-safe command, is what the run latches."""

    def __init__(self, dt: float, timeout: float) -> None:
        self.dt, self.timeout = dt, timeout
        self.exchange: _Exchange | None = None  # set once the controller said hello
        self.on_lost: Callable[[], None] = lambda: None
        self.samples: dict[int, tuple[int, bool, float]] = {}  # k -> (tick, failsafe, wall)

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> Any:
        raise ConfigError("a SIL controller answers stamped samples (predict_sample): "
                          "run it with ClosedLoopEval(mode='wallclock')")

    def predict_sample(self, obs: Any, k: int, t_sample: float) -> np.ndarray:
        ex = self.exchange
        assert ex is not None  # the run starts after the hello
        tick = round(t_sample / self.dt)
        try:
            action, failsafe_used, wall = ex.ask(k, tick, t_sample, obs, self.timeout)
        except _Stopped:  # the run stops: this sample's command is not latched
            return ex.safe
        self.samples[k] = (tick, failsafe_used, wall)
        if ex.lost:
            self.on_lost()
        return action


def serve_wallclock(env: Any, transport: Transport, *, seed: int = 0,
                    duration: float | None = None, timeout: float = 1.0,
                    failsafe: Sequence[float] | None = None, hello_timeout: float = 60.0,
                    overrun: str = "skip", out: str | Path | None = None) -> SilStats:
    """Runs one episode of ``env`` (a VDSim env without a latency model: the controller's
    real delay is the one measured) on the wall clock with the controller that says hello
    first: mode C (docs/EVAL_MODES.md) with the controller in its own process. Every
    control period the run sends the plant's observation and waits for its command,
    while the plant runs on; a command applies from the first substep after it arrives,
    the previous one holding until then. ``overrun``: "skip" (the slots that fell due
    while a sample waited are not taken) or "queue" (as mode C's). ``timeout`` [s]: the
    fail-safe command applies to a sample without an answer by then; ``LOST_AFTER`` in a
    row end the run. With ``out``: ``trace.vdtrace``, ``stats.json``, ``samples.csv``.

    SIGINT and SIGTERM stop the run (on the main thread): its files are written, then
    KeyboardInterrupt is raised."""
    from vdsim_gym._signals import signals_call
    from vdsim_gym.eval.closed_loop import ClosedLoopEval

    base = env.unwrapped
    safe = _check_run(base, failsafe, timeout)
    remote = _RemoteController(base.substep_dt, timeout)
    folder = None if out is None else Path(out)
    ev = ClosedLoopEval(env=env, policy=remote, mode="wallclock", seed=seed,
                        duration=duration, overrun=overrun,
                        trace_path=None if folder is None else folder / "trace.vdtrace")
    stats = SilStats(mode="wallclock")
    client = _wait_hello(transport, stats, hello_timeout)
    remote.exchange = ex = _Exchange(transport, client, len(base.action_names), safe, stats,
                                     stopping=ev.stop_requested)
    remote.on_lost = ev.stop
    start = time.perf_counter()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    with signals_call(ev.stop) as signalled:
        try:
            result = ev.run()
        except BaseException:
            stats.end_reason = wire.EndReason.STOPPED.name.lower()
            ex.end(stats.end_reason)
            _finish(stats, _wallclock_rows(remote.samples, None, base), start,
                    base.substep_dt, out)
            raise
    if signalled:
        stats.end_reason = wire.EndReason.STOPPED.name.lower()
    elif ex.lost:
        stats.end_reason = wire.EndReason.CONTROLLER_LOST.name.lower()
    elif result.stats.get("outcome") is not None or duration is None:
        stats.end_reason = wire.EndReason.EPISODE_END.name.lower()
    else:
        stats.end_reason = wire.EndReason.DURATION.name.lower()
    ex.end(stats.end_reason)
    ex.drain()
    rs = result.stats
    stats.wallclock = {key: rs.get(key) for key in (
        "rtf", "wake_jitter_s", "sample_to_apply_s", "sim_max_lag_s", "control_period_s",
        "quality")}
    rows = _wallclock_rows(remote.samples, result.samples, base)
    stats.n_overrun = int(np.count_nonzero(result.samples["overrun"]))
    _finish(stats, rows, start, base.substep_dt, out)
    if signalled:
        raise KeyboardInterrupt(f"signal {signalled[0]}")
    return stats


def _wallclock_rows(sent: dict[int, tuple[int, bool, float]], samples: Any, base: Any
                    ) -> list[tuple]:
    """samples.csv's rows of a wall-clock run: each sample sent, with the tick its command
    was latched at from the run's samples (-1: not latched, the run stopped first; or no
    result, the run ended by an error)."""
    dt = base.substep_dt
    latched: dict[int, int] = {}
    if samples is not None:
        latched = {int(k): round(t / dt) for k, t, ok in
                   zip(samples["k"], samples["t_apply"], samples["applied"], strict=True)
                   if ok}
    rows = []
    for k, (tick, failsafe_used, wall) in sorted(sent.items()):
        apply = latched.get(k, -1)
        t_apply = apply * dt if apply >= 0 else math.nan
        rows.append((k, tick, apply, tick * dt, t_apply,
                     (apply - tick) * dt if apply >= 0 else math.nan, int(failsafe_used),
                     wall))
    return rows


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
        left = deadline - time.perf_counter()
        got = transport.recv(min(left, 0.05))  # short waits: Ctrl-C gets through
        if got is None:
            if left <= 0.05:
                raise ConfigError(f"no controller said hello within {timeout:g} s")
            continue
        data, address = got
        if wire.is_hello(data):
            return address
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
        w.writerows([*r[:3], *("" if math.isnan(x) else repr(float(x)) for x in r[3:6]),
                     r[6], repr(r[7])] for r in rows)
