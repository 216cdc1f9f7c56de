"""The robot driver (C++ ``robot_driver.hpp``) with its transport delay and the
application's actuator hook; docs/DYNO.md states the discrete laws."""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

from vdsim_gym import _core
from vdsim_gym._checks import check_finite, check_flag
from vdsim_gym.config.latency import MAX_DELAY_S
from vdsim_gym.dyno.bench import check_dt
from vdsim_gym.errors import ActuatorError, ArgumentTypeError, ConfigError, DelayRoundingWarning
from vdsim_gym.timing import nearest_ticks

MODES = ("speed", "accel")
MAX_DELAY_STEPS = 10_000_000  # delay_s / dt beyond this is refused (memory, overflow)
Actuator = Callable[[float, float, float], "tuple[float, float]"]


def delay_steps(delay_s: float, dt: float) -> tuple[int, bool]:
    """The transport delay in driver steps: ``timing.nearest_ticks`` (round(delay_s / dt),
    half to even) and whether that was exact; a bound keeps the line finite."""
    q = delay_s / dt
    if q > MAX_DELAY_STEPS:
        raise ConfigError(f"delay_s / dt = {q:.3g} steps is more than {MAX_DELAY_STEPS}; "
                          "use a larger dt or a shorter delay")
    return nearest_ticks(delay_s, dt)


_finite = check_finite


def _limit(value: float | None, name: str) -> float:
    if value is None:
        return math.inf
    v = _finite(value, name)
    if v <= 0:
        raise ConfigError(f"{name} must be None (off) or a positive magnitude [m/s^2], "
                          f"got {value!r}")
    return v


