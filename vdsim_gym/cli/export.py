"""``vdsim-gym export run.vdtrace --mcap run.mcap``: a trace as an MCAP file for Foxglove or
PlotJuggler (``vdsim_gym.traces.mcap.run_export``, docs/TRACES.md). Prints the file
written and its topics with their message counts, read back from the file's summary.
Written atomically; SIGTERM stops it as Ctrl-C does (exit 130, no file and no temporary
left)."""

from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation
from typing import Any


def _start_time(text: str) -> int:
    """Unix seconds (decimals kept exactly) as ns."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or not (0 <= value < 9_000_000_000):
        raise argparse.ArgumentTypeError(f"the start time is Unix seconds >= 0 (e.g. "
                                         f"1767225600 for 2026-01-01), got {text!r}")
    return int(value * 1_000_000_000)


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.traces.mcap import run_export

    for line in run_export(args.trace, args.mcap, args.start_time):
        print(line)
    return 0


def add_parser(sub: Any) -> None:
    e = sub.add_parser("export", help="a .vdtrace as an MCAP file for Foxglove or "
                                      "PlotJuggler (3D scene, pose, every channel to plot)")
    e.add_argument("trace", help="the .vdtrace file")
    e.add_argument("--mcap", default=None,
                   help="the MCAP file to write (default: the trace's name with .mcap)")
    e.add_argument("--start-time", type=_start_time, default=0,
                   help="Unix time [s] of the trace's t = 0, for tools that show dates "
                        "(default 0: log times read as the trace's t)")
    e.set_defaults(func=_run)


__all__ = ["add_parser"]
