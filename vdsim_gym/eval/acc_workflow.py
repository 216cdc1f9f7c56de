"""The reference ACC workflow (../shared/reference/pid_acc_simulation.txt) as a function:
a configuration file, a lead vehicle's sensor CSV and a gains file in; the reference's
results CSV out (``vdsim-gym acc``, docs/ACC.md, "The reference workflow").

Per control period k (time k * dt):

1. the lead's presence, speed and (where it appears) distance come from sensor row k; on
   appearance the lead is placed ``distance`` ahead of the ego, afterwards its position is
   integrated from its speed, so the distance responds to the control;
2. the ``ACCController`` computes the command from the current state;
3. the row is logged (so the first row is the initial state, before any update);
4. the plant advances one period under that command, the lead moves ``lead_speed * dt``.

Plants: ``point_mass`` is the reference's own kinematics (explicit Euler: x += v dt,
then v = max(v + a dt, 0): the car does not reverse); ``L1`` / ``L2`` put the same
controller on our vehicle through the acceleration cascade (``Plant(longitudinal=
"accel")``, straight road, steer 0).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vdsim_gym._files import atomic_open, read_yaml
from vdsim_gym.controllers.acc import ACCConfig, ACCController, ACCGains, load_gains
from vdsim_gym.envs.acc_scenarios import LeadScenario, load_sensor_csv
from vdsim_gym.errors import ConfigError

COLUMNS = ("time", "ego_speed", "acceleration_cmd", "mode", "distance_error", "distance",
           "ttc")
PLANTS = ("point_mass", "L1", "L2")

# Configuration keys per block: (low, high, required). Ranges are inclusive, in SI units.
CONFIG_KEYS: dict[str, dict[str, tuple[float, float, bool]]] = {
    "vehicle": {"max_acceleration": (1e-6, 20.0, True),    # m/s^2
                "max_deceleration": (1e-6, 20.0, True)},   # m/s^2, a positive magnitude
    "acc": {"set_speed": (1e-6, 70.0, True),               # m/s
            "time_headway": (0.0, 10.0, True),             # s
            "min_distance": (0.0, 200.0, True),            # m
            "emergency_ttc_threshold": (0.0, 30.0, True)},  # s
    "simulation": {"dt": (1e-4, 10.0, True),               # s
                   "duration": (1e-6, 36000.0, False),     # s (default: the sensor's span)
                   "initial_speed": (0.0, 70.0, False)},   # m/s (default 0)
}


@dataclass(frozen=True)
class WorkflowConfig:
    acc: ACCConfig
    dt: float  # [s] control period = sensor period
    duration: float | None  # [s]; None: the sensor file's span
    initial_speed: float  # [m/s]


def load_config(path: str | Path) -> WorkflowConfig:
    """The workflow's YAML (envs/scenarios/acc.yaml): blocks vehicle, acc, simulation.
    Missing or unknown keys and out-of-range values are errors naming the file and key."""
    path = Path(path)
    data = read_yaml(path, "the config file")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected blocks {', '.join(CONFIG_KEYS)} (like "
                          f"envs/scenarios/acc.yaml), got {data!r:.80}")
    unknown = sorted(set(data) - set(CONFIG_KEYS), key=str)
    if unknown:
        raise ConfigError(f"{path}: unknown block {unknown[0]!r}; valid: "
                          f"{', '.join(CONFIG_KEYS)}")
    values: dict[str, float] = {}
    for block, keys in CONFIG_KEYS.items():
        section = data.get(block)
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: missing block {block!r} (with {', '.join(keys)})")
        bad = sorted(set(section) - set(keys), key=str)
        if bad:
            raise ConfigError(f"{path}: unknown key '{block}.{bad[0]}'; valid: "
                              f"{', '.join(keys)}")
        for key, (lo, hi, required) in keys.items():
            if key not in section:
                if required:
                    raise ConfigError(f"{path}: '{block}.{key}' is missing")
                continue
            v = section[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= v <= hi:
                hint = (f"; it is a positive magnitude, write {-v:g}"
                        if key == "max_deceleration" and isinstance(v, (int, float))
                        and not isinstance(v, bool) and v < 0 else "")
                raise ConfigError(f"{path}: '{block}.{key}' = {v!r} is outside its range "
                                  f"[{lo:g}, {hi:g}]{hint}")
            values[key] = float(v)
    acc = ACCConfig(**{k: values[k] for k in (*CONFIG_KEYS["vehicle"], *CONFIG_KEYS["acc"])})
    return WorkflowConfig(acc, values["dt"], values.get("duration"),
                          values.get("initial_speed", 0.0))


@dataclass(frozen=True)
class WorkflowResult:
    path: Path
    rows: int
    duration: float  # [s]
    mode_counts: dict[str, int]
    min_distance: float | None  # [m]; None: no lead in the run


class _PointMass:
    """The reference's kinematics: explicit Euler, speed floored at 0."""

    def __init__(self, v0: float, dt: float) -> None:
        self.x, self.v, self.dt = 0.0, v0, dt

    def state(self) -> tuple[float, float]:
        return self.x, self.v

    def advance(self, accel: float) -> None:
        self.x += self.v * self.dt
        self.v = max(self.v + accel * self.dt, 0.0)


