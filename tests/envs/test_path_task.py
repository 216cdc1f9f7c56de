"""The C++ path task against slow, obviously-correct Python references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym import _core

TOL = 1e-9


def sine_path(n: int = 241, length: float = 120.0, amp: float = 3.0, wavelength: float = 50.0
              ) -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(0.0, length, n)
    path = np.c_[x, amp * np.sin(2 * np.pi * x / wavelength)]
    speed = 10.0 + 5.0 * np.cos(x / 17.0)
    return path, speed


# ------------------------------------------------------------------ Python references


def ref_point_props(path: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Heading (central difference) and Menger curvature of each path point."""
    n = len(path)
    heading = np.empty(n)
    kappa = np.zeros(n)
    for i in range(n):
        a, b = path[max(i - 1, 0)], path[min(i + 1, n - 1)]
        heading[i] = math.atan2(b[1] - a[1], b[0] - a[0])
    for i in range(1, n - 1):
        p, q, r = path[i - 1], path[i], path[i + 1]
        u, v, w = q - p, r - q, r - p
        cross = u[0] * v[1] - u[1] * v[0]
        kappa[i] = 2 * cross / (np.linalg.norm(u) * np.linalg.norm(v) * np.linalg.norm(w))
    kappa[0], kappa[-1] = kappa[1], kappa[-2]
    return heading, kappa


def wrap(a: float) -> float:
    return (a + math.pi) % (2 * math.pi) - math.pi


_PROPS: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}


def ref_project(path: np.ndarray, speed: np.ndarray, x: float, y: float) -> dict[str, float]:
    """Brute force over every segment; end segments extend as rays."""
    n = len(path)
    key = path.tobytes()
    if key not in _PROPS:
        _PROPS[key] = ref_point_props(path)
    heading, kappa = _PROPS[key]
    seg = np.linalg.norm(np.diff(path, axis=0), axis=1)
    s0 = np.concatenate([[0.0], np.cumsum(seg)])
    best = (math.inf, -1, 0.0)
    for i in range(n - 1):
        p, d = path[i], path[i + 1] - path[i]
        t = ((x - p[0]) * d[0] + (y - p[1]) * d[1]) / (d @ d)
        t = max(t, 0.0) if i > 0 else t
        t = min(t, 1.0) if i < n - 2 else t
        dist = math.hypot(x - p[0] - t * d[0], y - p[1] - t * d[1])
        if dist < best[0]:
            best = (dist, i, t)
    dist, i, t = best
    d = path[i + 1] - path[i]
    side = d[0] * (y - path[i][1]) - d[1] * (x - path[i][0])  # + when left of the segment
    w = min(max(t, 0.0), 1.0)
    return {
        "s": s0[i] + t * seg[i], "index": i, "e_y": math.copysign(dist, side),
        "heading": wrap(heading[i] + w * wrap(heading[i + 1] - heading[i])),
        "kappa": kappa[i] + w * (kappa[i + 1] - kappa[i]),
        "v_ref": speed[i] + w * (speed[i + 1] - speed[i]),
    }


def ref_point_at(path: np.ndarray, s: float) -> tuple[float, float]:
    s0 = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
    if s <= s0[0] or s >= s0[-1]:  # extrapolate along the end segment
        a, b = (path[0], path[1]) if s <= s0[0] else (path[-2], path[-1])
        u = (b - a) / np.linalg.norm(b - a)
        base, sb = (a, s0[0]) if s <= s0[0] else (b, s0[-1])
        return tuple(base + (s - sb) * u)
    return float(np.interp(s, s0, path[:, 0])), float(np.interp(s, s0, path[:, 1]))


def ref_disc_hits_rect(c: np.ndarray, r: float, x: float, y: float, psi: float,
                       front: float, rear: float, hw: float) -> bool:
    """Ground-frame corners; hit if the centre is inside or any edge is within r."""
    fwd = np.array([math.cos(psi), math.sin(psi)])
    left = np.array([-math.sin(psi), math.cos(psi)])
    o = np.array([x, y])
    corners = [o + front * fwd + hw * left, o - rear * fwd + hw * left,
               o - rear * fwd - hw * left, o + front * fwd - hw * left]
    def cross(u: np.ndarray, v: np.ndarray) -> float:
        return float(u[0] * v[1] - u[1] * v[0])

    inside = all(cross(corners[(k + 1) % 4] - corners[k], c - corners[k]) >= 0 for k in range(4))
    if inside:
        return True
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        t = np.clip((c - a) @ (b - a) / ((b - a) @ (b - a)), 0.0, 1.0)
        if np.linalg.norm(c - (a + t * (b - a))) <= r:
            return True
    return False


# ------------------------------------------------------------------ tests


def random_points_near(path: np.ndarray, rng: np.random.Generator, n: int, spread: float
                       ) -> np.ndarray:
    x = rng.uniform(path[0, 0] - 3.0, path[-1, 0] + 3.0, n)
    y = np.interp(x, path[:, 0], path[:, 1]) + rng.uniform(-spread, spread, n)
    return np.c_[x, y]


def test_path_task_projection_matches_brute_force() -> None:
    path, speed = sine_path()
    tracker = _core.PathTracker(path, speed)
    rng = np.random.default_rng(0)
    for x, y in random_points_near(path, rng, 150, 3.0):
        ref = ref_project(path, speed, x, y)
        for hint in (-1, ref["index"] + int(rng.integers(-30, 31)), ref["index"] + 150):
            s, idx, e_y, heading, kappa, v_ref = tracker.project(x, y, hint)
            got = {"s": s, "e_y": e_y, "heading": heading, "kappa": kappa, "v_ref": v_ref}
            for key, value in got.items():
                assert value == pytest.approx(ref[key], abs=TOL), (key, x, y, hint)


