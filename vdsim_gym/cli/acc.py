"""``vdsim-gym acc``: the reference ACC workflow, a PID ACC behind a lead from a sensor CSV,
written as a results CSV (``vdsim_gym.eval.acc_report.run_acc``; docs/ACC.md)."""

from __future__ import annotations

import argparse
from typing import Any


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.acc_report import run_acc

    for line in run_acc(config=args.config, sensor=args.sensor, gains=args.gains,
                        out=args.out, plant=args.plant, vehicle=args.vehicle, plot=args.plot):
        print(line)
    return 0


def add_parser(sub: Any) -> None:
    acc = sub.add_parser(
        "acc", help="the reference ACC workflow: PID ACC behind a lead from a sensor CSV, "
                    "results CSV (time, ego_speed, acceleration_cmd, mode, ...)")
    acc.add_argument("--config", default=None,
                     help="workflow YAML: vehicle limits, ACC settings, simulation dt "
                          "(default: the packaged envs/scenarios/acc.yaml)")
    acc.add_argument("--sensor", default=None,
                     help="lead sensor CSV: time, lead_speed, distance, blanks without a lead "
                          "(default: the packaged envs/data/acc_lead.csv)")
    acc.add_argument("--gains", default=None,
                     help="PID gains, tuning_results.yaml style (default: the packaged "
                          "envs/scenarios/acc_gains.yaml)")
    acc.add_argument("--out", default="acc_results.csv",
                     help="results CSV path (default: acc_results.csv); written whole or "
                          "not at all")
    acc.add_argument("--plant", default="point_mass", choices=("point_mass", "L1", "L2"),
                     help="point_mass: the reference's kinematics; L1/L2: our vehicle "
                          "through the acceleration cascade (default: point_mass)")
    acc.add_argument("--vehicle", default="generic_sedan",
                     help="vehicle of the L1/L2 plant (default: generic_sedan)")
    acc.add_argument("--plot", action="store_true",
                     help="also write speed / distance / command against time as "
                          "<out>.png (needs matplotlib)")
    acc.set_defaults(func=_run)


__all__ = ["add_parser"]
