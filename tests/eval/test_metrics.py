"""lateral_error: sign, geometry, end rays, agreement with the core's path projection."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym import _core
from vdsim_gym.envs.courses import dlc_course
from vdsim_gym.eval import lateral_error, tracking_stats


def test_straight_line_sign_and_distance():
    path = np.array([[0.0, 0.0], [10.0, 0.0]])
    xy = np.array([[5.0, 1.5], [5.0, -0.25], [3.0, 0.0]])
    np.testing.assert_array_equal(lateral_error(xy, path), [1.5, -0.25, 0.0])
    # travelling the other way flips the sides
    np.testing.assert_array_equal(lateral_error(xy, path[::-1]), [-1.5, 0.25, 0.0])


def test_end_segments_extend_as_rays():
    path = np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 1.0]])
    # before the start: along the first segment's normal, not the distance to the point
    assert lateral_error([-5.0, 2.0], path)[0] == 2.0
    # past the end: along the last segment's (45 deg) normal
    e = lateral_error([10.0, 5.0], path)[0]
    assert math.isclose(e, -(10.0 - 5.0 - 1.0) / math.sqrt(2.0), rel_tol=1e-12)


def test_circle_radius():
    th = np.linspace(0.0, math.pi, 2001)
    path = np.column_stack((10.0 * np.cos(th), 10.0 * np.sin(th)))  # counter-clockwise
    pts = np.array([[0.0, 9.0], [0.0, 11.0], [-6.0 * math.sqrt(0.5), 6.0 * math.sqrt(0.5)]])
    np.testing.assert_allclose(lateral_error(pts, path), [1.0, -1.0, 4.0], atol=1e-4)


def test_agrees_with_the_core_projection():
    course = dlc_course("lane_change_3p5_30")
    tracker = _core.PathTracker(course.path, course.speed)
    rng = np.random.default_rng(0)
    pts = np.column_stack((rng.uniform(-40, 140, 3000), rng.uniform(-2, 6, 3000)))
    ours = lateral_error(pts, course.path)
    core = np.array([tracker.project(x, y, -1)[2] for x, y in pts])
    np.testing.assert_allclose(ours, core, rtol=0, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match=r"\(M >= 2, 2\) polyline"):
        lateral_error([[0.0, 0.0]], [[0.0, 0.0]])
    with pytest.raises(ValueError, match="coincide"):
        lateral_error([[0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="finite"):
        lateral_error([[0.0, 0.0]], [[0.0, 0.0], [np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"xy must have shape \(N, 2\)"):
        lateral_error([1.0, 2.0, 3.0], [[0.0, 0.0], [1.0, 0.0]])


def test_tracking_stats():
    s = tracking_stats([0.3, -0.4])
    assert math.isclose(s["e_y_rmse_m"], math.sqrt(0.125)) and s["e_y_max_m"] == 0.4
    assert s["e_y_n"] == 2
    assert math.isnan(tracking_stats([])["e_y_rmse_m"])
