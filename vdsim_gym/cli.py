"""``vdsim-gym`` command line: demo, bench, accuracy, delay-budget, sweep."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def _demo(args: argparse.Namespace) -> int:
    from vdsim_gym.demo import run_demo

    run_demo(out=args.out, presets=args.presets.split(","), speed=args.speed, level=args.level)
    return 0


def _bench(args: argparse.Namespace) -> int:
    if args.vector:
        from vdsim_gym.bench_vector import run as run_vector

        lines = run_vector(steps=args.steps, repeats=args.repeats or 15, ppo=not args.no_ppo)
    else:
        from vdsim_gym.bench import run

        lines = run(calls=args.calls, repeats=args.repeats or 5, highway=not args.no_highway)
    for line in lines:
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


def _sweep(args: argparse.Namespace) -> int:
    import json

    from vdsim_gym.eval.sweep_cli import main as sweep_main

    try:
        env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else {}
    except json.JSONDecodeError as exc:
        raise SystemExit(f"vdsim-gym sweep: --env-kwargs is not JSON: {exc}") from None
    if not isinstance(env_kwargs, dict):
        raise SystemExit("vdsim-gym sweep: --env-kwargs must be a JSON object")
    try:
        sweep_main([args.controller, *args.compare], args.env, args.delays,
                   seeds=args.seeds, overrun=args.overrun, num_envs=args.num_envs,
                   backend=args.backend, address=args.address, out=args.out,
                   env_kwargs=env_kwargs, algo=args.algo, metric=args.metric,
                   make_plot=not args.no_plot, progress=not args.no_progress)
    except (ValueError, ImportError) as exc:
        raise SystemExit(f"vdsim-gym sweep: {exc}") from None
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
    bench.add_argument("--repeats", type=int, default=None,
                       help="timed blocks, best kept (default 5; --vector: 15)")
    bench.add_argument("--no-highway", action="store_true", help="skip the highway-env row")
    bench.add_argument("--vector", action="store_true",
                       help="vector env throughput: N = 1, 16, 64, threads 1 and 2, core-only "
                            "reference, CartPole/highway-env/EnvPool, PPO env share")
    bench.add_argument("--steps", type=int, default=50,
                       help="--vector: steps per block (short blocks, many: robust to load)")
    bench.add_argument("--no-ppo", action="store_true", help="--vector: skip the PPO row")
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

    sw = sub.add_parser(
        "sweep",
        help="a controller over delays x seeds on batched envs: CSV table, per-delay "
             "summary with 95 %% intervals, plot of the metric against the delay")
    sw.add_argument("--controller", default="stanley",
                    help="stanley, stanley:key=value,... (Stanley args; kp, ki: PI speed) "
                         "or a saved SB3 model (.zip) (default: stanley)")
    sw.add_argument("--compare", action="append", default=[], metavar="CONTROLLER",
                    help="another controller on the same grid and plot (repeatable)")
    sw.add_argument("--algo", default=None,
                    help="SB3 algorithm of the model files (default: try PPO, SAC, TD3, ...)")
    sw.add_argument("--env", default="VDSim-DLC-v0", help="env id (default: VDSim-DLC-v0)")
    sw.add_argument("--delays", default="0,5,10,20,40ms",
                    help="latency models: numbers (fixed), uniform:LO-HI, normal:MU,SD, none; "
                         "unit ms or s (default: 0,5,10,20,40ms)")
    sw.add_argument("--seeds", type=int, default=64, help="seeds 0..N-1 per delay (default 64)")
    sw.add_argument("--overrun", default="skip", choices=("skip", "queue"))
    sw.add_argument("--num-envs", type=int, default=64, help="episodes per batch (default 64)")
    sw.add_argument("--backend", default="local", choices=("local", "ray"))
    sw.add_argument("--address", default=None,
                    help="Ray cluster address (default: a local Ray instance)")
    sw.add_argument("--env-kwargs", default=None,
                    help='shared gym.make kwargs as JSON, e.g. \'{"preset": "iso3888_2"}\'')
    sw.add_argument("--metric", default="ey_rmse_m",
                    choices=("ey_rmse_m", "ey_max_m", "episode_return", "cone_hits",
                             "n_overrun"), help="plotted metric (default: ey_rmse_m)")
    sw.add_argument("--out", default="sweep_out", help="output folder (default: sweep_out)")
    sw.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib)")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.set_defaults(func=_sweep)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
