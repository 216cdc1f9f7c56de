"""``vdsim-gym serve ENV_ID --udp HOST:PORT | --shm NAME --out DIR``: one episode of the
env driven by a controller in its own process (docs/SIL.md), in lockstep or on the wall
clock (``vdsim_gym.sil.serve.run_serve``). Prints where it listens, waits for a hello,
runs the episode, writes ``DIR/trace.vdtrace``, ``DIR/stats.json`` and
``DIR/samples.csv``, sends the end message and prints the counters. SIGTERM stops it as
Ctrl-C does (exit 130) with the trace and stats of what ran written."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _json_object, _out_dir


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


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.sil.serve import run_serve

    run_serve(args.env_id, udp=args.udp, shm=args.shm, mode=args.mode, out=args.out,
              env_kwargs=args.env_kwargs, latency=args.latency, overrun=args.overrun,
              duration=args.duration, timeout=args.timeout, failsafe=args.failsafe,
              seed=args.seed, allow_remote=args.allow_remote,
              hello_timeout=args.hello_timeout)
    return 0


def add_parser(sub: Any) -> None:
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
    p.set_defaults(func=_run)


__all__ = ["add_parser"]
