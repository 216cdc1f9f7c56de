"""The maneuvers (``MANEUVERS``: steady-state circular, step steer, sine steer, straight
braking) and their runs on both sides with the same commands on the same time grid:
``run_ours`` (our Plant), ``run_theirs`` (CommonRoad's drift or multi-body model, RK4),
``cached_run`` (one run per side, level and maneuver per process)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym.analysis.validation.commonroad import (
    MODELS,
    _vehiclemodels,
    commonroad_params_as_run,
    commonroad_vehicle,
    parameters_vehicle2,
)
from vdsim_gym.config.vehicle import VehicleConfig
from vdsim_gym.errors import ConfigError

CONTROL_PERIOD = 0.01  # [s] the shared time grid: commands held, both sampled
THEIR_STEP = 5e-4  # [s] their RK4 step (finer at low speed when braking)
SETTLE_TIME = 2.0  # [s] the multi-body model settles its heave and pitch from init_mb


@dataclass(frozen=True)
class Maneuver:
    """Commands on the shared grid: ``steer(t)`` [rad] read at the middle of each hold;
    the longitudinal command an acceleration a [m/s^2], from the speed hold (``speed``
    set) or constant (``accel``). Theirs turn their input a into the total wheel torque
    m R_w a; ours gets the same torque, the force m R_w a / R (their m and R_w: a wrong
    mass or radius in the mapping shows)."""

    name: str
    speed0: float  # [m/s]
    duration: float  # [s]
    steer: Callable[[float], float]
    speed: float | None = None  # speed-hold target [m/s]
    accel: float = 0.0  # constant command when speed is None [m/s^2]
    stop_speed: float = 0.0  # end below this speed [m/s]
    max_sideslip: float = math.inf  # end when |vy| / vx exceeds this (spun) [-]

    def steps(self) -> int:
        return round(self.duration / CONTROL_PERIOD)


HOLD_KP, HOLD_KI = 2.0, 1.0  # speed hold: a = kp (v* - vx) + ki int (v* - vx) dt
SPEED = 20.0  # [m/s] the lateral maneuvers' speed (72 km/h)
RAMP_START, RAMP_RATE = 1.0, 0.005  # [s], [rad/s]: steady-state circular
K_AY_RANGE = (0.5, 4.0)  # [m/s^2] the understeer gradient's fit (about 0.05-0.4 g)
STEADY_DVY = 0.25  # [m/s^2] the limit's samples: |ay - r vx| = |dvy/dt| below this
STEP_TIME, STEP_STEER = 0.5, 0.025  # [s], [rad]: about 3.9 m/s^2 steady
SINE_FREQ, SINE_STEER = 1.0, 0.03  # [Hz], [rad]: peak ay about 3 m/s^2
BRAKE_SPEED, BRAKE_ACCEL = 100 / 3.6, -7.0  # [m/s], [m/s^2]: 100 km/h, 0.71 g
BRAKE_END = 1.0  # [m/s] stopping distance: to here, plus BRAKE_END^2 / (2 |a|)


def _ramp_steer(t: float) -> float:
    return max(0.0, RAMP_RATE * (t - RAMP_START))


def _step_steer(t: float) -> float:
    return STEP_STEER if t >= STEP_TIME else 0.0


def _sine_steer(t: float) -> float:
    return SINE_STEER * math.sin(2 * math.pi * SINE_FREQ * t)


def _no_steer(t: float) -> float:
    return 0.0


MANEUVERS = {
    # Constant speed, steer rising at RAMP_RATE through the limit; ends when spun.
    "circular": Maneuver("circular", SPEED, 30.0, _ramp_steer, speed=SPEED,
                         max_sideslip=0.15),
    "step": Maneuver("step", SPEED, 4.0, _step_steer, speed=SPEED),
    "sine": Maneuver("sine", SPEED, 5.0, _sine_steer, speed=SPEED),
    "braking": Maneuver("braking", BRAKE_SPEED, 8.0, _no_steer, accel=BRAKE_ACCEL,
                        stop_speed=BRAKE_END),
}


@dataclass
class Run:
    """Time histories at the end of each control period (t = 0 first): t [s], steer
    [rad], accel (the command) [m/s^2], x, y [m], vx, vy [m/s], r [rad/s], ay [m/s^2]."""

    t: np.ndarray
    steer: np.ndarray
    accel: np.ndarray
    x: np.ndarray
    y: np.ndarray
    vx: np.ndarray
    vy: np.ndarray
    r: np.ndarray
    ay: np.ndarray

    @classmethod
    def of(cls, rows: list[tuple[float, ...]]) -> Run:
        a = np.array(rows, dtype=float)
        return cls(*(a[:, i] for i in range(a.shape[1])))


class _Longitudinal:
    """The longitudinal command of one maneuver, one call per control period."""

    def __init__(self, m: Maneuver) -> None:
        self.m, self.integral = m, 0.0

    def __call__(self, vx: float) -> float:
        if self.m.speed is None:
            return self.m.accel
        err = self.m.speed - vx
        self.integral += err * CONTROL_PERIOD
        return HOLD_KP * err + HOLD_KI * self.integral


def _ended(m: Maneuver, vx: float, vy: float) -> bool:
    return vx < m.stop_speed or abs(vy) > m.max_sideslip * abs(vx)


def _maneuver(maneuver: Maneuver | str) -> Maneuver:
    return MANEUVERS[maneuver] if isinstance(maneuver, str) else maneuver


def run_ours(level: str, maneuver: Maneuver | str, vehicle: VehicleConfig | None = None,
             params: Any = None, **plant_kwargs: Any) -> Run:
    """Our plant through ``maneuver``: the default physics (integrator, substep) unless
    ``plant_kwargs`` say otherwise, longitudinal="force" (their wheel torque m R_w a as
    the force m R_w a / R, with m and R_w of ``params``, default vehicle 2); ``vehicle``
    defaults to ``commonroad_vehicle(params)`` for the level's counterpart."""
    from vdsim_gym.sim.plant import Plant

    m = _maneuver(maneuver)
    p = parameters_vehicle2() if params is None else params
    v = vehicle if vehicle is not None else commonroad_vehicle(p, model=MODELS[level])
    force_per_accel = p.m * p.R_w / v.wheel_radius
    plant = Plant(level=level, vehicle=v, control_period=CONTROL_PERIOD,
                  longitudinal="force", **plant_kwargs)
    lo, hi = plant.longitudinal_range
    obs = plant.reset({"vx": m.speed0})
    lon = _Longitudinal(m)

    def row(steer: float, accel: float) -> tuple[float, ...]:
        return (obs["t"], steer, accel, obs["X"], obs["Y"], obs["vx"], obs["vy"], obs["r"],
                obs["ay"])

    rows = [row(m.steer(0.5 * CONTROL_PERIOD), 0.0)]
    for k in range(m.steps()):
        steer, accel = m.steer((k + 0.5) * CONTROL_PERIOD), lon(obs["vx"])
        obs = plant.step((steer, min(max(force_per_accel * accel, lo), hi)))
        rows.append(row(steer, accel))
        if _ended(m, obs["vx"], obs["vy"]):
            break
    return Run.of(rows)


