"""Validated physics options of the chassis-dyno plant (the env core's DynoSession): the
bench, the driver's period (substep_dt), the control period, the robot driver and the
pedal actuator. The dyno's counterpart of ``vdsim_gym.sim.plant.PhysicsSpec``."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vdsim_gym import _core
from vdsim_gym.dyno.config import DynoConfig, load_dyno
from vdsim_gym.dyno.driver import DelayRoundingWarning, RobotDriver, delay_steps
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import check_substep_dt, whole_ticks


@dataclass(frozen=True)
class PedalActuator:
    """The pedal's own dynamics inside the core: first-order lag, then a rate limit."""

    time_constant: float = 0.0  # [s], 0 = none
    rate_limit: float = math.inf  # [pedal/s]


def _pedal_actuator(value: Any) -> PedalActuator | None:
    if value is None or isinstance(value, PedalActuator):
        return value
    if not isinstance(value, Mapping):
        raise ConfigError(f"pedal_actuator must be None or a dict with time_constant [s] and "
                          f"rate_limit [pedal/s], got {value!r}")
    unknown = sorted(set(value) - {"time_constant", "rate_limit"})
    if unknown:
        raise ConfigError(f"pedal_actuator: unknown key {unknown[0]!r}; valid: "
                          "time_constant, rate_limit")
    out = PedalActuator(**{k: float(v) for k, v in value.items()})
    if not (math.isfinite(out.time_constant) and out.time_constant >= 0):
        raise ConfigError(f"pedal_actuator time_constant must be >= 0 s, got "
                          f"{out.time_constant!r}")
    if not out.rate_limit > 0:
        raise ConfigError(f"pedal_actuator rate_limit must be > 0 pedal/s, got "
                          f"{out.rate_limit!r}")
    return out


def _driver(value: Any) -> dict[str, Any] | None:
    """None (the action is the pedal), a mode name or RobotDriver keywords; mode "pedal"
    with delay_s is a robot that presses the commanded pedal delay_s late (its transport
    delay without a control law: what a learned pedal policy drives through)."""
    if value is None:
        return None
    if isinstance(value, str):
        value = {"mode": value}
    if not isinstance(value, Mapping):
        raise ConfigError(f"driver must be None (pedal action), 'speed', 'accel', 'pedal' or a "
                          f"dict of RobotDriver keywords, got {value!r}")
    if value.get("mode") == "pedal":
        extra = sorted(set(value) - {"mode", "delay_s"})
        if extra:
            raise ConfigError(f"driver mode 'pedal' (the action is the pedal, pressed delay_s "
                              f"late) takes only delay_s, got {extra[0]!r}; the PI keywords "
                              f"belong to mode 'speed' or 'accel'")
        delay = value.get("delay_s", 0.0)
        RobotDriver("speed", delay_s=delay)  # delay_s checked with RobotDriver's messages
        return {"mode": "pedal", "delay_s": float(delay)}
    if "actuator" in value:
        raise ConfigError(
            "driver: a Python actuator cannot run inside the C++ env core (nor in its vector "
            "env); use pedal_actuator={'time_constant': ..., 'rate_limit': ...}, or "
            "gym.make('VDSim-Dyno-v0', driver=None) wrapped in "
            "vdsim_gym.wrappers.RobotDriverWrapper(env, actuator=fn)")
    out = dict(value)
    out.setdefault("mode", "speed")
    RobotDriver(**out)  # every keyword checked with RobotDriver's messages
    return out


@dataclass(frozen=True)
class DynoPhysics:
    vehicle: DynoConfig
    substep_dt: float  # [s] the driver's period
    ticks_per_period: int
    driver: dict[str, Any] | None  # RobotDriver keywords; None: the action is the pedal
    actuator: PedalActuator | None

    @classmethod
    def build(cls, *, vehicle: str | Path | DynoConfig | Mapping[str, Any] = "ev_dyno_bench",
              substep_dt: float = 0.05, control_period: float = 0.1,
              driver: str | Mapping[str, Any] | None = "speed",
              pedal_actuator: Mapping[str, float] | PedalActuator | None = None
              ) -> DynoPhysics:
        dt = check_substep_dt(substep_dt)
        spec = cls(load_dyno(dict(vehicle) if isinstance(vehicle, Mapping) else vehicle), dt,
                   whole_ticks(control_period, dt, "control_period"), _driver(driver),
                   _pedal_actuator(pedal_actuator))
        spec.sim_config(warn=True)  # the delay's rounding is warned about once, here
        return spec

    @property
    def control_period(self) -> float:
        return self.ticks_per_period * self.substep_dt

    @property
    def level(self) -> str:
        return "dyno"

    @property
    def longitudinal(self) -> str:
        """What the action commands: the driver's mode ("speed", "accel") or "pedal"."""
        return "pedal" if self.driver is None else self.driver["mode"]  # pedal: no PI

    @property
    def integrator(self) -> str:
        return "dyno: rk4 torque lag + euler speed"

    @property
    def delay_s(self) -> float:
        return 0.0 if self.driver is None else float(self.driver.get("delay_s", 0.0))

    def sim_config(self, *, warn: bool = False) -> _core.DynoSimConfig:
        cfg = _core.DynoSimConfig()
        cfg.substep_dt = self.substep_dt
        cfg.driver_on = self.driver is not None and self.driver["mode"] != "pedal"
        if self.driver is not None:
            if cfg.driver_on:
                kwargs = {k: v for k, v in self.driver.items() if k != "delay_s"}
                drv = RobotDriver(**kwargs)
                cfg.driver = drv._core.params
                cfg.accel_filter_s = cfg.driver.accel_filter_s
            n, exact = delay_steps(self.delay_s, self.substep_dt)
            if not exact and warn:
                warnings.warn(
                    f"driver delay_s = {self.delay_s:g} s is {self.delay_s / self.substep_dt:.4g}"
                    f" substeps of {self.substep_dt:g} s (the driver's period); rounded to "
                    f"{n} ({n * self.substep_dt:g} s)", DelayRoundingWarning, stacklevel=4)
            cfg.delay_steps = n
        if self.actuator is not None:
            a = _core.PedalActuatorParams()
            a.enabled = True
            a.time_constant = self.actuator.time_constant
            a.rate_limit = self.actuator.rate_limit
            cfg.actuator = a
        return cfg


__all__ = ["DynoPhysics", "PedalActuator"]
