"""Steady-state handling from a vehicle's parameters: cornering stiffness, lateral load
transfer by the roll-stiffness distribution, and the understeer gradient.

The quasi-static axle balance of a steady turn at lateral acceleration ay (constant speed,
flat road, small angles): each axle carries its share of m ay (b/L front, a/L rear), its
two tires carry the axle's static load -+ its share of the lateral transfer m ay h / t
(``roll_stiffness_front`` in front, the rest behind; unset: the static load share b/L),
and the axle's slip angle is the one at which the two tires of the core's own Magic
Formula (``_core.tire_forces``) give that force. Then delta - L / R = alpha_f - alpha_r,
and the understeer gradient is K(ay) = (alpha_f - alpha_r) / ay (at ay -> 0 the linear
m / L (b / C_f - a / C_r)). Each axle's tires are ``_core.axle_tire``'s: with compliance
steer c, 1 / C_eff = 1 / C + c, so the linear K grows by m (b c_f - a c_r) / L. It uses
the tire, not the vehicle models, so it checks them (tests/test_physics.py: the L2 model's
steady turns match it within 0.1 deg/g to 0.5 g).

The measured side: ``steady_state_ramp`` (a constant-speed steer ramp, ISO 4138 style)
and ``step_steer`` (ISO 7401 style) drive the Plant open loop; docs/PHYSICS.md, "The
generic sedan", lists what they give beside published ranges. ``measure`` gives both per
level beside the parameters' gradient (``HandlingRow``), and ``run_handling`` is the
``vdsim-gym handling`` command: the table, with a CSV and a plot.
"""

from __future__ import annotations

import csv
import math
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym import _core, _table
from vdsim_gym._files import atomic_open
from vdsim_gym.config.vehicle import VehicleConfig, load_vehicle
from vdsim_gym.errors import ConfigError

GRAVITY = 9.80665  # [m/s^2], the core's kGravity
_LINEAR_SLIP = 1e-14  # tan(alpha) inside the tire's exact linear branch


def deg_per_g(k: float) -> float:
    """An understeer gradient in rad/(m/s^2) as deg/g."""
    return math.degrees(k) * GRAVITY


def cornering_stiffness(vehicle: VehicleConfig | str, fz: float, axle: int | None = None
                        ) -> float:
    """One tire's cornering stiffness dFy/dtan(alpha) at zero slip and load fz [N/rad]:
    the vehicle's tire (``axle=None``) or the tire an axle's wheels use (0 front, 1 rear:
    with that axle's compliance steer, ``_core.axle_tire``)."""
    v = load_vehicle(vehicle).to_core()
    tire = v.tire if axle is None else _core.axle_tire(v, axle)
    return _core.tire_forces(tire, fz, 0.0, _LINEAR_SLIP)[1] / _LINEAR_SLIP


def front_transfer_share(vehicle: VehicleConfig) -> float:
    """The front axle's share of the lateral load transfer (L2)."""
    v = vehicle
    if v.roll_stiffness_front is not None:
        return v.roll_stiffness_front
    return v.cg_to_rear / v.wheelbase


def axle_loads(vehicle: VehicleConfig, ay: float) -> tuple[tuple[float, float],
                                                          tuple[float, float]]:
    """((front inner, front outer), (rear inner, rear outer)) tire loads [N] in a steady
    turn at ay [m/s^2] (inner: the side the car turns to)."""
    v = vehicle
    m, a, b, L = v.mass, v.cg_to_front, v.cg_to_rear, v.wheelbase
    share = front_transfer_share(v)
    dlat = m * abs(ay) * v.cg_height / v.track
    fz_f, fz_r = 0.5 * m * GRAVITY * b / L, 0.5 * m * GRAVITY * a / L
    return ((fz_f - share * dlat, fz_f + share * dlat),
            (fz_r - (1.0 - share) * dlat, fz_r + (1.0 - share) * dlat))


def _axle_slip(tire: _core.TireParams, loads: tuple[float, float], force: float) -> float:
    """The slip angle [rad] at which the axle's two tires give ``force`` [N] (bisection on
    tan(alpha); ValueError past the axle's peak)."""
    def axle(t: float) -> float:
        return sum(_core.tire_forces(tire, fz, 0.0, t)[1] for fz in loads)

    lo, hi = 0.0, 0.05
    while axle(hi) < force:
        if hi > 5.0 or axle(2.0 * hi) <= axle(hi):
            raise ConfigError(f"the axle cannot carry {force:.0f} N (past its peak)")
        hi *= 2.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if axle(mid) < force else (lo, mid)
    return math.atan(0.5 * (lo + hi))


