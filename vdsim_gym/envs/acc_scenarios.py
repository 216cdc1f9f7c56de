"""Lead-vehicle scenarios of VDSim-ACC-v0: the families (drawn by the env core from the
env's ``np_random``: ``AccTask::draw_start``, acc_task.hpp) and the reference workflow's
sensor CSV (time, lead_speed, distance; blanks when there is
no lead). A scenario is the lead's speed per control period (NaN: no lead) and the sensor
distance where it (re)appears; the env core integrates the positions.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vdsim_gym._files import open_csv
from vdsim_gym.errors import ConfigError

FAMILIES = ("cruise", "follow", "cut_in", "hard_brake", "stop_and_go", "lead_leaves")


@dataclass(frozen=True)
class LeadScenario:
    name: str
    lead_speed: np.ndarray  # [m/s] per control period, NaN: no lead
    distance: np.ndarray  # [m] sensor distance (used where the lead appears), NaN: none
    set_speed: float  # [m/s]
    ego_speed0: float  # [m/s]

    @property
    def periods(self) -> int:
        return len(self.lead_speed)


# Bounds of a sensor file, checked before reading it and per row: its size (a 30 s run at
# 0.1 s is 300 rows; an hour at 0.01 s about 10 MiB), the lead's speed and distance.
MAX_SENSOR_CSV_BYTES = 32 * 2**20
MAX_LEAD_SPEED = 150.0  # [m/s]
MAX_LEAD_DISTANCE = 10_000.0  # [m]


def load_sensor_csv(path: str | Path, *, dt: float, set_speed: float,
                    ego_speed0: float | None = None) -> LeadScenario:
    """The reference workflow's sensor file: columns ``time``, ``lead_speed``,
    ``distance`` (others ignored), blanks where there is no lead, time starting at 0,
    monotonic and regular at ``dt``. Errors name the file, the row and the cause."""
    path = Path(path)
    with open_csv(path, "the sensor file", MAX_SENSOR_CSV_BYTES) as fh:
        reader = csv.DictReader(fh)
        try:
            header = reader.fieldnames or []
        except csv.Error as exc:
            raise ConfigError(f"{path}: the header is not a readable CSV row ({exc})") from None
        missing = [c for c in ("time", "lead_speed", "distance") if c not in header]
        if missing:
            raise ConfigError(f"{path}: missing column(s) {', '.join(missing)}; the sensor "
                              "file needs time, lead_speed, distance")
        times, speed, dist = [], [], []
        rows = enumerate(reader, start=2)
        while True:
            try:
                row_no, row = next(rows)
            except StopIteration:
                break
            except csv.Error as exc:  # a cell beyond the csv module's field limit, NUL
                raise ConfigError(f"{path}, after line {reader.line_num}: not a readable CSV "
                                  f"row ({exc})") from None
            try:
                times.append(float(row["time"]))
                speed.append(float(row["lead_speed"]) if row["lead_speed"].strip() else math.nan)
                dist.append(float(row["distance"]) if row["distance"].strip() else math.nan)
            except (ValueError, AttributeError):
                raise ConfigError(f"{path}, row {row_no}: non-numeric cell in "
                                  f"{str(dict(row))[:200]}")\
                    from None
            if math.isnan(speed[-1]) != math.isnan(dist[-1]):
                raise ConfigError(f"{path}, row {row_no}: lead_speed and distance must be both "
                                  "given or both blank")
            if not math.isfinite(times[-1]) or math.isinf(speed[-1]) or math.isinf(dist[-1]):
                raise ConfigError(f"{path}, row {row_no}: a cell is not finite in "
                                  f"{str(dict(row))[:200]}")
            if not math.isnan(speed[-1]) and not (
                    -MAX_LEAD_SPEED <= speed[-1] <= MAX_LEAD_SPEED
                    and 0.0 <= dist[-1] <= MAX_LEAD_DISTANCE):
                raise ConfigError(
                    f"{path}, row {row_no}: lead_speed {speed[-1]!r} m/s or distance "
                    f"{dist[-1]!r} m outside [-{MAX_LEAD_SPEED:g}, {MAX_LEAD_SPEED:g}] m/s, "
                    f"[0, {MAX_LEAD_DISTANCE:g}] m (SI units: m/s and m)")
    if len(times) < 2:
        raise ConfigError(f"{path}: needs at least two rows")
    t = np.asarray(times)
    steps = np.diff(t)
    if np.any(steps <= 0):
        bad = int(np.flatnonzero(steps <= 0)[0]) + 3
        raise ConfigError(f"{path}, row {bad}: time is not increasing")
    if not np.allclose(steps, dt, rtol=0, atol=1e-6 * max(dt, 1.0)) or abs(t[0]) > 1e-9:
        bad = int(np.flatnonzero(~np.isclose(steps, dt, rtol=0, atol=1e-6))[0]) + 3 \
            if not np.allclose(steps, dt, rtol=0, atol=1e-6) else 2
        raise ConfigError(f"{path}, row {bad}: time must start at 0 and step by the control "
                          f"period {dt:g} s (irregular or offset time)")
    v_lead = np.asarray(speed)
    v0 = float(ego_speed0) if ego_speed0 is not None else float(
        next((v for v in v_lead if not math.isnan(v)), set_speed))
    return LeadScenario(f"csv:{path.name}", v_lead, np.asarray(dist), float(set_speed), v0)


__all__ = ["FAMILIES", "LeadScenario", "load_sensor_csv"]
