"""Drive cycles for VDSim-Dyno-v0: YAML files shipped in envs/cycles (hand-made segment
lists, and the standard cycles a dyno lab runs: WLTC classes 1, 2, 3a and 3b from UN GTR
No. 15, the NEDC from UNECE Regulation No. 83, each with its phases and source), the
user's own YAML or CSV (time, speed); a cycle is resampled to the control period by
linear interpolation, as the regulations interpolate between their points."""

from __future__ import annotations

import csv
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vdsim_gym._data import cycles_dir
from vdsim_gym._files import open_csv, read_yaml
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import floor_ticks

MAX_CYCLE_S = 36_000.0  # [s] ten hours: longer is a unit mistake
MAX_SPEED = 100.0  # [m/s]


KMH = 1.0 / 3.6  # [m/s] per km/h
# The speed-trace tolerance of UN GTR No. 15 (Annex 6): 2 km/h above the highest and below
# the lowest speed of the cycle within 1 s of each time.
TRACE_TOLERANCE_KMH = 2.0
TRACE_TOLERANCE_S = 1.0
UNITS = {"m/s": 1.0, "km/h": KMH}


@dataclass(frozen=True)
class DriveCycle:
    name: str
    time: np.ndarray  # [s], from 0, increasing
    speed: np.ndarray  # [m/s] at those times (linear in between)
    # (name, start s, end s) in order, covering the cycle: a standard cycle's phases
    # (WLTC low, medium, high, extra_high; NEDC urban, extra_urban); () for none
    phases: tuple[tuple[str, float, float], ...] = ()
    source: str = ""  # where the speeds come from (a regulation, a measurement)

    def tolerance_band(self, dt: float) -> tuple[np.ndarray, np.ndarray]:
        """The speed-trace tolerance at 0, dt, 2 dt, ... (``resample``'s grid): lower and
        upper [m/s], TRACE_TOLERANCE_KMH below the lowest and above the highest speed of
        the cycle within TRACE_TOLERANCE_S of each time (GTR No. 15's band), taken over the
        grid (exact when the cycle's points are on it: the standard cycles' whole seconds
        with a control period that divides 1 s)."""
        v = self.resample(dt)
        w = max(1, floor_ticks(TRACE_TOLERANCE_S, dt))  # grid points either side
        padded = np.pad(v, w, mode="edge")  # the window clipped to the cycle
        windows = np.lib.stride_tricks.sliding_window_view(padded, 2 * w + 1)
        tol = TRACE_TOLERANCE_KMH * KMH
        return windows.min(axis=1) - tol, windows.max(axis=1) + tol

    def phase_indices(self, dt: float) -> np.ndarray:
        """The phase (its index in ``phases``; -1 without phases) at 0, dt, 2 dt, ...: the
        one whose [start, end) holds the time, the last one its end too."""
        grid = np.arange(floor_ticks(self.duration, dt) + 1) * dt
        if not self.phases:
            return np.full(grid.size, -1, dtype=np.int64)
        starts = np.array([p[1] for p in self.phases])
        return np.clip(np.searchsorted(starts, grid + 1e-9, "right") - 1, 0,
                       len(self.phases) - 1).astype(np.int64)

    def distance(self, start: float = 0.0, end: float | None = None) -> float:
        """The distance [m] driven at the cycle's speed from ``start`` to ``end`` [s] (the
        linear interpolation's exact integral)."""
        end = self.duration if end is None else end
        inside = (self.time > start) & (self.time < end)
        t = np.concatenate(([start], self.time[inside], [end]))
        v = np.interp(t, self.time, self.speed)
        return float(np.sum(np.diff(t) * (v[1:] + v[:-1]) / 2.0))

    def max_speed(self, start: float = 0.0, end: float | None = None) -> float:
        """The highest speed [m/s] from ``start`` to ``end`` [s]."""
        end = self.duration if end is None else end
        inside = (self.time >= start) & (self.time <= end)
        ends = np.interp([start, end], self.time, self.speed)
        return float(max(np.max(self.speed[inside], initial=0.0), *ends))

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
        raise ConfigError(f"{path}: expected a mapping with name and segments, speeds or "
                          "points")
    return _from_yaml(data, path)


YAML_KEYS = ("name", "source", "unit", "start_speed", "segments", "dt", "speeds", "points",
             "phases")


