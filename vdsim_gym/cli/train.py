"""``vdsim-gym train``: a stable-baselines3 agent on a VDSim env (docs/TRAINING.md).

The options of agents/train.py, which is this command under its own name
(``vdsim_gym.cli.main.script``); the training is ``vdsim_gym.training.train``. Needs the
``train`` extra (stable-baselines3, torch, tensorboard, tqdm, rich): without it the
command says so in one line. Ctrl-C and SIGTERM stop the training and keep what it
learned (the run folder's model.zip and statistics), then exit with 130.
"""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _json_object_like, _json_objects, _out_dir
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies.algos import ALGOS

DESCRIPTION = "Train a stable-baselines3 agent on a VDSim env (docs/TRAINING.md)."
RESIDUAL_SCALE = 0.1  # --residual-scale's default, with --residual
DEFAULTS: dict[str, Any] = {}  # each option's default (add_parser fills it)


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym._signals import sigterm_as_interrupt

    # SIGTERM is an interrupt from the start: during the imports and the start-up too
    with sigterm_as_interrupt():
        return _train_command(args)


def _check_combinations(args: argparse.Namespace) -> None:
    """Options that mean nothing without another are refused, not ignored."""
    if args.residual_scale is not None and args.residual is None:
        raise ConfigError("--residual-scale sets the reach of a residual correction: give "
                          "--residual BASE with it (or drop --residual-scale)")
    given = [f"--{n.replace('_', '-')}" for n in ("imitate_rounds", "imitate_steps", "kl_coef")
             if getattr(args, n) is not None]
    if given and args.imitate is None:
        raise ConfigError(f"{given[0]} sets the imitation: give --imitate CONTROLLER with it "
                          f"(or drop {given[0]})")
    if args.jobs is not None and args.seeds is None:
        raise ConfigError("--jobs runs several seeds at once: give --seeds (e.g. --seeds "
                          "0-4) with it (or drop --jobs)")


# With --from-run only these may be given: the rest is the run's own config.yml.
_FROM_RUN_OK = ("from_run", "out", "name", "no_progress", "func", "command")


def _rerun(args: argparse.Namespace, parser_defaults: dict[str, Any]) -> int:
    given = [f"--{k.replace('_', '-')}" for k, v in vars(args).items()
             if k not in _FROM_RUN_OK and v != parser_defaults.get(k)]
    if given:
        raise ConfigError(f"--from-run trains the run again with its own recorded options; "
                          f"drop {', '.join(given)} (only --out, --name, --no-progress go "
                          "with it)")
    from vdsim_gym.training.curves import run_summary
    from vdsim_gym.training.run_folder import rerun

    out = None if args.out == parser_defaults.get("out") else args.out
    res = rerun(args.from_run, out=out, run_name=args.name,
                progress_bar=not args.no_progress)
    print(f"trained {res.timesteps} steps in {res.wall_time_s:.0f} s again; run folder "
          f"{res.run_dir}")
    print(run_summary(res.run_dir, res.metric_labels))
    return 0


