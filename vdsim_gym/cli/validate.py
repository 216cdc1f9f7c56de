"""``vdsim-gym validate``: our L1 and L2 against CommonRoad's drift and multi-body models
on their vehicle 2 (``vdsim_gym.analysis.validation``, docs/PHYSICS.md).

The options are ``python -m vdsim_gym.analysis.validation``'s (``validation.add_arguments``, one
list for both) and so is the run (``validation.run``): the Markdown table, the plot with
``--plot``, exit 1 if a metric is outside its tolerance. Needs the ``validation`` extra
(commonroad-vehicle-models): without it the command says so in one line, before any
work. It runs ten maneuvers on both sides (about half a minute).
"""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.analysis import validation


def _run(args: argparse.Namespace) -> int:
    return validation.run(args.plot, args.integrator)


def add_parser(sub: Any) -> None:
    p = sub.add_parser("validate", description=validation.DESCRIPTION,
                       help="our L1/L2 against CommonRoad's drift and multi-body models: "
                            "the table of docs/PHYSICS.md (needs the validation extra)")
    validation.add_arguments(p)
    p.set_defaults(func=_run)


__all__ = ["add_parser"]