def understeer_gradient(vehicle: VehicleConfig | str = "generic_sedan", ay: float = 0.0
                        ) -> float:
    """K(ay) = (delta - L / R) / ay [rad/(m/s^2)] of the quasi-static axle balance (the
    module doc); ``ay = 0``: the linear limit m / L (b / C_f - a / C_r). ``ay`` [m/s^2]
    must be below what the axles can carry."""
    v = load_vehicle(vehicle)
    if not (math.isfinite(ay) and ay >= 0.0):
        raise ConfigError(f"ay must be a finite lateral acceleration >= 0 m/s^2, got {ay!r}")
    m, a, b, L = v.mass, v.cg_to_front, v.cg_to_rear, v.wheelbase
    if ay == 0.0:
        (f0, _), (r0, _) = axle_loads(v, 0.0)
        c_f, c_r = 2.0 * cornering_stiffness(v, f0, 0), 2.0 * cornering_stiffness(v, r0, 1)
        return m / L * (b / c_f - a / c_r)
    core = v.to_core()
    front, rear = axle_loads(v, ay)
    alpha_f = _axle_slip(_core.axle_tire(core, 0), front, m * ay * b / L)
    alpha_r = _axle_slip(_core.axle_tire(core, 1), rear, m * ay * a / L)
    return (alpha_f - alpha_r) / ay




# --- Measured handling: open-loop manoeuvres on the Plant (ISO 4138, ISO 7401 style) ---

@dataclass(frozen=True)
class SteadyStateResult:
    """A constant-speed steer ramp (ISO 4138's constant-speed method, quasi-steady)."""

    speed: float  # held speed [m/s]
    t: np.ndarray  # [s]
    steer: np.ndarray  # road-wheel angle [rad]
    ay: np.ndarray  # lateral acceleration [m/s^2]
    r: np.ndarray  # yaw rate [rad/s]
    beta: np.ndarray  # body slip angle [rad]
    understeer_gradient: float  # slope of delta - L r / v against ay [rad/(m/s^2)]
    fit_band: tuple[float, float]  # the ay band of the fit [m/s^2]
    limit_ay: float  # the largest quasi-steady ay [m/s^2] (0.5 s mean)
    limit: str  # "understeer" (ay saturates, the front lets go) or "spin" (|beta| grew)


def steady_state_ramp(vehicle: VehicleConfig | str = "generic_sedan", level: str = "L2",
                      speed: float = 25.0, steer_rate: float = 0.004, duration: float = 60.0,
                      fit_band: tuple[float, float] = (0.5, 4.0), **plant_kwargs: Any
                      ) -> SteadyStateResult:
    """Hold ``speed`` with a PI on the longitudinal force and ramp the road-wheel angle at
    ``steer_rate`` [rad/s] (slow against the yaw dynamics, so each instant is nearly a
    steady turn) until past the limit: a spin (|beta| > 0.2 rad), or the 0.5 s mean of ay
    3 % below its largest or risen less than 1 % in 3 s (ValueError if ``duration`` ends
    first). The understeer gradient
    is the least-squares slope of delta - L r / v (the steer beyond Ackermann) against ay
    over ``fit_band``; the limit is the largest 0.5 s mean of ay."""
    from vdsim_gym.sim.plant import Plant

    v = load_vehicle(vehicle)
    plant = Plant(level=level, vehicle=v, control_period=0.01, longitudinal="force",
                  **plant_kwargs)
    obs = plant.reset({"vx": speed})
    lo_f, hi_f = plant.longitudinal_range
    kp, ki = 4.0 * v.mass, 1.0 * v.mass  # [N/(m/s)], [N/m]: ~0.25 s speed loop
    integ, rows, best, past = 0.0, [], 0.0, False
    window: deque[float] = deque(maxlen=50)  # |ay| of the last 0.5 s
    improved, ref = 0, 0.0  # the step and the ay mean of the last 1 % rise
    for k in range(round(duration / 0.01)):
        delta = min(steer_rate * (k + 1) * 0.01, v.max_steer)  # road-wheel angle [rad]
        err = speed - obs["vx"]
        integ += err * 0.01
        force = min(max(kp * err + ki * integ, lo_f), hi_f)
        obs = plant.step((delta, force))
        rows.append((obs["t"], delta, obs["ay"], obs["r"], obs["beta"], obs["vx"]))
        window.append(abs(obs["ay"]))
        mean = sum(window) / 50 if len(window) == 50 else 0.0
        if mean > ref * 1.01:
            improved, ref = k, mean
        best = max(best, mean)
        if abs(obs["beta"]) > 0.2 or mean < 0.97 * best or k - improved > 300:
            past = True
            break
    if not past:
        raise ConfigError(f"the steer ramp ended before the limit after {duration} s; raise "
                          "duration or steer_rate")
    t, steer, ay, r, beta, vx = (np.array(c) for c in zip(*rows, strict=True))
    band = (ay >= fit_band[0]) & (ay <= fit_band[1])
    if band.sum() < 10:
        raise ConfigError(f"the ramp did not cover ay in {fit_band} m/s^2; raise duration")
    excess = steer - v.wheelbase * r / np.maximum(vx, 0.1)
    slope = float(np.polyfit(ay[band], excess[band], 1)[0])
    return SteadyStateResult(speed, t, steer, ay, r, beta, slope, fit_band, best,
                             "spin" if abs(beta[-1]) > 0.2 else "understeer")