def _segment_d2(path: np.ndarray, i: int, x: float, y: float) -> float:
    """PathTracker::segment_param's squared distance, the same float operations."""
    x0, y0 = float(path[i, 0]), float(path[i, 1])
    dx, dy = float(path[i + 1, 0]) - x0, float(path[i + 1, 1]) - y0
    l2 = dx * dx + dy * dy
    t = ((x - x0) * dx + (y - y0) * dy) / l2 if l2 > 0.0 else 0.0
    if t < 0.0 and i > 0:
        t = 0.0
    if t > 1.0 and i < len(path) - 2:
        t = 1.0
    if t == 0.0:
        qx, qy = x0, y0
    elif t == 1.0:
        qx, qy = float(path[i + 1, 0]), float(path[i + 1, 1])
    else:
        qx, qy = x0 + t * dx, y0 + t * dy
    return (x - qx) * (x - qx) + (y - qy) * (y - qy)


@pytest.mark.parametrize("kw", [{}, {"length": 200.0, "spacing": 1.0, "max_curvature": 0.5,
                                     "speed_range": (2.0, 10.0)}],
                         ids=["default", "looping"])
def test_the_whole_path_search_finds_the_first_nearest_segment_exactly(kw) -> None:
    """The search over the whole path (a reset's first projection, hint -1) skips segments
    by a distance bound; it must find exactly the segment a plain scan over every segment
    finds (the first of the smallest d2), on courses that loop back over themselves too,
    from points near the path, on it and far away."""
    from vdsim_gym.envs.courses import random_course

    rng = np.random.default_rng(1)
    for seed in range(6):
        course = random_course(np.random.default_rng(seed), **kw)
        path, speed = course.path, course.speed
        tracker = _core.PathTracker(path, speed)
        near = path[rng.integers(0, len(path), 60)] + rng.normal(0.0, 2.0, (60, 2))
        on = path[rng.integers(0, len(path), 20)]
        far = rng.uniform(-500.0, 500.0, (20, 2))
        for x, y in np.concatenate([near, on, far]).tolist():
            d2 = [_segment_d2(path, i, x, y) for i in range(len(path) - 1)]
            want = int(np.argmin(d2))  # the first of the smallest
            assert tracker.project(x, y, -1)[1] == want, (seed, x, y)


def test_path_task_projection_sign_and_ends() -> None:
    path = np.c_[np.linspace(0.0, 10.0, 11), np.zeros(11)]
    tracker = _core.PathTracker(path, np.full(11, 5.0))
    s, _, e_y, heading, kappa, _ = tracker.project(4.3, 0.7)
    assert (s, e_y, heading, kappa) == pytest.approx((4.3, 0.7, 0.0, 0.0), abs=TOL)
    assert tracker.project(4.3, -0.7)[2] == pytest.approx(-0.7, abs=TOL)  # right: negative
    assert tracker.project(-2.0, 0.5)[0] == pytest.approx(-2.0, abs=TOL)  # before the start
    assert tracker.project(13.0, 0.5)[0] == pytest.approx(13.0, abs=TOL)  # past the end
    assert tracker.length == pytest.approx(10.0, abs=TOL)


def test_path_task_point_at_matches_interpolation() -> None:
    path, speed = sine_path()
    tracker = _core.PathTracker(path, speed)
    rng = np.random.default_rng(1)
    for s in np.r_[rng.uniform(-5.0, tracker.length + 30.0, 100), 0.0, tracker.length]:
        assert tracker.point_at(s) == pytest.approx(ref_point_at(path, s), abs=TOL)


def test_path_task_disc_footprint_matches_reference() -> None:
    rng = np.random.default_rng(2)
    front, rear, hw, radius = 2.15, 2.55, 0.9, 0.15
    outcomes = []
    for _ in range(3000):
        x, y, psi = rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-math.pi, math.pi)
        c = rng.uniform(-3.5, 3.5, 2)
        got = _core.disc_hits_footprint(c[0], c[1], radius, x, y, psi, front, rear, hw)
        assert got == ref_disc_hits_rect(c, radius, x, y, psi, front, rear, hw), (c, x, y, psi)
        outcomes.append(got)
    assert 0.1 < np.mean(outcomes) < 0.9  # both cases exercised


def test_path_task_cone_field_windowed_matches_all_cones() -> None:
    path, speed = sine_path()
    tracker = _core.PathTracker(path, speed)
    xs = np.arange(2.0, 118.0, 2.5)
    centre = np.interp(xs, path[:, 0], path[:, 1])
    cones = np.r_[np.c_[xs, centre + 1.1], np.c_[xs, centre - 1.1]]
    field = _core.ConeField(cones, tracker)
    front, rear, hw, radius = 2.15, 2.55, 0.9, 0.15
    rng = np.random.default_rng(3)
    n_hit_poses = 0
    for x, y in random_points_near(path, rng, 100, 0.6):
        s, _, _, heading, _, _ = tracker.project(x, y)
        psi = heading + rng.uniform(-0.4, 0.4)
        field.reset_hits()
        fresh = field.update(x, y, psi, s, front, rear, hw, radius)
        ref = np.array([ref_disc_hits_rect(c, radius, x, y, psi, front, rear, hw) for c in cones])
        np.testing.assert_array_equal(field.hits, ref)
        assert fresh == ref.sum() == field.total_hits
        assert field.update(x, y, psi, s, front, rear, hw, radius) == 0  # each cone once
        assert field.total_hits == ref.sum()
        n_hit_poses += bool(fresh)
    assert n_hit_poses > 5
