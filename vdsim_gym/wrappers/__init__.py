"""Gymnasium wrappers of the VDSim envs."""

from __future__ import annotations

from vdsim_gym.wrappers.accel import AccelCommandWrapper
from vdsim_gym.wrappers.latency import LatencyWrapper
from vdsim_gym.wrappers.record_trace import RecordTrace
from vdsim_gym.wrappers.robot_driver import RobotDriverWrapper

__all__ = ["AccelCommandWrapper", "LatencyWrapper", "RecordTrace", "RobotDriverWrapper"]
