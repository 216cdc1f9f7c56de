"""Chassis dyno and robot driver (docs/DYNO.md): ``DynoBench`` (a vehicle on the rollers),
``RobotDriver`` (speed or acceleration mode, transport delay, actuator hook), bench
configuration (``load_dyno``), the drive cycles VDSim-Dyno-v0 follows (``load_cycle``,
``DriveCycle``, ``available_cycles``) and the reference delay-table procedure
(``delay_table``)."""

from __future__ import annotations

from vdsim_gym.dyno.bench import DynoBench
from vdsim_gym.dyno.config import DynoConfig, default_dyno, from_vehicle, load_dyno
from vdsim_gym.dyno.cycles import DriveCycle, available_cycles, load_cycle
from vdsim_gym.dyno.driver import RobotDriver, delay_steps

__all__ = ["DriveCycle", "DynoBench", "DynoConfig",
           "RobotDriver", "available_cycles", "default_dyno", "delay_steps", "from_vehicle",
           "load_cycle", "load_dyno"]