def _their_model(model: str) -> tuple[Callable[..., list[float]], Callable[..., list[float]]]:
    """(vehicle_dynamics_*, init_*) of "std" or "mb"."""
    _vehiclemodels()
    if model == "std":
        from vehiclemodels.init_std import init_std
        from vehiclemodels.vehicle_dynamics_std import vehicle_dynamics_std

        return vehicle_dynamics_std, init_std
    if model == "mb":
        from vehiclemodels.init_mb import init_mb
        from vehiclemodels.vehicle_dynamics_mb import vehicle_dynamics_mb

        return vehicle_dynamics_mb, init_mb
    raise ConfigError(f"model must be 'std' or 'mb', got {model!r}")


def _their_outputs(model: str, x: np.ndarray, dx: np.ndarray, p: Any) -> tuple[float, ...]:
    """(X, Y, vx, vy, r, ay) of their state x with derivative dx."""
    if model == "std":  # the speed and the slip angle at the CG are its states
        v, beta = x[3], x[6]
        ay = dx[3] * math.sin(beta) + v * math.cos(beta) * (dx[6] + x[5])
        return x[0], x[1], v * math.cos(beta), v * math.sin(beta), x[5], ay
    # mb: the sprung mass's velocities; ay of the whole car (sprung and both unsprung
    # masses: the tires' lateral force over m), as ours.
    ay = (p.m_s * dx[10] + p.m_uf * dx[15] + p.m_ur * dx[20]) / p.m + x[5] * x[3]
    return x[0], x[1], x[3], x[10], x[5], ay


