"""``vdsim-gym`` command line: demo, bench, accuracy, delay-budget, sweep, acc,
acc-metrics, dyno-table, render.

A user error (a bad option value, an unknown key, a missing extra, an --out that is a
file) prints one line, ``vdsim-gym <command>: error: <message>``, and exits with 2, as
argparse does; Ctrl-C prints "interrupted" and exits with 130. Anything else is a bug and
keeps its traceback (set VDSIM_GYM_TRACEBACK=1 to get one for user errors too).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from vdsim_gym.cli.delay_budget import MAX_DURATION
from vdsim_gym.cli.demo import SCENARIOS as DEMO_PRESETS
from vdsim_gym.cli.sweep import _SB3_ALGOS

TRACEBACK_ENV = "VDSIM_GYM_TRACEBACK"
# Extras that provide an optional import, for the hint of an ImportError.
_EXTRAS = {"matplotlib": "plot", "stable_baselines3": "train", "torch": "train",
           "ray": "ray", "tqdm": "all"}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and a record of the options that
    take a value (see ``_join_dash_values``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.options: set[str] = set()  # before super(): it adds -h through add_argument
        self.value_options: set[str] = set()
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.options.update(action.option_strings)
        if action.option_strings and action.nargs is None:
            self.value_options.update(action.option_strings)
        return action

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


# ---------------------------------------------------------------------------- option types


def _int_at_least(lo: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not an integer; give a whole number >= {lo}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {value}")
        return value
    return parse


def _number_in(unit: str, hi: float = math.inf, why: str = "") -> Callable[[str], float]:
    """A finite number > 0 (and <= ``hi``), in ``unit``; ``why`` explains the bound."""
    bound = "> 0" if hi == math.inf else f"> 0 and <= {hi:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not 0 < value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be a number {bound} {unit}, got {text!r}{why}")
        return value
    return parse


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0 m, got {text!r}")
    return value


def _out_dir(text: str) -> str:
    """A folder that exists or can be made: checked before any work, not after it."""
    path = Path(text).absolute()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder; pass a folder "
                                         "path (it is created if missing)")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {existing} is a file, so no folder can "
                                         "be made under it; pass another folder path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: no permission to write in {existing}; "
                                         "pass a folder you can write")
    return text


def _presets(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",")]
    for name in names:
        if name not in DEMO_PRESETS:
            raise argparse.ArgumentTypeError(
                f"unknown preset {name!r}; choose from {', '.join(DEMO_PRESETS)} "
                "(comma-separated)")
    return names


def _parse_json(text: str, what: str, example: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not JSON ({exc.msg} at character {exc.pos}); write {what}, e.g. "
            f"{example}") from None


def _json_objects(text: str) -> list[dict[str, Any]]:
    """A JSON array of objects (one scenario's env kwargs each)."""
    example = '\'[{"scenario": "follow"}, {"scenario": "hard_brake"}]\''
    value = _parse_json(text, "a JSON array of objects", example)
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a non-empty JSON array of objects; write e.g. {example}")
    return value


def _json_object(text: str) -> dict[str, Any]:
    example = '\'{"preset": "iso3888_2"}\''
    value = _parse_json(text, "a JSON object", example)
    if not isinstance(value, dict):
        kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
            type(value), "number")
        raise argparse.ArgumentTypeError(
            f"{text!r} is a JSON {kind}, not an object; write e.g. {example}")
    return value


