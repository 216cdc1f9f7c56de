"""``vdsim-gym accuracy``: the integrator accuracy table
(``vdsim_gym.eval.accuracy.run_accuracy``), ``--closed-loop`` the closed-loop gate
(``run_closed_loop_gate``) and ``--noisy`` the noisy-command gate (``run_noisy_gate``),
each gate exiting 1 unless every metric passes."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.physics_options import INTEGRATORS


def _run(args: argparse.Namespace) -> int:
    if args.closed_loop and args.noisy:
        raise ConfigError("--closed-loop and --noisy are two gates; run one at a time")
    if not (args.closed_loop or args.noisy):
        for flag, value in (("--integrator", args.integrator), ("--max-step", args.max_step),
                            ("--step-tol", args.step_tol), ("--cases", args.cases),
                            ("--levels", args.levels), ("--seeds", args.seeds)):
            if value is not None:
                gates = "--noisy" if flag == "--seeds" else "--closed-loop or --noisy"
                raise ConfigError(f"{flag} applies to {gates}; add it")
        from vdsim_gym.eval.accuracy import run_accuracy

        run_accuracy()  # prints its table; the gates' verdicts are --closed-loop's, --noisy's
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
    if args.noisy:
        if args.seeds is not None and args.seeds < 1:
            raise ConfigError(f"--seeds must be >= 1, got {args.seeds}")
        from vdsim_gym.eval.accuracy import run_noisy_gate

        rows: list[Any] = run_noisy_gate(
            physics, cases=cases, levels=levels,
            seeds=None if args.seeds is None else tuple(range(args.seeds)))
    else:
        if args.seeds is not None:
            raise ConfigError("--seeds applies to --noisy (the closed-loop gate runs seed 0)")
        from vdsim_gym.eval.accuracy import run_closed_loop_gate

        rows = run_closed_loop_gate(physics, cases=cases, levels=levels)
    return 0 if all(r.passes for r in rows) else 1


def add_parser(sub: Any) -> None:
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
    acc.set_defaults(func=_run)


__all__ = ["add_parser"]
