"""Drive cycles for VDSim-Dyno-v0: YAML segment lists shipped in envs/cycles and measured
cycles from CSV (time, speed); a cycle is resampled to the control period by linear
interpolation."""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vdsim_gym._data import cycles_dir
from vdsim_gym._files import open_csv, read_yaml
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.timing import floor_ticks

MAX_CYCLE_S = 36_000.0  # [s] ten hours: longer is a unit mistake
MAX_SPEED = 100.0  # [m/s]


@dataclass(frozen=True)
class DriveCycle:
    name: str
    time: np.ndarray  # [s], from 0, increasing
    speed: np.ndarray  # [m/s] at those times (linear in between)

    @property
    def duration(self) -> float:
        return float(self.time[-1])

    def resample(self, dt: float) -> np.ndarray:
        """Speed at 0, dt, 2 dt, ... up to the duration (linear interpolation)."""
        n = floor_ticks(self.duration, dt) + 1
        return np.interp(np.arange(n) * dt, self.time, self.speed)


def available_cycles() -> list[str]:
    return sorted(p.stem for p in cycles_dir().glob("*.yaml"))


def _check_speeds(speed: np.ndarray, where: str) -> None:
    bad = np.flatnonzero(~np.isfinite(speed) | (speed < 0) | (speed > MAX_SPEED))
    if bad.size:
        raise ConfigError(f"{where}: speed {speed[bad[0]]!r} at point {bad[0]} is outside "
                          f"[0, {MAX_SPEED:g}] m/s")


def from_segments(name: str, segments: list, start_speed: float = 0.0,
                  where: str = "cycle") -> DriveCycle:
    """Piecewise-linear speed: each segment [duration s, end speed m/s]."""
    if not isinstance(segments, list) or not segments:
        raise ConfigError(f"{where}: 'segments' must be a non-empty list of "
                          "[duration s, end speed m/s] pairs")
    t, v = [0.0], [float(start_speed)]
    for i, seg in enumerate(segments):
        if not (isinstance(seg, (list, tuple)) and len(seg) == 2 and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in seg)):
            raise ConfigError(f"{where}: segment {i} = {seg!r} must be [duration s, end "
                              "speed m/s]")
        duration, end = float(seg[0]), float(seg[1])
        if not (math.isfinite(duration) and duration > 0):
            raise ConfigError(f"{where}: segment {i} has duration {seg[0]!r}; it must be > 0 s")
        t.append(t[-1] + duration)
        v.append(end)
    time, speed = np.asarray(t), np.asarray(v)
    _check_speeds(speed, where)
    if time[-1] > MAX_CYCLE_S:
        raise ConfigError(f"{where}: {time[-1]:g} s is longer than {MAX_CYCLE_S:g} s")
    return DriveCycle(name, time, speed)


def load_cycle(cycle: str | Path | DriveCycle) -> DriveCycle:
    """A cycle by name (envs/cycles/<name>.yaml), a .yaml/.yml segment file, a .csv file
    with columns ``time`` and ``speed`` (others ignored; time from 0, increasing), or a
    DriveCycle. Errors name the file, the row or key, and the fix."""
    if isinstance(cycle, DriveCycle):
        return cycle
    if not isinstance(cycle, (str, Path)):
        raise ConfigError(f"cycle must be a name ({', '.join(available_cycles())}), a .yaml "
                          f"or .csv path or a DriveCycle, got {cycle!r}")
    path = Path(cycle)
    if path.suffix.lower() == ".csv":
        return _load_csv(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        path = cycles_dir() / f"{cycle}.yaml"
        if not path.is_file():
            raise ConfigError(f"unknown cycle {str(cycle)!r}; available: "
                              f"{', '.join(available_cycles())}, or a .yaml/.csv path")
    data = read_yaml(path, "the cycle file")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected keys name, start_speed, segments")
    unknown = sorted(set(data) - {"name", "start_speed", "segments"})
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; valid: name, start_speed, "
                          "segments")
    start = data.get("start_speed", 0.0)
    if isinstance(start, bool) or not isinstance(start, (int, float)):
        raise ConfigError(f"{path}: 'start_speed' must be a number [m/s], got {start!r}")
    return from_segments(str(data.get("name", path.stem)), data.get("segments", []), start,
                         str(path))


def _load_csv(path: Path) -> DriveCycle:
    with open_csv(path, "the cycle file") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in ("time", "speed") if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}; a measured "
                              "cycle needs time [s] and speed [m/s]")
        t, v = [], []
        for row_no, row in enumerate(reader, start=2):
            try:
                t.append(float(row["time"]))
                v.append(float(row["speed"]))
            except (TypeError, ValueError):
                raise ConfigError(f"{path}, row {row_no}: time and speed must be numbers, got "
                                  f"{row['time']!r}, {row['speed']!r}") from None
    if len(t) < 2:
        raise ConfigError(f"{path}: needs at least two rows")
    time, speed = np.asarray(t), np.asarray(v)
    if abs(time[0]) > 1e-9:
        raise ConfigError(f"{path}, row 2: time must start at 0, got {time[0]!r}")
    steps = np.diff(time)
    if np.any(~(steps > 0)):
        raise ConfigError(f"{path}, row {int(np.flatnonzero(~(steps > 0))[0]) + 3}: time is "
                          "not increasing")
    _check_speeds(speed, str(path))
    if time[-1] > MAX_CYCLE_S:
        raise ConfigError(f"{path}: {time[-1]:g} s is longer than {MAX_CYCLE_S:g} s")
    return DriveCycle(path.stem, time, speed)


__all__ = ["DriveCycle", "available_cycles", "from_segments", "load_cycle"]
