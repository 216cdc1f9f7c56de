"""``vdsim-gym benchmark robust``: the benchmark where the model is wrong
(``vdsim_gym.training.robust.run_robust``; docs/TRAINING.md, "The robust benchmark")."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _int_at_least, _out_dir, add_trust_option, run_groups


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.training.robust import run_robust

    run_robust(args.task, baselines=args.baselines, groups=run_groups(args.runs or []),
               seeds=args.seeds, which=args.which, out=args.out, make_plot=not args.no_plot,
               costs=not args.no_costs, progress=not args.no_progress, trust=args.trust)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "benchmark",
        help="robust: controllers told the nominal car and a 30 ms delay, judged where "
             "each episode draws the real car, delay and losses (DLC or ACC): table, CSV, "
             "plot, cost per decision")
    p.add_argument("name", choices=("robust",), help="the benchmark (robust)")
    p.add_argument("--task", default="dlc", choices=("dlc", "acc"),
                   help="dlc: ISO 3888-1 at 20 m/s; acc: the six scenario families at "
                        "0.1 s (default dlc)")
    p.add_argument("--runs", action="append", default=None, metavar="RUNS",
                   help="one configuration's training seeds: a glob or comma-separated "
                        "run folders (repeat per configuration); IQM over the runs")
    p.add_argument("--baselines", nargs="*", default=None, metavar="SPEC",
                   help="classical controllers (default: the task's, each told the nominal "
                        "delay, and the MPC or ACC told each episode's own)")
    p.add_argument("--seeds", type=_int_at_least(1), default=64,
                   help="held-out episodes per scenario (seeds from 10^6; default 64)")
    p.add_argument("--which", default="best_model", choices=("model", "best_model"),
                   help="each run's final model or its selected best (default best_model)")
    p.add_argument("--out", type=_out_dir, default="robust_out")
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--no-costs", action="store_true",
                   help="skip the cost per decision (its timing)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_trust_option(p)
    p.set_defaults(func=_run)


__all__ = ["add_parser"]
