"""``vdsim-gym handling``: a vehicle's measured handling (understeer gradient, limit lateral
acceleration, step-steer response) beside the gradient its parameters give; with --out, a
CSV and a plot (docs/PHYSICS.md, "The generic sedan, measured")."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from vdsim_gym import _table
from vdsim_gym._files import atomic_open
from vdsim_gym.analysis.handling import (
    GRAVITY,
    SteadyStateResult,
    StepSteerResult,
    deg_per_g,
    steady_state_ramp,
    step_steer,
    understeer_gradient,
)
from vdsim_gym.config.vehicle import VehicleConfig, load_vehicle


@dataclass(frozen=True)
class HandlingRow:
    level: str
    k_parameters: float  # linear K from the parameters [deg/g]
    k_measured: float  # the ramp's fit [deg/g]
    limit_g: float  # [g]
    limit: str  # "understeer" | "spin"
    response_time: float  # [s]
    peak_response_time: float  # [s]
    overshoot_pct: float  # [%]


COLUMNS = [("level", "level", "<5", ""),
           ("K parameters [deg/g]", "k_parameters", ">20", ".2f"),
           ("K measured [deg/g]", "k_measured", ">18", ".2f"),
           ("limit ay [g]", "limit_g", ">12", ".3f"), ("at the limit", "limit", ">12", ""),
           ("t90 yaw rate [s]", "response_time", ">16", ".3f"),
           ("t peak [s]", "peak_response_time", ">10", ".3f"),
           ("overshoot [%]", "overshoot_pct", ">13", ".1f")]


def measure(vehicle: VehicleConfig | str = "generic_sedan", levels: tuple[str, ...] = ("L2", "L1")
            ) -> list[tuple[HandlingRow, SteadyStateResult, StepSteerResult]]:
    v = load_vehicle(vehicle)
    k0 = deg_per_g(understeer_gradient(v))
    out = []
    for level in levels:
        ramp, step = steady_state_ramp(v, level), step_steer(v, level)
        out.append((HandlingRow(level, k0, deg_per_g(ramp.understeer_gradient),
                                ramp.limit_ay / GRAVITY, ramp.limit, step.response_time,
                                step.peak_response_time, 100.0 * step.overshoot), ramp, step))
    return out


def run(vehicle: str = "generic_sedan", levels: tuple[str, ...] = ("L2", "L1"),
        out: str | None = None, make_plot: bool = True) -> list[str]:
    if out is not None and make_plot:
        import matplotlib  # noqa: F401  (a missing extra is reported before any work)
    results = measure(vehicle, levels)
    rows = [r for r, _, _ in results]
    ramp, step = results[0][1], results[0][2]
    lines = [f"Handling of {vehicle}: steer ramp at {ramp.speed:g} m/s with the speed held "
             f"(K fitted over ay {ramp.fit_band[0]:g}-{ramp.fit_band[1]:g} m/s^2), step "
             f"steer at {step.speed * 3.6:.0f} km/h to {step.steady_ay:.1f} m/s^2 "
             "(times from the steer's 50 % point)",
             _table.format_table(rows, COLUMNS)]
    if out is not None:
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        with atomic_open(folder / "handling.csv") as fh:
            w = csv.writer(fh)
            w.writerow([attr for _, attr, _, _ in COLUMNS])
            for r in rows:
                w.writerow([getattr(r, attr) for _, attr, _, _ in COLUMNS])
        lines.append(f"\nwrote {folder / 'handling.csv'}")
        if make_plot:
            plot(results, folder / "handling.png", vehicle, load_vehicle(vehicle).wheelbase)
            lines.append(f"wrote {folder / 'handling.png'}")
    return lines


def plot(results: list[tuple[HandlingRow, SteadyStateResult, StepSteerResult]], png: Path,
         title: str, wheelbase: float) -> None:
    """Left: the steer beyond Ackermann (delta - L r / v) against ay, whose slope is the
    understeer gradient; right: the step steer's yaw rate."""
    import numpy as np

    from vdsim_gym._plotting import figure, save_figure

    fig = figure(figsize=(11, 4.2))
    a1, a2 = fig.subplots(1, 2)
    for row, ramp, step in results:
        excess = np.degrees(ramp.steer - wheelbase * ramp.r / ramp.speed)
        a1.plot(ramp.ay / GRAVITY, excess,
                label=f"{row.level}: K {row.k_measured:.2f} deg/g, limit "
                      f"{row.limit_g:.2f} g ({row.limit})")
        a2.plot(step.t, step.r, label=f"{row.level}: t90 {row.response_time:.2f} s, "
                                      f"overshoot {row.overshoot_pct:.0f} %")
    a1.set_xlabel("lateral acceleration [g]")
    a1.set_ylabel("steer beyond Ackermann, delta - L r / v [deg]")
    a1.set_title(f"{title}: constant-speed steer ramp")
    a2.set_xlabel("time [s]")
    a2.set_ylabel("yaw rate [rad/s]")
    a2.set_title("step steer")
    for ax in (a1, a2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, png, dpi=110)


__all__ = ["HandlingRow", "measure", "run"]
