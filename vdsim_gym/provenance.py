"""Provenance of a result: what it ran on (version, git sha, dirty flag, parameter hash).

The git sha and dirty flag are baked into the core module at build time
(``vdsim_gym.__git_sha__``, ``vdsim_gym.__git_dirty__``); ``param_hash`` is the sha256 of
the canonical JSON (sorted keys, no whitespace, floats by ``repr``) of the vehicle
configuration, the physics options and the actuator, so two results with the same hash
ran the same plant.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any

import vdsim_gym
from vdsim_gym.plant import PhysicsSpec, accel_conversion


def _canonical(value: Any) -> Any:
    """JSON-safe, order-independent form: dataclasses as dicts, non-finite floats as text."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical(dataclasses.asdict(value))
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    return value


def physics_dict(physics: PhysicsSpec) -> dict[str, Any]:
    """Everything that defines the plant: vehicle, actuator and the physics options."""
    d = {
        "vehicle": physics.vehicle,
        "actuator": physics.actuator,
        "level": physics.level,
        "substep_dt": physics.substep_dt,
        "ticks_per_period": physics.ticks_per_period,
        "longitudinal": physics.longitudinal,
        "integrator": physics.integrator,
    }
    step_ticks = getattr(physics, "step_ticks", 1)
    if step_ticks != 1:  # only when set: the hashes of earlier results stay as they were
        d["step_ticks"] = step_ticks
    return _canonical(d)


def param_hash(physics: PhysicsSpec) -> str:
    """sha256 (hex) of the canonical JSON of ``physics_dict``."""
    text = json.dumps(physics_dict(physics), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def build_info() -> dict[str, Any]:
    """vdsim_gym version, the git sha baked at build time and its dirty flag."""
    return {
        "vdsim_gym_version": vdsim_gym.__version__,
        "git_sha": vdsim_gym.__git_sha__,
        "git_dirty": vdsim_gym.__git_dirty__,
    }


def plant_meta(physics: PhysicsSpec, ref_point: tuple[float, float] | None,
               ref_point_setting: Any = None) -> dict[str, Any]:
    """The plant's part of a result's ``meta``."""
    v = physics.vehicle
    return {
        "level": physics.level,
        "vehicle": v.name,
        "param_hash": param_hash(physics),
        "actuator": None if physics.actuator is None else _canonical(physics.actuator),
        "substep_dt_s": physics.substep_dt,
        "longitudinal": physics.longitudinal,
        "integrator": physics.integrator,
        "ref_point": None if ref_point is None else {
            "setting": _canonical(ref_point_setting), "offset_m": list(ref_point),
            "cg_to_front_m": v.cg_to_front, "cg_to_rear_m": v.cg_to_rear,
        },
        "delta_sw_ratio": getattr(v, "steering_ratio", None),  # None on the dyno
        "tracking_point": "cg",
        # The dyno's acceleration mode is its robot driver's (in "driver"), not the cascade.
        "accel_conversion": None if physics.level == "dyno" else accel_conversion(physics),
        **({"driver": _canonical(physics.driver)} if physics.level == "dyno" else {}),
    }
