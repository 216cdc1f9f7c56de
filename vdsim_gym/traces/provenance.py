"""Provenance of a run: what it ran on (version, git sha, dirty flag, parameter hash) and
the plant's part of a result's ``meta``, which traces and results both carry.

The version is baked into the core module and the git sha and dirty flag are written
beside it at every build (``vdsim_gym._build_info``, cmake/git_info.cmake) (``VERSION``,
``GIT_SHA``, ``GIT_DIRTY`` here; ``vdsim_gym.__version__``, ``__git_sha__`` and
``__git_dirty__`` are the same values); ``param_hash`` is the sha256 of the canonical JSON
(sorted keys, no whitespace, floats by ``repr``) of the vehicle configuration, the physics
options and the actuator, so two results with the same hash ran the same plant.

This module sits in the trace layer, below the plant (docs/ARCHITECTURE.md, "Layers"):
``physics`` arguments are ``vdsim_gym.sim.plant.PhysicsSpec`` objects (or the dyno's
``DynoPhysics``), read by their fields, not imported.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any

from vdsim_gym import _build_info, _core

VERSION: str = _core.__version__
GIT_SHA: str = _build_info.GIT_SHA  # "unknown" outside a git checkout
GIT_DIRTY: bool | None = None if _build_info.GIT_DIRTY < 0 else bool(_build_info.GIT_DIRTY)


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


def _canonical_frozen(value: Any) -> Any:
    """``_canonical`` of a frozen dataclass, kept on it (a vehicle config is shared by
    every env built from its file, and its canonical form costs ~0.3 ms). For reading
    only: the result is shared."""
    cached = getattr(value, "__dict__", {}).get("_canonical_form")
    if cached is not None:
        return cached
    form = _canonical(value)
    params = getattr(type(value), "__dataclass_params__", None)
    if params is not None and params.frozen:
        object.__setattr__(value, "_canonical_form", form)
    return form


def physics_dict(physics: Any) -> dict[str, Any]:
    """Everything that defines the plant: vehicle, actuator and the physics options."""
    return _physics_dict(physics, _canonical(physics.vehicle))


def _physics_dict(physics: Any, vehicle: Any) -> dict[str, Any]:
    d = {
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
    kind = getattr(_core.Integrator, str(physics.integrator), None)  # None: the dyno's bench
    step_tol = getattr(physics, "step_tol", None)
    if step_tol is not None and kind is not None and step_tol != _core.default_step_tol(kind):
        d["step_tol"] = step_tol  # only when not the integrator's default, as step_ticks
    out: dict[str, Any] = _canonical(d)
    out["vehicle"] = vehicle
    return out


def param_hash(physics: Any) -> str:
    """sha256 (hex) of the canonical JSON of ``physics_dict``; kept on a frozen dataclass
    (PhysicsSpec: every run's meta asks again, and the canonical form costs ~0.3 ms)."""
    cached = getattr(physics, "__dict__", {}).get("_param_hash")
    if cached is not None:
        return str(cached)
    d = _physics_dict(physics, _canonical_frozen(physics.vehicle))  # read only: hashed
    text = json.dumps(d, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(text.encode()).hexdigest()
    params = getattr(type(physics), "__dataclass_params__", None)
    if params is not None and params.frozen:
        object.__setattr__(physics, "_param_hash", digest)
    return digest


def build_info() -> dict[str, Any]:
    """vdsim_gym version, the git sha baked at build time and its dirty flag."""
    return {
        "vdsim_gym_version": VERSION,
        "git_sha": GIT_SHA,
        "git_dirty": GIT_DIRTY,
    }


def accel_conversion(physics: Any) -> dict[str, Any] | None:
    """What turns an acceleration target into wheel torque (``meta["accel_conversion"]``),
    None unless ``longitudinal="accel"``."""
    if physics.longitudinal != "accel":
        return None
    v = physics.vehicle
    return {
        "converter": "vdsim AccelCascade (csrc/vdsim/accel_cascade.hpp), every "
                     f"integration step ({physics.substep_dt * physics.step_ticks:g} s at most)",
        "law": "pedal = clamp(u_ff + kp (a* - a_m) + ki I, -1, 1); conditional-integration "
               "anti-windup; a_m: first-order filtered (dvx/dt - r vy)",
        "feed_forward": "mass, drag and rolling resistance: (m a* + F_drag + F_roll) r_w / "
                        "T_cap (drive torque and power cap, or full brake torque)",
        "kp": v.accel_kp, "ki": v.accel_ki, "filter_tau_s": v.accel_filter_tau,
        "mass_kg": v.mass, "drive_torque_ref_nm": v.drive_torque_max,
        "drive_power_ref_w": v.drive_power_max, "brake_torque_ref_nm": v.total_brake_torque,
        "target_range_mps2": [-v.max_deceleration, v.max_acceleration],
        "then": "the pedal through the vehicle's powertrain map and brakes",
    }


def plant_meta(physics: Any, ref_point: tuple[float, float] | None,
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
        # the actuation channels' dead times [s] (steer, longitudinal; vehicle plants)
        **({"channel_delays_s": [float(x) for x in physics.channel_delays]}
           if hasattr(physics, "channel_delays") else {}),
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


__all__ = ["GIT_DIRTY", "GIT_SHA", "VERSION", "accel_conversion", "build_info", "param_hash",
           "physics_dict", "plant_meta"]
