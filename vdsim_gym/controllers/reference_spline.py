"""The MPC's reference line: the path ahead in the car's frame from a path env's
observation, the cubic spline through the projection and the preview points
(``reference_line``; ``spline_pieces`` holds it as fixed linear maps, ``spline_at``
evaluates it), extended straight past its ends."""

from __future__ import annotations

import functools

import numpy as np


@functools.lru_cache(maxsize=16)
def spline_pieces(distances: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference spline (``reference_line``) as fixed linear maps, along the path's
    axis p (the knots at p = 0 and ``distances``: x = x0 + p cos(e_psi) in the car's
    frame). Its slopes dy/dp at the knots solve the spline's tridiagonal system (de Boor,
    "A Practical Guide to Splines", ch. IV: the first slope clamped, no curvature at the
    last knot), so they are linear in g = [the knots' y; the first slope dy/dp]; so is
    each piece's cubic in tau = p - its start. Pieces: before the first knot (straight
    on at the first slope), between each two knots, past the last (straight on at the
    last slope). Returns the knots, the pieces' starts and C (len(g), pieces * 8): g @ C
    is, per piece, (a3, a2, a1, a0) x (y, dy/dp), y = ((a3 tau + a2) tau + a1) tau + a0
    and the same for dy/dp; C takes g with its first and last entries negated
    (``reference_line``'s e_y cos e_psi and sin e_psi)."""
    d = np.concatenate([[0.0], distances])
    n, h = len(d), np.diff(d)
    a, rhs = np.zeros((n, n)), np.zeros((n, n + 1))  # a slopes = rhs g
    a[0, 0], rhs[0, n] = 1.0, 1.0
    for i in range(1, n - 1):  # 3 (h_i (y_i - y_i-1) / h_i-1 + h_i-1 (y_i+1 - y_i) / h_i)
        a[i, i - 1], a[i, i], a[i, i + 1] = h[i], 2.0 * (h[i - 1] + h[i]), h[i - 1]
        rhs[i, i - 1] = -3.0 * h[i] / h[i - 1]
        rhs[i, i] = 3.0 * (h[i] / h[i - 1] - h[i - 1] / h[i])
        rhs[i, i + 1] = 3.0 * h[i - 1] / h[i]
    a[n - 1, n - 2], a[n - 1, n - 1] = 1.0, 2.0  # natural end: y'' = 0
    rhs[n - 1, n - 2], rhs[n - 1, n - 1] = -3.0 / h[-1], 3.0 / h[-1]
    slope = np.linalg.solve(a, rhs)  # (n, n + 1): the knots' slopes from g
    value = np.eye(n, n + 1)  # the knots' y from g
    c = np.zeros((n + 1, 4, 2, n + 1))  # piece, power 3..0, (y, dy/dp), g
    c[0, 3, 0], c[0, 2, 0] = value[0], slope[0]  # before the first knot
    for k in range(n - 1):  # the Hermite cubic between knots k and k + 1
        dy, hk = value[k + 1] - value[k], h[k]
        c[k + 1, 3, 0], c[k + 1, 2, 0] = value[k], slope[k]
        c[k + 1, 1, 0] = (3.0 * dy / hk - 2.0 * slope[k] - slope[k + 1]) / hk
        c[k + 1, 0, 0] = (slope[k] + slope[k + 1] - 2.0 * dy / hk) / (hk * hk)
    c[n, 3, 0], c[n, 2, 0] = value[n - 1], slope[n - 1]  # past the last knot
    c[:, 1:, 1] = c[:, :3, 0] * np.array([3.0, 2.0, 1.0])[:, None]  # d/dtau
    c[..., [0, n]] *= -1.0
    return d, np.concatenate([[0.0], d]), np.ascontiguousarray(c.reshape(-1, n + 1).T)


_CUBIC = np.array([3.0, 2.0, 1.0, 0.0])


def reference_line(e_y: np.ndarray, e_psi: np.ndarray, preview: np.ndarray,
                   distances: tuple[float, ...], x: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The path ahead in the car's frame (x forward, y left), per row: y and heading at
    x (R, M) of the cubic spline through the projection (-e_y sin e_psi, -e_y cos e_psi)
    and the preview points (x0 + s cos e_psi, preview_s) for s in ``distances``, that
    leaves the projection at the path's heading (slope -tan e_psi) and ends without
    curvature, extended straight past its ends (``spline_pieces``, along the path's axis
    p = (x - x0) / cos e_psi). e_y, e_psi (R,), preview (R, len(distances)); the heading
    error within 90 degrees (past it the preview lies behind the car and the line is an
    extrapolation). scipy's CubicSpline with bc_type=((1, -tan e_psi), (2, 0)) gives the
    same (tests/test_mpc.py)."""
    sin, cos = np.sin(e_psi), np.cos(e_psi)
    # the knots' y and the first slope along p (d/dp = cos d/dx: -tan e_psi cos e_psi),
    # the first and the last negated
    g = np.concatenate([(e_y * cos)[:, None], preview, sin[:, None]], axis=1)
    out = spline_at(g, (x + (e_y * sin)[:, None]) / cos[:, None], spline_pieces(distances))
    return out[..., 0], np.arctan(out[..., 1] / cos[:, None])


def spline_at(g: np.ndarray, pos: np.ndarray,
               pieces: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """y and dy/dp (R, M, 2) at pos (R, M) along the path's axis of the splines with
    knot data g (R, len(distances) + 2) (``spline_pieces``: ``pieces``); (M, 2) for one
    row's g and pos (M,)."""
    knots, starts, c = pieces
    count = len(starts)
    coef = (g @ c).reshape(len(g) * count, 4, 2)
    piece = knots.searchsorted(pos, side="right")
    powers = (pos - starts.take(piece))[..., None] ** _CUBIC  # tau^3 .. tau^0
    if len(g) > 1:
        piece += count * np.arange(len(g))[:, None]
    return (powers[..., None, :] @ coef.take(piece, axis=0))[..., 0, :]