def _rk4_step(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float) -> np.ndarray:
    k1 = f(x)
    k2 = f(x + h / 2 * k1)
    k3 = f(x + h / 2 * k2)
    k4 = f(x + h * k3)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _their_initial(model: str, speed: float, p: Any) -> np.ndarray:
    """Straight ahead at ``speed`` from init_std / init_mb; the multi-body model then
    SETTLE_TIME at constant speed (init_mb's heave and pitch are not at rest)."""
    f, init = _their_model(model)
    x = np.array(init([0.0, 0.0, 0.0, speed, 0.0, 0.0, 0.0], p), dtype=float)
    if model == "mb":
        def rhs(x: np.ndarray) -> np.ndarray:
            return np.array(f(list(x), [0.0, 0.0], p))

        for _ in range(round(SETTLE_TIME / THEIR_STEP)):
            x = _rk4_step(rhs, x, THEIR_STEP)
        x[0] = x[1] = x[4] = 0.0
    return x


def run_theirs(model: str, maneuver: Maneuver | str, params: Any = None) -> Run:
    """Their model ("std" or "mb") through ``maneuver``, ``params`` (default: vehicle 2)
    as ``commonroad_params_as_run``: RK4 at THEIR_STEP (below 10 m/s THEIR_STEP v / 10 m/s,
    as their slip's stiffness grows as 1/v); their steer (a state) set at each hold, their
    acceleration input the command (their steering-rate input 0)."""
    m = _maneuver(maneuver)
    p = commonroad_params_as_run(params)
    f, _ = _their_model(model)
    x = _their_initial(model, m.speed0, p)
    lon = _Longitudinal(m)
    rows: list[tuple[float, ...]] = []

    def sample(t: float, steer: float, accel: float) -> tuple[float, ...]:
        dx = np.array(f(list(x), [0.0, accel], p))
        rows.append((t, steer, accel, *_their_outputs(model, x, dx, p)))
        return rows[-1]

    x[2] = m.steer(0.5 * CONTROL_PERIOD)
    last = sample(0.0, x[2], 0.0)
    for k in range(m.steps()):
        steer, accel = m.steer((k + 0.5) * CONTROL_PERIOD), lon(last[5])
        x[2] = steer
        u = [0.0, accel]

        def rhs(x: np.ndarray, u: list[float] = u) -> np.ndarray:
            return np.array(f(list(x), u, p))

        t, t_end = k * CONTROL_PERIOD, (k + 1) * CONTROL_PERIOD
        while t < t_end - 1e-12:
            h = min(THEIR_STEP * min(1.0, max(abs(x[3]), 0.5) / 10.0), t_end - t)
            x = _rk4_step(rhs, x, h)
            t += h
        last = sample(t_end, steer, accel)
        if _ended(m, last[5], last[6]):
            break
    return Run.of(rows)


@functools.cache
def cached_run(side: str, level: str, maneuver: str, integrator: str | None = None) -> Run:
    """One run per (side "ours" | "commonroad", level, maneuver) per process, shared by
    the tests, the table and the plot; ``integrator`` (ours only) overrides the default."""
    if side == "ours":
        if integrator is None:
            return run_ours(level, maneuver)
        return run_ours(level, maneuver, integrator=integrator)
    if side == "commonroad":
        return run_theirs(MODELS[level], maneuver)
    raise ConfigError(f"side must be 'ours' or 'commonroad', got {side!r}")
