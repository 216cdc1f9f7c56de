"""Gymnasium wrappers of the VDSim envs."""

from __future__ import annotations

from vdsim_gym.wrappers.accel import AccelCommandWrapper
from vdsim_gym.wrappers.latency import LatencyWrapper

__all__ = ["AccelCommandWrapper", "LatencyWrapper"]
