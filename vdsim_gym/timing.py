"""The integer substep clock: validation of time arguments and tick conversions.

All timing runs on integer ticks, ``t = tick * substep_dt``. A duration that must be a
whole number of substeps is checked with a relative tolerance, never by float division
that drifts (0.06 / 0.0005 is 120 ticks, not 121). Every seconds-to-ticks conversion of
the package goes through this module (which calls the C++ helpers of
``csrc/vdsim/schedule.hpp``, so both sides round alike and saturate at 2**53 ticks).

One quantization rule per kind of delay:

- computation latency c_k: the apply tick is ``ceil((t_start + c_k) / dt)``
  (:func:`ceil_ticks`): a command never acts before it has been computed;
- a duration given as configuration (control period, actuator dead time, time step,
  trace decimation): a whole number of substeps, else an error naming the nearest
  valid values (:func:`whole_ticks`);
- a count that must fit within a limit (the integration step within ``max_step``, a
  trace decimation within its rate, a drive cycle's samples within its duration): the
  most whole ticks that fit (:func:`floor_ticks`);
- the robot driver's transport delay and times on a sampled record (trace rows, a
  scenario's periods, windows of a metric, the cycle preview): the nearest whole number
  of steps, half to even (:func:`nearest_ticks`, :func:`nearest_ticks_array`; the driver
  warns when its delay was not whole).

The transport delays themselves (actuator dead time, the robot driver's delay, the
dyno's pedal line) run on the core's one ``DelayLine``; computation latency on its
command schedule (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

import math

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import check_seconds, is_real
from vdsim_gym.errors import ConfigError


def check_substep_dt(substep_dt: float) -> float:
    """The integration substep [s]: a positive finite number (not a bool)."""
    return check_seconds(substep_dt, "substep_dt", hint="; the default is 5e-4 (0.5 ms)")


def whole_ticks(seconds: float, substep_dt: float, what: str, allow_zero: bool = False) -> int:
    """``seconds`` in substeps; a clear error when it is not a whole, valid number."""
    if not is_real(seconds) or not math.isfinite(seconds):
        raise ConfigError(f"{what} must be a finite number of seconds, got {seconds!r}")
    if seconds < 0 or (seconds == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "positive"
        raise ConfigError(f"{what} must be {bound}, got {seconds!r} s")
    n = _core.whole_ticks(float(seconds), substep_dt)
    if n == -2:  # beyond 2^53 substeps: int64 tick arithmetic would overflow
        raise ConfigError(
            f"{what} = {seconds!r} s is too long: {seconds / substep_dt:.3g} substeps of "
            f"{substep_dt!r} s, more than the clock's limit of 2**53; use a shorter time")
    if n < 0:
        # The nearest multiples around it, never 0 (or below): the smallest valid
        # suggestion is one substep.
        lo = max(math.floor(seconds / substep_dt), 1) * substep_dt
        raise ConfigError(
            f"{what} = {seconds!r} s is not a whole multiple of substep_dt = {substep_dt!r} s; "
            f"use a multiple such as {lo:.6g} or {lo + substep_dt:.6g} s"
        )
    return n


def ceil_ticks(seconds: float, substep_dt: float) -> int:
    """ceil(seconds / substep_dt) with a tolerance: an apply tick for a delay."""
    return _core.ceil_ticks(float(seconds), substep_dt)


def nearest_ticks(seconds: float, dt: float) -> tuple[int, bool]:
    """``round(seconds / dt)`` (half to even) and whether the quotient was within the
    clock's tolerance of that integer; saturates at +-2**53 (callers bound their inputs)."""
    n, exact = _core.nearest_ticks(float(seconds), float(dt))
    return int(n), bool(exact)


def floor_ticks(seconds: float, dt: float) -> int:
    """``floor(seconds / dt)`` with the clock's tolerance: the most whole ticks that fit."""
    return int(_core.floor_ticks(float(seconds), float(dt)))


def nearest_ticks_array(seconds: np.ndarray, dt: float) -> np.ndarray:
    """:func:`nearest_ticks` of every element (int64; half to even, as ``np.rint``)."""
    return np.rint(np.asarray(seconds, dtype=float) / dt).astype(np.int64)
