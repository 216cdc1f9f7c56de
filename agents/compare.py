#!/usr/bin/env python3
"""Compare trained policies and baselines across computation delays (docs/TRAINING.md).

    python agents/compare.py --env VDSim-DLC-v0 --policies runs/<run>/model.zip stanley
                             --delays 0,10,20,40ms --seeds 64 [--out compare_out]

Each policy (a run folder or model.zip from agents/train.py, whose observation
normalization is applied; a saved SB3 model; or a baseline spec: stanley[:k=v,...],
acc_pid, idm, cycle_follower) is swept over the delays and seeds on the C++ vector
session; the summary table is printed, and sweep.csv, sweep_summary.csv and sweep.png
(each metric against the delay with 95 % interval bands) are written. The logic is
`vdsim-gym sweep` (vdsim_gym.cli.sweep.main); this file is its command line.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    from vdsim_gym.cli.sweep import main as sweep_main

    p = argparse.ArgumentParser(prog="agents/compare.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="VDSim-DLC-v0")
    p.add_argument("--policies", nargs="+", required=True,
                   help="run folders, model files or baseline specs (stanley, acc_pid, ...); "
                        "loading a run unpickles its files: load only runs you trust")
    p.add_argument("--delays", default="0,10,20,40ms")
    p.add_argument("--seeds", type=int, default=64)
    p.add_argument("--overrun", default="skip", choices=("skip", "queue"))
    p.add_argument("--metric", default=None, help="the metric to plot (default: the env's)")
    p.add_argument("--env-kwargs", default=None, help="JSON object of gym.make kwargs")
    p.add_argument("--scenarios", default=None,
                   help="cells of env kwargs as a JSON array, one column of the grid each, "
                        "e.g. '[{\"scenario\": \"follow\"}, {\"scenario\": \"cut_in\"}]'")
    p.add_argument("--own-env", action="store_true",
                   help="sweep each run folder on the env kwargs it was trained with (its "
                        "config.yml, over --env-kwargs); baselines on --env-kwargs")
    p.add_argument("--num-envs", type=int, default=64)
    p.add_argument("--out", default="compare_out")
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args(argv)
    if args.seeds < 1:
        p.error(f"--seeds must be >= 1, got {args.seeds}")
    try:
        env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else None
    except json.JSONDecodeError as exc:
        p.error(f"--env-kwargs must be a JSON object: {exc}")
    try:
        scenarios = json.loads(args.scenarios) if args.scenarios else None
    except json.JSONDecodeError as exc:
        p.error(f"--scenarios must be a JSON array of objects: {exc}")
    if scenarios is not None and not (isinstance(scenarios, list)
                                      and all(isinstance(c, dict) for c in scenarios)):
        p.error("--scenarios must be a JSON array of objects, e.g. '[{\"scenario\": "
                "\"follow\"}]'")
    try:
        sweep_main(args.policies, args.env, args.delays, seeds=args.seeds,
                   overrun=args.overrun, num_envs=args.num_envs, out=args.out,
                   env_kwargs=env_kwargs, scenarios=scenarios, metric=args.metric,
                   make_plot=not args.no_plot, own_env=args.own_env)
    except (ValueError, ImportError) as exc:
        p.error(str(exc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
