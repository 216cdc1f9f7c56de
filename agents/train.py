#!/usr/bin/env python3
"""Train a stable-baselines3 agent on a VDSim env (docs/TRAINING.md).

    python agents/train.py --algo ppo --env VDSim-DLC-v0 [--latency uniform:0:40ms]
                           [--randomize mass=0.9:1.15,friction=0.8:1.0,latency=0:40ms]
                           [--action-history K] [--timesteps N] [--seed S] [--out runs]

Hyperparameters come from agents/hyperparams/<algo>.yml (rl-zoo3's format); the run
folder holds the model, its normalization statistics and the exact configuration. The
logic is vdsim_gym.training.train; this file is its command line.
"""

from __future__ import annotations

import argparse
import json
import sys


def build_parser() -> argparse.ArgumentParser:
    from vdsim_gym.training import ALGOS

    p = argparse.ArgumentParser(prog="agents/train.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--algo", default="ppo", choices=ALGOS)
    p.add_argument("--env", default="VDSim-DLC-v0", help="a registered VDSim env id")
    p.add_argument("--latency", default=None,
                   help="computation delay while training: fixed:20ms, uniform:0:40ms, "
                        "normal:10:5ms or none (default none)")
    p.add_argument("--randomize", default=None,
                   help="domain randomization per episode: name=lo:hi,... (mass, cg_x, "
                        "friction, cornering_stiffness, actuator_lag, latency, "
                        "latency.jitter; e.g. mass=0.9:1.15,latency=0:40ms) or a .yml file")
    p.add_argument("--action-history", type=int, default=0, metavar="K",
                   help="append the last K actions to the observation (default 0)")
    p.add_argument("--timesteps", type=int, default=None,
                   help="env steps (default: the hyperparameter file's n_timesteps)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs", help="parent folder of the run folder")
    p.add_argument("--name", default=None, help="run folder name (default: env_algo_sSEED_time)")
    p.add_argument("--hyperparams", default=None,
                   help='JSON object overriding keys of the file\'s block, e.g. \'{"n_envs": 4}\'')
    p.add_argument("--conf", default=None, help="another hyperparameter file (rl-zoo3 format)")
    p.add_argument("--env-kwargs", default=None,
                   help='JSON object of gym.make kwargs, e.g. \'{"level": "L1"}\'')
    p.add_argument("--eval-freq", type=int, default=10_000, help="env steps between evaluations")
    p.add_argument("--eval-episodes", type=int, default=5)
    p.add_argument("--num-threads", type=int, default=1,
                   help="torch threads (default 1: a small network gains nothing from more)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    from vdsim_gym.training import TrainingError, train

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        hyper = json.loads(args.hyperparams) if args.hyperparams else None
        env_kwargs = json.loads(args.env_kwargs) if args.env_kwargs else None
    except json.JSONDecodeError as exc:
        parser.error(f"--hyperparams / --env-kwargs must be JSON objects: {exc}")
    try:
        res = train(args.algo, args.env, timesteps=args.timesteps, seed=args.seed,
                    latency=args.latency, randomize=args.randomize,
                    action_history=args.action_history, env_kwargs=env_kwargs, hyperparams=hyper,
                    hyperparams_file=args.conf, out=args.out, run_name=args.name,
                    eval_freq=args.eval_freq, eval_episodes=args.eval_episodes,
                    progress_bar=not args.no_progress, num_threads=args.num_threads)
    except (TrainingError, ValueError, FileExistsError) as exc:
        parser.error(str(exc))
    print(f"trained {res.timesteps} steps in {res.wall_time_s:.0f} s; run folder {res.run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
