"""``vdsim-gym serve ENV_ID --udp HOST:PORT | --shm NAME --out DIR``: one episode of the
env driven by a controller in its own process (docs/SIL.md), in lockstep or on the wall
clock. Prints where it listens, waits for a hello, runs the episode, writes
``DIR/trace.vdtrace``, ``DIR/stats.json`` and ``DIR/samples.csv``, sends the end message
and prints the counters. SIGTERM stops it as Ctrl-C does (exit 130) with the trace and
stats of what ran written."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.cli.options import _json_object, _out_dir
from vdsim_gym.errors import ConfigError


def _udp(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:5600; "
                                         "port 0: any free one)")
    return host, int(port)


def _failsafe(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not comma-separated numbers (the "
                                         "fail-safe action, e.g. 0,-0.3)") from None
    return values


def _latency(text: str) -> Any:
    from vdsim_gym.config.latency import LatencyModel
    from vdsim_gym.training.options import parse_latency

    if text.strip().lower() == "measured":
        return LatencyModel.measured()
    try:
        model = parse_latency(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return LatencyModel.fixed(0.0) if model is None else model


def run(env_id: str, *, out: str | Path, env_kwargs: dict[str, Any],
        udp: tuple[str, int] | None = None, shm: str | None = None, mode: str = "lockstep",
        latency: Any = None, overrun: str | None = None, duration: float | None = None,
        timeout: float = 1.0, failsafe: list[float] | None = None, seed: int = 0,
        allow_remote: bool = False, hello_timeout: float = 60.0, announce: Any = None
        ) -> Any:
    """The command's work; returns the run's ``SilStats``."""
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
        line = f"listening on {where}, {mode}; waiting for a controller's hello"
        if announce is None:
            print(line, flush=True)  # a script starting the controller reads the port here
        else:
            announce(line)
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


def _serve(args: argparse.Namespace) -> int:
    stats = run(args.env_id, udp=args.udp, shm=args.shm, mode=args.mode, out=args.out,
                env_kwargs=args.env_kwargs, latency=args.latency, overrun=args.overrun,
                duration=args.duration, timeout=args.timeout, failsafe=args.failsafe,
                seed=args.seed, allow_remote=args.allow_remote,
                hello_timeout=args.hello_timeout)
    print(f"{stats.n_samples} samples, {stats.n_commands} commands applied, "
          f"{stats.n_failsafe} fail-safe, {stats.n_overrun} overrun; dropped: "
          f"{stats.n_late} late, {stats.n_stale} stale, {stats.n_duplicate} duplicate, "
          f"{stats.n_malformed} malformed, {stats.n_foreign} foreign; ended: "
          f"{stats.end_reason}")
    if stats.latency:
        lat = stats.latency
        print(f"sample to apply: p50 {lat['p50'] * 1e3:.3g} ms, p99 {lat['p99'] * 1e3:.3g} "
              f"ms, max {lat['max'] * 1e3:.3g} ms")
    print(f"wrote {Path(args.out) / 'trace.vdtrace'}, stats.json and samples.csv")
    return 0


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _add_serve(sub: Any) -> None:
    p = sub.add_parser("serve", help="run an env for a controller in its own process over "
                                     "UDP or shared memory, in lockstep or on the wall clock "
                                     "(software in the loop; docs/SIL.md)")
    p.add_argument("env_id", help="a registered VDSim env id, e.g. VDSim-DLC-v0")
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--udp", type=_udp, default=None, metavar="HOST:PORT",
                       help="listen on UDP (loopback unless --allow-remote; port 0: a free "
                            "one, printed)")
    where.add_argument("--shm", default=None, metavar="NAME",
                       help="a shared-memory region /dev/shm/NAME (created, removed at the "
                            "end): a controller on this machine, faster than a socket")
    p.add_argument("--out", type=_out_dir, required=True, metavar="DIR",
                   help="folder for trace.vdtrace, stats.json and samples.csv")
    p.add_argument("--mode", choices=("lockstep", "wallclock"), default="lockstep",
                   help="lockstep: virtual time, the run waits for each command (default); "
                        "wallclock: the plant runs in real time and a command applies when "
                        "it arrives")
    p.add_argument("--latency", type=_latency, default=None, metavar="MODEL",
                   help="lockstep: when a command applies after its sample: fixed:20ms, "
                        "uniform:0:40ms, normal:10:5ms, or measured (the controller's wall "
                        "time); default 0")
    p.add_argument("--overrun", choices=("skip", "queue"), default=None,
                   help="wallclock: the slots that fell due while a sample waited are "
                        "skipped (default) or queued")
    p.add_argument("--env-kwargs", type=_json_object, default={}, metavar="JSON",
                   help='the env\'s keyword arguments, e.g. \'{"preset": "iso3888_2"}\'')
    p.add_argument("--duration", type=_positive, default=None, metavar="S",
                   help="simulated seconds to run at most (default: the episode)")
    p.add_argument("--timeout", type=_positive, default=1.0, metavar="S",
                   help="wall seconds a sample waits for its command before the fail-safe "
                        "action applies (default 1; 10 in a row end the run)")
    p.add_argument("--hello-timeout", type=_positive, default=60.0, metavar="S",
                   help="wall seconds to wait for a controller's hello (default 60)")
    p.add_argument("--failsafe", type=_failsafe, default=None, metavar="V,V",
                   help="the fail-safe action (default zeros)")
    p.add_argument("--seed", type=int, default=0, help="the episode's reset seed")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --udp address (controllers from the network)")
    p.set_defaults(func=_serve)


__all__ = ["run"]
