"""``vdsim-gym seeds-report``: several training seeds of each configuration, evaluated over
delays beside classical baselines, with rliable's statistics
(``vdsim_gym.training.seeds_report.run_seeds_report``)."""

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
    run_groups,
)


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.training.seeds_report import run_seeds_report

    run_seeds_report(run_groups(args.runs), args.env, args.delays, seeds=args.seeds,
                     which=args.which, metric=args.metric, baselines=args.baselines,
                     env_kwargs=args.env_kwargs, scenarios=args.scenarios, out=args.out,
                     make_plot=not args.no_plot, trust=args.trust)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "seeds-report",
        help="several training seeds of each configuration, evaluated over delays: "
             "interquartile mean with 95 %% stratified bootstrap intervals (rliable), "
             "failed seeds counted, learning curves with bands (needs the stats extra)")
    p.add_argument("--runs", action="append", required=True, metavar="RUNS",
                   help="one configuration's run folders: a glob or comma-separated paths "
                        "(repeat for each configuration), e.g. 'runs/dlc_res_s*'")
    p.add_argument("--env", default=None,
                   help="the env the runs were trained on (default: theirs, from each run "
                        "folder's config.yml; another one is refused)")
    p.add_argument("--delays", type=_delays, default="0,10,20,40,60ms",
                   help="fixed computation delays, the sweep grammar (default 0,10,20,40,60ms)")
    p.add_argument("--seeds", type=_int_at_least(1), default=64,
                   help="evaluation seeds per delay (default 64)")
    p.add_argument("--which", default="model", choices=("model", "best_model"),
                   help="each run's final model or EvalCallback's best (default model)")
    p.add_argument("--metric", default=None, help="default: the env's headline metric")
    p.add_argument("--baselines", nargs="*", default=[], metavar="SPEC",
                   help="classical controllers swept on the same grid, e.g. stanley mpc")
    p.add_argument("--env-kwargs", type=_json_object, default=None,
                   help='shared gym.make kwargs as JSON, e.g. \'{"control_period": 0.1}\'')
    p.add_argument("--scenarios", type=_json_objects, default=None,
                   help="cells of env kwargs as a JSON array, pooled per delay (each run's "
                        "value: its mean over every scenario and seed)")
    p.add_argument("--out", type=_out_dir, default="seeds_report")
    p.add_argument("--no-plot", action="store_true")
    add_trust_option(p)
    p.set_defaults(func=_run)


__all__ = ["add_parser"]