def _from_yaml(data: dict, path: Path) -> DriveCycle:
    """A cycle file: ``segments`` ([duration s, end speed] from ``start_speed``),
    ``speeds`` (one every ``dt`` seconds from 0) or ``points`` ([time s, speed]), in
    ``unit`` (m/s or km/h; default m/s); optional ``phases`` ([name, start s, end s]) and
    ``source``."""
    unknown = sorted(set(data) - set(YAML_KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; valid: {', '.join(YAML_KEYS)}")
    shapes = [k for k in ("segments", "speeds", "points") if k in data]
    if len(shapes) != 1:
        raise ConfigError(f"{path}: give the speeds one way: segments, speeds (with dt) or "
                          f"points; got {', '.join(shapes) or 'none'}")
    unit = data.get("unit", "m/s")
    if unit not in UNITS:
        raise ConfigError(f"{path}: unit {unit!r}; valid: {', '.join(UNITS)}")
    scale, name, where = UNITS[unit], str(data.get("name", path.stem)), str(path)
    source = data.get("source", "")
    if not isinstance(source, str):
        raise ConfigError(f"{path}: 'source' must be text, got {source!r}")
    if shapes == ["segments"]:
        start = data.get("start_speed", 0.0)
        if isinstance(start, bool) or not isinstance(start, (int, float)):
            raise ConfigError(f"{path}: 'start_speed' must be a number [{unit}], got {start!r}")
        segments = data["segments"]
        if scale != 1.0 and isinstance(segments, list):
            segments = [[s[0], _number(s[1], where, "segment") * scale]
                        if isinstance(s, (list, tuple)) and len(s) == 2 else s
                        for s in segments]
        cycle = from_segments(name, segments, start * scale, where)
        time, speed = cycle.time, cycle.speed
    elif shapes == ["speeds"]:
        dt = data.get("dt")
        if isinstance(dt, bool) or not isinstance(dt, (int, float)) or not dt > 0:
            raise ConfigError(f"{path}: 'speeds' needs 'dt', the seconds between them (> 0), "
                              f"got {dt!r}")
        speeds = data["speeds"]
        if not isinstance(speeds, list) or len(speeds) < 2:
            raise ConfigError(f"{path}: 'speeds' must be a list of at least two numbers")
        speed = np.array([_number(v, where, "speeds") for v in speeds]) * scale
        time = np.arange(len(speed)) * float(dt)
    else:
        points = data["points"]
        if not isinstance(points, list) or len(points) < 2 or not all(
                isinstance(p, (list, tuple)) and len(p) == 2 for p in points):
            raise ConfigError(f"{path}: 'points' must be a list of at least two [time s, "
                              f"speed {unit}] pairs")
        time = np.array([_number(p[0], where, "points") for p in points])
        speed = np.array([_number(p[1], where, "points") for p in points]) * scale
    cycle = _checked(name, time, speed, where)
    return DriveCycle(name, cycle.time, cycle.speed, _phases(data.get("phases", []),
                                                             cycle.duration, where), source)


def _number(value: object, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{where}: {key} holds {value!r}, not a number")
    return float(value)


def _checked(name: str, time: np.ndarray, speed: np.ndarray, where: str,
             first_row: int | None = None) -> DriveCycle:
    """A cycle's points checked: time from 0, increasing, within MAX_CYCLE_S; speeds in
    range. Errors name the point (a CSV's row: ``first_row`` is the first point's)."""
    def at(i: int) -> str:
        return f"point {i}" if first_row is None else f"row {i + first_row}"

    if abs(time[0]) > 1e-9:
        raise ConfigError(f"{where}, {at(0)}: time must start at 0, got {time[0]!r}")
    steps = np.diff(time)
    if np.any(~(steps > 0)):
        raise ConfigError(f"{where}, {at(int(np.flatnonzero(~(steps > 0))[0]) + 1)}: time "
                          "is not increasing")
    _check_speeds(speed, where)
    if time[-1] > MAX_CYCLE_S:
        raise ConfigError(f"{where}: {time[-1]:g} s is longer than {MAX_CYCLE_S:g} s")
    return DriveCycle(name, time, speed)


def _phases(raw: object, duration: float, where: str) -> tuple[tuple[str, float, float], ...]:
    """[name, start s, end s] in order, each starting where the previous ended, from 0 to
    the cycle's end."""
    if not isinstance(raw, list) or not all(
            isinstance(p, (list, tuple)) and len(p) == 3 and isinstance(p[0], str)
            for p in raw):
        raise ConfigError(f"{where}: 'phases' must be a list of [name, start s, end s]")
    phases = tuple((p[0], _number(p[1], where, "phases"), _number(p[2], where, "phases"))
                   for p in raw)
    if phases:
        edges = [phases[0][1]] + [p[2] for p in phases]
        joined = all(abs(a[2] - b[1]) < 1e-9 for a, b in itertools.pairwise(phases))
        if abs(edges[0]) > 1e-9 or abs(edges[-1] - duration) > 1e-9 or not joined or any(
                not p[2] > p[1] for p in phases):
            raise ConfigError(f"{where}: the phases must run from 0 to the cycle's end "
                              f"({duration:g} s), each from where the previous ended")
    return phases


def _load_csv(path: Path) -> DriveCycle:
    """A measured cycle: columns ``time`` [s] and ``speed`` [m/s] or ``speed_kmh``."""
    with open_csv(path, "the cycle file") as fh:
        reader = csv.DictReader(fh)
        names = reader.fieldnames or []
        column = "speed" if "speed" in names else "speed_kmh" if "speed_kmh" in names \
            else None
        if "time" not in names or column is None:
            raise ConfigError(f"{path}: needs columns time [s] and speed [m/s] (or "
                              f"speed_kmh [km/h]); found {', '.join(names) or 'none'}")
        t, v = [], []
        for row_no, row in enumerate(reader, start=2):
            try:
                t.append(float(row["time"]))
                v.append(float(row[column]))
            except (TypeError, ValueError):
                raise ConfigError(f"{path}, row {row_no}: time and {column} must be numbers, "
                                  f"got {row['time']!r}, {row[column]!r}") from None
    if len(t) < 2:
        raise ConfigError(f"{path}: needs at least two rows")
    scale = KMH if column == "speed_kmh" else 1.0
    return _checked(path.stem, np.asarray(t), np.asarray(v) * scale, str(path), first_row=2)


__all__ = ["KMH", "DriveCycle", "available_cycles", "from_segments", "load_cycle"]
