"""``vdsim-gym acc-metrics``: the segmented metrics of an ACC results CSV as JSON
(``vdsim_gym.eval.acc_report.run_acc_metrics``; docs/ACC.md)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _non_negative, _number_in


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.acc_report import run_acc_metrics

    print(run_acc_metrics(csv_path=args.csv, set_speed=args.set_speed, dt=args.dt,
                          follow_stable_window=args.follow_stable_window,
                          speed_ss_window=args.speed_ss_window,
                          min_safe_distance=args.min_safe_distance))
    return 0


def add_parser(sub: Any) -> None:
    met = sub.add_parser(
        "acc-metrics", help="segmented metrics of an ACC results CSV as JSON (rise time, "
                            "overshoot, steady-state errors, min distance, checks)")
    met.add_argument("--csv", required=True, help="results CSV of `vdsim-gym acc`")
    met.add_argument("--set-speed", type=_number_in("m/s"), required=True,
                     help="the run's set speed [m/s]")
    met.add_argument("--dt", type=_number_in("s"), required=True,
                     help="the run's time step [s]")
    met.add_argument("--follow-stable-window", type=_number_in("s"), default=10.0,
                     help="seconds at the end of the longest follow segment for the "
                          "distance steady-state error (default 10)")
    met.add_argument("--speed-ss-window", type=_number_in("s"), default=5.0,
                     help="seconds at the end of the longest cruise segment for the speed "
                          "steady-state error (default 5)")
    met.add_argument("--min-safe-distance", type=_non_negative, default=0.0,
                     help="the check min_distance_above_threshold: min distance must exceed "
                          "this [m] (default 0)")
    met.set_defaults(func=_run)


__all__ = ["add_parser"]
