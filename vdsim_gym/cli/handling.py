"""``vdsim-gym handling``: a vehicle's measured handling (understeer gradient, limit lateral
acceleration, step-steer response) beside the gradient its parameters give; with --out, a
CSV and a plot (``vdsim_gym.analysis.handling.run_handling``; docs/PHYSICS.md, "The
generic sedan, measured")."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _out_dir


def _levels(text: str) -> str:
    levels = [x.strip() for x in text.split(",")]
    if not levels or any(x not in ("L1", "L2") for x in levels):
        raise argparse.ArgumentTypeError(f"levels must be L1, L2 or L2,L1; got {text!r}")
    return ",".join(levels)


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.analysis.handling import run_handling

    for line in run_handling(vehicle=args.vehicle, levels=tuple(args.levels.split(",")),
                             out=args.out, make_plot=not args.no_plot):
        print(line)
    return 0


def add_parser(sub: Any) -> None:
    h = sub.add_parser("handling", help="a vehicle's understeer gradient, limit lateral "
                                        "acceleration and step-steer response, measured")
    h.add_argument("--vehicle", default="generic_sedan",
                   help="a name under envs/vehicles or a YAML path (default generic_sedan)")
    h.add_argument("--levels", type=_levels, default="L2,L1",
                   help="comma-separated model levels (default L2,L1)")
    h.add_argument("--out", type=_out_dir, default=None,
                   help="also write handling.csv and handling.png into this folder")
    h.add_argument("--no-plot", action="store_true", help="with --out: skip the PNG")
    h.set_defaults(func=_run)


__all__ = ["add_parser"]
