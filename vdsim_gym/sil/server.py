"""The SIL server: one env episode driven by a controller in its own process over UDP or
shared memory (docs/SIL.md). The transports and the exchange (the controller that said
hello, each sample's command awaited, every other message counted by kind) are the
core's (csrc/vdsim/sil_link.hpp, sil_exchange.hpp); the two run modes are below.

Lockstep (virtual time): the server sends the observation of sample k, waits for the
command answering it, and steps the env with it, so the run is the same bit for bit
whatever the controller's speed: it equals the same controller stepping the env in
process. The command applies after the env's latency model (``LatencyModel.fixed(0)``
by default: at once), or after the controller's measured wall time with
``LatencyModel.measured()`` (mode B with a real controller).

Wall clock: mode C's real-time runner ticks the plant; each sample is read, sent,
answered and latched in one native call (``_core.sil_sample``), so the delay measured is
the controller's and its link's, not this module's."""

from __future__ import annotations

import csv
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym import _files
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.wallclock import ENDS, Taken
from vdsim_gym.sil import protocol as wire
from vdsim_gym.sim import links
from vdsim_gym.sim.links import Transport

LOST_AFTER = 10  # failsafe samples in a row after which the controller counts as gone
SPIN_S = 200e-6  # how long a wait for the controller polls before it sleeps [s]


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

    def count(self, exchange: Any) -> None:
        """The exchange's counters (``_core.SilExchange``) into these."""
        c = exchange.counters
        for name in ("n_samples", "n_commands", "n_late", "n_stale", "n_duplicate",
                     "n_malformed", "n_foreign", "n_failsafe"):
            setattr(self, name, int(getattr(c, name)))


