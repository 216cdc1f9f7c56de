"""Course geometry for the path-tracking environments.

Three double-lane-change presets (``dlc_course``), random smooth paths with a speed
profile (``random_course``) and the scenario YAML loader (``load_scenario``). Every
function returns a :class:`~vdsim_gym.envs.course.Course`; docs/COURSES.md gives the
figures, what was checked against which published description, and where we differ
from the standards.

Frame: x forward along the layout, y to the left (ISO 8855). The first cone gate of
the ISO layouts (start of section 1) and the start of the first transition of the
smooth lane change sit at x = 0; the path starts at x = -lead_in.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym._data import scenarios_dir
from vdsim_gym._files import load_yaml, read_user_text
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.envs.course import Course, Gate
from vdsim_gym.envs.reference_line import REFERENCES, Lane, LateralFn, smooth_lateral
from vdsim_gym.errors import ConfigError

COURSE_PRESETS: tuple[str, ...] = ("iso3888_1", "iso3888_2", "lane_change_3p5_30")

ISO_CORRIDOR_HALF_WIDTH = 4.0  # [m] wide enough to contain every ISO lane; cones decide
LANE_CHANGE_CORRIDOR_HALF_WIDTH = 3.0  # [m] no cones on the smooth lane change
LANE_CHANGE_OFFSET = 3.5  # [m] lateral move of the smooth lane change (left)
LANE_CHANGE_LENGTH = 30.0  # [m] longitudinal length of each transition
LANE_CHANGE_HOLD = 25.0  # [m] hold at 3.5 m; chosen equal to ISO 3888-1 section 3
MAX_CONE_SPACING = 4.0  # [m] intermediate cones: equal spacing, at most this
RANDOM_CORRIDOR_HALF_WIDTH = 3.0  # [m]


DEFAULT_CONE_RADIUS = _core.TaskParams().cone_radius  # [m] one source: the C++ task

SCENARIO_KEYS = ("preset", "speed", "lead_in", "run_out", "spacing", "vehicle_width")


def _smoothstep5(t: np.ndarray) -> np.ndarray:
    """Quintic 0 -> 1 on [0, 1] with zero slope and zero second derivative at both ends.

    Zero y' and y'' at the joints make the path C2, so curvature is continuous where a
    transition meets a straight lane (a cubic would jump the curvature there).
    """
    t = np.clip(t, 0.0, 1.0)
    return t**3 * (10.0 - 15.0 * t + 6.0 * t**2)


def _half_cosine(t: np.ndarray) -> np.ndarray:
    """Half-cosine 0 -> 1 on [0, 1]: zero slope at both ends, peak y'' = (pi^2 / 2) h / L^2.

    Among smooth blends with zero lateral velocity at both ends it needs the least lateral
    acceleration (4.93 h / L^2 v^2 against the quintic's 5.77), at the price of a curvature
    step at the joints. The lane change uses it: 3.5 m over 30 m at 20 m/s needs 7.7 m/s^2
    with it and 9.0 m/s^2 with the quintic, above the generic sedan's L2 limit (~8.4).
    """
    t = np.clip(t, 0.0, 1.0)
    return 0.5 - 0.5 * np.cos(np.pi * t)


def _lateral(x: np.ndarray, lanes: list[Lane], blend: LateralFn = _smoothstep5) -> np.ndarray:
    """y(x) of the reference: lane centres joined by ``blend`` across each gap."""
    y = np.full_like(x, lanes[0].y, dtype=float)
    for a, b in zip(lanes[:-1], lanes[1:], strict=True):
        x_start = a.x0 + a.length
        y += (b.y - a.y) * blend((x - x_start) / (b.x0 - x_start))
    return y


def _sample_piece(x0: float, x1: float, lateral: LateralFn, spacing: float) -> np.ndarray:
    """Points of y(x) on [x0, x1], evenly spaced in arc length, ends included exactly.

    Arc-length spacing (not x spacing) keeps the point density even through the
    transitions; every point lies exactly on y(x).
    """
    fine = np.linspace(x0, x1, int(math.ceil((x1 - x0) / (spacing / 20.0))) + 1)
    y_fine = lateral(fine)
    s_fine = np.concatenate(([0.0], np.cumsum(np.hypot(np.diff(fine), np.diff(y_fine)))))
    n = max(int(round(s_fine[-1] / spacing)), 1) + 1
    x = np.interp(np.linspace(0.0, s_fine[-1], n), s_fine, fine)
    x[0], x[-1] = x0, x1
    return np.column_stack((x, lateral(x)))


def _sample_path(
    x0: float, x1: float, lanes: list[Lane], spacing: float, lateral: LateralFn | None = None
) -> np.ndarray:
    """The path on [x0, x1], sampled piece by piece between lane starts and ends.

    Lane ends are points of the path, so the polyline runs exactly through every gate
    centre (a straight lane is a straight polyline); each piece rounds its own point
    count, so the spacing differs from `spacing` by well under 1 %. `lateral` is y(x);
    None: the lane-centre line (for the smooth line, lane ends are simply sample points).
    """
    if lateral is None:
        def lateral(x: np.ndarray) -> np.ndarray:
            return _lateral(x, lanes)

    knots = sorted({x0, x1, *(v for ln in lanes for v in (ln.x0, ln.x0 + ln.length))})
    knots = [k for k in knots if x0 <= k <= x1]
    spans = zip(knots[:-1], knots[1:], strict=True)
    pieces = [_sample_piece(a, b, lateral, spacing) for a, b in spans if b - a > 1e-9]
    return np.concatenate([pieces[0]] + [p[1:] for p in pieces[1:]])


def _cones_and_gates(lanes: list[Lane], cone_radius: float
                     ) -> tuple[np.ndarray, tuple[Gate, ...]]:
    """Cone pairs just outside both lane limits at each lane's start, end and every <= 4 m.

    As in the standards, the lane limits are tangent to the cone bases from outside, so
    cone centres sit ``cone_radius`` beyond them and the clear width is the lane width.
    """
    cones: list[tuple[float, float]] = []
    gates: list[Gate] = []
    for lane in lanes:
        n = int(math.ceil(lane.length / MAX_CONE_SPACING - 1e-9))
        for x in np.linspace(lane.x0, lane.x0 + lane.length, n + 1):
            left, right = lane.y + lane.width / 2.0, lane.y - lane.width / 2.0
            cones += [(float(x), left + cone_radius), (float(x), right - cone_radius)]
            gates.append(Gate(x=float(x), y_left=left, y_right=right, section=lane.section))
    return np.asarray(cones, dtype=float).reshape(-1, 2), tuple(gates)


def _iso3888_1_lanes(b: float) -> list[Lane]:
    """ISO 3888-1 lanes (sections 1, 3, 5; 2 and 4 are uncone transitions 30 m and 25 m).

    Widths 1.1b+0.25, 1.2b+0.25, 1.3b+0.25 [m]. Lane 3 centre at +3.5 m from lane 1
    centre (our convention; the standard's "lane offset 3.5 m" may be drawn between lane
    edges, see docs/COURSES.md). Lane 5 right edge on lane 1's right edge (the exit
    widens to the left), as Project Chrono's ISO 3888 helper lays it out.
    """
    w1, w3, w5 = 1.1 * b + 0.25, 1.2 * b + 0.25, 1.3 * b + 0.25
    return [
        Lane(1, 0.0, 15.0, w1, 0.0),
        Lane(3, 45.0, 25.0, w3, 3.5),
        Lane(5, 95.0, 15.0, w5, (w5 - w1) / 2.0),
    ]


def _iso3888_2_lanes(b: float) -> list[Lane]:
    """ISO 3888-2 lanes: sections 12 / 13.5 / 11 / 12.5 / 12 m, total 61 m.

    Widths 1.1b+0.25, b+1 and 1.3b+0.25 but at least 3 m [m]. Lane 3 lies 1 m left of
    lane 1 (gap between lane 1's left edge and lane 3's right edge), so its centre is
    w1/2 + 1 + w3/2 from lane 1's centre. Lane 5 right edge on lane 1's right edge.
    """
    w1, w3, w5 = 1.1 * b + 0.25, b + 1.0, max(1.3 * b + 0.25, 3.0)
    return [
        Lane(1, 0.0, 12.0, w1, 0.0),
        Lane(3, 25.5, 11.0, w3, w1 / 2.0 + 1.0 + w3 / 2.0),
        Lane(5, 49.0, 12.0, w5, (w5 - w1) / 2.0),
    ]


def _lane_change_lanes() -> list[Lane]:
    """Smooth 3.5 m over 30 m, hold, back over 30 m; width 0 lanes carry no cones."""
    hold_x0 = LANE_CHANGE_LENGTH
    back_x0 = hold_x0 + LANE_CHANGE_HOLD + LANE_CHANGE_LENGTH
    return [
        Lane(1, -LANE_CHANGE_LENGTH, LANE_CHANGE_LENGTH, 0.0, 0.0),
        Lane(2, hold_x0, LANE_CHANGE_HOLD, 0.0, LANE_CHANGE_OFFSET),
        Lane(3, back_x0, 0.0, 0.0, 0.0),
    ]


def _check_positive(**values: float) -> None:
    for name, v in values.items():
        if not (is_real(v) and math.isfinite(v) and v > 0):
            raise ConfigError(f"{name} must be a positive finite number, got {v!r}")


def _check_non_negative(**values: float) -> None:
    for name, v in values.items():
        if not (is_real(v) and math.isfinite(v) and v >= 0):
            raise ConfigError(f"{name} must be a non-negative finite number, got {v!r}")


def dlc_course(
    preset: str = "iso3888_1",
    *,
    vehicle_width: float | None = None,
    speed: float = 20.0,
    lead_in: float = 30.0,
    run_out: float = 40.0,
    spacing: float = 0.25,
    reference: str = "smooth",
    margin: float = 0.05,
    body_extent: tuple[float, float] | None = None,
    cone_radius: float = DEFAULT_CONE_RADIUS,
) -> Course:
    """A double-lane-change course: reference path, constant speed, cones and gates.

    Args:
        preset: one of ``COURSE_PRESETS``:

            - ``"iso3888_1"``: ISO 3888-1 double lane change. Sections 15 / 30 / 25 / 25 /
              15 m; lane widths 1.1b+0.25 (section 1), 1.2b+0.25 (3), 1.3b+0.25 (5);
              lane 3 centre 3.5 m left of lane 1 centre (the standard's offset may be
              measured between lane edges: not confirmed, see docs/COURSES.md). The
              standard appears to have a section 6 (15 m, width as section 5; not
              confirmed), not coned here: ``run_out`` continues on the exit lane.
            - ``"iso3888_2"``: ISO 3888-2 obstacle avoidance. Sections 12 / 13.5 / 11 /
              12.5 / 12 m (61 m, as the standard states); widths 1.1b+0.25, b+1,
              max(1.3b+0.25, 3) (the 3 m minimum as in Project Chrono; not confirmed
              from the standard); lane 3 starts 1 m left of lane 1's left edge, so its
              centre is at 1.05b + 1.625 m (3.515 m for b = 1.8).
            - ``"lane_change_3p5_30"``: 3.5 m left over 30 m, 25 m hold, back over 30 m
              (reference example); no cones, no gates.

            In both ISO layouts the exit lane's right edge continues lane 1's right edge,
            so the exit centre line is at (w5 - w1) / 2.
            Cones stand just outside the lane limits, their bases tangent to them as in
            the standards (cone centres ``cone_radius`` beyond the limits; a Gate gives
            the limits), at each lane's start, end and equally spaced at most 4 m apart.
            Transition sections carry no cones.
        vehicle_width: b [m]; None takes ``body_width`` of the generic sedan vehicle file.
        speed: constant reference speed and start speed [m/s].
        lead_in: straight before the first gate (x = 0) [m].
        run_out: straight after the last gate [m].
        spacing: arc-length spacing of the path points [m].
        reference: reference line of the ISO presets, one of ``REFERENCES``:

            - ``"smooth"`` (default): the least-curvature line that keeps the vehicle
              body inside every coned lane with ``margin`` to spare (a driver's line
              cutting the transitions; C1, curvature continuous except at the first and
              last gate). See docs/COURSES.md for the body model and the figures.
            - ``"centre"``: lane centres with quintic (C2) blends spanning each
              transition section exactly, so it passes through every gate centre.

            ``lane_change_3p5_30`` ignores it (its path is smooth and feasible as is).
        margin: lateral clearance between the body and the lane limits kept by the
            smooth line [m]; ValueError if a lane is narrower than b + 2 margin.
        body_extent: (front, rear) distance of the bumpers ahead of and behind the path
            point [m], for the smooth line; None takes the generic sedan's (CG to axle
            plus overhang: 2.15, 2.55).
        cone_radius: cone base radius [m]; defaults to the C++ task's cone radius, which
            is what the env's hit test uses.
    """
    if preset not in COURSE_PRESETS:
        raise ConfigError(f"unknown course preset {preset!r}; valid presets: {COURSE_PRESETS}")
    if vehicle_width is None:
        vehicle_width = load_vehicle("generic_sedan").body_width
    if reference not in REFERENCES:
        raise ConfigError(f"unknown reference {reference!r}; valid references: {REFERENCES}")
    _check_positive(vehicle_width=vehicle_width, speed=speed, spacing=spacing)
    _check_non_negative(lead_in=lead_in, run_out=run_out, margin=margin,
                        cone_radius=cone_radius)
    if body_extent is None:
        sedan = load_vehicle("generic_sedan")
        body_extent = (sedan.cg_to_front + sedan.front_overhang,
                       sedan.cg_to_rear + sedan.rear_overhang)
    _check_non_negative(body_front=body_extent[0], body_rear=body_extent[1])
    if preset == "iso3888_1":
        lanes = _iso3888_1_lanes(vehicle_width)
    elif preset == "iso3888_2":
        lanes = _iso3888_2_lanes(vehicle_width)
    else:
        lanes = _lane_change_lanes()
    x_first = lanes[0].x0 if preset != "lane_change_3p5_30" else 0.0
    x_last = lanes[-1].x0 + lanes[-1].length
    is_iso = preset != "lane_change_3p5_30"
    lateral = None
    if is_iso and reference == "smooth":
        lateral = smooth_lateral(lanes, vehicle_width / 2.0, body_extent, margin, spacing)
    elif not is_iso:
        def lateral(x: np.ndarray) -> np.ndarray:
            return _lateral(x, lanes, _half_cosine)
    path = _sample_path(x_first - lead_in, x_last + run_out, lanes, spacing, lateral)
    cones, gates = _cones_and_gates(lanes, cone_radius) if is_iso else (np.zeros((0, 2)), ())
    return Course(
        name=preset,
        path=path,
        speed=np.full(len(path), float(speed)),
        cones=cones,
        gates=gates,
        corridor_half_width=ISO_CORRIDOR_HALF_WIDTH if is_iso else LANE_CHANGE_CORRIDOR_HALF_WIDTH,
        start_speed=float(speed),
    )


def _limit_long_accel(v: np.ndarray, ds: float, accel: float) -> np.ndarray:
    """Lower `v` so that |v dv/ds| <= accel: brake before curves, accelerate out of them.

    A backward pass (braking) v[i] = min(v[i], sqrt(v[i+1]^2 + 2 accel ds)), then the same
    forward (accelerating). Only ever lowers speeds, towards values that already occur in
    `v`, so both the lateral cap and the lower end of the speed range still hold
    afterwards. The loops run in C++; the plain Python loops in tests/envs/test_courses.py
    are their reference, bit for bit.
    """
    return _core.limit_long_accel(v, float(ds), float(accel))


def random_course_spec(*, length: float = 300.0, spacing: float = 0.5,
                       max_curvature: float = 0.05,
                       speed_range: tuple[float, float] = (8.0, 25.0),
                       max_lat_accel: float = 4.0) -> tuple[int, float, float, float, float,
                                                            float]:
    """A random course's parameters, checked, as the core draws it (``_core.random_course``
    and the path cores' ``set_random_course``): (points, length, curvature bound, v_lo,
    v_hi, max_lat_accel). A ConfigError names a bad one."""
    _check_positive(length=length, spacing=spacing, max_curvature=max_curvature,
                    max_lat_accel=max_lat_accel)
    v_lo, v_hi = (float(v) for v in speed_range)
    _check_positive(speed_min=v_lo)
    if not v_hi >= v_lo:
        raise ConfigError(f"speed_range must be (low, high) with low <= high, got {speed_range}")
    n = max(int(round(length / spacing)), 1) + 1
    k_bound = min(max_curvature, max_lat_accel / v_lo**2)
    return n, float(length), float(k_bound), v_lo, v_hi, float(max_lat_accel)


def random_course_error(spec: tuple[int, float, float, float, float, float],
                        spacing: float) -> ConfigError:
    """The error of a course whose path or speed came out non-finite."""
    n, length, k_bound, v_lo, v_hi, max_lat_accel = spec
    return ConfigError(
        f"random_course(length={length!r}, spacing={spacing!r}, speed_range="
        f"{(v_lo, v_hi)!r}, curvature bound={k_bound!r}, max_lat_accel={max_lat_accel!r}) "
        "gives a non-finite path or speed profile; use a longer course and finite bounds")


def random_course(
    rng: np.random.Generator,
    *,
    length: float = 300.0,
    spacing: float = 0.5,
    max_curvature: float = 0.05,
    speed_range: tuple[float, float] = (8.0, 25.0),
    max_lat_accel: float = 4.0,
) -> Course:
    """A random smooth path with a random smooth speed profile, for training.

    Curvature is a sum of four random sinusoids over arc length (wavelengths 40-200 m,
    amplitudes 0.2-1, phases 0-2 pi) normalised by the amplitude sum, faded in over the
    first 20 m by a quintic ramp and scaled to a random peak in [0.3, 1] x the bound. The
    bound is min(max_curvature, max_lat_accel / v_min^2), so the slowest allowed speed can
    always take the sharpest curve. The speed is a sum of three sinusoids (wavelengths
    80-400 m) mapped onto speed_range, capped at sqrt(max_lat_accel/|kappa|) and limited
    to +-2 m/s^2 along the path. The path integrates the heading (trapezoid rule) from
    (0, 0) heading +x, each step of length `spacing` along the mean heading of its ends.
    All randomness comes from `rng`: 22 uniforms (21 for a flat curvature, which draws no
    scale).

    Drawn and built in the core (vdsim/random_course.hpp, from ``rng``'s bit generator:
    what ``VDSim-PathFollow-v0``'s core draws at each reset); tests/envs/test_courses.py
    keeps the plain numpy version as its reference (within the roundings of the C++
    version's rotated sinusoids: 1e-12).
    """
    spec = random_course_spec(length=length, spacing=spacing, max_curvature=max_curvature,
                              speed_range=speed_range, max_lat_accel=max_lat_accel)
    path, v, finite = _core.random_course(rng.bit_generator, *spec)
    if not finite:  # e.g. a path so short that the curvature's scale overflows
        raise random_course_error(spec, spacing)
    return Course._trusted("random", path, v, RANDOM_CORRIDOR_HALF_WIDTH, float(v[0]))


def available_scenarios() -> list[str]:
    """Names of the scenario files under envs/scenarios."""
    return sorted(p.stem for p in scenarios_dir().glob("*.yaml"))


def _scenario_path(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml"):
        if not path.exists():
            raise ConfigError(f"scenario file not found: {path}")
        return path
    path = scenarios_dir() / f"{name_or_path}.yaml"
    if not path.exists():
        raise ConfigError(
            f"unknown scenario '{name_or_path}': no file {path}. Available: "
            f"{', '.join(available_scenarios())}; or pass a path to a .yaml file"
        )
    return path


def load_scenario(name_or_path: str | Path) -> dict[str, Any]:
    """Read a scenario (envs/scenarios/<name>.yaml or a path) as ``dlc_course`` kwargs.

    ``dlc_course(**load_scenario("dlc_iso3888_1"))`` builds its course. Unknown keys,
    an unknown preset and non-numeric or non-positive values raise ConfigError naming
    the file and the key.
    """
    path = _scenario_path(name_or_path)
    try:
        data = load_yaml(read_user_text(path, "the scenario file")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a scenario must be a mapping, got {type(data).__name__}")
    for key, value in data.items():
        if key not in SCENARIO_KEYS:
            raise ConfigError(
                f"{path}: unknown key '{key}' (known keys: {', '.join(SCENARIO_KEYS)})"
            )
        if key == "preset":
            if value not in COURSE_PRESETS:
                raise ConfigError(
                    f"{path}: 'preset' must be one of {COURSE_PRESETS}, got {value!r}"
                )
        elif not is_real(value) or not value >= 0:
            raise ConfigError(f"{path}: '{key}' must be a non-negative number, got {value!r}")
        elif key in ("speed", "spacing", "vehicle_width") and value == 0:
            raise ConfigError(f"{path}: '{key}' must be positive, got {value!r}")
    if "preset" not in data:
        raise ConfigError(f"{path}: missing key 'preset' (one of {COURSE_PRESETS})")
    return {k: (v if k == "preset" else float(v)) for k, v in data.items()}