class _Vehicle:
    """Our vehicle on a straight road, the command through the acceleration cascade."""

    def __init__(self, level: str, vehicle: Any, v0: float, dt: float,
                 acc: ACCConfig) -> None:
        from vdsim_gym.sim.plant import Plant

        self.plant = Plant(level=level, vehicle=vehicle, control_period=dt,
                           longitudinal="accel")
        veh = self.plant.vehicle
        for key in ("max_acceleration", "max_deceleration"):
            if getattr(acc, key) > getattr(veh, key):
                raise ConfigError(
                    f"vehicle.{key} = {getattr(acc, key):g} m/s^2 in the config exceeds the "
                    f"{veh.name} vehicle's {key} = {getattr(veh, key):g} m/s^2 (its "
                    "acceleration cascade's range); lower it, or use --plant point_mass")
        self.obs = self.plant.reset({"vx": v0})

    def state(self) -> tuple[float, float]:
        return self.obs["X"], self.obs["vx"]

    def advance(self, accel: float) -> None:
        self.obs = self.plant.step((0.0, accel))


def _fmt(value: float | None) -> str:
    """Blank for a missing value; 10 significant digits otherwise (time 0.3, not
    0.30000000000000004)."""
    return "" if value is None else format(value, ".10g")


def simulate(config: WorkflowConfig, sensor: LeadScenario, gains: ACCGains, *,
             plant: str = "point_mass", vehicle: Any = "generic_sedan"
             ) -> Iterator[tuple[Any, ...]]:
    """The rows of the results CSV, one per control period from t = 0 (values, None for
    a blank)."""
    if plant not in PLANTS:
        raise ConfigError(f"unknown plant {plant!r}; valid: {', '.join(PLANTS)}")
    dt = config.dt
    n = _row_count(config, sensor)
    ego = (_PointMass(config.initial_speed, dt) if plant == "point_mass"
           else _Vehicle(plant, vehicle, config.initial_speed, dt, config.acc))
    ctrl = ACCController(config.acc, gains)
    lead_x: float | None = None
    for k in range(n):
        x, v = ego.state()
        v_lead, d_sensor = sensor.lead_speed[k], sensor.distance[k]
        present = not math.isnan(v_lead)
        if present and lead_x is None:  # (re)appears: placed at its sensor distance
            lead_x = x + float(d_sensor)
        elif not present:
            lead_x = None
        distance = None if lead_x is None else lead_x - x
        out = ctrl.compute(v, float(v_lead) if present else None, distance, dt)
        yield (round(k * dt, 9), v, out.acceleration, out.mode, out.distance_error,
               distance, out.ttc)
        if k + 1 < n:  # the last row needs no update
            ego.advance(out.acceleration)
            if lead_x is not None:
                lead_x += float(v_lead) * dt


def _row_count(config: WorkflowConfig, sensor: LeadScenario) -> int:
    span = (sensor.periods - 1) * config.dt
    duration = span if config.duration is None else config.duration
    periods = duration / config.dt
    if abs(periods - round(periods)) > 1e-9 * max(periods, 1.0):
        raise ConfigError(f"simulation.duration = {duration:g} s is not a whole number of "
                          f"periods dt = {config.dt:g} s; use a multiple of dt")
    if round(periods) > sensor.periods - 1:
        raise ConfigError(f"simulation.duration = {duration:g} s is longer than the sensor "
                          f"file ({span:g} s); shorten it or extend the sensor data")
    return int(round(periods)) + 1


def write_rows(path: str | Path, rows: Iterator[tuple[Any, ...]],
               on_row: Callable[[tuple[Any, ...]], None] | None = None) -> int:
    """Write the CSV atomically (``vdsim_gym._files.atomic_open``: a temporary file beside
    ``path`` renamed over it when every row is written); on any error (or Ctrl-C) no file,
    and no partial file, is left.
    """
    n = 0
    with atomic_open(path, "w") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        for row in rows:
            w.writerow([_fmt(c) if not isinstance(c, str) else c for c in row])
            if on_row is not None:
                on_row(row)
            n += 1
    return n


def run_workflow(config: str | Path, sensor: str | Path, gains: str | Path | None, out:
                 str | Path, *, plant: str = "point_mass", vehicle: Any = "generic_sedan"
                 ) -> WorkflowResult:
    """Load and check every input, simulate, write ``out`` (created atomically; its
    folder is made if missing). ``gains=None``: the defaults (``ACCGains()``)."""
    if plant not in PLANTS:
        raise ConfigError(f"unknown plant {plant!r}; valid: {', '.join(PLANTS)}")
    cfg = load_config(config)
    lead = load_sensor_csv(sensor, dt=cfg.dt, set_speed=cfg.acc.set_speed)
    pid_gains = ACCGains() if gains is None else load_gains(gains)
    out = Path(out)
    if out.is_dir():
        raise ConfigError(f"--out {str(out)!r} is a folder; give the results CSV's file path")
    out.parent.mkdir(parents=True, exist_ok=True)
    modes: dict[str, int] = {}
    dmin = [math.inf]

    def tally(row: tuple[Any, ...]) -> None:
        modes[row[3]] = modes.get(row[3], 0) + 1
        if row[5] is not None:
            dmin[0] = min(dmin[0], row[5])

    n = write_rows(out, simulate(cfg, lead, pid_gains, plant=plant, vehicle=vehicle), tally)
    return WorkflowResult(out, n, (n - 1) * cfg.dt, modes,
                          None if dmin[0] == math.inf else dmin[0])


__all__ = ["COLUMNS", "CONFIG_KEYS", "PLANTS", "WorkflowConfig", "WorkflowResult",
           "load_config", "run_workflow", "simulate", "write_rows"]
