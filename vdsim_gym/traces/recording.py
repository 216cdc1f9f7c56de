"""Recording plants as .vdtrace files (docs/TRACES.md): the core records a row every
``decimation`` substeps (``Session`` / ``DynoSession`` ``trace_decimation``); this module
turns those rows into the trace's channels and manifest and writes them
(``vdsim_gym.traces.trace.TraceWriter``). Used by ``ClosedLoopEval(trace_path=...)``,
``Plant.start_trace`` / ``write_trace`` and ``vdsim_gym.wrappers.RecordTrace``; it sits in
the trace layer, below the plant (docs/ARCHITECTURE.md, "Layers").
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.config.vehicle import COMMAND_COLUMNS, WHEELS
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import floor_ticks, nearest_ticks_array
from vdsim_gym.traces.provenance import GIT_DIRTY, GIT_SHA, VERSION
from vdsim_gym.traces.trace import TraceWriter

MIN_RATE_HZ = 100.0  # the default decimation keeps at least this row rate
TRACE_CHANNELS = ("steer_applied",)  # optional channels recorded only when asked
TIMING_CHANNELS = (("t_sample", "s"), ("t_apply", "s"), ("c_k", "s"), ("overrun", "-"))


def default_decimation(substep_dt: float, ticks_per_period: int) -> int:
    """The largest divisor d of the control period (in substeps) with d substeps no
    longer than 1 / MIN_RATE_HZ: rows on the control grid at >= 100 Hz."""
    limit = max(1, floor_ticks(1.0 / MIN_RATE_HZ, substep_dt))
    return max(d for d in range(1, ticks_per_period + 1)
               if ticks_per_period % d == 0 and d <= limit)


def check_trace_channels(channels: Sequence[str]) -> tuple[str, ...]:
    if isinstance(channels, str):
        channels = (channels,)
    unknown = sorted(set(channels) - set(TRACE_CHANNELS))
    if unknown:
        raise ConfigError(f"unknown trace channel {unknown[0]!r}; optional channels: "
                          f"{', '.join(TRACE_CHANNELS)}")
    return tuple(channels)


def vehicle_channels(rows: np.ndarray, level: str, longitudinal: str,
                     extra: Sequence[str] = ()) -> list[tuple[str, np.ndarray, str, dict]]:
    """(name, data, unit, options) of the vehicle session's rows (TRACE_ROW_SIZE wide)."""
    nw = len(WHEELS[level])
    wheels = rows[:, 12:].reshape(len(rows), 4, 5)[:, :nw]
    lon = COMMAND_COLUMNS[longitudinal]
    lon_unit = {"u_fx": "N", "u_pedal": "-", "u_ax": "m/s^2"}[lon]
    out: list[tuple[str, np.ndarray, str, dict]] = [
        ("t", rows[:, 0], "s", {}),
        ("pose", rows[:, 1:4], "m, m, rad", {"columns": ["X", "Y", "psi"]}),
        ("v_body", rows[:, 4:6], "m/s", {"columns": ["vx", "vy"]}),
        ("yaw_rate", rows[:, 6], "rad/s", {}),
        ("a_body", rows[:, 7:9], "m/s^2", {"columns": ["ax", "ay"]}),
        ("u_steer", rows[:, 10], "rad", {}),
        (lon, rows[:, 11], lon_unit, {}),
        ("wheel_force", wheels[:, :, :3], "N",
         {"columns": [list(WHEELS[level]), ["fx", "fy", "fz"]]}),
        ("wheel_slip", wheels[:, :, 3:], "-, rad",
         {"columns": [list(WHEELS[level]), ["kappa", "alpha"]]}),
    ]
    if "steer_applied" in extra:
        out.append(("steer_applied", rows[:, 9], "rad", {"optional": True}))
    return out


def dyno_channels(rows: np.ndarray, longitudinal: str) -> list[tuple[str, np.ndarray, str, dict]]:
    """The chassis dyno's rows (DYNO_TRACE_ROW_SIZE wide)."""
    ref_unit = {"speed": "m/s", "accel": "m/s^2"}.get(longitudinal, "-")
    return [
        ("t", rows[:, 0], "s", {}),
        ("speed", rows[:, 1], "m/s", {}),
        ("accel", rows[:, 2], "m/s^2", {"description": "filtered dv/dt"}),
        ("u_reference" if longitudinal != "pedal" else "u_pedal", rows[:, 3], ref_unit, {}),
        ("pedal_fresh", rows[:, 4], "-", {"description": "the driver's command before delay"}),
        ("pedal", rows[:, 5], "-", {"description": "reaching the bench"}),
        ("throttle_brake", rows[:, 6:8], "-", {"columns": ["throttle", "brake"]}),
        ("axle_torque", rows[:, 8:10], "N m", {"columns": ["front", "rear"]}),
    ]


