"""Against CommonRoad's drift and multi-body models: one published vehicle, five maneuvers.

CommonRoad's vehicle models (commonroad-vehicle-models, the ``validation`` extra) publish
parameter sets; ``commonroad_vehicle`` maps vehicle 2 (a BMW 320i) onto a VehicleConfig,
and the maneuver runners drive our plant and their model with the same commands on the
same time grid: L1 against the single-track drift model (``vehicle_dynamics_std``), L2
against the multi-body model (``vehicle_dynamics_mb``). ``comparison`` returns the table
(theirs, ours, difference, tolerance), ``plot`` the time histories;
``vdsim-gym validate --plot docs/img/validation_commonroad.png`` (or ``python -m
vdsim_gym.analysis.validation``, the same options: ``add_arguments`` and ``run``) prints the
Markdown table and writes the plot. docs/PHYSICS.md, "Against CommonRoad's drift and
multi-body models", has the mapping table, the measured table and why each tolerance is
what it is; tests/test_validation_commonroad.py checks each metric (``pytest -m
validation``).

The modules, one job each: ``commonroad`` (their vehicle 2 mapped onto a VehicleConfig,
the mapping's decisions in its docstring), ``maneuvers`` (the maneuvers and their runs on
both sides), ``metrics`` (what each run measures), ``table`` (the bands and the comparison
table) and ``plots`` (the time histories). This module is the command line
(``add_arguments``, ``run``, ``main``; ``__main__`` runs ``main``) and re-exports every
public name of those.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vdsim_gym.analysis.validation.commonroad import (
    DROPPED_TIRE_TERMS,
    INSTALL_HINT,
    MODELS,
    _vehiclemodels,
    commonroad_mapping,
    commonroad_params_as_run,
    commonroad_vehicle,
    parameters_vehicle2,
    roll_stiffness,
)
from vdsim_gym.analysis.validation.maneuvers import (
    BRAKE_ACCEL,
    BRAKE_END,
    BRAKE_SPEED,
    CONTROL_PERIOD,
    HOLD_KI,
    HOLD_KP,
    K_AY_RANGE,
    MANEUVERS,
    RAMP_RATE,
    RAMP_START,
    SETTLE_TIME,
    SINE_FREQ,
    SINE_STEER,
    SPEED,
    STEADY_DVY,
    STEP_STEER,
    STEP_TIME,
    THEIR_STEP,
    Maneuver,
    Run,
    cached_run,
    run_ours,
    run_theirs,
)
from vdsim_gym.analysis.validation.metrics import (
    lateral_limit,
    maneuver_metrics,
    sine_metrics,
    step_metrics,
    stopping_distance,
    understeer_gradient,
)
from vdsim_gym.analysis.validation.plots import plot
from vdsim_gym.analysis.validation.table import (
    METRICS,
    TABLE_HEADER,
    Metric,
    Row,
    comparison,
    markdown_table,
)
from vdsim_gym.errors import ConfigError

DESCRIPTION = ("Our L1/L2 against CommonRoad's drift/multi-body models on vehicle 2: "
               "prints the Markdown table (docs/PHYSICS.md); exit 1 if a metric is "
               "outside its tolerance.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``python -m vdsim_gym.analysis.validation`` and ``vdsim-gym validate`` (one
    list for both; the command line is vdsim_gym.cli.validate)."""
    parser.add_argument("--plot", type=Path, default=None, metavar="PNG",
                        help="also write the time histories "
                             "(docs/img/validation_commonroad.png)")
    parser.add_argument("--integrator", default=None,
                        help="run ours with this integrator instead of the default (e.g. "
                             "rk4)")


def run(plot_path: str | Path | None = None, integrator: str | None = None,
        echo: Callable[[str], Any] = print) -> int:
    """The validation command: checks its options and the extras before any work, echoes
    the Markdown table (and writes the plot); 1 if a metric is outside its tolerance,
    else 0."""
    from vdsim_gym.sim.physics_options import INTEGRATORS

    if integrator is not None and integrator not in INTEGRATORS:
        raise ConfigError(f"--integrator {integrator!r}: choose from {', '.join(INTEGRATORS)} "
                          "(default: the default physics)")
    if plot_path is not None:
        import importlib.util

        if Path(plot_path).is_dir():
            raise ConfigError(f"--plot {str(plot_path)!r} is a folder; pass the PNG's file "
                              "path")
        if importlib.util.find_spec("matplotlib") is None:
            raise ImportError("--plot needs matplotlib", name="matplotlib")
    _vehiclemodels()  # the extra, before the first run
    rows = comparison(integrator=integrator)
    echo(markdown_table(rows))
    if plot_path is not None:
        echo(f"wrote {plot(plot_path, integrator=integrator)}")
    outside = [f"{r.level} {r.metric}" for r in rows if not r.within]
    if outside:
        echo("outside the tolerance: " + "; ".join(outside))
    return 1 if outside else 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m vdsim_gym.analysis.validation``: the same options and run as ``vdsim-gym
    validate`` (which adds the command line's one-line errors)."""
    ap = argparse.ArgumentParser(prog="python -m vdsim_gym.analysis.validation",
                                 description=DESCRIPTION)
    add_arguments(ap)
    args = ap.parse_args(argv)
    return run(args.plot, args.integrator)


__all__ = [
    "BRAKE_ACCEL",
    "BRAKE_END",
    "BRAKE_SPEED",
    "CONTROL_PERIOD",
    "DESCRIPTION",
    "DROPPED_TIRE_TERMS",
    "HOLD_KI",
    "HOLD_KP",
    "INSTALL_HINT",
    "K_AY_RANGE",
    "MANEUVERS",
    "METRICS",
    "MODELS",
    "Maneuver",
    "Metric",
    "RAMP_RATE",
    "RAMP_START",
    "Row",
    "Run",
    "SETTLE_TIME",
    "SINE_FREQ",
    "SINE_STEER",
    "SPEED",
    "STEADY_DVY",
    "STEP_STEER",
    "STEP_TIME",
    "TABLE_HEADER",
    "THEIR_STEP",
    "add_arguments",
    "cached_run",
    "commonroad_mapping",
    "commonroad_params_as_run",
    "commonroad_vehicle",
    "comparison",
    "lateral_limit",
    "main",
    "maneuver_metrics",
    "markdown_table",
    "parameters_vehicle2",
    "plot",
    "roll_stiffness",
    "run",
    "run_ours",
    "run_theirs",
    "sine_metrics",
    "step_metrics",
    "stopping_distance",
    "understeer_gradient",
]
