"""Chassis-dyno bench parameters: a frozen dataclass whose defaults are the C++ core's
(``_core.DynoParams``), loaded from a bench file (``model: dyno``, e.g.
envs/vehicles/ev_dyno_bench.yaml) or derived from a road-vehicle file (the vehicle put on
the bench: its drive split into axle motors, its drag and rolling resistance as road
load)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from vdsim_gym import _core
from vdsim_gym._data import vehicles_dir
from vdsim_gym._files import load_yaml, read_user_text
from vdsim_gym.config.vehicle import load_vehicle, merge
from vdsim_gym.errors import ConfigError


@dataclass(frozen=True)
class DynoConfig:
    """A vehicle on the rollers, SI units (envs/vehicles/ev_dyno_bench.yaml gives the unit
    of every field)."""

    name: str
    mass: float
    wheel_radius: float
    wheel_inertia: float
    roller_inertia: float
    front_torque_max: float
    front_power_max: float
    rear_torque_max: float
    rear_power_max: float
    front_share: float
    speed_limit: float
    limiter_taper: float
    torque_lag_hz: float
    torque_lag_zeta: float
    brake_torque_max: float
    road_load_a: float
    road_load_b: float
    road_load_c: float
    grade: float
    gravity: float
    max_substep: float
    # "mean": v moves by the torque's mean over the substep, road load at its midpoint
    # (second order; the default); "end": explicit Euler with the end-of-substep torque,
    # the published bench's rule, which reproduces its delay table (docs/DYNO.md).
    speed_update: str = "mean"

    @property
    def effective_mass(self) -> float:
        """m + J_roller / r^2 + 4 J_wheel / r^2 [kg]."""
        return self.to_core().effective_mass()

    def to_core(self) -> _core.DynoParams:
        p = _core.DynoParams()
        for f in fields(self):
            if f.name == "speed_update":
                p.speed_update = SPEED_UPDATES.index(self.speed_update)
            elif f.name != "name":
                setattr(p, f.name, getattr(self, f.name))
        return p


# The bench's speed-update rules by name, in the order of the core's constants
# (kSpeedUpdateEnd = 0, kSpeedUpdateMean = 1).
SPEED_UPDATES: tuple[str, ...] = ("end", "mean")


# (low, high, low_open), inclusive high; wide enough for any road vehicle, tight enough to
# catch unit slips (kW for W, deg for rad) and signs.
DYNO_RANGES: dict[str, tuple[float, float, bool]] = {
    "mass": (0.0, 1e5, True), "wheel_radius": (0.0, 2.0, True),
    "wheel_inertia": (0.0, 1e3, False), "roller_inertia": (0.0, 1e5, False),
    "front_torque_max": (0.0, 1e5, False), "front_power_max": (0.0, 1e7, False),
    "rear_torque_max": (0.0, 1e5, False), "rear_power_max": (0.0, 1e7, False),
    "front_share": (0.0, 1.0, False), "speed_limit": (0.0, 150.0, True),
    "limiter_taper": (0.0, 50.0, True), "torque_lag_hz": (0.0, 1e3, True),
    "torque_lag_zeta": (0.0, 10.0, True), "brake_torque_max": (0.0, 1e5, False),
    "road_load_a": (0.0, 1e5, False), "road_load_b": (0.0, 1e4, False),
    "road_load_c": (0.0, 1e3, False), "grade": (-0.5, 0.5, False),
    "gravity": (0.0, 30.0, True), "max_substep": (0.0, 1.0, True),
}


def default_dyno() -> DynoConfig:
    core = _core.DynoParams()
    values = {f.name: getattr(core, f.name) for f in fields(DynoConfig) if f.name != "name"}
    values["speed_update"] = SPEED_UPDATES[core.speed_update]
    return DynoConfig(name="ev_dyno_bench", **values)


def _validate(cfg: DynoConfig, where: str) -> DynoConfig:
    if cfg.speed_update not in SPEED_UPDATES:
        raise ConfigError(f"{where}: 'speed_update' = {cfg.speed_update!r} is not one of "
                          f"{list(SPEED_UPDATES)} ('mean': second order, the default; "
                          "'end': the published bench's Euler rule)")
    for key, (lo, hi, low_open) in DYNO_RANGES.items():
        v = getattr(cfg, key)
        if not (math.isfinite(v) and (v > lo if low_open else v >= lo) and v <= hi):
            raise ConfigError(f"{where}: '{key}' = {v!r} is outside its range "
                              f"{'(' if low_open else '['}{lo:g}, {hi:g}] (SI units)")
    return cfg


def from_vehicle(vehicle: Any) -> DynoConfig:
    """A road vehicle on the bench: drive torque and power split into axle motors by
    ``front_drive_share``, the brake per wheel, road load A = c_rr m g, B = 0,
    C = rho c_d A / 2; bench-only fields keep the reference bench's values."""
    v = load_vehicle(vehicle)
    s = v.front_drive_share
    base = default_dyno()
    return _validate(dataclasses.replace(
        base, name=v.name, mass=v.mass, wheel_radius=v.wheel_radius,
        wheel_inertia=v.wheel_inertia,
        front_torque_max=s * v.drive_torque_max, front_power_max=s * v.drive_power_max,
        rear_torque_max=(1 - s) * v.drive_torque_max,
        rear_power_max=(1 - s) * v.drive_power_max, front_share=s,
        brake_torque_max=v.brake_torque_max,
        road_load_a=v.rolling_resistance * v.mass * base.gravity, road_load_b=0.0,
        road_load_c=0.5 * v.air_density * v.drag_coefficient * v.frontal_area),
        f"vehicle {v.name!r} on the bench")


def load_dyno(vehicle: str | Path | DynoConfig | dict[str, Any] = "ev_dyno_bench"
              ) -> DynoConfig:
    """A bench by name (envs/vehicles/<name>.yaml), path, mapping or config. A file with
    ``model: dyno`` states bench fields (any subset; the rest keep the core's defaults);
    any other vehicle file is a road vehicle put on the bench (``from_vehicle``)."""
    if isinstance(vehicle, DynoConfig):
        return _validate(vehicle, f"bench {vehicle.name!r}")
    if isinstance(vehicle, dict):
        data = dict(vehicle)
        if data.pop("model", "dyno") != "dyno":
            return from_vehicle(data)
        return _validate(merge(default_dyno(), data, "dyno dict"), "dyno dict")
    if not isinstance(vehicle, (str, Path)):
        raise ConfigError(f"vehicle must be a name under envs/vehicles, a .yaml path, a dict "
                          f"or a DynoConfig, got {vehicle!r}")
    path = Path(vehicle)
    if path.suffix not in (".yaml", ".yml"):
        path = vehicles_dir() / f"{vehicle}.yaml"
    if not path.exists():
        raise ConfigError(f"vehicle file not found: {path}")
    try:
        data = load_yaml(read_user_text(path, "the dyno vehicle file")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a vehicle file must be a mapping of field: value")
    if data.get("model") != "dyno":
        return from_vehicle(path)
    data.pop("model")
    data.setdefault("name", path.stem)
    return _validate(merge(default_dyno(), data, str(path)), str(path))


__all__ = ["DYNO_RANGES", "SPEED_UPDATES", "DynoConfig", "default_dyno", "from_vehicle",
           "load_dyno"]