def _exchange(base: Any, transport: Transport, failsafe: Sequence[float] | None,
              timeout: float, hello_timeout: float, stopping: Any = None) -> Any:
    """The run's exchange (``_core.SilExchange``) once a controller said hello."""
    n_act = len(base.action_names)
    safe = np.zeros(n_act) if failsafe is None else np.asarray(failsafe, dtype=float)
    if safe.shape != (n_act,) or not np.all(np.abs(safe) <= 1.0):
        raise ConfigError(f"failsafe must be {n_act} values in [-1, 1] (the action "
                          f"{base.action_names}), got {list(safe)}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    ex = links.exchange(transport, safe.tolist(), SPIN_S)
    if not ex.wait_hello(hello_timeout, stopping):
        raise ConfigError(f"no controller said hello within {hello_timeout:g} s")
    return ex


def _end(ex: Any, stats: SilStats, reason: str) -> None:
    stats.end_reason = reason
    ex.end(int(wire.EndReason[reason.upper()]))


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
    stats = SilStats(mode="lockstep")
    ex = _exchange(base, transport, failsafe, timeout, hello_timeout)
    max_samples = wire.SEQ_LIMIT - 1 if duration is None else \
        min(wire.SEQ_LIMIT - 1, math.ceil(duration / base.control_period - 1e-9))
    obs, info = env.reset(seed=seed)
    measured = getattr(base, "_measured", False)
    action = np.zeros(len(base.action_names))
    rows: list[tuple] = []
    k = 0
    start = time.perf_counter()
    try:
        while True:
            tick, t_sample = _sample_clock(base)
            answer, wall = ex.ask(k, tick, t_sample, np.ascontiguousarray(obs, np.float32),
                                  timeout, action)
            if measured:
                base.set_next_delay(wall)
            obs, _, terminated, truncated, info = env.step(action.copy())
            stats.n_overrun += bool(info.get("overrun", False))
            rows.append((k, tick, int(info.get("apply_tick", tick)), t_sample,
                         info.get("t_apply", t_sample), info.get("c_k", 0.0),
                         int(answer == links.FAILSAFE), wall))
            k += 1
            if terminated or truncated:
                reason = "episode_end"
            elif k >= max_samples:
                reason = "duration"
            elif ex.misses >= LOST_AFTER:
                reason = "controller_lost"
            else:
                continue
            break
    except BaseException:  # Ctrl-C, SIGTERM, an error: the run so far is written
        _end(ex, stats, "stopped")
        stats.count(ex)
        _finish(stats, rows, start, base.substep_dt, out)
        raise
    _end(ex, stats, reason)
    ex.drain()
    stats.count(ex)
    _finish(stats, rows, start, base.substep_dt, out)
    return stats


class _RemoteController:
    """The policy of a wall-clock run (``ClosedLoopEval``'s env form, mode C): it takes
    each sample in one native call (``take_sample``: the plant read, the observation sent,
    the command awaited and latched, no Python in between), its answer or the fail-safe
    command."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.exchange: Any = None  # set once the controller said hello
        self.stopping: Any = None  # the run's stop request
        self.on_lost: Callable[[], None] = lambda: None
        self.samples: dict[int, tuple[int, bool, float]] = {}  # k -> (tick, failsafe, wall)

    def predict(self, obs: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> Any:
        raise ConfigError("a SIL controller takes whole samples (take_sample): run it with "
                          "ClosedLoopEval(mode='wallclock')")

    def take_sample(self, d: Any, runner: Any, k: int, slot: float) -> Taken | None:
        ex = self.exchange
        if self.stopping():
            return None
        action = np.zeros(d._n)
        answer, flags, tick, latch_tick, wake, wall, latched = links.sample(
            runner, d.core, ex, k, slot, d.substep_dt, self.timeout, ENDS, d._obs,
            d._info, action, self.stopping)
        if answer == links.NOT_TAKEN:  # the runner finished before the slot
            return None
        state = d.state_row(None)
        if answer == links.ENDED:  # the episode had ended at the snapshot: nothing sent
            return Taken(wake, tick, state, outcome=d.base.outcome(flags))
        self.samples[k] = (tick, answer == links.FAILSAFE, wall)
        if ex.misses >= LOST_AFTER:
            self.on_lost()
        command = tuple(action.tolist())
        if answer == links.STOPPED:
            return Taken(wake, tick, state, command=command, wall=wall)
        return Taken(wake, tick, state, command=command, wall=wall, latch_tick=latch_tick,
                     latched=latched)


def serve_wallclock(env: Any, transport: Transport, *, seed: int = 0,
                    duration: float | None = None, timeout: float = 1.0,
                    failsafe: Sequence[float] | None = None, hello_timeout: float = 60.0,
                    overrun: str = "skip", out: str | Path | None = None) -> SilStats:
    """Runs one episode of ``env`` (a VDSim env without a latency model or a sensor delay:
    the controller's real delay is the one measured) on the wall clock with the
    controller that says hello first: mode C (docs/EVAL_MODES.md) with the controller in
    its own process. Every control period the run sends the plant's observation and waits
    for its command, while the plant runs on; a command applies from the first substep
    after it arrives, the previous one holding until then. ``overrun``: "skip" (the slots
    that fell due while a sample waited are not taken) or "queue" (as mode C's).
    ``timeout`` [s]: the fail-safe command applies to a sample without an answer by then;
    ``LOST_AFTER`` in a row end the run. With ``out``: ``trace.vdtrace``, ``stats.json``,
    ``samples.csv``.

    SIGINT and SIGTERM stop the run (on the main thread): its files are written, then
    KeyboardInterrupt is raised."""
    from vdsim_gym._signals import signals_call
    from vdsim_gym.eval.closed_loop import ClosedLoopEval

    base = env.unwrapped
    if getattr(base, "obs_delay", None) is not None:
        raise ConfigError("the wall-clock SIL measures the controller's real link; drop the "
                          "env's obs_delay (or run it in lockstep)")
    remote = _RemoteController(timeout)
    folder = None if out is None else Path(out)
    ev = ClosedLoopEval(env=env, policy=remote, mode="wallclock", seed=seed,
                        duration=duration, overrun=overrun,
                        trace_path=None if folder is None else folder / "trace.vdtrace")
    stats = SilStats(mode="wallclock")
    remote.exchange = ex = _exchange(base, transport, failsafe, timeout, hello_timeout)
    remote.stopping, remote.on_lost = ev.stop_requested, ev.stop
    start = time.perf_counter()
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    with signals_call(ev.stop) as signalled:
        try:
            result = ev.run()
        except BaseException:
            _end(ex, stats, "stopped")
            stats.count(ex)
            _finish(stats, _wallclock_rows(remote.samples, None, base), start,
                    base.substep_dt, out)
            raise
    if signalled:
        reason = "stopped"
    elif ex.misses >= LOST_AFTER:
        reason = "controller_lost"
    elif result.stats.get("outcome") is not None or duration is None:
        reason = "episode_end"
    else:
        reason = "duration"
    _end(ex, stats, reason)
    ex.drain()
    stats.count(ex)
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
