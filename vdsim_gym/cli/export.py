"""``vdsim-gym export run.vdtrace --mcap run.mcap``: a trace as an MCAP file for Foxglove or
PlotJuggler (``vdsim_gym.traces.mcap``, docs/TRACES.md). Prints the file written and its
topics with their message counts, read back from the file's summary. Written atomically;
SIGTERM stops it as Ctrl-C does (exit 130, no file and no temporary left)."""

from __future__ import annotations

import argparse
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from vdsim_gym._files import clean_stale_temps
from vdsim_gym._signals import sigterm_as_interrupt
from vdsim_gym.errors import ConfigError


def summary(path: str | Path) -> dict[str, tuple[str, int]]:
    """{topic: (schema name, message count)} of an MCAP file, from its summary."""
    from mcap.reader import make_reader

    with open(path, "rb") as fh:
        s = make_reader(fh).get_summary()
    if s is None or s.statistics is None:
        raise ConfigError(f"{path}: an MCAP file without a summary")
    counts = s.statistics.channel_message_counts
    return {c.topic: (s.schemas[c.schema_id].name if c.schema_id in s.schemas else "",
                      counts.get(cid, 0)) for cid, c in s.channels.items()}


def run(trace: str | Path, mcap: str | Path | None = None, start_time_ns: int = 0
        ) -> list[str]:
    """Exports ``trace`` (to ``mcap``, default: beside it with .mcap) and returns the lines
    to print. SIGTERM stops it as Ctrl-C does (KeyboardInterrupt; the temporary file is
    removed), and the temporary files of the same output that an earlier export killed
    by SIGKILL left are removed first."""
    from vdsim_gym.traces.mcap import to_mcap

    out = Path(trace).with_suffix(".mcap") if mcap is None else Path(mcap)
    with sigterm_as_interrupt():  # SIGTERM stops as Ctrl-C does: no temporary left
        clean_stale_temps(out.parent, out.name)  # what a killed export of it left
        written = to_mcap(trace, out, start_time_ns=start_time_ns)
    topics = summary(written)
    kib = written.stat().st_size / 1024
    listed = ", ".join(f"{topic} {n} ({schema})" for topic, (schema, n) in topics.items())
    return [f"wrote {written} ({kib:.0f} KiB)", f"topics (messages): {listed}"]


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


def _export(args: argparse.Namespace) -> int:
    for line in run(args.trace, args.mcap, args.start_time):
        print(line)
    return 0


def _add_export(sub: Any) -> None:
    e = sub.add_parser("export", help="a .vdtrace as an MCAP file for Foxglove or "
                                      "PlotJuggler (3D scene, pose, every channel to plot)")
    e.add_argument("trace", help="the .vdtrace file")
    e.add_argument("--mcap", default=None,
                   help="the MCAP file to write (default: the trace's name with .mcap)")
    e.add_argument("--start-time", type=_start_time, default=0,
                   help="Unix time [s] of the trace's t = 0, for tools that show dates "
                        "(default 0: log times read as the trace's t)")
    e.set_defaults(func=_export)


__all__ = ["run", "summary"]
