"""``vdsim-gym sweep``: a controller (and others to compare) over delays x seeds on batched
envs: CSVs, the summary table and a plot (``vdsim_gym.eval.sweeps.compare.run_sweep``)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import (
    _delays,
    _int_at_least,
    _json_object,
    _json_objects,
    _losses,
    _out_dir,
    add_trust_option,
)
from vdsim_gym.policies.algos import MODEL_ALGOS


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.sweeps.compare import run_sweep

    run_sweep([args.controller, *args.compare], args.env, args.delays,
              seeds=args.seeds, overrun=args.overrun, num_envs=args.num_envs,
              backend=args.backend, address=args.address, out=args.out,
              env_kwargs=args.env_kwargs, scenarios=args.scenarios, algo=args.algo,
              metric=args.metric, own_env=args.own_env, losses=args.loss,
              obs_delays=args.obs_delays, trust=args.trust,
              make_plot=not args.no_plot, progress=not args.no_progress)
    return 0


def add_parser(sub: Any) -> None:
    sw = sub.add_parser(
        "sweep",
        help="a controller over delays x seeds on batched envs: CSV table, per-delay "
             "summary with 95 %% intervals, plot of the metric against the delay")
    sw.add_argument("--controller", default="stanley",
                    help="stanley, stanley:key=value,... (Stanley args; kp, ki: PI speed), "
                         "stanley_dc[:delay=S,...] (Stanley on the state predicted across "
                         "the loop delay), mpc[:key=value,...] (linear MPC, OSQP), "
                         "acc_pid[:gains=FILE], idm[:key=value,...], acc_pid_dc and "
                         "idm_dc (on the gap predicted across the delay) "
                         "(VDSim-ACC-v0), "
                         "cycle_follower[:lookahead_s=S] (VDSim-Dyno-v0) "
                         "or a saved SB3 model (.zip) or run folder; loading one unpickles "
                         "its files, which can run code: load only models you trust "
                         "(default: stanley)")
    sw.add_argument("--compare", action="append", default=[], metavar="CONTROLLER",
                    help="another controller on the same grid and plot (repeatable)")
    sw.add_argument("--algo", default=None, type=str.upper, choices=MODEL_ALGOS,
                    help="SB3 algorithm of the model files (default: try each)")
    sw.add_argument("--env", default="VDSim-DLC-v0",
                    help="VDSim env id (default: VDSim-DLC-v0)")
    sw.add_argument("--delays", type=_delays, default="0,5,10,20,40ms",
                    help="latency models: numbers (fixed), uniform:LO-HI or uniform:LO:HI, "
                         "normal:MU,SD or normal:MU:SD, none; unit ms or s (default: "
                         "0,5,10,20,40ms)")
    sw.add_argument("--seeds", type=_int_at_least(1), default=64,
                    help="seeds 0..N-1 per delay (default 64)")
    sw.add_argument("--overrun", default="skip", choices=("skip", "queue"))
    sw.add_argument("--num-envs", type=_int_at_least(1), default=64,
                    help="episodes per batch (default 64)")
    sw.add_argument("--backend", default="local", choices=("local", "ray"))
    sw.add_argument("--address", default=None,
                    help="Ray cluster address (default: a local Ray instance)")
    sw.add_argument("--scenarios", type=_json_objects, default=None,
                    help="cells of env kwargs as a JSON array, one column of the grid each, "
                         'e.g. \'[{"scenario": "follow"}, {"scenario": "cut_in"}]\'')
    sw.add_argument("--loss", type=_losses, default=None,
                    help="a grid axis of network losses: each probability a column "
                         "(network=NetworkModel(drop=p) on every scenario; 0: no network), "
                         "e.g. 0,0.05,0.1 or 0,5,10%%")
    sw.add_argument("--obs-delays", type=_delays, default=None,
                    help="a grid axis of sensor delays (the observation's age), in --delays' "
                         "grammar: each model a column (obs_delay= on every scenario; 0: "
                         "none), e.g. 0,20ms,40ms")
    sw.add_argument("--env-kwargs", type=_json_object, default=None,
                    help='shared gym.make kwargs as JSON, e.g. \'{"preset": "iso3888_2"}\'')
    sw.add_argument("--own-env", action="store_true",
                    help="sweep each trained run on the env kwargs it was trained with "
                         "(its config.yml, over --env-kwargs); baselines on --env-kwargs")
    sw.add_argument("--metric", default=None,
                    help="plotted metric: episode_return, n_overrun or a field of the "
                         "env's episode summary, e.g. rms_e_y, max_abs_e_y, cone_hits "
                         "(default: the env's headline metric, path envs: rms_e_y)")
    sw.add_argument("--out", type=_out_dir, default="sweep_out",
                    help="output folder (default: sweep_out)")
    sw.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib)")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_trust_option(sw)
    sw.set_defaults(func=_run)


__all__ = ["add_parser"]