def _train_command(args: argparse.Namespace) -> int:
    if args.from_run is not None:
        return _rerun(args, DEFAULTS)
    _check_combinations(args)
    from vdsim_gym.training import train

    jobs = 1 if args.jobs is None else args.jobs
    scale = RESIDUAL_SCALE if args.residual_scale is None else args.residual_scale
    common = dict(timesteps=args.timesteps, latency=args.latency, randomize=args.randomize,
                  action_history=args.action_history, env_kwargs=args.env_kwargs,
                  hyperparams=args.hyperparams, hyperparams_file=args.conf,
                  eval_freq=args.eval_freq, eval_episodes=args.eval_episodes,
                  num_threads=args.num_threads, residual=args.residual,
                  residual_scale=scale, select_by=args.select_by,
                  eval_scenarios=args.eval_scenarios, critic=args.critic,
                  features=args.features, known_delay=args.known_delay,
                  imitate=args.imitate, select_min_gap=args.select_min_gap,
                  **{k: getattr(args, k) for k in ("imitate_rounds", "imitate_steps", "kl_coef")
                     if getattr(args, k) is not None})
    if args.seeds is not None:
        from vdsim_gym.training.seeds import train_seeds

        name = args.name or f"{args.env}_{args.algo}"
        dirs = train_seeds(args.algo, args.env, args.seeds, name=name, out=args.out,
                           jobs=jobs, progress_bar=not args.no_progress and jobs == 1,
                           **common)
        print(f"trained {len(dirs)} seeds; run folders {', '.join(map(str, dirs))}")
        from vdsim_gym.training.curves import run_summary

        for d in dirs:
            print(f"{d}:\n{run_summary(d)}")
        return 0
    try:
        res = train(args.algo, args.env, seed=args.seed, out=args.out, run_name=args.name,
                    progress_bar=not args.no_progress, **common)
    except FileExistsError as exc:  # the run folder: a name used before
        raise ConfigError(f"the run folder {exc.filename!r} exists; pass another --name "
                          "(or --out)") from None
    from vdsim_gym.training.curves import run_summary

    print(f"trained {res.timesteps} steps in {res.wall_time_s:.0f} s; run folder {res.run_dir}")
    print(run_summary(res.run_dir, res.metric_labels))
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("train", description=DESCRIPTION,
                       help="train a stable-baselines3 agent on a VDSim env: a run folder "
                            "with the model, its normalization and the exact configuration "
                            "(needs the train extra)")
    p.add_argument("--algo", default="ppo", choices=ALGOS)
    p.add_argument("--env", default="VDSim-DLC-v0", help="a registered VDSim env id")
    p.add_argument("--latency", default=None,
                   help="computation delay while training: fixed:20ms, uniform:0:40ms, "
                        "normal:10:5ms or none (default none)")
    p.add_argument("--randomize", default=None,
                   help="domain randomization per episode: name=lo:hi,... (mass, cg_x, "
                        "friction, cornering_stiffness, actuator_lag, latency, "
                        "latency.jitter, steer_delay, longitudinal_delay, obs_delay, loss, "
                        "driver_delay; e.g. mass=0.9:1.15,latency=0:40ms) or a .yml file")
    p.add_argument("--action-history", type=int, default=0, metavar="K",
                   help="append the last K actions to the observation (default 0)")
    p.add_argument("--timesteps", type=int, default=None,
                   help="env steps (default: the hyperparameter file's n_timesteps, "
                        "agents/hyperparams/: PPO on VDSim-DLC-v0 2,000,000, about 9 "
                        "minutes on one torch thread at rest; docs/TRAINING.md)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=_seeds, default=None,
                   help="several runs, one per seed (0,1,2 or 0-4), into <out>/<name>_s<seed> "
                        "(docs/TRAINING.md, \"Many seeds\"); overrides --seed")
    p.add_argument("--jobs", type=int, default=None,
                   help="with --seeds: runs at once in worker processes (default 1)")
    p.add_argument("--out", type=_out_dir, default="runs", help="parent folder of the run folder")
    p.add_argument("--name", default=None, help="run folder name (default: env_algo_sSEED_time)")
    p.add_argument("--hyperparams", type=_json_object_like('\'{"n_envs": 4}\''), default=None,
                   help='JSON object overriding keys of the file\'s block, e.g. \'{"n_envs": 4}\'')
    p.add_argument("--conf", default=None, help="another hyperparameter file (rl-zoo3 format)")
    p.add_argument("--env-kwargs", type=_json_object_like('\'{"level": "L1"}\''), default=None,
                   help='JSON object of gym.make kwargs, e.g. \'{"level": "L1"}\'')
    p.add_argument("--eval-freq", type=int, default=10_000, help="env steps between evaluations")
    p.add_argument("--eval-episodes", type=int, default=None,
                   help="episodes per evaluation (default 5; with --eval-scenarios one per "
                        "scenario)")
    p.add_argument("--eval-scenarios", type=_json_objects, default=None, metavar="JSON",
                   help="evaluate on a fixed grid: a JSON array of env-kwargs objects over "
                        "--env-kwargs (without --randomize), one episode each at every "
                        "evaluation, e.g. '[{\"cycle\": \"highway\", \"driver\": "
                        "{\"delay_s\": 0.3}}]' (docs/TRAINING.md)")
    p.add_argument("--num-threads", type=int, default=1,
                   help="torch threads (default 1: a small network gains nothing from more)")
    p.add_argument("--residual", default=None, metavar="BASE",
                   help="learn a correction on top of a baseline: stanley, stanley_dc, "
                        "acc_pid, idm, cycle_follower (with :key=value,... as for sweep "
                        "--controller); docs/TRAINING.md, \"Residual learning\"")
    p.add_argument("--residual-scale", type=_scale, default=None, metavar="S",
                   help="the correction's reach in action units: one number or one per "
                        "action, comma-separated; with --residual (default 0.1)")
    p.add_argument("--select-by", default="return", metavar="METRIC",
                   help="which evaluation's model is best_model.zip: return (default: the "
                        "highest mean return, EvalCallback's rule) or a task metric, lowest "
                        "mean wins, fewer failed episodes first (rms_e_y, rms_speed_error, "
                        "rms_time_gap_error, ...)")
    p.add_argument("--critic", default="plain", choices=("plain", "privileged"),
                   help="privileged: the critic also sees what the actor cannot (the "
                        "episode's draws, the delay each command really had); PPO, SAC and "
                        "TQC; docs/TRAINING.md, \"A privileged critic\"")
    p.add_argument("--features", default=None, metavar="NAMES",
                   help="controller features appended to the observation: predicted_state "
                        "(the single-track prediction across --known-delay); docs/"
                        "TRAINING.md, \"Observation features\"")
    p.add_argument("--known-delay", default=None, metavar="DELAY",
                   help="the loop delay the features predict across, e.g. 30ms (default: "
                        "the env's own, when fixed)")
    p.add_argument("--imitate", default=None, metavar="CONTROLLER",
                   help="DAgger from a classical expert (stanley_dc, mpc, acc_pid_dc, ... "
                        "with :key=value) before PPO, which then stays near the imitated "
                        "policy by a KL term; docs/TRAINING.md, \"Imitation, then "
                        "fine-tuning\"")
    p.add_argument("--imitate-rounds", type=int, default=None, metavar="N",
                   help="DAgger rounds (default 8)")
    p.add_argument("--imitate-steps", type=int, default=None, metavar="N",
                   help="env steps per DAgger round, over all envs (default 8192)")
    p.add_argument("--kl-coef", type=float, default=None, metavar="C",
                   help="the fine-tuning's weight on KL(policy || imitated policy) "
                        "(default 0.5; 0: plain PPO from the imitated start)")
    p.add_argument("--select-min-gap", type=float, default=None, metavar="METRES",
                   help="with --select-by METRIC on the ACC: an evaluation episode whose "
                        "smallest gap is below this counts as failed (a near miss)")
    p.add_argument("--from-run", default=None, metavar="RUN",
                   help="train a run folder's run again, from its config.yml's recorded "
                        "options and seed, into <out>/<name> (default: beside it, "
                        "<run>_rerun); docs/TRAINING.md, \"Reproducing a run\"")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_run)
    DEFAULTS.update({a.dest: a.default for a in p._actions if a.dest != "help"})


def _scale(text: str) -> Any:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number or comma-separated "
                                         "numbers, e.g. 0.1 or 0.1,0.2") from None
    return values[0] if len(values) == 1 else values


def _seeds(text: str) -> list[int]:
    """"0,1,2" or "0-4" (inclusive)."""
    from vdsim_gym.training.seeds import MAX_RUNS

    try:
        if "-" in text:
            a, b = (int(v) for v in text.split("-", 1))
            count = b - a + 1
            out = list(range(a, b + 1)) if count <= MAX_RUNS else []
        else:
            out = [int(v) for v in text.split(",")]
            count = len(out)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give seeds as 0,1,2 or 0-4") from None
    if count > MAX_RUNS:
        raise argparse.ArgumentTypeError(f"{text!r} is {count} runs, more than the bound of "
                                         f"{MAX_RUNS} per command; give fewer seeds (e.g. "
                                         "0-9) and run the rest as further commands")
    if not out or min(out) < 0 or len(set(out)) != len(out):
        raise argparse.ArgumentTypeError(f"{text!r}: seeds are distinct integers >= 0")
    return out


__all__ = ["DESCRIPTION", "add_parser"]