class RobotDriver:
    """A robot pressing one pedal axis: throttle = max(p, 0), brake = max(-p, 0).

    Args (keyword):
        mode: "speed" (PI on v_ref - v) or "accel" (PI on a_ref - filtered dv/dt; v_ref is
            ignored and a_ref is required).
        delay_s: transport delay [s]: the (throttle, brake) returned is the command of
            round(delay_s / dt) calls ago, (0, 0) until one exists; ``pedal`` stays the
            fresh command. Not a whole number of steps: rounded, with a
            DelayRoundingWarning. 0 (default) is off.
        actuator: ``fn(throttle, brake, dt) -> (throttle, brake)`` applied after the delay
            with the last word (not clamped); ``reset()`` calls its ``reset()`` if any.
        kp, ki: speed-mode gains [pedal/(m/s)], [pedal/(m/s s)].
        kp_accel, ki_accel: accel-mode gains [pedal/(m/s^2)], [pedal/(m/s)].
        accel_filter_s: the measured acceleration's first-order filter [s].
        max_accel_mps2, max_decel_mps2: the envelope (None: off): a ramped speed setpoint
            in speed mode, a clamp on a_ref in accel mode.
        standstill_ref_mps: below it (reference and speed in speed mode; speed with
            a_ref <= 0 in accel mode) the driver holds standstill_brake.
        openpilot_hold: with an a_ref, hold the brake when v < stop_speed_mps and
            a_ref < stop_accel_mps2.
    """

    def __init__(self, mode: str = "speed", *, delay_s: float = 0.0,
                 actuator: Actuator | None = None, kp: float = 0.45, ki: float = 0.25,
                 kp_accel: float = 0.05, ki_accel: float = 0.5, accel_filter_s: float = 0.1,
                 max_accel_mps2: float | None = None, max_decel_mps2: float | None = None,
                 standstill_ref_mps: float = 0.05, standstill_brake: float = 0.3,
                 max_throttle: float = 1.0, max_brake: float = 1.0,
                 openpilot_hold: bool = False, stop_speed_mps: float = 0.3,
                 stop_accel_mps2: float = 0.1) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown mode {mode!r}; valid: {', '.join(MODES)}")
        delay = _finite(delay_s, "delay_s")
        if delay < 0:
            raise ConfigError(f"delay_s must be >= 0 s, got {delay_s!r} (0 is no delay)")
        if delay > MAX_DELAY_S:
            raise ConfigError(f"delay_s = {delay_s!r} s is beyond the {MAX_DELAY_S:g} s bound")
        if actuator is not None and not callable(actuator):
            raise ArgumentTypeError(f"actuator must be callable as actuator(throttle, brake, "
                                    f"dt) -> (throttle, brake), got {actuator!r}")
        openpilot_hold = check_flag(openpilot_hold, "openpilot_hold")
        p = _core.RobotDriverParams()
        p.mode = getattr(_core.DriverMode, mode)
        for name, value in (("kp", kp), ("ki", ki), ("kp_accel", kp_accel),
                            ("ki_accel", ki_accel), ("accel_filter_s", accel_filter_s),
                            ("standstill_ref", standstill_ref_mps),
                            ("standstill_brake", standstill_brake),
                            ("stop_speed", stop_speed_mps)):
            v = _finite(value, name)
            if v < 0:
                raise ConfigError(f"{name} must be >= 0, got {value!r}")
            setattr(p, name, v)
        for name, value in (("max_throttle", max_throttle), ("max_brake", max_brake)):
            v = _finite(value, name)
            if not 0 < v <= 1:
                raise ConfigError(f"{name} must be in (0, 1], got {value!r}")
            setattr(p, name, v)
        p.stop_accel = _finite(stop_accel_mps2, "stop_accel_mps2")
        p.max_accel = _limit(max_accel_mps2, "max_accel_mps2")
        p.max_decel = _limit(max_decel_mps2, "max_decel_mps2")
        p.openpilot_hold = openpilot_hold
        self.mode, self.delay_s, self.actuator = mode, delay, actuator
        self._core = _core.RobotDriverCore(p)
        self._warned: set[float] = set()

    def reset(self) -> None:
        """Integral, envelope ramp, filter and the delay line cleared; the actuator's
        ``reset()`` called if it has one."""
        self._core.reset()
        reset = getattr(self.actuator, "reset", None)
        if callable(reset):
            reset()

    def step(self, v_ref: float, v: float, dt: float, a_ref: float | None = None
             ) -> tuple[float, float]:
        """One control step at measured speed ``v``; returns the (throttle, brake) that
        reaches the car. On an error nothing changes: the driver is as before the call."""
        v_ref, v, dt = _finite(v_ref, "v_ref"), _finite(v, "v"), check_dt(dt)
        if a_ref is None:
            if self.mode == "accel":
                raise ConfigError("mode='accel' tracks an acceleration: pass "
                                  "step(v_ref, v, dt, a_ref=...) [m/s^2]")
            a = 0.0
        else:
            a = _finite(a_ref, "a_ref")
        n = self._steps(dt)
        if self.actuator is None:
            return self._core.step(v_ref, v, dt, a, a_ref is not None, n)
        before = self._core.copy()  # restored if the actuator fails
        throttle, brake = self._core.step(v_ref, v, dt, a, a_ref is not None, n)
        try:
            out = self.actuator(throttle, brake, dt)
            t_out, b_out = (float(x) for x in out)
        except Exception as exc:
            self._core = before
            raise ActuatorError(
                f"the actuator {getattr(self.actuator, '__name__', self.actuator)!r} failed "
                f"on ({throttle:.6g}, {brake:.6g}, dt={dt:g}): {type(exc).__name__}: {exc}. "
                "It is called as actuator(throttle, brake, dt) and must return two numbers; "
                "the driver is as before this step") from exc
        if not (math.isfinite(t_out) and math.isfinite(b_out)):
            self._core = before
            raise ActuatorError(f"the actuator returned ({t_out!r}, {b_out!r}) for "
                                f"({throttle:.6g}, {brake:.6g}): not finite; the driver is "
                                "as before this step")
        return t_out, b_out

    def _steps(self, dt: float) -> int:
        if self.delay_s == 0.0:
            return 0
        n, exact = delay_steps(self.delay_s, dt)
        if not exact and dt not in self._warned:
            self._warned.add(dt)
            warnings.warn(
                f"delay_s = {self.delay_s:g} s is {self.delay_s / dt:.4g} steps of dt = "
                f"{dt:g} s; the delay line holds whole steps, so it is rounded to {n} "
                f"({n * dt:g} s). Use a delay that is a multiple of dt to silence this",
                DelayRoundingWarning, stacklevel=3)
        return n

    @property
    def pedal(self) -> float:
        """The fresh pedal command p in [-max_brake, max_throttle] (before the delay)."""
        return self._core.pedal

    @property
    def integral(self) -> float:
        return self._core.integral

    @property
    def filtered_accel(self) -> float:
        """Accel mode's filtered measured acceleration [m/s^2]."""
        return self._core.filtered_accel


__all__ = ["ActuatorError", "DelayRoundingWarning", "MODES", "RobotDriver", "delay_steps"]
