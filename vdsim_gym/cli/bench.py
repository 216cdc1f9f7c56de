"""``vdsim-gym bench``: throughput side by side (``vdsim_gym.bench.throughput.run_bench``),
``--vector`` the vector session's (``vdsim_gym.bench.vector.run_bench_vector``) and
``bench wallclock`` mode C's jitter (``vdsim_gym.bench.wallclock.run_bench_wallclock``)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _int_at_least, _number_in


def _run(args: argparse.Namespace) -> int:
    if args.kind == "wallclock":
        from vdsim_gym.bench.wallclock import run_bench_wallclock

        lines = run_bench_wallclock(runs=args.runs, duration=args.duration,
                                    load=not args.no_load, dlc=not args.no_dlc, progress=True)
    elif args.vector:
        from vdsim_gym.bench.vector import run_bench_vector

        lines = run_bench_vector(steps=args.steps, repeats=args.repeats or 15,
                                 ppo=not args.no_ppo)
    else:
        from vdsim_gym.bench.throughput import run_bench

        lines = run_bench(calls=args.calls, repeats=args.repeats or 5,
                          highway=not args.no_highway, sac=not args.no_sac)
    for line in lines:
        print(line)
    return 0


def add_parser(sub: Any) -> None:
    bench = sub.add_parser("bench", help="throughput: core, env, highway-env, side by side; "
                                         "'bench wallclock': mode C jitter on this host")
    bench.add_argument("kind", nargs="?", choices=("wallclock",), default=None,
                       help="wallclock: the mode-C jitter protocol (L2, Tc 20 ms, 10 s runs; "
                            "low load and a CPU-burning load it starts, inherited and pinned "
                            "affinity) and the DLC baseline in mode C against mode A (~5 min)")
    bench.add_argument("--runs", type=_int_at_least(1), default=5,
                       help="wallclock: runs per condition (default 5)")
    bench.add_argument("--duration", type=_number_in("s", 600.0), default=10.0,
                       help="wallclock: seconds per jitter run (default 10)")
    bench.add_argument("--no-load", action="store_true",
                       help="wallclock: skip the CPU-burning conditions")
    bench.add_argument("--no-dlc", action="store_true",
                       help="wallclock: skip the DLC mode C against mode A comparison")
    bench.add_argument("--calls", type=_int_at_least(1), default=2000,
                       help="highway-env row only: each of its timed blocks is max(CALLS/10, "
                            "10) env steps (default 2000: 200 steps). The VDSim rows time "
                            "one whole baseline episode per block")
    bench.add_argument("--repeats", type=_int_at_least(1), default=None,
                       help="timed blocks per figure, best kept (default 5; --vector: 15)")
    bench.add_argument("--no-highway", action="store_true", help="skip the highway-env row")
    bench.add_argument("--vector", action="store_true",
                       help="vector env throughput: N = 1, 16, 64, threads 1 and 2, core-only "
                            "reference, CartPole/highway-env/EnvPool, PPO env share (~30 s; "
                            "progress on stderr)")
    bench.add_argument("--steps", type=_int_at_least(1), default=50,
                       help="--vector: steps per block (short blocks, many: robust to load)")
    bench.add_argument("--no-ppo", action="store_true", help="--vector: skip the PPO rows")
    bench.add_argument("--no-sac", action="store_true",
                       help="skip the SB3 SAC env-share rows (two SAC runs of about 50 s "
                            "each on one torch thread)")
    bench.set_defaults(func=_run)


__all__ = ["add_parser"]
