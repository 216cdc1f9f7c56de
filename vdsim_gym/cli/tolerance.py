"""``vdsim-gym tolerance``: the largest computation (or sensor) delay each controller still
passes, as a table, two CSVs and a plot (``vdsim_gym.eval.tolerance_report.run_tolerance``;
the search is ``vdsim_gym.eval.tolerance``)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from vdsim_gym.cli.options import (
    _int_at_least,
    _json_object,
    _json_objects,
    _out_dir,
    add_trust_option,
)


def one_delay(text: str) -> float:
    """A single delay [s] in the delay grammar ("500ms", "0.5")."""
    from vdsim_gym.config.delays import parse_delays
    from vdsim_gym.config.latency import FixedLatency

    try:
        models = parse_delays(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(models) != 1 or not isinstance(models[0], FixedLatency):
        raise argparse.ArgumentTypeError(f"{text!r}: give one delay, e.g. 500ms or 0.5")
    return models[0].c


def _confidence(text: str) -> float | None:
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a confidence in (0, 1), or none")
    return value


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.tolerance_report import run_tolerance

    run_tolerance(args.controllers, args.env, kind=args.kind, seeds=args.seeds,
                  max_delay=args.max_delay, start=args.start, resolution=args.resolution,
                  scenarios=args.scenarios, env_kwargs=args.env_kwargs, metric=args.metric,
                  overrun=args.overrun, out=args.out, confidence=args.confidence,
                  max_metric=args.max_metric, make_plot=not args.no_plot, log=not args.quiet,
                  trust=args.trust)
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "tolerance",
        help="the largest computation (or sensor) delay each controller still passes "
             "(success >= 95 %% at 95 %% confidence, Clopper-Pearson), by bisection over "
             "sweeps on the substep grid: table, CSVs, plot")
    p.add_argument("--controllers", required=True, nargs="+", metavar="SPEC",
                   help="controller specs as for sweep --controller, space-separated, e.g. "
                        "stanley stanley_dc mpc agents/models/dlc_ppo")
    p.add_argument("--env", default="VDSim-DLC-v0", help="VDSim env id (default: VDSim-DLC-v0)")
    p.add_argument("--kind", default="computation", choices=("computation", "sensor"),
                   help="which delay is searched (default computation)")
    p.add_argument("--seeds", type=_int_at_least(1), default=64,
                   help="seeds 0..N-1 per delay and scenario (default 64; a pass needs 59 "
                        "or more episodes)")
    p.add_argument("--max-delay", type=one_delay, default=0.5,
                   help="the longest delay searched (default 500ms)")
    p.add_argument("--start", type=one_delay, default=None,
                   help="the first delay after 0; doubled until one fails (default 20ms, "
                        "or one substep where that is longer)")
    p.add_argument("--resolution", type=one_delay, default=None,
                   help="the bisection's step (default one substep)")
    p.add_argument("--scenarios", type=_json_objects, default=None,
                   help="cells of env kwargs as a JSON array, pooled at each delay")
    p.add_argument("--env-kwargs", type=_json_object, default=None,
                   help='shared gym.make kwargs as JSON, e.g. \'{"control_period": 0.1}\'')
    p.add_argument("--metric", default=None,
                   help="the figure reported at each delay (default: the env's headline "
                        "metric, path envs: rms_e_y)")
    p.add_argument("--max-metric", type=float, default=None, metavar="X",
                   help="an episode also needs its metric at most X to succeed (e.g. "
                        "--metric rms_speed_error --max-metric 0.5 on the dyno)")
    p.add_argument("--confidence", type=_confidence, default=0.95,
                   help="the bound's confidence (default 0.95), or none: the success "
                        "rate itself, for a deterministic env such as the dyno")
    p.add_argument("--overrun", default="skip", choices=("skip", "queue"))
    p.add_argument("--out", type=_out_dir, default="tolerance_out",
                   help="output folder (default: tolerance_out)")
    p.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no line per evaluated delay")
    add_trust_option(p)
    p.set_defaults(func=_run)


__all__ = ["add_parser", "one_delay"]
