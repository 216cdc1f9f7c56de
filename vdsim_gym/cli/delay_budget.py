"""``vdsim-gym delay-budget``: the Stanley + PI baseline on the 3.5 m / 30 m lane change in
modes A and B with delays, and a loop budget split into its parts: table, CSV, plots and
traces (``vdsim_gym.eval.delay_budget.run_delay_budget``)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _number_in, _out_dir, add_integrator_option
from vdsim_gym.eval.delay_budget import MAX_DURATION


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.delay_budget import run_delay_budget

    run_delay_budget(out=args.out, level=args.level, duration=args.duration,
                     make_plot=not args.no_plot, gif=args.gif, integrator=args.integrator,
                     vehicle=args.vehicle, budget=None if args.budget == 0 else args.budget)
    return 0


def add_parser(sub: Any) -> None:
    budget = sub.add_parser(
        "delay-budget",
        help="Stanley + PI on the 3.5 m / 30 m lane change as mode A and B with delays: "
             "table + CSV + plot of e_y RMSE against the delay")
    budget.add_argument("--out", type=_out_dir, default="delay_budget_out",
                        help="output folder (default: delay_budget_out)")
    budget.add_argument("--level", default="L2", choices=("L1", "L2"))
    budget.add_argument("--vehicle", default="generic_sedan",
                        help="a name under envs/vehicles or a YAML path (default "
                             "generic_sedan; generic_sedan_v0: the car before the "
                             "physics-fidelity change)")
    add_integrator_option(budget)
    budget.add_argument(
        "--duration", default=10.0,
        type=_number_in("s", MAX_DURATION, " (longer runs are refused: "
                        f"{MAX_DURATION:g} s already takes about a minute)"),
        help=f"simulated time per run [s], at most {MAX_DURATION:g} (default: 10, "
             "500 samples)")
    budget.add_argument(
        "--budget", default=0.04, type=_number_in("s", 1.0, " (a loop delay in seconds: 40 "
                                                  "ms is 0.04)", allow_zero=True),
        help="a total loop delay [s] split into its parts in the table's last rows: all of "
             "it as the sensor's age, the computation, the network or the steering "
             "channel's dead time, then a quarter each (default 0.04; 0: no split)")
    budget.add_argument("--no-plot", action="store_true",
                        help="skip the PNGs (no matplotlib)")
    budget.add_argument("--gif", action="store_true",
                        help="also animate the overlay of A and the 10, 20, 25 ms runs as a "
                             "GIF (about a minute)")
    budget.set_defaults(func=_run)


__all__ = ["add_parser"]
