"""The chassis-dyno bench (C++ ``dyno.hpp``): ``DynoBench(vehicle).step(throttle, brake,
dt) -> speed``; docs/DYNO.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from vdsim_gym import _core
from vdsim_gym._checks import check_number, check_seconds
from vdsim_gym.dyno.config import DynoConfig, load_dyno
from vdsim_gym.errors import ConfigError

MAX_SUBSTEPS_PER_CALL = 10_000_000  # a dt this long in substeps is refused (overflow guard)


def check_dt(dt: Any) -> float:
    """A step [s]: a positive finite number."""
    return check_seconds(dt, "dt")


def _pedal(value: Any, name: str) -> float:
    return check_number(value, name, 0.0, 1.0)


class DynoBench:
    """A vehicle on the rollers (longitudinal only).

    Args:
        vehicle: a bench file name or path (``model: dyno``, default the reference
            ``ev_dyno_bench``), a road-vehicle file put on the bench, a mapping or a
            DynoConfig (``vdsim_gym.dyno.load_dyno``).
        v0: speed at reset [m/s].
    """

    def __init__(self, vehicle: str | Path | DynoConfig | dict[str, Any] = "ev_dyno_bench",
                 *, v0: float = 0.0) -> None:
        self.config = load_dyno(vehicle)
        self._core = _core.DynoBenchCore(self.config.to_core())
        self.reset(v0)

    def reset(self, v0: float = 0.0) -> float:
        """Back to speed ``v0`` [m/s], torques and their lag at rest; returns the speed."""
        if isinstance(v0, bool) or not isinstance(v0, (int, float)) or not math.isfinite(v0):
            raise ConfigError(f"v0 must be a finite speed [m/s], got {v0!r}")
        self._core.reset(float(v0))
        return self._core.v

    def step(self, throttle: float, brake: float, dt: float) -> float:
        """Hold (throttle, brake), each in [0, 1], for ``dt`` [s]; returns the speed [m/s].
        The step is cut into ceil(dt / max_substep) equal substeps."""
        dt = check_dt(dt)
        if dt / self.config.max_substep > MAX_SUBSTEPS_PER_CALL:
            raise ConfigError(f"dt = {dt!r} s is {dt / self.config.max_substep:.3g} substeps "
                              f"of {self.config.max_substep} s, more than "
                              f"{MAX_SUBSTEPS_PER_CALL}; step in shorter calls")
        return self._core.step(_pedal(throttle, "throttle"), _pedal(brake, "brake"), dt)

    @property
    def speed(self) -> float:
        return self._core.v

    @property
    def accel(self) -> float:
        """dv/dt over the last step [m/s^2]."""
        return self._core.accel

    @property
    def axle_torque(self) -> tuple[float, float]:
        """The lagged motor torques (front, rear) at the wheels [N m], for logging."""
        return self._core.axle_torque

    @property
    def pedal_authority(self) -> float:
        """b = (front + rear torque cap) / (r m_eff): m/s^2 per unit throttle below the
        power-limited speed, the plant gain of docs/DYNO.md's loop analysis."""
        c = self.config
        return (c.front_torque_max + c.rear_torque_max) / (c.wheel_radius * c.effective_mass)


__all__ = ["DynoBench", "check_dt"]