def timing_channels(t_rows: np.ndarray, samples: Sequence[Mapping[str, Any]],
                    substep_dt: float) -> dict[str, np.ndarray]:
    """Per trace row, the timing of the command in force (the last applied sample whose
    apply tick is at or before the row): NaN times and overrun 0 before the first."""
    rows = [s for s in samples if not s.get("stopping", False)]
    n = len(t_rows)
    out = {name: np.full(n, np.nan) for name, _ in TIMING_CHANNELS}
    out["overrun"] = np.zeros(n)
    if not rows:
        return out
    ticks = np.array([s["apply_tick"] for s in rows], dtype=np.int64)
    order = np.argsort(ticks, kind="stable")
    ticks = ticks[order]
    row_ticks = nearest_ticks_array(t_rows, substep_dt)
    idx = np.searchsorted(ticks, row_ticks, side="right") - 1
    have = idx >= 0
    src = [rows[int(i)] for i in order]
    for name, key in (("t_sample", "t_sample"), ("c_k", "c_k")):
        vals = np.array([s[key] for s in src], dtype=float)
        out[name][have] = vals[idx[have]]
    out["t_apply"][have] = ticks[idx[have]] * substep_dt
    out["overrun"][have] = np.array([float(s["overrun"]) for s in src])[idx[have]]
    return out


def geometry(vehicle: Any) -> dict[str, Any]:
    """What a renderer needs to draw the car (the vehicle's or the bench's)."""
    g: dict[str, Any] = {"wheel_radius_m": vehicle.wheel_radius, "mass_kg": vehicle.mass}
    for key, attr in (("wheelbase_m", "wheelbase"), ("track_m", "track"),
                      ("cg_to_front_m", "cg_to_front"), ("cg_to_rear_m", "cg_to_rear"),
                      ("cg_height_m", "cg_height"), ("steering_ratio", "steering_ratio"),
                      ("body_width_m", "body_width"), ("body_length_m", "body_length"),
                      ("front_overhang_m", "front_overhang"),
                      ("rear_overhang_m", "rear_overhang")):
        if hasattr(vehicle, attr):
            g[key] = getattr(vehicle, attr)
    return g


def course_overlays(course: Any) -> list[dict[str, Any]]:
    """A path env's course as overlays: the reference path and the cones."""
    out = [{"name": "reference", "kind": "path2d", "points": course.path}]
    if len(course.cones):
        out.append({"name": "cones", "kind": "path2d", "style": "points",
                    "points": course.cones})
    return out


def write_trace(path: str | Path, channels: list[tuple[str, np.ndarray, str, dict]], *,
                meta: Mapping[str, Any], physics: Any, decimation: int,
                seed: int | None = None, timing: Mapping[str, np.ndarray] | None = None,
                stopped_early: bool = False, t_stop: float | None = None,
                tags: Sequence[str] = (), overlays: Sequence[Mapping[str, Any]] = ()
                ) -> Path:
    """The trace at ``path`` (atomically): channels, the timing channels when given, the
    manifest from ``meta`` (a result's or a plant's) and ``physics``."""
    repro = {"version": VERSION, "git_sha": GIT_SHA,
             "git_dirty": GIT_DIRTY, "param_hash": meta.get("param_hash"),
             "seed": seed, "run_id": uuid.uuid4().hex, "substep_dt_s": physics.substep_dt,
             "control_period_s": physics.control_period, "decimation": decimation}
    manifest: dict[str, Any] = {
        "producer": {"name": "vdsim_gym", "version": VERSION},
        "role": "plant", "model_level": physics.level, "repro": repro,
        "geometry": geometry(physics.vehicle), "vehicle": physics.vehicle.name,
        "longitudinal": physics.longitudinal,
        "eval_mode": meta.get("eval_mode"), "latency_model": meta.get("latency_model"),
        "overrun_policy": meta.get("overrun_policy"), "stopped_early": bool(stopped_early),
        "t_stop": t_stop, "ref_point": meta.get("ref_point"), "tags": list(tags),
    }
    for key in ("env_id", "env_seed", "cpu_affinity", "watchdog", "driver"):
        if key in meta:
            manifest[key] = meta[key]
    if meta.get("accel_conversion") is not None:
        manifest["accel_conversion"] = meta["accel_conversion"]
    writer = TraceWriter(path, manifest)
    for name, data, unit, opts in channels:
        writer.add_channel(name, data, unit, **opts)
    if timing is not None:
        for name, unit in TIMING_CHANNELS:
            writer.add_channel(name, timing[name], unit, optional=True)
    for ov in overlays:
        writer.add_overlay(ov)
    return writer.write()


__all__ = ["TRACE_CHANNELS", "check_trace_channels", "course_overlays", "default_decimation",
           "dyno_channels", "geometry", "timing_channels", "vehicle_channels", "write_trace"]
