"""The ``vdsim-gym serve`` command's work (``run_serve``): one episode of an env driven by a
controller in its own process (docs/SIL.md), in lockstep or on the wall clock. Prints
where it listens, waits for a hello, runs the episode (``server``), writes
``trace.vdtrace``, ``stats.json`` and ``samples.csv`` into the output folder, sends the
end message and prints the counters. SIGTERM stops it as Ctrl-C does, with the trace and
stats of what ran written."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.errors import ConfigError
from vdsim_gym.sil.server import SilStats


def run_serve(env_id: str, *, out: str | Path, env_kwargs: dict[str, Any] | None = None,
              udp: tuple[str, int] | None = None, shm: str | None = None,
              mode: str = "lockstep", latency: Any = None, overrun: str | None = None,
              duration: float | None = None, timeout: float = 1.0,
              failsafe: Sequence[float] | None = None, seed: int = 0,
              allow_remote: bool = False, hello_timeout: float = 60.0,
              echo: Callable[[str], Any] | None = None) -> SilStats:
    """Serves one episode of ``env_id`` (``env_kwargs``: its gym.make keywords) over UDP
    (``udp``: host and port; port 0: a free one) or shared memory (``shm``: a region
    name), ``mode`` "lockstep" (``latency``: a LatencyModel, default none) or "wallclock"
    (``overrun``: skip or queue), and writes into ``out``. ``echo``: where the lines go,
    the address first (a script starting the controller reads the port there), the
    counters at the end (None: stdout, flushed). Returns the run's ``SilStats``."""
    say: Callable[[str], Any] = echo if echo is not None else _print_flushed
    stats = _serve(env_id, out=out, env_kwargs=dict(env_kwargs or {}), udp=udp, shm=shm,
                   mode=mode, latency=latency, overrun=overrun, duration=duration,
                   timeout=timeout, failsafe=failsafe, seed=seed, allow_remote=allow_remote,
                   hello_timeout=hello_timeout, say=say)
    for line in stats_lines(stats, out):
        say(line)
    return stats


def _print_flushed(line: str) -> None:
    print(line, flush=True)


def stats_lines(stats: SilStats, out: str | Path) -> list[str]:
    """The counters of a run served into ``out``, as printed at its end."""
    lines = [f"{stats.n_samples} samples, {stats.n_commands} commands applied, "
             f"{stats.n_failsafe} fail-safe, {stats.n_overrun} overrun; dropped: "
             f"{stats.n_late} late, {stats.n_stale} stale, {stats.n_duplicate} duplicate, "
             f"{stats.n_malformed} malformed, {stats.n_foreign} foreign; ended: "
             f"{stats.end_reason}"]
    if stats.latency:
        lat = stats.latency
        lines.append(f"sample to apply: p50 {lat['p50'] * 1e3:.3g} ms, p99 "
                     f"{lat['p99'] * 1e3:.3g} ms, max {lat['max'] * 1e3:.3g} ms")
    lines.append(f"wrote {Path(out) / 'trace.vdtrace'}, stats.json and samples.csv")
    return lines


def _serve(env_id: str, *, out: str | Path, env_kwargs: dict[str, Any],
           udp: tuple[str, int] | None, shm: str | None, mode: str, latency: Any,
           overrun: str | None, duration: float | None, timeout: float,
           failsafe: Sequence[float] | None, seed: int, allow_remote: bool,
           hello_timeout: float, say: Callable[[str], Any]) -> SilStats:
    """``run_serve``'s episode, without the counters."""
    import gymnasium as gym

    import vdsim_gym.envs  # noqa: F401  (registration)
    from vdsim_gym.config.latency import LatencyModel
    from vdsim_gym.sil.server import serve_lockstep, serve_wallclock
    from vdsim_gym.sim.links import ShmTransport, UdpTransport
    from vdsim_gym.wrappers import RecordTrace

    if (udp is None) == (shm is None):
        raise ConfigError("give one transport: --udp HOST:PORT or --shm NAME")
    if "latency" in env_kwargs:
        raise ConfigError("give the latency as --latency, not in --env-kwargs")
    if mode == "wallclock" and latency is not None:
        raise ConfigError("--mode wallclock measures the controller's real delay; --latency "
                          "is for --mode lockstep (drop it)")
    if mode == "lockstep" and overrun is not None:
        raise ConfigError("--overrun is for --mode wallclock (in lockstep the latency "
                          "model's overruns follow the env's overrun policy)")
    folder = Path(out)
    transport: Any = ShmTransport(shm) if shm is not None else \
        UdpTransport(*udp, allow_remote=allow_remote)  # type: ignore[misc]
    try:
        if shm is not None:
            where = f"shared memory {shm} (/dev/shm/{shm})"
        else:
            host, port = transport.address
            where = f"{host}:{port} (UDP)"
        say(f"listening on {where}, {mode}; waiting for a controller's hello")
        common: dict[str, Any] = dict(seed=seed, duration=duration, timeout=timeout,
                                      failsafe=failsafe, hello_timeout=hello_timeout,
                                      out=folder)
        if mode == "wallclock":
            env = gym.make(env_id, **env_kwargs)
            try:
                with sigterm_as_interrupt():
                    return serve_wallclock(env, transport, overrun=overrun or "skip",
                                           **common)
            finally:
                env.close()
        env = RecordTrace(gym.make(env_id, latency=latency or LatencyModel.fixed(0.0),
                                   **env_kwargs), folder / "trace.vdtrace")
        try:
            with sigterm_as_interrupt():
                return serve_lockstep(env, transport, **common)
        finally:
            env.close()  # writes the trace of what ran
    finally:
        transport.close()


__all__ = ["run_serve", "stats_lines"]
