"""Configuration: frozen dataclasses loaded from YAML.

Defaults come from the C++ core's parameter structs (one source of truth); a YAML file
overrides any subset of fields. Unknown keys are errors that name the file and the key
path, so a misspelt parameter never silently keeps its default.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym._data import vehicles_dir
from vdsim_gym._files import load_yaml, read_user_text
from vdsim_gym.errors import ConfigError

# The wheels of each model level (L1: one per axle; L2: four), in the order of the core's
# state, observation and trace rows.
WHEELS = {"L1": ("F", "R"), "L2": ("FL", "FR", "RL", "RR")}
# Result/trace column of the longitudinal command per mode: a force [N], a pedal [-1, 1]
# or an acceleration target [m/s^2] (never recorded as a force).
COMMAND_COLUMNS = {"force": "u_fx", "pedal": "u_pedal", "accel": "u_ax"}


@dataclass(frozen=True)
class MFCurveConfig:
    B: float  # stiffness factor at the nominal load [-]
    C: float  # shape factor [-]
    D: float  # peak factor (times mu * Fz) [-]
    E: float  # curvature factor [-]


@dataclass(frozen=True)
class CombinedSlipConfig:
    """Combined slip: the friction ellipse (``weighting: false``) or the Magic Formula's
    weighting functions with these coefficients (docs/PHYSICS.md, "Combined slip")."""

    weighting: bool
    rbx1: float
    rbx2: float
    rcx1: float
    rex1: float
    rby1: float
    rby2: float
    rby3: float
    rcy1: float
    rey1: float


@dataclass(frozen=True)
class TireConfig:
    lateral: MFCurveConfig
    longitudinal: MFCurveConfig
    mu: float  # road friction scale [-]
    fz_nominal: float  # nominal load Fz0 [N]
    pdy2: float  # friction load sensitivity [-]
    pky2: float  # lateral stiffness peaks at pky2 * Fz0 [-]
    relaxation_length: float  # lateral relaxation length [m], 0: no lag
    combined: CombinedSlipConfig


@dataclass(frozen=True)
class VehicleConfig:
    """A vehicle in SI units; see envs/vehicles/generic_sedan.yaml for units per field."""

    name: str
    mass: float
    yaw_inertia: float
    cg_to_front: float
    cg_to_rear: float
    track: float
    cg_height: float
    wheel_radius: float
    wheel_inertia: float
    drive_torque_max: float
    drive_power_max: float
    brake_torque_max: float
    front_drive_share: float
    front_brake_share: float
    # L2: viscous coupling across each axle's differential [N m s/rad]: 0 open, a few
    # hundred limited slip, large locked (docs/PHYSICS.md, "Differentials").
    diff_coupling_front: float
    diff_coupling_rear: float
    steering_ratio: float | None  # None: the vehicle file states none; delta_sw not observed
    max_steer: float
    drag_coefficient: float
    frontal_area: float
    air_density: float
    rolling_resistance: float
    load_transfer_tau: float
    # L2: the front axle's share of lateral load transfer (roll stiffness distribution);
    # None: static load share (b/L). docs/PHYSICS.md.
    roll_stiffness_front: float | None
    # Lateral force compliance steer per axle [rad/N] (positive: out of the turn), by the
    # equivalent axle cornering stiffness 1/C_eff = 1/C + c (docs/PHYSICS.md).
    compliance_steer_front: float
    compliance_steer_rear: float
    body_width: float
    front_overhang: float
    rear_overhang: float
    max_acceleration: float  # [m/s^2] largest target of longitudinal="accel"
    max_deceleration: float  # [m/s^2] largest braking target
    accel_kp: float  # acceleration cascade gains (docs/PHYSICS.md, "Acceleration command")
    accel_ki: float
    accel_filter_tau: float  # [s]
    tire: TireConfig

    @property
    def wheelbase(self) -> float:
        return self.cg_to_front + self.cg_to_rear

    @property
    def total_brake_torque(self) -> float:
        """Full-pedal brake torque of all four wheels [N m] (brake_torque_max per wheel)."""
        return self.core_params().total_brake_torque()

    @property
    def body_length(self) -> float:
        return self.front_overhang + self.wheelbase + self.rear_overhang

    def to_core(self) -> _core.VehicleParams:
        """A new core struct of these parameters (the caller's to change)."""
        return _to_core(self, _core.VehicleParams())

    def core_params(self) -> _core.VehicleParams:
        """The core struct of these parameters, built once per (frozen) config and shared:
        for readers that copy it (a Session's constructor), never to be changed; a
        struct to change is ``to_core()``'s."""
        params = self.__dict__.get("_core_params")
        if params is None:
            params = self.to_core()
            object.__setattr__(self, "_core_params", params)
        return params

    def __getstate__(self) -> dict[str, Any]:  # pickles and copies without the caches
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_core_params", "_canonical_form")}

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class ActuatorConfig:
    """Steering actuator chain: dead time -> first-order lag -> rate limit -> saturation."""

    dead_time: float = 0.0  # [s], a whole number of substeps
    time_constant: float = 0.0  # first-order lag [s], 0 = none
    rate_limit: float = math.inf  # [rad/s]
    max_angle: float = math.inf  # road-wheel saturation [rad]


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """A config class's field types, resolved once (get_type_hints evaluates every
    annotation's string: about 0.4 ms for VehicleConfig and its parts)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _is_dataclass_type(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _from_core(cls: type, core_obj: Any, **extra: Any) -> Any:
    """Build a config dataclass from a core struct with the same field names."""
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in extra:
            values[f.name] = extra[f.name]
            continue
        v = getattr(core_obj, f.name)
        if _is_dataclass_type(hints[f.name]):
            v = _from_core(hints[f.name], v)
        elif isinstance(v, float) and math.isnan(v):
            v = None
        values[f.name] = v
    return cls(**values)


def _to_core(cfg: Any, core_obj: Any) -> Any:
    for f in fields(cfg):
        v = getattr(cfg, f.name)
        if not hasattr(core_obj, f.name):
            continue
        if dataclasses.is_dataclass(v):
            sub = getattr(core_obj, f.name)
            _to_core(v, sub)
            setattr(core_obj, f.name, sub)
        else:
            setattr(core_obj, f.name, math.nan if v is None else v)
    return core_obj


def default_vehicle() -> VehicleConfig:
    """The C++ core's defaults (the generic sedan), as a VehicleConfig."""
    return _from_core(VehicleConfig, _core.VehicleParams(), name="generic_sedan")


def merge(base: Any, data: Any, where: str, path: str = "") -> Any:
    """Return ``base`` with the values of the mapping ``data`` replaced, recursively.

    Raises ConfigError naming ``where`` and the dotted key path for unknown keys and
    values of the wrong type.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: '{path or '<root>'}' must be a mapping, got {data!r}")
    hints = _hints(type(base))
    names = {f.name for f in fields(base)}
    changes: dict[str, Any] = {}
    for key, value in data.items():
        key_path = f"{path}.{key}" if path else str(key)
        if key not in names:
            known = ", ".join(sorted(names))
            raise ConfigError(f"{where}: unknown key '{key_path}' (known keys here: {known})")
        current = getattr(base, key)
        if _is_dataclass_type(hints[key]):
            changes[key] = merge(current, value, where, key_path)
        else:
            changes[key] = _check_value(hints[key], value, where, key_path)
    return dataclasses.replace(base, **changes)


def _check_value(tp: Any, value: Any, where: str, key_path: str) -> Any:
    allows_none = type(None) in typing.get_args(tp)
    if value is None:
        if allows_none:
            return None
        raise ConfigError(f"{where}: '{key_path}' must not be empty")
    if tp is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: '{key_path}' must be a string, got {value!r}")
        return value
    if tp is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: '{key_path}' must be true or false, got {value!r}")
        return value
    if not is_real(value):
        raise ConfigError(f"{where}: '{key_path}' must be a number, got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise ConfigError(f"{where}: '{key_path}' = {str(value)[:20]}... ({len(str(value))} "
                          "digits) is too large for a number") from None
    if not math.isfinite(number) and tp is not float:
        raise ConfigError(f"{where}: '{key_path}' must be finite, got {value!r}")
    return number


def available_vehicles() -> list[str]:
    return sorted(p.stem for p in vehicles_dir().glob("*.yaml"))


def load_vehicle(
    vehicle: str | Path | VehicleConfig | dict[str, Any] = "generic_sedan",
) -> VehicleConfig:
    """Load a vehicle by name (envs/vehicles/<name>.yaml), path, mapping or config.

    A file states any subset of fields; the rest keep the core's defaults. A vehicle file
    that does not state ``steering_ratio`` gets None (no steering-wheel angle observed).
    """
    if isinstance(vehicle, VehicleConfig):  # e.g. dataclasses.replace(...) of a loaded one
        if vehicle.__dict__.get("_validated"):  # frozen: checked once, valid for good
            return vehicle
        return _validate_vehicle(vehicle, f"vehicle {vehicle.name!r}")
    if not isinstance(vehicle, (str, Path, dict)):
        raise ConfigError(f"vehicle must be a name under envs/vehicles, a .yaml path, a dict "
                          f"of fields or a VehicleConfig, got {vehicle!r}")
    if isinstance(vehicle, dict):
        base = dataclasses.replace(default_vehicle(), steering_ratio=None)
        return _validate_vehicle(merge(base, vehicle, "vehicle dict"), "vehicle dict")
    path = Path(vehicle)
    if path.suffix not in (".yaml", ".yml"):
        path = vehicles_dir() / f"{vehicle}.yaml"
        if not path.exists():
            raise ConfigError(
                f"unknown vehicle '{vehicle}': no file {path}. Available: "
                f"{', '.join(available_vehicles())}; or pass a path to a .yaml file"
            )
    elif not path.exists():
        raise ConfigError(f"vehicle file not found: {path}")
    # A file loaded before and not changed since: its (frozen) config again, without
    # parsing the YAML (~3 ms per gym.make).
    stat = path.stat()
    key = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    cached = _LOADED.get(key)
    if cached is not None:
        return cached
    try:
        data = load_yaml(read_user_text(path, "the vehicle file")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a vehicle file must be a mapping of field: value (like "
                          f"envs/vehicles/generic_sedan.yaml), got a {type(data).__name__}")
    if data.get("model") == "dyno":
        raise ConfigError(f"{path}: a chassis-dyno bench (model: dyno), not a road vehicle; "
                          "use vdsim_gym.dyno.DynoBench(vehicle=...) or VDSim-Dyno-v0")
    data.setdefault("name", path.stem)
    base = dataclasses.replace(default_vehicle(), steering_ratio=None)
    cfg = _validate_vehicle(merge(base, data, str(path)), str(path))
    if len(_LOADED) >= 64:  # a bounded cache: many generated files do not grow it
        _LOADED.clear()
    _LOADED[key] = cfg
    return cfg


# Vehicle files loaded so far: (resolved path, mtime_ns, size) -> their validated config.
_LOADED: dict[tuple[str, int, int], VehicleConfig] = {}


# Declared range of every numeric vehicle field: (low, high, low_open) in the field's SI
# unit; high is inclusive. Wide enough for any road vehicle from a city car to a heavy
# truck, narrow enough to catch unit slips (mm for m, deg for rad, kN for N) and signs.
# Checked at load; an error names the file, the key and the range.
VEHICLE_RANGES: dict[str, tuple[float, float, bool]] = {
    "mass": (0.0, 1e5, True),                # kg
    "yaw_inertia": (0.0, 1e6, True),         # kg m^2
    "cg_to_front": (0.0, 10.0, True),        # m
    "cg_to_rear": (0.0, 10.0, True),         # m
    "track": (0.0, 5.0, True),               # m
    "cg_height": (0.0, 5.0, True),           # m
    "wheel_radius": (0.0, 2.0, True),        # m
    "wheel_inertia": (0.0, 1e3, True),       # kg m^2
    "drive_torque_max": (0.0, 1e5, False),   # N m
    "drive_power_max": (0.0, 1e7, False),    # W
    "brake_torque_max": (0.0, 1e5, False),   # N m
    "front_drive_share": (0.0, 1.0, False),  # -
    "front_brake_share": (0.0, 1.0, False),  # -
    "steering_ratio": (0.0, 100.0, True),    # - (or absent)
    "roll_stiffness_front": (0.0, 1.0, False),  # - (or absent: static load share)
    "compliance_steer_front": (-1e-4, 1e-4, False),  # rad/N (1e-6 rad/N = 0.057 deg/kN)
    "compliance_steer_rear": (-1e-4, 1e-4, False),   # rad/N
    "diff_coupling_front": (0.0, 1e6, False),  # N m s/rad
    "diff_coupling_rear": (0.0, 1e6, False),   # N m s/rad
    "max_steer": (0.0, 1.5, True),           # rad (86 deg)
    "drag_coefficient": (0.0, 3.0, False),   # -
    "frontal_area": (0.0, 20.0, False),      # m^2
    "air_density": (0.0, 5.0, True),         # kg/m^3
    "rolling_resistance": (0.0, 0.5, False), # -
    "load_transfer_tau": (0.0, 10.0, True),  # s
    "body_width": (0.0, 5.0, True),          # m
    "front_overhang": (0.0, 10.0, False),    # m
    "rear_overhang": (0.0, 10.0, False),     # m
    "max_acceleration": (0.0, 20.0, True),   # m/s^2
    "max_deceleration": (0.0, 20.0, True),   # m/s^2
    "accel_kp": (0.0, 10.0, False),          # s^2/m
    "accel_ki": (0.0, 100.0, False),         # s/m
    "accel_filter_tau": (0.0, 10.0, False),  # s
    "tire.mu": (0.0, 3.0, True),             # -
    "tire.fz_nominal": (0.0, 1e6, True),     # N
    "tire.pdy2": (-1.0, 1.0, False),         # -
    "tire.pky2": (-10.0, 10.0, False),       # - (<= 0: plain Magic Formula)
    "tire.relaxation_length": (0.0, 5.0, False),  # m (0: no lag)
    "tire.combined.rbx1": (0.0, 100.0, True), "tire.combined.rbx2": (-100.0, 100.0, False),
    "tire.combined.rcx1": (0.0, 2.0, True), "tire.combined.rex1": (-50.0, 1.0, False),
    "tire.combined.rby1": (0.0, 100.0, True), "tire.combined.rby2": (-100.0, 100.0, False),
    "tire.combined.rby3": (-1.0, 1.0, False), "tire.combined.rcy1": (0.0, 2.0, True),
    "tire.combined.rey1": (-50.0, 1.0, False),
    "tire.lateral.B": (0.0, 100.0, True), "tire.lateral.C": (0.0, 10.0, True),
    "tire.lateral.D": (0.0, 10.0, True), "tire.lateral.E": (-50.0, 1.0, False),
    "tire.longitudinal.B": (0.0, 100.0, True), "tire.longitudinal.C": (0.0, 10.0, True),
    "tire.longitudinal.D": (0.0, 10.0, True), "tire.longitudinal.E": (-50.0, 1.0, False),
}


def _field(cfg: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        cfg = getattr(cfg, part)
    return cfg


def _validate_vehicle(cfg: VehicleConfig, where: str) -> VehicleConfig:
    for key, (lo, hi, low_open) in VEHICLE_RANGES.items():
        v = _field(cfg, key)
        if v is None:  # steering_ratio / roll_stiffness_front not stated
            continue
        ok = math.isfinite(v) and (v > lo if low_open else v >= lo) and v <= hi
        if not ok:
            bracket = "(" if low_open else "["
            raise ConfigError(f"{where}: '{key}' = {v!r} is outside its range "
                              f"{bracket}{lo:g}, {hi:g}] (SI units: m, kg, N, rad, s)")
    if cfg.compliance_steer_front or cfg.compliance_steer_rear:
        core = cfg.to_core()
        for axle in (0, 1):
            try:
                _core.axle_tire(core, axle)
            except ValueError as e:
                raise ConfigError(f"{where}: {e}") from None
    object.__setattr__(cfg, "_validated", True)  # not a field: eq, repr, replace ignore it
    return cfg


def load_actuator(actuator: None | dict[str, Any] | ActuatorConfig) -> ActuatorConfig | None:
    """None (no chain), a mapping of ActuatorConfig fields, or an ActuatorConfig."""
    if actuator is None or isinstance(actuator, ActuatorConfig):
        cfg = actuator
    elif isinstance(actuator, dict):
        cfg = merge(ActuatorConfig(), actuator, "actuator")
    else:
        raise ConfigError(
            f"actuator must be None, a dict of {[f.name for f in fields(ActuatorConfig)]} "
            f"or an ActuatorConfig, got {type(actuator).__name__}"
        )
    if cfg is not None:
        for f in fields(cfg):
            v = getattr(cfg, f.name)
            if math.isnan(v) or v < 0:
                raise ConfigError(f"actuator: '{f.name}' must be >= 0, got {v}")
        if cfg.dead_time > MAX_ACTUATOR_DEAD_TIME_S:  # its delay line holds every substep
            raise ConfigError(f"actuator: 'dead_time' = {cfg.dead_time!r} s is longer than "
                              f"the bound of {MAX_ACTUATOR_DEAD_TIME_S:g} s (a steering "
                              "chain's dead time is milliseconds; for a late command use "
                              "latency=)")
    return cfg


# The steering chain's dead time [s]: its delay line holds one command per substep, so
# the bound also bounds that memory (2000 entries at 0.5 ms).
MAX_ACTUATOR_DEAD_TIME_S = 1.0
