"""Small helpers shared by tests (on the path through pytest's ``pythonpath = tests``)."""

from __future__ import annotations

import math
from typing import Any

_NAN = "<nan>"


def canon(value: Any) -> Any:
    """``value`` with every float NaN replaced by a marker, recursively through dicts,
    lists and tuples, so that infos holding NaN (``pass_speed`` before the course end)
    compare with ``==`` (NaN != NaN)."""
    if isinstance(value, float) and math.isnan(value):
        return _NAN
    if isinstance(value, dict):
        return {k: canon(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(canon(v) for v in value)
    return value


def seen_in_float32(obs: dict) -> dict:
    """A Plant observation dict as ClosedLoopEval's callback form shows it to its
    controller: the command env's float32 row, ``t`` exact (the sample time)."""
    import numpy as np

    return {k: v if k == "t" else float(np.float32(v)) for k, v in obs.items()}


def through_the_action(plant, command) -> tuple[float, float]:
    """A command through the command env's action and back, as the core maps an action
    (session.hpp, longitudinal_from_action): steer / max_steer and the longitudinal over
    the most driving or braking, clamped to [-1, 1], then times the same again."""
    v = plant.vehicle
    lo, hi = plant.longitudinal_range
    a0 = min(max(command[0] / v.max_steer, -1.0), 1.0)
    a1 = min(max(command[1] / hi if command[1] >= 0 else command[1] / -lo, -1.0), 1.0)
    if plant.longitudinal == "pedal":
        lon = a1
    elif plant.longitudinal == "accel":
        lon = a1 * v.max_acceleration if a1 >= 0 else a1 * v.max_deceleration
    else:
        torque = v.drive_torque_max if a1 >= 0 else v.total_brake_torque
        lon = a1 * torque / v.wheel_radius
    return a0 * v.max_steer, lon
