"""``vdsim-gym render``: .vdtrace runs animated (bird's-eye view, speed, steer and command
panels) as a GIF or MP4, or a PNG frame (``vdsim_gym.render.run.run_render``). SIGTERM
stops a render as Ctrl-C does (no file, no temporary left)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _number_in


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.render.run import run_render

    labels = None if args.labels is None else [x.strip() for x in args.labels.split(",")]
    run_render(args.traces, args.out, png=args.png, at=args.at, labels=labels, fps=args.fps,
               speed=args.speed, progress=not args.no_progress)
    return 0


def add_parser(sub: Any) -> None:
    r = sub.add_parser("render", help="animate .vdtrace runs (bird's-eye view, speed, steer "
                                      "and command panels) as a GIF or MP4, or a PNG frame")
    r.add_argument("traces", nargs="+", help="one or more .vdtrace files (overlaid by time)")
    r.add_argument("--out", default=None,
                   help="animation path ending in .gif or .mp4 (default: the first trace's "
                        "name with .gif, unless only --png is given)")
    r.add_argument("--png", default=None, help="also (or only) a PNG of one frame")
    r.add_argument("--at", type=float, default=None,
                   help="--png: the frame's time [s] (default: the end)")
    r.add_argument("--labels", default=None, help="legend labels, comma-separated, one per "
                                                  "trace (default: the file names)")
    r.add_argument("--fps", type=_number_in("frames/s", 60.0), default=10.0,
                   help="GIF frames per second (default 10)")
    r.add_argument("--speed", type=_number_in("x real time", 100.0), default=1.0,
                   help="simulated seconds per second of GIF (default 1)")
    r.add_argument("--no-progress", action="store_true",
                   help="no progress bar (it goes to stderr)")
    r.set_defaults(func=_run)


__all__ = ["add_parser"]
