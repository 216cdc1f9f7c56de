"""Course geometry: ISO 3888 layouts, the smooth 3.5 m lane change, random courses.

Expected numbers are written out from the layouts' formulas (b = vehicle width) so a
reader can check them by hand; docs/COURSES.md lists the same figures.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.envs.course import Course
from vdsim_gym.envs.courses import (
    COURSE_PRESETS,
    DEFAULT_CONE_RADIUS,
    available_scenarios,
    dlc_course,
    load_scenario,
    random_course,
)
from vdsim_gym.errors import ConfigError

# Peak of the quintic blend's second derivative: max |d2/dt2 (10t^3 - 15t^4 + 6t^5)|
# on [0, 1] is 10/sqrt(3), so a blend of height h over length L has |y''| <= 10/sqrt(3) h/L^2.
QUINTIC_PEAK = 10.0 / math.sqrt(3.0)


def _curvature(path: np.ndarray) -> np.ndarray:
    """Signed curvature at interior points from the circle through three neighbours."""
    a, b, c = path[:-2], path[1:-1], path[2:]
    ab, bc, ac = b - a, c - b, c - a
    cross = ab[:, 0] * bc[:, 1] - ab[:, 1] * bc[:, 0]
    norms = np.linalg.norm(ab, axis=1) * np.linalg.norm(bc, axis=1) * np.linalg.norm(ac, axis=1)
    return 2.0 * cross / norms


def _distance_to_polyline(point: np.ndarray, path: np.ndarray) -> float:
    a, b = path[:-1], path[1:]
    ab = b - a
    t = np.clip(np.einsum("ij,ij->i", point - a, ab) / np.einsum("ij,ij->i", ab, ab), 0, 1)
    return float(np.min(np.linalg.norm(a + t[:, None] * ab - point, axis=1)))


def _sections(course: Course) -> dict[int, tuple[float, float, float, float]]:
    """Per section: x extent of its gates, gate width, gate centre (all gates agree)."""
    out: dict[int, tuple[float, float, float, float]] = {}
    for sec in sorted({g.section for g in course.gates}):
        gs = [g for g in course.gates if g.section == sec]
        widths = np.array([g.y_left - g.y_right for g in gs])
        centres = np.array([(g.y_left + g.y_right) / 2 for g in gs])
        assert np.ptp(widths) < 1e-12 and np.ptp(centres) < 1e-12, "one lane per section"
        out[sec] = (min(g.x for g in gs), max(g.x for g in gs), widths[0], centres[0])
    return out


@pytest.mark.parametrize("b", [1.8, 2.0])
def test_iso3888_1_layout(b: float) -> None:
    secs = _sections(dlc_course("iso3888_1", vehicle_width=b))
    assert list(secs) == [1, 3, 5]
    (x1a, x1b, w1, c1), (x3a, x3b, w3, c3), (x5a, x5b, w5, c5) = secs.values()
    # lengths 15 / 30 / 25 / 25 / 15 m: lanes 1, 3, 5 coned; 2 and 4 are the gaps
    assert (x1a, x1b, x3a, x3b, x5a, x5b) == pytest.approx((0, 15, 45, 70, 95, 110))
    assert w1 == pytest.approx(1.1 * b + 0.25)  # 2.23 m for b = 1.8
    assert w3 == pytest.approx(1.2 * b + 0.25)  # 2.41 m
    assert w5 == pytest.approx(1.3 * b + 0.25)  # 2.59 m
    assert c1 == 0.0
    assert c3 == pytest.approx(3.5)  # lane 3 centre 3.5 m left of lane 1 centre
    # exit lane right edge continues lane 1's right edge: centre at (w5 - w1)/2 = 0.1 b
    assert c5 == pytest.approx(0.1 * b)


@pytest.mark.parametrize("b", [1.8, 2.0])
def test_iso3888_2_layout(b: float) -> None:
    course = dlc_course("iso3888_2", vehicle_width=b)
    secs = _sections(course)
    (x1a, x1b, w1, c1), (x3a, x3b, w3, c3), (x5a, x5b, w5, c5) = secs.values()
    # 12 / 13.5 / 11 / 12.5 / 12 m, total 61 m
    assert (x1a, x1b, x3a, x3b, x5a, x5b) == pytest.approx((0, 12, 25.5, 36.5, 49, 61))
    assert w1 == pytest.approx(1.1 * b + 0.25)  # 2.23 / 2.45 m
    assert w3 == pytest.approx(b + 1.0)  # 2.8 / 3.0 m
    assert w5 == pytest.approx(3.0)  # 1.3 b + 0.25 = 2.59 / 2.85 m is below the 3 m minimum
    # lane 3's right edge 1 m left of lane 1's left edge -> centre 1.05 b + 1.625
    assert c3 == pytest.approx(1.05 * b + 1.625)  # 3.515 m (b = 1.8), 3.725 m (b = 2.0)
    gate3 = next(g for g in course.gates if g.section == 3)
    assert gate3.y_right - (1.1 * b + 0.25) / 2 == pytest.approx(1.0)
    assert c1 == 0.0 and c5 == pytest.approx((3.0 - (1.1 * b + 0.25)) / 2)


def test_iso3888_2_exit_lane_wider_than_3m_for_wide_vehicle() -> None:
    (*_, w5, _) = _sections(dlc_course("iso3888_2", vehicle_width=2.5))[5]
    assert w5 == pytest.approx(1.3 * 2.5 + 0.25)  # 3.5 m > 3 m: the formula wins


def test_default_vehicle_width_comes_from_vehicle_file() -> None:
    b = load_vehicle("generic_sedan").body_width
    default = dlc_course("iso3888_1")
    explicit = dlc_course("iso3888_1", vehicle_width=b)
    assert np.array_equal(default.cones, explicit.cones)
    assert default.gates[0].y_left - default.gates[0].y_right == pytest.approx(1.1 * b + 0.25)


@pytest.mark.parametrize("preset", ["iso3888_1", "iso3888_2"])
def test_iso_cones_and_gates(preset: str) -> None:
    course = dlc_course(preset)
    assert len(course.cones) == 2 * len(course.gates)
    for g in course.gates:
        r = DEFAULT_CONE_RADIUS
        assert [g.x, g.y_left + r] in course.cones.tolist()
        assert [g.x, g.y_right - r] in course.cones.tolist()
    for sec in (1, 3, 5):
        xs = np.array([g.x for g in course.gates if g.section == sec])
        assert np.max(np.diff(xs)) <= 4.0 + 1e-9  # intermediate cones at most 4 m apart
    assert course.corridor_half_width == 4.0


@pytest.mark.parametrize("preset", ["iso3888_1", "iso3888_2"])
@pytest.mark.parametrize("b", [1.8, 2.0])
def test_path_passes_through_every_gate_centre(preset: str, b: float) -> None:
    course = dlc_course(preset, vehicle_width=b, reference="centre")
    for g in course.gates:
        centre = np.array([g.x, (g.y_left + g.y_right) / 2])
        assert _distance_to_polyline(centre, course.path) < 1e-6, g


@pytest.mark.parametrize(
    ("preset", "blends"),
    [
        # (height h [m], length L [m]) of each transition, b = 1.8
        ("iso3888_1", [(3.5, 30.0), (3.5 - 0.18, 25.0)]),
        ("iso3888_2", [(3.515, 13.5), (3.515 - 0.385, 12.5)]),
    ],
)
def test_path_smooth_with_bounded_curvature(preset: str, blends: list) -> None:
    course = dlc_course(preset, vehicle_width=1.8, spacing=0.25, reference="centre")
    path = course.path
    seg = np.diff(path, axis=0)
    assert np.allclose(np.hypot(*seg.T), 0.25, rtol=0.01)  # arc-length spacing
    heading = np.unwrap(np.arctan2(seg[:, 1], seg[:, 0]))
    kappa = _curvature(path)
    # continuous heading: no step larger than the sharpest curve times one spacing
    assert np.max(np.abs(np.diff(heading))) <= np.max(np.abs(kappa)) * 0.25 * 1.05
    bound = max(QUINTIC_PEAK * h / length**2 for h, length in blends)
    # 3888-1: 0.0307 1/m, 3888-2: 0.116 1/m, lane change: 0.0225 1/m
    assert np.max(np.abs(kappa)) <= bound * 1.01
    assert np.max(np.abs(kappa)) >= bound * 0.85  # the blend spans the whole gap
    assert np.all(np.abs(heading) < 0.5)  # never more than ~29 deg off the x axis
    assert path[0, 0] == pytest.approx(-30.0) and course.speed.tolist() == [20.0] * len(path)
    assert course.start_speed == 20.0


def test_iso3888_1_curvature_below_0p1() -> None:
    assert np.max(np.abs(_curvature(dlc_course("iso3888_1").path))) < 0.1


def test_lane_change_3p5_30_is_a_half_cosine_with_its_peak_curvature() -> None:
    course = dlc_course("lane_change_3p5_30", spacing=0.25)
    kappa = np.abs(_curvature(course.path))
    # y = h/2 (1 - cos(pi x / L)): peak y'' = (pi^2 / 2) h / L^2 = 0.01919 1/m, at the joints
    peak = math.pi**2 / 2 * 3.5 / 30.0**2
    assert np.max(kappa) == pytest.approx(peak, rel=0.02)
    assert 20.0**2 * np.max(kappa) < 7.8  # m/s^2 at 20 m/s: below the L2 grip limit


def test_lane_change_3p5_30() -> None:
    course = dlc_course("lane_change_3p5_30", lead_in=30.0, run_out=40.0)
    x, y = course.path.T
    assert len(course.cones) == 0 and course.gates == ()
    assert np.max(y) == pytest.approx(3.5, abs=1e-12)
    assert np.all(np.abs(y[x <= 0.0]) < 1e-12)  # straight lead-in, transition starts at 0
    assert np.all(y[(x > 1.0) & (x < 29.0)] < 3.5 - 1e-3)  # still moving before 30 m
    assert np.all(np.abs(y[(x >= 30.0) & (x <= 55.0)] - 3.5) < 1e-12)  # 25 m hold
    assert np.all(np.abs(y[x >= 85.0]) < 1e-12)  # back to 0 after 30 m more
    assert np.interp(15.0, x, y) == pytest.approx(1.75, abs=1e-3)  # half-way at mid-blend
    assert x[-1] == pytest.approx(85.0 + 40.0)


def test_lead_in_and_run_out() -> None:
    course = dlc_course("iso3888_1", lead_in=10.0, run_out=5.0)
    assert course.path[0].tolist() == [-10.0, 0.0]
    assert course.path[-1, 0] == pytest.approx(110.0 + 5.0)


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="iso3888_1.*iso3888_2.*lane_change_3p5_30"):
        dlc_course("iso3888_3")
    for kwargs in ({"vehicle_width": 0.0}, {"vehicle_width": -1.8}, {"speed": 0.0},
                   {"speed": -5.0}, {"spacing": 0.0}, {"lead_in": -1.0}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            dlc_course("iso3888_1", **kwargs)
    with pytest.raises(ValueError, match="max_lat_accel"):
        random_course(np.random.default_rng(0), max_lat_accel=0.0)
    with pytest.raises(ValueError, match="speed_range"):
        random_course(np.random.default_rng(0), speed_range=(20.0, 10.0))


def test_presets_tuple() -> None:
    assert COURSE_PRESETS == ("iso3888_1", "iso3888_2", "lane_change_3p5_30")


def test_random_course_deterministic() -> None:
    a = random_course(np.random.default_rng(7))
    b = random_course(np.random.default_rng(7))
    c = random_course(np.random.default_rng(8))
    assert np.array_equal(a.path, b.path) and np.array_equal(a.speed, b.speed)
    assert not np.array_equal(a.path, c.path)
    assert not np.array_equal(a.speed, c.speed)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize(
    ("max_curvature", "speed_range", "max_lat_accel"),
    [(0.05, (8.0, 25.0), 4.0), (0.2, (5.0, 30.0), 3.0)],
)
def test_random_course_bounds(seed, max_curvature, speed_range, max_lat_accel) -> None:
    course = random_course(
        np.random.default_rng(seed), length=300.0, spacing=0.5,
        max_curvature=max_curvature, speed_range=speed_range, max_lat_accel=max_lat_accel,
    )
    path, v = course.path, course.speed
    assert path[0].tolist() == [0.0, 0.0]
    assert abs(math.atan2(*(path[1] - path[0])[::-1])) < 1e-5  # starts heading +x
    assert np.allclose(np.hypot(*np.diff(path, axis=0).T), 0.5, atol=1e-6)
    assert course.length == pytest.approx(300.0, rel=1e-3)
    kappa = _curvature(path)
    assert np.max(np.abs(kappa)) <= max_curvature * 1.01
    # the sharpest curve must be drivable at the lowest allowed speed
    assert np.max(np.abs(kappa)) <= max_lat_accel / speed_range[0] ** 2 * 1.01
    assert np.max(v[1:-1] ** 2 * np.abs(kappa)) <= max_lat_accel * 1.01
    assert np.all(v >= speed_range[0] - 1e-12) and np.all(v <= speed_range[1] + 1e-12)
    dv2 = np.abs(np.diff(v**2)) / (2 * 0.5)  # |v dv/ds| = |dv/dt| [m/s^2]
    assert np.max(dv2) <= 2.0 + 1e-9
    assert course.start_speed == v[0] and course.corridor_half_width == 3.0
    assert len(course.cones) == 0


def test_random_course_uses_the_curvature_budget() -> None:
    # across seeds the peak curvature fills 0.3..1 of the bound, so courses really bend
    peaks = [np.max(np.abs(_curvature(random_course(np.random.default_rng(s)).path)))
             for s in range(10)]
    assert min(peaks) >= 0.3 * 0.05 * 0.95 and max(peaks) > 0.6 * 0.05


@pytest.mark.parametrize("name", ["dlc_iso3888_1", "dlc_iso3888_2", "lane_change_3p5_30"])
def test_shipped_scenarios_build(name: str) -> None:
    assert name in available_scenarios()
    scenario = load_scenario(name)
    assert set(scenario) <= {"preset", "speed", "lead_in", "run_out", "spacing",
                             "vehicle_width"}
    course = dlc_course(**scenario)
    assert course.name == scenario["preset"] == name.removeprefix("dlc_")
    assert course.start_speed == scenario["speed"]


def test_load_scenario_unknown_key_names_file_and_key(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("preset: iso3888_1\nspeed: 20.0\nlead_inn: 30.0\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*'lead_inn'"):
        load_scenario(path)


def test_load_scenario_bad_values(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("preset: iso3888_9\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*'preset'"):
        load_scenario(path)
    path.write_text("preset: iso3888_1\nspeed: fast\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*'speed'"):
        load_scenario(path)
    path.write_text("speed: 20.0\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml.*'preset'"):
        load_scenario(path)


def test_load_scenario_unknown_name_lists_available() -> None:
    with pytest.raises(ConfigError, match="no_such_scenario.*dlc_iso3888_1.*dlc_iso3888_2"):
        load_scenario("no_such_scenario")


# Body model of the smooth line: generic sedan, bumpers 2.15 m ahead of / 2.55 m behind
# the path point (CG to axle + overhang).
BODY = (2.15, 2.55)


def _lanes(course: Course) -> list[tuple[float, float, float, float]]:
    """(x0, x1, centre, width) of each coned lane, from the gates."""
    return [(x0, x1, c, w) for x0, x1, w, c in _sections(course).values()]


def _body_excess(course: Course, b: float, margin: float) -> float:
    """Largest excess of the body sides over lane limits minus margin, on the fine path.

    The body (half width b/2, BODY ahead/behind) is aligned with the polyline heading;
    its side at station x' is at y + (x' - x) tan(psi) +- b/2, checked at both ends of
    the part of the body that overlaps each lane.
    """
    x, y = course.path.T
    slope = np.gradient(y, x)
    worst = -np.inf
    for x0, x1, c, w in _lanes(course):
        back, front = np.maximum(x0 - x, -BODY[1]), np.minimum(x1 - x, BODY[0])
        on = front >= back
        for d in (back[on], front[on]):
            side = np.abs(y[on] + d * slope[on] - c) + b / 2
            worst = max(worst, float(np.max(side - (w / 2 - margin))))
    return worst


@pytest.mark.parametrize("preset", ["iso3888_1", "iso3888_2"])
@pytest.mark.parametrize("b", [1.8, 2.0])
def test_smooth_line_keeps_body_in_every_lane(preset: str, b: float) -> None:
    course = dlc_course(preset, vehicle_width=b)  # reference="smooth" is the default
    assert _body_excess(course, b, 0.05) <= 1e-6
    # the line really uses the lane: it is not the centre line
    centre = dlc_course(preset, vehicle_width=b, reference="centre")
    assert _body_excess(centre, b, 0.05) > 0.0 or preset == "iso3888_1"
    x, y = course.path.T
    lanes = _lanes(course)
    assert np.all(y[x <= 0.0] == lanes[0][2])  # straight on the entry centre
    assert np.all(np.abs(y[x >= lanes[-1][1]] - lanes[-1][2]) < 1e-12)  # exit centre


@pytest.mark.parametrize("preset", ["iso3888_1", "iso3888_2"])
@pytest.mark.parametrize("b", [1.8, 2.0])
def test_smooth_line_less_curved_than_centre(preset: str, b: float) -> None:
    k_smooth = np.max(np.abs(_curvature(dlc_course(preset, vehicle_width=b).path)))
    k_centre = np.max(np.abs(_curvature(
        dlc_course(preset, vehicle_width=b, reference="centre").path)))
    # docs/COURSES.md: 0.0083 vs 0.0301 (3888-1), 0.0339 vs 0.109 (3888-2), b = 1.8
    assert k_smooth < 0.5 * k_centre


@pytest.mark.parametrize("preset", ["iso3888_1", "iso3888_2"])
def test_smooth_line_c1_and_deterministic(preset: str) -> None:
    course = dlc_course(preset)
    path = course.path
    seg = np.diff(path, axis=0)
    assert np.allclose(np.hypot(*seg.T), 0.25, rtol=0.01)
    heading = np.arctan2(seg[:, 1], seg[:, 0])
    kappa = _curvature(path)
    # continuous heading: no step larger than the sharpest curve times one spacing
    assert np.max(np.abs(np.diff(heading))) <= np.max(np.abs(kappa)) * 0.25 * 1.05
    assert np.array_equal(path, dlc_course(preset).path)


@pytest.mark.parametrize(("preset", "speed"), [("iso3888_1", 20.0), ("iso3888_2", 15.0)])
def test_scenario_speeds_drivable_on_smooth_line(preset: str, speed: float) -> None:
    # scenario speeds (envs/scenarios) need at most ~8 m/s^2 on the smooth line, b = 1.8
    kappa = _curvature(dlc_course(preset, vehicle_width=1.8).path)
    assert speed**2 * np.max(np.abs(kappa)) <= 8.0
    assert load_scenario(f"dlc_{preset}")["speed"] == speed


def test_centre_reference_unchanged() -> None:
    # the lane-centre path still runs through every gate centre with quintic blends
    for preset in ("iso3888_1", "iso3888_2"):
        course = dlc_course(preset, reference="centre")
        for g in course.gates:
            centre = np.array([g.x, (g.y_left + g.y_right) / 2])
            assert _distance_to_polyline(centre, course.path) < 1e-6
    # lane_change_3p5_30 ignores the keyword
    assert np.array_equal(dlc_course("lane_change_3p5_30", reference="centre").path,
                          dlc_course("lane_change_3p5_30").path)


def test_reference_and_margin_errors() -> None:
    with pytest.raises(ValueError, match="'curvy'.*smooth.*centre"):
        dlc_course("iso3888_1", reference="curvy")
    with pytest.raises(ValueError, match="does not fit lane 1"):
        dlc_course("iso3888_1", margin=0.3)  # (2.23 - 1.8)/2 = 0.215 m slack in lane 1
    with pytest.raises(ValueError, match="margin"):
        dlc_course("iso3888_1", margin=-0.1)


def test_envs_on_one_course_share_its_data_and_keep_their_own_cone_hits():
    """The course's path and cones are built once (Course.core_data) and shared by every
    env on it; each env's cone hits stay its own; a pickled course leaves the core data
    out and builds it again."""
    import pickle

    import gymnasium as gym
    import numpy as np

    a = gym.make("VDSim-DLC-v0", preset="iso3888_1", terminate_on_cone=False)
    b = gym.make("VDSim-DLC-v0", preset="iso3888_1", terminate_on_cone=False)
    a.reset(seed=0)
    b.reset(seed=0)
    course = a.unwrapped.course
    assert b.unwrapped.course is course
    assert course.core_data() is b.unwrapped.course.core_data()
    hits_a = hits_b = 0
    for k in range(80):  # a swerves into the cones, b drives straight on
        _, _, term, trunc, info = a.step(np.array([0.05 if k < 5 else 0.0, 0.0], np.float32))
        hits_a = info["cone_hits"]
        hits_b = b.step(np.array([0.0, 0.0], np.float32))[4]["cone_hits"]
        if term or trunc:
            break
    assert hits_a > 0 and hits_b == 0
    copy = pickle.loads(pickle.dumps(course))
    assert "_core_data" not in copy.__dict__ and copy.core_data() is not course.core_data()
    assert copy.core_data().length == course.core_data().length


def _limit_long_accel_reference(v: np.ndarray, ds: float, accel: float) -> np.ndarray:
    """The plain Python loops the C++ pass reproduces."""
    v = v.copy()
    dv2 = 2.0 * accel * ds
    for i in range(len(v) - 2, -1, -1):  # backward pass: braking
        v[i] = min(v[i], math.sqrt(v[i + 1] ** 2 + dv2))
    for i in range(1, len(v)):  # forward pass: acceleration
        v[i] = min(v[i], math.sqrt(v[i - 1] ** 2 + dv2))
    return v


def test_long_accel_limit_equals_the_python_loops_bit_for_bit() -> None:
    from vdsim_gym.envs import courses

    rng = np.random.default_rng(11)
    for n in (1, 2, 3, 601, 2000):
        v = rng.uniform(0.5, 40.0, n) * rng.choice([1e-3, 1.0, 10.0], n)
        for ds, accel in ((0.5, 2.0), (0.1, 0.3), (2.0, 9.0), (0.5, 0.0)):
            got = courses._limit_long_accel(v, ds, accel)
            np.testing.assert_array_equal(got.view(np.uint64),
                                          _limit_long_accel_reference(v, ds, accel).view(np.uint64))
            assert np.all(np.abs(np.diff(got**2)) <= 2.0 * accel * ds * (1 + 1e-12))


# ------------------------------------------------------------- random courses: reference

def _libm(f, x: np.ndarray) -> np.ndarray:
    """f (the C library's, through math) element by element: the core's sin, cos and pow,
    on any CPU (numpy's SIMD versions may differ in the last bit where numpy dispatches
    them)."""
    return np.array([f(v) for v in np.ravel(x)], dtype=float).reshape(np.shape(x))


def _random_sines_reference(rng: np.random.Generator, s: np.ndarray, n: int,
                            wavelengths: tuple[float, float]) -> np.ndarray:
    lam = rng.uniform(*wavelengths, size=n)
    amp = rng.uniform(0.2, 1.0, size=n)
    phase = rng.uniform(0.0, 2.0 * np.pi, size=n)
    terms = amp[:, None] * _libm(math.sin, 2.0 * np.pi * s[None, :] / lam[:, None]
                                 + phase[:, None])
    return terms.sum(axis=0) / amp.sum()


def _smoothstep5_reference(t: np.ndarray) -> np.ndarray:
    t = np.clip(t, 0.0, 1.0)
    return _libm(lambda x: math.pow(x, 3.0), t) * (10.0 - 15.0 * t + 6.0 * t**2)


def _random_course_reference(rng: np.random.Generator, *, length: float = 300.0,
                             spacing: float = 0.5, max_curvature: float = 0.05,
                             speed_range: tuple[float, float] = (8.0, 25.0),
                             max_lat_accel: float = 4.0) -> tuple[np.ndarray, np.ndarray]:
    """random_course as plain numpy (path, speed): the version before it moved to C++
    (vdsim/random_course.hpp), kept as the reference, with the C library's sin, cos and
    pow element by element."""
    v_lo, v_hi = speed_range
    n = max(int(round(length / spacing)), 1) + 1
    s = np.linspace(0.0, length, n)
    ds = float(s[1] - s[0])
    k_bound = min(max_curvature, max_lat_accel / v_lo**2)
    shape = _random_sines_reference(rng, s, 4, (40.0, 200.0)) * _smoothstep5_reference(s / 20.0)
    peak = float(np.max(np.abs(shape)))
    kappa = shape * (rng.uniform(0.3, 1.0) * k_bound / peak if peak > 0 else 0.0)
    v = v_lo + (v_hi - v_lo) * 0.5 * (1.0 + _random_sines_reference(rng, s, 3, (80.0, 400.0)))
    with np.errstate(divide="ignore"):
        v_cap = np.sqrt(max_lat_accel / np.abs(kappa))
    v = _limit_long_accel_reference(np.clip(np.minimum(v, v_cap), v_lo, v_hi), ds, 2.0)
    psi = np.concatenate(([0.0], np.cumsum(0.5 * (kappa[1:] + kappa[:-1]) * ds)))
    mid = 0.5 * (psi[1:] + psi[:-1])
    x = np.concatenate(([0.0], np.cumsum(ds * _libm(math.cos, mid))))
    y = np.concatenate(([0.0], np.cumsum(ds * _libm(math.sin, mid))))
    return np.column_stack((x, y)), v


RANDOM_COURSE_CASES = [
    {}, {"length": 50.0}, {"length": 0.3}, {"length": 1.0, "spacing": 0.4},
    {"length": 123.4, "spacing": 0.37}, {"max_curvature": 0.2, "speed_range": (3.0, 30.0)},
    {"speed_range": (10.0, 10.0)}, {"length": 1000.0, "spacing": 1.0, "max_lat_accel": 9.0},
    {"length": 20.0, "spacing": 0.05}, {"speed_range": (0.5, 40.0), "max_curvature": 1.0},
    {"length": 1e-200},  # the ramp's cube underflows: a flat curvature, no scale drawn
]


@pytest.mark.parametrize("kwargs", RANDOM_COURSE_CASES, ids=str)
def test_random_course_equals_the_numpy_reference(kwargs) -> None:
    """The core's course (vdsim/random_course.hpp: the sinusoids and the heading's cos and
    sin rotated between points where the C library's anchor them every 32 points) is the
    reference's within the rotations' roundings: the path within 1e-12 m per 100 m of
    course, the speed within 1e-12 relative; it draws what the reference drew and leaves
    the generator where the reference did."""
    for seed in range(40):
        fast_rng, ref_rng = np.random.default_rng(seed), np.random.default_rng(seed)
        course = random_course(fast_rng, **kwargs)
        path, speed = _random_course_reference(ref_rng, **kwargs)
        length = kwargs.get("length", 300.0)
        np.testing.assert_allclose(course.path, path, rtol=0,
                                   atol=1e-12 * (1.0 + length / 100.0), err_msg=str(seed))
        np.testing.assert_allclose(course.speed, speed, rtol=1e-12, atol=0, err_msg=str(seed))
        assert course.start_speed == course.speed[0] and course.name == "random"
        assert fast_rng.random() == ref_rng.random()  # the same number of draws
        assert course.path.flags.c_contiguous and course.path.dtype == np.float64
        assert course.cones.shape == (0, 2) and course.gates == ()


def test_random_course_flat_curvature_draws_no_scale() -> None:
    """A shape without a nonzero point (a path so short that the ramp's cube underflows)
    draws no curvature scale, as the reference: the speed takes the 13th to 21st uniforms
    and the generator ends 21 draws on."""
    rng = np.random.default_rng(5)
    course = random_course(rng, length=1e-200)
    assert np.all(course.path[:, 1] == 0.0)  # straight
    after = np.random.default_rng(5)
    after.random(21)
    assert rng.random() == after.random()


@pytest.mark.parametrize("length", [1e-103, 4e-103])
def test_random_course_refuses_a_non_finite_course(length) -> None:
    """On a path of 1e-103 m the ramp's cube is subnormal and the curvature's scale
    overflows: the numpy version's course was refused by Course's finite check, and so
    is the C++ stages' (which skip that check for the arrays they build)."""
    with np.errstate(all="ignore"):
        with pytest.raises(ConfigError):
            _random_course_reference_checked(np.random.default_rng(0), length=length)
    with pytest.raises(ConfigError, match=r"random_course\(length=.*gives a non-finite path "
                                          r"or speed profile; use a longer course"):
        random_course(np.random.default_rng(0), length=length)


def _path_follow_episode(seed: int, build_first: bool, **kw):
    import gymnasium as gym

    from vdsim_gym.controllers import stanley_pi

    env = gym.make("VDSim-PathFollow-v0", **kw)
    core = env.unwrapped._core
    obs, _ = env.reset(seed=seed)
    built_at_reset = core.course_points_built
    if build_first:
        env.unwrapped.course  # noqa: B018  (reads the whole course: builds it)
    policy = stanley_pi(env)
    rows = [obs.tobytes()]
    while True:
        obs, reward, terminated, truncated, info = env.step(policy.predict(obs)[0])
        rows.append((obs.tobytes(), reward, terminated, truncated, info["s"], info["e_y"]))
        if terminated or truncated:
            break
    n = len(env.unwrapped.course.path)
    env.close()
    return rows, info, built_at_reset, n


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_drawn_course_built_as_read_gives_the_episode_built_at_once(seed) -> None:
    """PathFollow builds its course's path as far as it is read (the projection's window,
    the previews 30 m ahead, the end check). An episode must not depend on when the path
    is built: the same seed gives the same steps, bit for bit, with the whole course built
    right after the reset, to the course's end; and a reset builds only its start."""
    kw = {"course_length": 60.0}  # short: the car reaches the end
    lazy, info, built, n = _path_follow_episode(seed, False, **kw)
    eager, _, _, _ = _path_follow_episode(seed, True, **kw)
    assert lazy == eager
    assert info["outcome"] == "course_end"
    assert 2 <= built < n
    # The default course: a reset builds a small part of its 601 points.
    _, _, built, n = _path_follow_episode(seed, False, time_limit=0.1)
    assert n == 601 and built <= 130


def test_path_follow_names_a_non_finite_course_at_reset() -> None:
    """The env's core draws the course (PathTask::draw_start): a non-finite one is the same
    ConfigError, and the env stays usable."""
    import gymnasium as gym

    env = gym.make("VDSim-PathFollow-v0", course_length=1e-103)
    with pytest.raises(ConfigError, match=r"random_course\(length=1e-103, spacing=0.5.*"
                                          r"gives a non-finite path"):
        env.reset(seed=0)
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(2, np.float32))
    env.close()


def _random_course_reference_checked(rng, **kwargs) -> Course:
    path, speed = _random_course_reference(rng, **kwargs)
    return Course(name="random", path=path, speed=speed)


def test_random_course_core_data_and_its_checks() -> None:
    course = random_course(np.random.default_rng(3))
    data = course.core_data()
    assert data.length == pytest.approx(course.length, rel=1e-12)
    bad = Course(name="twice", path=[[0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [2.0, 0.0]],
                 speed=[1.0] * 4)
    with pytest.raises(ConfigError, match=r"course 'twice': path points 1 and 2 coincide; "
                                          r"remove repeated points"):
        bad.core_data()
    from vdsim_gym import _core
    with pytest.raises(ValueError, match="path must be finite"):
        _core.CourseData(np.array([[0.0, 0.0], [np.inf, 0.0]]), np.ones(2), np.zeros((0, 2)),
                         3.0, 1.0)


@pytest.mark.parametrize("n", [4, 9, 71, 160])
def test_the_smooth_lines_difference_gram_is_the_exact_product(n):
    """The smooth reference's Hessian terms D^T D, built band by band in integers (no
    BLAS call, whose threads would spin on after it), equal the float product of the
    difference matrices exactly."""
    from vdsim_gym.envs.reference_line import _difference_gram

    for order in (2, 3):
        d = np.diff(np.eye(n), order, axis=0)
        got = _difference_gram(order, n)
        assert got.dtype == np.int64
        assert np.array_equal(got, d.T @ d)