@dataclass(frozen=True)
class StepSteerResult:
    """A step steer (ISO 7401): the steer ramped in ``ramp`` seconds, then held."""

    speed: float  # [m/s]
    steer: float  # the held road-wheel angle [rad]
    t: np.ndarray  # [s] from the start of the ramp
    r: np.ndarray  # yaw rate [rad/s]
    ay: np.ndarray  # [m/s^2]
    steady_r: float  # mean over the last second [rad/s]
    steady_ay: float  # [m/s^2]
    response_time: float  # from 50 % steer to 90 % of steady_r [s]
    peak_response_time: float  # from 50 % steer to the yaw-rate peak [s]
    overshoot: float  # (peak r - steady r) / steady r [-]


def step_steer(vehicle: VehicleConfig | str = "generic_sedan", level: str = "L2",
               speed: float = 80.0 / 3.6, ay: float = 4.0, ramp: float = 0.1,
               duration: float = 4.0, **plant_kwargs: Any) -> StepSteerResult:
    """A step steer at ``speed`` to a steady ``ay`` (the steer from the quasi-static axle
    balance, ``L ay / v^2 + K(ay) ay``; the measured ay is reported), constant
    longitudinal force holding the initial drag; ISO 7401's response times are measured
    from the instant the steer passes half its final value."""
    from vdsim_gym.sim.plant import Plant

    v = load_vehicle(vehicle)
    steer = v.wheelbase * ay / speed**2 + understeer_gradient(v, ay) * ay
    plant = Plant(level=level, vehicle=v, control_period=0.001, longitudinal="force",
                  **plant_kwargs)
    obs = plant.reset({"vx": speed})
    lo_f, hi_f = plant.longitudinal_range
    force = min(max(0.5 * v.air_density * v.drag_coefficient * v.frontal_area * speed**2
                    + v.rolling_resistance * v.mass * GRAVITY, lo_f), hi_f)
    n = round(duration / 0.001)
    t, r, a = np.empty(n), np.empty(n), np.empty(n)
    for k in range(n):
        tk = (k + 1) * 0.001
        obs = plant.step((steer * min(tk / ramp, 1.0), force))
        t[k], r[k], a[k] = tk, obs["r"], obs["ay"]
    last = t > duration - 1.0
    steady_r, steady_ay = float(r[last].mean()), float(a[last].mean())
    t50 = 0.5 * ramp
    i90 = int(np.argmax(r >= 0.9 * steady_r))
    ipk = int(np.argmax(r))
    return StepSteerResult(speed, steer, t, r, a, steady_r, steady_ay, float(t[i90] - t50),
                           float(t[ipk] - t50), float((r[ipk] - steady_r) / steady_r))


# --- The handling command: the table, a CSV and a plot (vdsim-gym handling) ---

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
    """Per level: the row of the table, the steer ramp and the step steer."""
    v = load_vehicle(vehicle)
    k0 = deg_per_g(understeer_gradient(v))
    out = []
    for level in levels:
        ramp, step = steady_state_ramp(v, level), step_steer(v, level)
        out.append((HandlingRow(level, k0, deg_per_g(ramp.understeer_gradient),
                                ramp.limit_ay / GRAVITY, ramp.limit, step.response_time,
                                step.peak_response_time, 100.0 * step.overshoot), ramp, step))
    return out


def run_handling(vehicle: str = "generic_sedan", levels: tuple[str, ...] = ("L2", "L1"),
                 out: str | Path | None = None, make_plot: bool = True) -> list[str]:
    """The ``vdsim-gym handling`` command: ``measure`` on each level; the lines to print
    (the table); with ``out`` also handling.csv and (``make_plot``) handling.png there."""
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
            plot_handling(results, folder / "handling.png", vehicle,
                          load_vehicle(vehicle).wheelbase)
            lines.append(f"wrote {folder / 'handling.png'}")
    return lines


def plot_handling(results: list[tuple[HandlingRow, SteadyStateResult, StepSteerResult]],
                  png: Path, title: str, wheelbase: float) -> None:
    """Left: the steer beyond Ackermann (delta - L r / v) against ay, whose slope is the
    understeer gradient; right: the step steer's yaw rate."""
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


__all__ = ["HandlingRow", "SteadyStateResult", "StepSteerResult", "axle_loads",
           "cornering_stiffness", "deg_per_g", "front_transfer_share", "measure",
           "plot_handling", "run_handling", "steady_state_ramp", "step_steer",
           "understeer_gradient"]
