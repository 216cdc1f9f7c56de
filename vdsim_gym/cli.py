"""``vdsim-gym`` command line: demo, bench, accuracy, delay-budget."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo(args: argparse.Namespace) -> int:
    from vdsim_gym.demo import run_demo

    run_demo(out=args.out, presets=args.presets.split(","), speed=args.speed, level=args.level)
    return 0


def _bench(args: argparse.Namespace) -> int:
    from vdsim_gym.bench import run

    for line in run(calls=args.calls, repeats=args.repeats, highway=not args.no_highway):
        print(line)
    return 0


def _accuracy(args: argparse.Namespace) -> int:
    from vdsim_gym.accuracy import main as accuracy_main

    return accuracy_main() or 0


def _delay_budget(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.delay_budget import main as budget_main

    budget_main(out=args.out, level=args.level, duration=args.duration,
                make_plot=not args.no_plot)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vdsim-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="baseline through the double lane changes: table + PNG")
    demo.add_argument("--out", default="demo_out", help="output folder (default: demo_out)")
    demo.add_argument("--presets", default="iso3888_1,iso3888_2,lane_change_3p5_30",
                      help="comma-separated DLC presets")
    demo.add_argument("--speed", type=float, default=None,
                      help="entry speed [m/s] (default: each preset's scenario file)")
    demo.add_argument("--level", default="L2", choices=("L1", "L2"))
    demo.set_defaults(func=_demo)

    bench = sub.add_parser("bench", help="throughput: core, env, highway-env, side by side")
    bench.add_argument("--calls", type=int, default=2000, help="calls per timed block")
    bench.add_argument("--repeats", type=int, default=5, help="timed blocks (best is kept)")
    bench.add_argument("--no-highway", action="store_true", help="skip the highway-env row")
    bench.set_defaults(func=_bench)

    acc = sub.add_parser("accuracy", help="integrator accuracy gate against a 10x finer reference")
    acc.set_defaults(func=_accuracy)

    budget = sub.add_parser(
        "delay-budget",
        help="Stanley + PI on the 3.5 m / 30 m lane change as mode A and B with delays: "
             "table + CSV + plot of e_y RMSE against the delay")
    budget.add_argument("--out", default="delay_budget_out",
                        help="output folder (default: delay_budget_out)")
    budget.add_argument("--level", default="L2", choices=("L1", "L2"))
    budget.add_argument("--duration", type=float, default=10.0,
                        help="simulated time per run [s] (default: 10, 500 samples)")
    budget.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib)")
    budget.set_defaults(func=_delay_budget)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
