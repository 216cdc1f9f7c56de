"""Phase-segmented metrics of an ACC results CSV (``vdsim-gym acc-metrics``; the
reference's "Metrics (segmented and stable)"; docs/ACC.md states each definition).

A segment is a maximal run of rows in one mode. With ``m = round(window / dt)`` rows per
window:

- ``rise_time_90`` [s]: in the initial cruise segment (the first segment, when it is
  cruise), the first time ego_speed >= 0.9 set_speed, from the segment's start; None when
  not reached there (or the run does not start in cruise);
- ``overshoot_pct_cruise`` [%]: max(ego_speed - set_speed, 0) / set_speed over cruise rows
  only (never follow or emergency);
- ``speed_ss_error_cruise`` [m/s]: mean |set_speed - ego_speed| over the last m rows
  (``speed_ss_window``, default 5 s) of the longest cruise segment;
- ``distance_ss_error_follow`` [m]: mean |distance_error| over the last m rows
  (``follow_stable_window``, default 10 s) of the longest continuous follow segment
  (emergency rows are never in it);
- ``min_distance`` [m]: the minimum distance where one is logged.

A segment shorter than its window gives its later half instead and the check
``*_window_settled`` is false (None: no such segment); ``windows`` reports the times each
metric used. ``validation.passed`` is every check that is not None.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym._files import open_csv
from vdsim_gym.controllers.acc import MODES
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.acc_workflow import COLUMNS
from vdsim_gym.timing import nearest_ticks

_REQUIRED = ("time", "ego_speed", "acceleration_cmd", "mode")


@dataclass(frozen=True)
class ResultsTable:
    """The columns of a results CSV; NaN where a cell is blank."""

    time: np.ndarray
    ego_speed: np.ndarray
    acceleration_cmd: np.ndarray
    mode: tuple[str, ...]
    distance_error: np.ndarray
    distance: np.ndarray
    ttc: np.ndarray


def read_results(path: str | Path) -> ResultsTable:
    """Read and check a results CSV: the exact column order, numbers (blank allowed only in
    distance_error, distance, ttc) and modes; errors name the file, the row and the fix."""
    path = Path(path)
    cols: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    with open_csv(path, "the results file") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != COLUMNS:
            raise ConfigError(f"{path}: the columns must be exactly {', '.join(COLUMNS)} in "
                              f"this order; got {', '.join(header or ['nothing'])}")
        for row_no, row in enumerate(reader, start=2):
            if len(row) != len(COLUMNS):
                raise ConfigError(f"{path}, row {row_no}: {len(row)} cells, expected "
                                  f"{len(COLUMNS)} ({', '.join(COLUMNS)})")
            for name, cell in zip(COLUMNS, row, strict=True):
                cell = cell.strip()
                if name == "mode":
                    if cell not in MODES:
                        raise ConfigError(f"{path}, row {row_no}: unknown mode {cell!r}; "
                                          f"valid: {', '.join(MODES)}")
                    cols[name].append(cell)
                    continue
                if not cell:
                    if name in _REQUIRED:
                        raise ConfigError(f"{path}, row {row_no}: {name} is blank; only "
                                          "distance_error, distance and ttc may be")
                    cols[name].append(math.nan)
                    continue
                try:
                    value = float(cell)
                except ValueError:
                    raise ConfigError(f"{path}, row {row_no}: {name} = {cell!r} is not a "
                                      "number") from None
                if not math.isfinite(value):
                    raise ConfigError(f"{path}, row {row_no}: {name} = {cell!r} is not "
                                      "finite; write a blank for a missing value")
                cols[name].append(value)
    if not cols["time"]:
        raise ConfigError(f"{path}: no data rows under the header")
    columns: dict[str, Any] = {c: tuple(v) if c == "mode" else np.asarray(v, float)
                               for c, v in cols.items()}
    return ResultsTable(**columns)


def segments(mode: Sequence[str]) -> list[tuple[str, int, int]]:
    """Maximal runs of one mode: (mode, first row, one past the last row)."""
    out: list[tuple[str, int, int]] = []
    start = 0
    for i in range(1, len(mode) + 1):
        if i == len(mode) or mode[i] != mode[start]:
            out.append((mode[start], start, i))
            start = i
    return out


def _window(segs: list[tuple[str, int, int]], mode: str, rows: int
            ) -> tuple[slice | None, bool]:
    """The last ``rows`` rows of the longest segment in ``mode`` (the earliest of equal
    length), or its later half when shorter; and whether it was long enough."""
    candidates = [(b - a, -a, a, b) for m, a, b in segs if m == mode]
    if not candidates:
        return None, False
    length, _, a, b = max(candidates)
    if length >= rows:
        return slice(b - rows, b), True
    return slice(b - math.ceil(length / 2), b), False


def _span(t: np.ndarray, sl: slice | None) -> list[float] | None:
    return None if sl is None else [float(t[sl.start]), float(t[sl.stop - 1])]


def _num(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else float(x)


def segmented_metrics(table: ResultsTable, *, set_speed: float, dt: float,
                      follow_stable_window: float = 10.0, speed_ss_window: float = 5.0,
                      min_safe_distance: float = 0.0) -> dict[str, Any]:
    """The reference's metrics and validation checks as a JSON-ready dict."""
    for name, value in (("set_speed", set_speed), ("dt", dt),
                        ("follow_stable_window", follow_stable_window),
                        ("speed_ss_window", speed_ss_window)):
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"{name} must be a number > 0, got {value!r}")
    t, v = table.time, table.ego_speed
    segs = segments(table.mode)
    cruise = np.array([m == "cruise" for m in table.mode])

    rise = None
    first_mode, a0, b0 = segs[0]
    if first_mode == "cruise":
        hit = np.flatnonzero(v[a0:b0] >= 0.9 * set_speed)
        rise = float(t[a0 + hit[0]] - t[a0]) if hit.size else None
    overshoot = (float(max(np.max(v[cruise]) - set_speed, 0.0) / set_speed * 100.0)
                 if cruise.any() else None)
    s_win, s_ok = _window(segs, "cruise", max(nearest_ticks(speed_ss_window, dt)[0], 1))
    speed_ss = None if s_win is None else float(np.mean(np.abs(set_speed - v[s_win])))
    f_win, f_ok = _window(segs, "follow", max(nearest_ticks(follow_stable_window, dt)[0], 1))
    dist_ss = None if f_win is None else _num(np.nanmean(np.abs(table.distance_error[f_win])))
    logged = table.distance[~np.isnan(table.distance)]
    dmin = float(logged.min()) if logged.size else None

    steps = np.diff(t)
    lead_rows = np.array([m != "cruise" for m in table.mode])
    checks = {
        "time_starts_at_zero": bool(abs(t[0]) <= 1e-9),
        "time_monotonic": bool(np.all(steps > 0)),
        "dt_consistent": bool(np.all(np.abs(steps - dt) <= 1e-6 * max(dt, 1.0))),
        "row_count_matches_duration": len(t) == nearest_ticks(t[-1] - t[0], dt)[0] + 1,
        "distance_blank_iff_no_lead": bool(np.array_equal(~np.isnan(table.distance),
                                                          lead_rows)),
        "min_distance_above_threshold": dmin is None or dmin > min_safe_distance,
        # None: no such segment to settle in (a run without a lead has no follow window).
        "cruise_window_settled": None if s_win is None else s_ok,
        "follow_window_settled": None if f_win is None else f_ok,
    }
    return {
        "rise_time_90": rise,
        "overshoot_pct_cruise": overshoot,
        "speed_ss_error_cruise": speed_ss,
        "distance_ss_error_follow": dist_ss,
        "min_distance": dmin,
        "windows": {"initial_cruise": [float(t[a0]), float(t[b0 - 1])]
                    if first_mode == "cruise" else None,
                    "speed_ss": _span(t, s_win), "distance_ss": _span(t, f_win)},
        "mode_rows": {m: int(sum(1 for x in table.mode if x == m)) for m in MODES},
        "validation": {**checks,
                       "passed": all(c for c in checks.values() if c is not None)},
    }


__all__ = ["ResultsTable", "read_results", "segmented_metrics", "segments"]
