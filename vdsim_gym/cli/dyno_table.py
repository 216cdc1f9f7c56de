"""``vdsim-gym dyno-table``: the robot driver on the chassis dyno, the reference delay table
(both modes) and the loop margins against the time domain; with --out, a CSV and plots
(``vdsim_gym.analysis.dyno_table.run_dyno_table``; docs/DYNO.md)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _out_dir


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.analysis.dyno_table import run_dyno_table

    for line in run_dyno_table(out=args.out, make_plot=not args.no_plot):
        print(line)
    return 0


def add_parser(sub: Any) -> None:
    dyno = sub.add_parser(
        "dyno-table", help="robot driver on the chassis dyno: the reference delay table "
                           "(both modes) and the loop margins against the time domain")
    dyno.add_argument("--out", type=_out_dir, default=None,
                      help="also write dyno_table.csv and plots into this folder")
    dyno.add_argument("--no-plot", action="store_true", help="with --out: skip the PNGs")
    dyno.set_defaults(func=_run)


__all__ = ["add_parser"]
