"""``vdsim-gym compare``: trained policies and baselines across computation delays
(docs/TRAINING.md).

The options of agents/compare.py, which is this command under its own name
(``vdsim_gym.cli.main.script``). Each policy (a run folder or model.zip from
``vdsim-gym train``, whose observation normalization is applied; a saved SB3 model; or a
baseline spec: stanley[:k=v,...], acc_pid, idm, cycle_follower) is swept over the delays
and seeds on the C++ vector session; the summary table is printed, and sweep.csv,
sweep_summary.csv and sweep.png (each metric against the delay with 95 % interval bands)
are written. The sweep is ``vdsim-gym sweep``'s
(``vdsim_gym.eval.sweeps.compare.run_sweep``).
"""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import (
    _delays,
    _int_at_least,
    _json_object,
    _json_objects,
    _out_dir,
    add_trust_option,
)

DESCRIPTION = ("Compare trained policies and baselines across computation delays "
               "(docs/TRAINING.md).")


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.sweeps.compare import run_sweep

    run_sweep(args.policies, args.env, args.delays, seeds=args.seeds, overrun=args.overrun,
              num_envs=args.num_envs, out=args.out, env_kwargs=args.env_kwargs,
              scenarios=args.scenarios, metric=args.metric, make_plot=not args.no_plot,
              own_env=args.own_env, options=("--policies", "--policies"), trust=args.trust)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("compare", description=DESCRIPTION,
                       help="trained policies (run folders, model files) and baselines "
                            "over delays x seeds: summary table, CSVs, plot")
    p.add_argument("--env", default="VDSim-DLC-v0",
                   help="a registered VDSim env id (default VDSim-DLC-v0)")
    p.add_argument("--policies", nargs="+", required=True,
                   help="run folders, model files or baseline specs (stanley, acc_pid, ...)")
    p.add_argument("--delays", type=_delays, default="0,10,20,40ms",
                   help="fixed computation delays, e.g. 0,20,40ms (default 0,10,20,40ms; "
                        "docs/SWEEPS.md, the delay grammar)")
    p.add_argument("--seeds", type=_int_at_least(1), default=64,
                   help="episodes per delay and scenario, seeds 0..N-1 (default 64)")
    p.add_argument("--overrun", default="skip", choices=("skip", "queue"),
                   help="a computation longer than the control period: skip the samples "
                        "it covers or queue them (default skip; docs/EVAL_MODES.md)")
    p.add_argument("--metric", default=None, help="the metric to plot (default: the env's)")
    p.add_argument("--env-kwargs", type=_json_object, default=None,
                   help="JSON object of gym.make kwargs (default none)")
    p.add_argument("--scenarios", type=_json_objects, default=None,
                   help="cells of env kwargs as a JSON array, one column of the grid each, "
                        "e.g. '[{\"scenario\": \"follow\"}, {\"scenario\": \"cut_in\"}]'")
    p.add_argument("--own-env", action="store_true",
                   help="sweep each run folder on the env kwargs it was trained with (its "
                        "config.yml, over --env-kwargs); baselines on --env-kwargs")
    p.add_argument("--num-envs", type=_int_at_least(1), default=64,
                   help="envs stepped together in the vector batch (default 64)")
    p.add_argument("--out", type=_out_dir, default="compare_out",
                   help="folder of sweep.csv, sweep_summary.csv and sweep.png "
                        "(default compare_out)")
    p.add_argument("--no-plot", action="store_true", help="no sweep.png")
    add_trust_option(p)
    p.set_defaults(func=_run)


__all__ = ["DESCRIPTION", "add_parser"]
