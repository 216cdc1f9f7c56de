"""The metrics of one maneuver's run (``maneuver_metrics``): the understeer gradient and
the lateral limit of the circular run, the step's and the sine's yaw response, the
stopping distance."""

from __future__ import annotations

import math

import numpy as np

from vdsim_gym.analysis.validation.commonroad import parameters_vehicle2
from vdsim_gym.analysis.validation.maneuvers import (
    BRAKE_ACCEL,
    BRAKE_END,
    K_AY_RANGE,
    MANEUVERS,
    RAMP_START,
    SINE_FREQ,
    STEADY_DVY,
    STEP_TIME,
    Run,
)
from vdsim_gym.errors import ConfigError


def _crossing(t: np.ndarray, y: np.ndarray, level: float) -> float:
    """The first time y reaches ``level`` (linear interpolation); nan if never."""
    reached = np.nonzero(y >= level)[0]
    if len(reached) == 0:
        return math.nan
    i = int(reached[0])
    if i == 0:
        return float(t[0])
    return float(t[i - 1] + (level - y[i - 1]) / (y[i] - y[i - 1]) * (t[i] - t[i - 1]))


def _wheelbase() -> float:
    p = parameters_vehicle2()
    return p.a + p.b


def understeer_gradient(run: Run) -> float:
    """K [deg/g] of the steady-state circular run: the slope of delta - L r / vx against
    ay over K_AY_RANGE on the rising branch (quasi-steady: a constant lag of the ramp goes
    into the intercept)."""
    rising = np.arange(len(run.t)) < int(np.argmax(run.ay))
    sel = rising & (run.t > RAMP_START) & (run.ay >= K_AY_RANGE[0]) & \
        (run.ay <= K_AY_RANGE[1])
    y = run.steer[sel] - _wheelbase() * run.r[sel] / run.vx[sel]
    return math.degrees(np.polyfit(run.ay[sel], y, 1)[0]) * 9.80665


def lateral_limit(run: Run) -> float:
    """The largest steady lateral acceleration of the circular run [m/s^2]: samples with
    |ay - r vx| = |dvy/dt| below STEADY_DVY (not the transient of a spin)."""
    steady = np.abs(run.ay - run.r * run.vx) < STEADY_DVY
    return float(np.max(run.ay[steady]))


def step_metrics(run: Run) -> dict[str, float]:
    """Steady yaw rate (mean of the last second) [rad/s], the time from the step to 90 %
    of it [s], the yaw rate's overshoot over it [%]."""
    steady = float(np.mean(run.r[run.t >= run.t[-1] - 1.0]))
    after = run.t >= STEP_TIME
    return {"r_steady": steady,
            "t90": _crossing(run.t[after], run.r[after], 0.9 * steady) - STEP_TIME,
            "overshoot": 100.0 * (float(np.max(run.r)) - steady) / steady}


def sine_metrics(run: Run) -> dict[str, float]:
    """Over the last two cycles: the peak |ay| [m/s^2] and the yaw rate's phase lag behind
    the steer sine [deg] (its fundamental, by least squares)."""
    sel = run.t > run.t[-1] - 2.0 / SINE_FREQ
    t, r = run.t[sel], run.r[sel]
    w = 2 * math.pi * SINE_FREQ
    basis = np.column_stack([np.sin(w * t), np.cos(w * t), np.ones_like(t)])
    a, b, _ = np.linalg.lstsq(basis, r, rcond=None)[0]
    return {"ay_peak": float(np.max(np.abs(run.ay[sel]))),
            "phase_lag": math.degrees(math.atan2(-b, a))}


def stopping_distance(run: Run) -> float:
    """Distance from the start to BRAKE_END (interpolated) plus BRAKE_END^2 / (2 |a|) [m]:
    their slip is singular at standstill, so neither model's last metre counts."""
    i = int(np.nonzero(run.vx < BRAKE_END)[0][0])
    frac = (run.vx[i - 1] - BRAKE_END) / (run.vx[i - 1] - run.vx[i])
    return float(run.x[i - 1] + frac * (run.x[i] - run.x[i - 1]) +
                 BRAKE_END**2 / (2 * abs(BRAKE_ACCEL)))


def maneuver_metrics(maneuver: str, run: Run) -> dict[str, float]:
    """The metrics of one maneuver's run (keys as in METRICS)."""
    if maneuver == "circular":
        return {"K": understeer_gradient(run), "ay_limit": lateral_limit(run)}
    if maneuver == "step":
        return step_metrics(run)
    if maneuver == "sine":
        return sine_metrics(run)
    if maneuver == "braking":
        return {"stop": stopping_distance(run)}
    raise ConfigError(f"unknown maneuver {maneuver!r}; known: {', '.join(MANEUVERS)}")
