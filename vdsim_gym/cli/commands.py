"""The ``vdsim-gym`` commands: each one's parser (``_add_<command>``) and what it runs
(``_<command>``, importing its job module only when it runs); export, train, compare and
validate keep both in their own modules."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from vdsim_gym.cli.compare import _add_compare
from vdsim_gym.cli.delay_budget import MAX_DURATION
from vdsim_gym.cli.demo import SCENARIOS as DEMO_PRESETS
from vdsim_gym.cli.export import _add_export
from vdsim_gym.cli.options import (
    _delays,
    _int_at_least,
    _json_object,
    _json_objects,
    _losses,
    _non_negative,
    _number_in,
    _out_dir,
    _presets,
    add_trust_option,
)
from vdsim_gym.cli.serve import _add_serve
from vdsim_gym.cli.tolerance import add_parser as _add_tolerance
from vdsim_gym.cli.train import _add_seeds_report, _add_train
from vdsim_gym.cli.validate import _add_validate
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies.algos import _SB3_ALGOS
from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR, INTEGRATORS


def _demo(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.demo import run_demo

    run_demo(out=args.out, presets=args.presets, speed=args.speed, level=args.level,
             integrator=args.integrator)
    return 0


def _bench(args: argparse.Namespace) -> int:
    if args.kind == "wallclock":
        from vdsim_gym.cli.bench_wallclock import run as run_wallclock

        lines = run_wallclock(runs=args.runs, duration=args.duration, load=not args.no_load,
                              dlc=not args.no_dlc, progress=True)
    elif args.vector:
        from vdsim_gym.cli.bench_vector import run as run_vector

        lines = run_vector(steps=args.steps, repeats=args.repeats or 15, ppo=not args.no_ppo)
    else:
        from vdsim_gym.cli.bench import run

        lines = run(calls=args.calls, repeats=args.repeats or 5, highway=not args.no_highway,
                    sac=not args.no_sac)
    for line in lines:
        print(line)
    return 0


def _accuracy(args: argparse.Namespace) -> int:
    if args.closed_loop and args.noisy:
        raise ConfigError("--closed-loop and --noisy are two gates; run one at a time")
    if not (args.closed_loop or args.noisy):
        for flag, value in (("--integrator", args.integrator), ("--max-step", args.max_step),
                            ("--step-tol", args.step_tol), ("--cases", args.cases),
                            ("--levels", args.levels), ("--seeds", args.seeds)):
            if value is not None:
                gates = "--noisy" if flag == "--seeds" else "--closed-loop or --noisy"
                raise ConfigError(f"{flag} applies to {gates}; add it")
        from vdsim_gym.cli.accuracy import main as accuracy_main

        accuracy_main()  # prints its table; the gates' verdicts are --closed-loop's, --noisy's
        return 0
    physics: dict[str, Any] = {}
    if args.integrator is not None:
        physics["integrator"] = args.integrator
    if args.max_step is not None:
        physics["max_step"] = args.max_step
    if args.step_tol is not None:
        physics["step_tol"] = args.step_tol
    levels = tuple(args.levels.split(",")) if args.levels else ("L2", "L1")
    cases = args.cases.split(",") if args.cases else None
    label = ", ".join(f"{k}={v!r}" for k, v in physics.items()) or "the default physics"
    if args.noisy:
        return _noisy_gate(args, physics, label, cases, levels)
    if args.seeds is not None:
        raise ConfigError("--seeds applies to --noisy (the closed-loop gate runs seed 0)")
    from vdsim_gym.eval.closed_loop_gate import REFERENCE, format_table, run_gate, summary

    rows = run_gate(physics, cases=cases, levels=levels,
                    progress=lambda s: print(f"closed-loop gate: {s}", file=sys.stderr,
                                             flush=True))
    ref = ", ".join(f"{k}={v!r}" for k, v in REFERENCE.items())
    print(f"Closed-loop gate: {label} against {ref} (the dyno: its bench at 0.1 ms "
          "substeps); each env's metric under its baseline, mode B fixed delays, seed 0; "
          "gate 1 %")
    print(format_table(rows))
    print(summary(rows))
    return 0 if all(r.passes for r in rows) else 1


def _noisy_gate(args: argparse.Namespace, physics: dict[str, Any], label: str,
                cases: list[str] | None, levels: tuple[str, ...]) -> int:
    from vdsim_gym.eval.noisy_gate import REFERENCE, SEEDS, format_table, run_gate, summary

    if args.seeds is not None and args.seeds < 1:
        raise ConfigError(f"--seeds must be >= 1, got {args.seeds}")
    seeds = tuple(range(args.seeds)) if args.seeds is not None else SEEDS
    rows = run_gate(physics, cases=cases, levels=levels, seeds=seeds,
                    progress=lambda s: print(f"noisy-command gate: {s}", file=sys.stderr,
                                             flush=True))
    ref = ", ".join(f"{k}={v!r}" for k, v in REFERENCE.items())
    print(f"Noisy-command gate: {label} against {ref}; recorded command streams replayed "
          f"open loop, seeds {', '.join(map(str, seeds))}; each signal's metric over the run; "
          "gate 1 %")
    print(format_table(rows))
    print(summary(rows))
    return 0 if all(r.passes for r in rows) else 1


def _delay_budget(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.delay_budget import main as budget_main

    budget_main(out=args.out, level=args.level, duration=args.duration,
                make_plot=not args.no_plot, gif=args.gif, integrator=args.integrator,
                vehicle=args.vehicle, budget=None if args.budget == 0 else args.budget)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.sweep import main as sweep_main

    sweep_main([args.controller, *args.compare], args.env, args.delays,
               seeds=args.seeds, overrun=args.overrun, num_envs=args.num_envs,
               backend=args.backend, address=args.address, out=args.out,
               env_kwargs=args.env_kwargs, scenarios=args.scenarios, algo=args.algo,
               metric=args.metric, own_env=args.own_env, losses=args.loss,
               obs_delays=args.obs_delays, trust=args.trust,
               make_plot=not args.no_plot, progress=not args.no_progress)
    return 0


def _acc(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.acc import run_acc

    for line in run_acc(config=args.config, sensor=args.sensor, gains=args.gains,
                        out=args.out, plant=args.plant, vehicle=args.vehicle, plot=args.plot):
        print(line)
    return 0


def _acc_metrics(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.acc import run_metrics

    print(run_metrics(csv_path=args.csv, set_speed=args.set_speed, dt=args.dt,
                      follow_stable_window=args.follow_stable_window,
                      speed_ss_window=args.speed_ss_window,
                      min_safe_distance=args.min_safe_distance))
    return 0


def _dyno_table(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.dyno_table import run

    for line in run(out=args.out, make_plot=not args.no_plot):
        print(line)
    return 0


def _handling(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.handling import run

    for line in run(vehicle=args.vehicle, levels=tuple(args.levels.split(",")), out=args.out,
                    make_plot=not args.no_plot):
        print(line)
    return 0


def _levels(text: str) -> str:
    levels = [x.strip() for x in text.split(",")]
    if not levels or any(x not in ("L1", "L2") for x in levels):
        raise argparse.ArgumentTypeError(f"levels must be L1, L2 or L2,L1; got {text!r}")
    return ",".join(levels)


def _render(args: argparse.Namespace) -> int:
    """SIGTERM stops a render as Ctrl-C does (no file, no temporary left); the temporary
    files of the same outputs that a render killed by SIGKILL left are removed first."""
    from vdsim_gym._files import clean_stale_temps
    from vdsim_gym._signals import sigterm_as_interrupt
    from vdsim_gym.render.trace import render_gif, render_png

    labels = None if args.labels is None else [x.strip() for x in args.labels.split(",")]
    gif = args.out
    if gif is None and args.png is None:  # neither: the GIF beside the first trace
        gif = str(Path(args.traces[0]).with_suffix(".gif"))
    with sigterm_as_interrupt():
        for out in (args.png, gif):
            if out is not None:
                clean_stale_temps(Path(out).parent, Path(out).name)
        if args.png is not None:
            print(f"wrote {render_png(args.traces, args.png, labels=labels, at=args.at)}")
        if gif is not None:
            out = render_gif(args.traces, gif, labels=labels, fps=args.fps,
                             speed=args.speed, progress=not args.no_progress)
            print(f"wrote {out}")
    return 0


def _add_integrator(parser: Any) -> None:
    parser.add_argument("--integrator", default=DEFAULT_INTEGRATOR, choices=INTEGRATORS,
                        help=f"physics integrator (default {DEFAULT_INTEGRATOR}; heun on every "
                             "substep is the reference configuration, which reproduces the "
                             "figures published before the training-grade default)")


def _add_demo(sub: Any) -> None:
    demo = sub.add_parser("demo", help="baseline through the double lane changes: table + PNG")
    demo.add_argument("--out", type=_out_dir, default="demo_out",
                      help="output folder (default: demo_out)")
    demo.add_argument("--presets", type=_presets, default=",".join(DEMO_PRESETS),
                      help=f"comma-separated DLC presets (default: {','.join(DEMO_PRESETS)})")
    demo.add_argument("--speed", type=_number_in("m/s"), default=None,
                      help="entry speed [m/s] (default: each preset's scenario file)")
    demo.add_argument("--level", default="L2", choices=("L1", "L2"))
    _add_integrator(demo)
    demo.set_defaults(func=_demo)


def _add_bench(sub: Any) -> None:
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
    bench.set_defaults(func=_bench)


def _add_delay_budget(sub: Any) -> None:
    budget = sub.add_parser(
        "delay-budget",
        help="Stanley + PI on the 3.5 m / 30 m lane change as mode A and B with delays: "
             "table + CSV + plot of e_y RMSE against the delay")
    budget.add_argument("--out", type=_out_dir, default="delay_budget_out",
                        help="output folder (default: delay_budget_out)")
    budget.add_argument("--level", default="L2", choices=("L1", "L2"))
    budget.add_argument("--vehicle", default="generic_sedan",
                        help="a name under envs/vehicles or a YAML path (default "
                             "generic_sedan; generic_sedan_v0: the car before the "
                             "physics-fidelity change)")
    _add_integrator(budget)
    budget.add_argument(
        "--duration", default=10.0,
        type=_number_in("s", MAX_DURATION, " (longer runs are refused: "
                        f"{MAX_DURATION:g} s already takes about a minute)"),
        help=f"simulated time per run [s], at most {MAX_DURATION:g} (default: 10, "
             "500 samples)")
    budget.add_argument(
        "--budget", default=0.04, type=_number_in("s", 1.0, " (a loop delay in seconds: 40 "
                                                  "ms is 0.04)", allow_zero=True),
        help="a total loop delay [s] split into its parts in the table's last rows: all of "
             "it as the sensor's age, the computation, the network or the steering "
             "channel's dead time, then a quarter each (default 0.04; 0: no split)")
    budget.add_argument("--no-plot", action="store_true",
                        help="skip the PNGs (no matplotlib)")
    budget.add_argument("--gif", action="store_true",
                        help="also animate the overlay of A and the 10, 20, 25 ms runs as a "
                             "GIF (about a minute)")
    budget.set_defaults(func=_delay_budget)


def _add_sweep(sub: Any) -> None:
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
    sw.add_argument("--algo", default=None, type=str.upper, choices=_SB3_ALGOS,
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
    sw.set_defaults(func=_sweep)


def _add_acc(sub: Any) -> None:
    acc = sub.add_parser(
        "acc", help="the reference ACC workflow: PID ACC behind a lead from a sensor CSV, "
                    "results CSV (time, ego_speed, acceleration_cmd, mode, ...)")
    acc.add_argument("--config", default=None,
                     help="workflow YAML: vehicle limits, ACC settings, simulation dt "
                          "(default: the packaged envs/scenarios/acc.yaml)")
    acc.add_argument("--sensor", default=None,
                     help="lead sensor CSV: time, lead_speed, distance, blanks without a lead "
                          "(default: the packaged envs/data/acc_lead.csv)")
    acc.add_argument("--gains", default=None,
                     help="PID gains, tuning_results.yaml style (default: the packaged "
                          "envs/scenarios/acc_gains.yaml)")
    acc.add_argument("--out", default="acc_results.csv",
                     help="results CSV path (default: acc_results.csv); written whole or "
                          "not at all")
    acc.add_argument("--plant", default="point_mass", choices=("point_mass", "L1", "L2"),
                     help="point_mass: the reference's kinematics; L1/L2: our vehicle "
                          "through the acceleration cascade (default: point_mass)")
    acc.add_argument("--vehicle", default="generic_sedan",
                     help="vehicle of the L1/L2 plant (default: generic_sedan)")
    acc.add_argument("--plot", action="store_true",
                     help="also write speed / distance / command against time as "
                          "<out>.png (needs matplotlib)")
    acc.set_defaults(func=_acc)

    met = sub.add_parser(
        "acc-metrics", help="segmented metrics of an ACC results CSV as JSON (rise time, "
                            "overshoot, steady-state errors, min distance, checks)")
    met.add_argument("--csv", required=True, help="results CSV of `vdsim-gym acc`")
    met.add_argument("--set-speed", type=_number_in("m/s"), required=True,
                     help="the run's set speed [m/s]")
    met.add_argument("--dt", type=_number_in("s"), required=True,
                     help="the run's time step [s]")
    met.add_argument("--follow-stable-window", type=_number_in("s"), default=10.0,
                     help="seconds at the end of the longest follow segment for the "
                          "distance steady-state error (default 10)")
    met.add_argument("--speed-ss-window", type=_number_in("s"), default=5.0,
                     help="seconds at the end of the longest cruise segment for the speed "
                          "steady-state error (default 5)")
    met.add_argument("--min-safe-distance", type=_non_negative, default=0.0,
                     help="the check min_distance_above_threshold: min distance must exceed "
                          "this [m] (default 0)")
    met.set_defaults(func=_acc_metrics)


def _add_dyno_table(sub: Any) -> None:
    dyno = sub.add_parser(
        "dyno-table", help="robot driver on the chassis dyno: the reference delay table "
                           "(both modes) and the loop margins against the time domain")
    dyno.add_argument("--out", type=_out_dir, default=None,
                      help="also write dyno_table.csv and plots into this folder")
    dyno.add_argument("--no-plot", action="store_true", help="with --out: skip the PNGs")
    dyno.set_defaults(func=_dyno_table)


def _add_render(sub: Any) -> None:
    r = sub.add_parser("render", help="animate .vdtrace runs (bird's-eye view, speed, steer "
                                      "and command panels) as a GIF or MP4, or a PNG frame")
    r.add_argument("traces", nargs="+", help="one or more .vdtrace files (overlaid by time)")
    r.add_argument("--out", default=None,
                   help="animation path ending in .gif or .mp4 (default: the first trace's "
                        "name with .gif, unless only --png is given)")
    r.add_argument("--png", default=None, help="also (or only) a PNG of one frame")
    r.add_argument("--at", type=float, default=None,
                   help="--png: the frame's time [s] (default: the end)")
    r.add_argument("--labels", default=None, help="legend labels, comma-separated, one per "
                                                  "trace (default: the file names)")
    r.add_argument("--fps", type=_number_in("frames/s", 60.0), default=10.0,
                   help="GIF frames per second (default 10)")
    r.add_argument("--speed", type=_number_in("x real time", 100.0), default=1.0,
                   help="simulated seconds per second of GIF (default 1)")
    r.add_argument("--no-progress", action="store_true",
                   help="no progress bar (it goes to stderr)")
    r.set_defaults(func=_render)



def _add_handling(sub: Any) -> None:
    h = sub.add_parser("handling", help="a vehicle's understeer gradient, limit lateral "
                                        "acceleration and step-steer response, measured")
    h.add_argument("--vehicle", default="generic_sedan",
                   help="a name under envs/vehicles or a YAML path (default generic_sedan)")
    h.add_argument("--levels", type=_levels, default="L2,L1",
                   help="comma-separated model levels (default L2,L1)")
    h.add_argument("--out", type=_out_dir, default=None,
                   help="also write handling.csv and handling.png into this folder")
    h.add_argument("--no-plot", action="store_true", help="with --out: skip the PNG")
    h.set_defaults(func=_handling)


def _add_accuracy(sub: Any) -> None:
    acc = sub.add_parser("accuracy", help="integrator accuracy gates against a fine reference")
    acc.add_argument("--closed-loop", action="store_true",
                     help="the closed-loop gate: every env's task metric under its baseline "
                          "across delays against heun at 0.1 ms (exit 1 if a metric is off "
                          "by more than 1 %%)")
    acc.add_argument("--noisy", action="store_true",
                     help="the noisy-command gate: recorded uniform-random and baseline-plus-"
                          "noise command streams replayed open loop against heun at 0.1 ms, "
                          "each env's task signals scored over the run (exit 1 if a metric is "
                          "off by more than 1 %%; docs/PHYSICS.md)")
    acc.add_argument("--integrator", choices=INTEGRATORS, default=None,
                     help="with --closed-loop or --noisy: the integrator under test "
                          "(default: the default physics)")
    acc.add_argument("--max-step", type=float, default=None,
                     help="with --closed-loop or --noisy: the longest integration step [s]")
    acc.add_argument("--step-tol", type=float, default=None,
                     help="with --closed-loop or --noisy: etd3's or etd2's step-size "
                          "tolerance [m/s] (default 2e-4 and 1e-4; docs/PHYSICS.md, "
                          "\"Step-size rule\")")
    acc.add_argument("--cases", default=None,
                     help="with --closed-loop or --noisy: comma-separated case names "
                          "(default: all)")
    acc.add_argument("--levels", default=None,
                     help="with --closed-loop or --noisy: e.g. L2 or L2,L1")
    acc.add_argument("--seeds", type=int, default=None,
                     help="with --noisy: seeds 0..N-1 of every stream (default 3)")
    acc.set_defaults(func=_accuracy)


# In the order of `vdsim-gym --help`.
ADDERS = (_add_demo, _add_bench, _add_accuracy, _add_handling, _add_validate,
          _add_delay_budget, _add_sweep, _add_tolerance, _add_compare, _add_train,
          _add_seeds_report, _add_acc,
          _add_dyno_table, _add_render, _add_export, _add_serve)