def _delays(text: str) -> str:
    from vdsim_gym.cli.sweep import parse_delays

    try:
        parse_delays(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text  # the command parses it again: cheap, and main() keeps its str API


# ---------------------------------------------------------------------------- commands


def _demo(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.demo import run_demo

    run_demo(out=args.out, presets=args.presets, speed=args.speed, level=args.level)
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

        lines = run(calls=args.calls, repeats=args.repeats or 5, highway=not args.no_highway)
    for line in lines:
        print(line)
    return 0


def _accuracy(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.accuracy import main as accuracy_main

    return accuracy_main() or 0


def _delay_budget(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.delay_budget import main as budget_main

    budget_main(out=args.out, level=args.level, duration=args.duration,
                make_plot=not args.no_plot, gif=args.gif)
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from vdsim_gym.cli.sweep import main as sweep_main

    sweep_main([args.controller, *args.compare], args.env, args.delays,
               seeds=args.seeds, overrun=args.overrun, num_envs=args.num_envs,
               backend=args.backend, address=args.address, out=args.out,
               env_kwargs=args.env_kwargs, scenarios=args.scenarios, algo=args.algo,
               metric=args.metric,
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


def _render(args: argparse.Namespace) -> int:
    from vdsim_gym.trace_render import render_gif, render_png

    labels = None if args.labels is None else [x.strip() for x in args.labels.split(",")]
    gif = args.out
    if gif is None and args.png is None:  # neither: the GIF beside the first trace
        gif = str(Path(args.traces[0]).with_suffix(".gif"))
    if args.png is not None:
        print(f"wrote {render_png(args.traces, args.png, labels=labels, at=args.at)}")
    if gif is not None:
        out = render_gif(args.traces, gif, labels=labels, fps=args.fps, speed=args.speed)
        print(f"wrote {out}")
    return 0


# ---------------------------------------------------------------------------- the parser


def _add_demo(sub: Any) -> None:
    demo = sub.add_parser("demo", help="baseline through the double lane changes: table + PNG")
    demo.add_argument("--out", type=_out_dir, default="demo_out",
                      help="output folder (default: demo_out)")
    demo.add_argument("--presets", type=_presets, default=",".join(DEMO_PRESETS),
                      help=f"comma-separated DLC presets (default: {','.join(DEMO_PRESETS)})")
    demo.add_argument("--speed", type=_number_in("m/s"), default=None,
                      help="entry speed [m/s] (default: each preset's scenario file)")
    demo.add_argument("--level", default="L2", choices=("L1", "L2"))
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
    bench.add_argument("--no-ppo", action="store_true", help="--vector: skip the PPO row")
    bench.set_defaults(func=_bench)


def _add_delay_budget(sub: Any) -> None:
    budget = sub.add_parser(
        "delay-budget",
        help="Stanley + PI on the 3.5 m / 30 m lane change as mode A and B with delays: "
             "table + CSV + plot of e_y RMSE against the delay")
    budget.add_argument("--out", type=_out_dir, default="delay_budget_out",
                        help="output folder (default: delay_budget_out)")
    budget.add_argument("--level", default="L2", choices=("L1", "L2"))
    budget.add_argument(
        "--duration", default=10.0,
        type=_number_in("s", MAX_DURATION, " (longer runs are refused: "
                        f"{MAX_DURATION:g} s already takes about a minute)"),
        help=f"simulated time per run [s], at most {MAX_DURATION:g} (default: 10, "
             "500 samples)")
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
                         "acc_pid[:gains=FILE], idm[:key=value,...] (VDSim-ACC-v0), "
                         "cycle_follower[:lookahead_s=S] (VDSim-Dyno-v0) "
                         "or a saved SB3 model (.zip) (default: stanley)")
    sw.add_argument("--compare", action="append", default=[], metavar="CONTROLLER",
                    help="another controller on the same grid and plot (repeatable)")
    sw.add_argument("--algo", default=None, type=str.upper, choices=_SB3_ALGOS,
                    help="SB3 algorithm of the model files (default: try each)")
    sw.add_argument("--env", default="VDSim-DLC-v0",
                    help="VDSim env id (default: VDSim-DLC-v0)")
    sw.add_argument("--delays", type=_delays, default="0,5,10,20,40ms",
                    help="latency models: numbers (fixed), uniform:LO-HI, normal:MU,SD, none; "
                         "unit ms or s (default: 0,5,10,20,40ms)")
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
    sw.add_argument("--env-kwargs", type=_json_object, default=None,
                    help='shared gym.make kwargs as JSON, e.g. \'{"preset": "iso3888_2"}\'')
    sw.add_argument("--metric", default=None,
                    help="plotted metric: episode_return, n_overrun or a field of the "
                         "env's episode summary, e.g. rms_e_y, max_abs_e_y, cone_hits "
                         "(default: the env's headline metric, path envs: rms_e_y)")
    sw.add_argument("--out", type=_out_dir, default="sweep_out",
                    help="output folder (default: sweep_out)")
    sw.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib)")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
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
                                      "and command panels) as a GIF, or a PNG frame")
    r.add_argument("traces", nargs="+", help="one or more .vdtrace files (overlaid by time)")
    r.add_argument("--out", default=None,
                   help="GIF path (default: the first trace's name with .gif, unless only "
                        "--png is given)")
    r.add_argument("--png", default=None, help="also (or only) a PNG of one frame")
    r.add_argument("--at", type=float, default=None,
                   help="--png: the frame's time [s] (default: the end)")
    r.add_argument("--labels", default=None, help="legend labels, comma-separated, one per "
                                                  "trace (default: the file names)")
    r.add_argument("--fps", type=_number_in("frames/s", 60.0), default=10.0,
                   help="GIF frames per second (default 10)")
    r.add_argument("--speed", type=_number_in("x real time", 100.0), default=1.0,
                   help="simulated seconds per second of GIF (default 1)")
    r.set_defaults(func=_render)


def build_parser() -> _Parser:
    parser = _Parser(prog="vdsim-gym", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    _add_demo(sub)
    _add_bench(sub)
    acc = sub.add_parser("accuracy", help="integrator accuracy gate against a 10x finer reference")
    acc.set_defaults(func=_accuracy)
    _add_delay_budget(sub)
    _add_sweep(sub)
    _add_acc(sub)
    _add_dyno_table(sub)
    _add_render(sub)
    for p in sub.choices.values():
        parser.options |= p.options
        parser.value_options |= p.value_options
    return parser


# ---------------------------------------------------------------------------- errors


def _join_dash_values(argv: list[str], parser: _Parser) -> list[str]:
    """``--delays -5ms`` as ``--delays=-5ms``: argparse takes a value that starts with "-"
    (and is not a plain negative number) for an option and says only "expected one
    argument"; joined, the value reaches its check and gets a message that names it."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if tok in parser.value_options and nxt is not None and nxt.startswith("-") \
                and nxt != "--" and nxt.split("=")[0] not in parser.options:
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _raised_by_a_check(exc: BaseException) -> bool:
    """A ``raise`` statement raised it (an argument check, or gym.make passing on a bad
    kwarg), not the interpreter inside an expression (a bug such as ``1 <= "a"``)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and (frames[-1].line or "").lstrip().startswith("raise")


def _user_message(exc: BaseException, args: argparse.Namespace) -> str | None:
    """The message of a user error; None for anything else (a bug: keep the traceback)."""
    if isinstance(exc, (FileExistsError, NotADirectoryError, PermissionError)):
        return (f"cannot write {exc.filename!r}: {exc.strerror}; pass --out a folder you "
                "can write")
    if isinstance(exc, ImportError):
        name = (exc.name or "").split(".")[0]
        if name == "vdsim_gym":
            return None  # a broken install or a bug, not a missing extra
        extra = _EXTRAS.get(name)
        hint = f"; pip install 'vdsim-gym[{extra}]'" if extra and "pip install" not in \
            str(exc) else ""
        if name == "matplotlib" and hasattr(args, "no_plot"):
            hint += " or pass --no-plot"
        return f"{exc}{hint}"
    if isinstance(exc, TypeError) and not _raised_by_a_check(exc):
        return None
    if isinstance(exc, (ValueError, TypeError)):
        return str(exc)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    raw = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(_join_dash_values(raw, parser))
    try:
        return args.func(args)
    except KeyboardInterrupt:
        sys.stdout.flush()
        print("interrupted", file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    except (ValueError, TypeError, ImportError, OSError) as exc:
        message = _user_message(exc, args)
        if message is None or os.environ.get(TRACEBACK_ENV):
            raise
        sys.stdout.flush()
        one_line = " ".join(message.split())
        print(f"vdsim-gym {args.command}: error: {one_line}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


if __name__ == "__main__":
    sys.exit(main())
