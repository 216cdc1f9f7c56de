"""Chassis dyno and robot driver (docs/DYNO.md): ``DynoBench`` (a vehicle on the rollers),
``RobotDriver`` (speed or acceleration mode, transport delay, actuator hook), bench
configuration (``load_dyno``) and the reference delay-table procedure (``delay_table``)."""

from __future__ import annotations

from vdsim_gym.dyno.bench import DynoBench
from vdsim_gym.dyno.config import DynoConfig, default_dyno, from_vehicle, load_dyno
from vdsim_gym.dyno.driver import (
    ActuatorError,
    DelayRoundingWarning,
    RobotDriver,
    delay_steps,
)

__all__ = ["ActuatorError", "DelayRoundingWarning", "DynoBench", "DynoConfig", "RobotDriver",
           "default_dyno", "delay_steps", "from_vehicle", "load_dyno"]
