"""The drivable reference line of the ISO lane-change layouts.

Following lane centres exactly needs more lateral acceleration than a tyre has at the
test speeds, so a driver cuts the transitions within the lane widths. ``smooth_lateral``
finds that line: the least-curvature lateral offset y(x) (plus a little curvature rate)
that keeps the vehicle body inside every coned lane with a margin, solved with ADMM on a
coarse grid and joined by a clamped cubic spline. docs/COURSES.md gives the body model
and the figures.

The two linear-algebra steps (the QP and the spline's tridiagonal system) run in the C++
core in plain loops, not in numpy's BLAS: threaded BLAS rounds sums differently with its
thread count, which made the course (and every result after it) differ in the last bits
between ``OPENBLAS_NUM_THREADS`` settings, processes and Ray workers. Everything else
here is elementwise numpy, whose results do not depend on threads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vdsim_gym import _core
from vdsim_gym.errors import ConfigError, SolverError

LateralFn = Callable[[np.ndarray], np.ndarray]  # y(x) of a reference line


@dataclass(frozen=True)
class Lane:
    """A coned lane of a layout: [x0, x0 + length] with its centre line at y."""

    section: int
    x0: float
    length: float
    width: float
    y: float


SMOOTH_GRID = 1.0  # [m] node spacing of the smooth-line optimisation
SMOOTH_JERK_WEIGHT = 1.0  # [m^2] weight of (y''')^2 against (y'')^2
SMOOTH_ADMM_RHO = 0.03  # ADMM penalty (tuned for SMOOTH_GRID)
SMOOTH_ADMM_ITERS = 5000
REFERENCES: tuple[str, ...] = ("smooth", "centre")


def _body_rows(
    xn: np.ndarray, lanes: list[Lane], half_width: float, extent: tuple[float, float],
    margin: float, h: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Linear constraints lo <= A y <= hi keeping the body inside every coned lane.

    The body is a rectangle of half width `half_width` reaching extent[0] ahead of and
    extent[1] behind the path point, aligned with the path heading psi. Its side lines
    sit at y + (x' - x) tan(psi) +- half_width * cos(psi) at station x'; we bound
    y + d y' +- half_width (conservative: cos(psi) <= 1) at the two ends d of the part
    of the body that overlaps the lane, [max(x0 - x, -rear), min(x1 - x, front)] (the
    side is straight, so its two ends bound it). y' is the central difference.
    Neglected: the body's x extent shrinks by cos(psi) (~1 % at 8 deg) and the corners
    move in x by half_width * sin(psi).
    """
    n = len(xn)
    rows, lo, hi = [], [], []
    for lane in lanes:
        slack = (lane.width / 2.0 - half_width) - margin
        x0, x1 = lane.x0, lane.x0 + lane.length
        for i in range(1, n - 1):
            d_back, d_front = max(x0 - xn[i], -extent[1]), min(x1 - xn[i], extent[0])
            if d_front < d_back:
                continue
            for d in (d_back, d_front) if d_front > d_back else (d_back,):
                row = np.zeros(n)
                row[i] = 1.0
                row[i + 1] += d / (2.0 * h)
                row[i - 1] -= d / (2.0 * h)
                rows.append(row)
                lo.append(lane.y - slack)
                hi.append(lane.y + slack)
    return np.asarray(rows), np.asarray(lo), np.asarray(hi)


def _difference_gram(order: int, n: int) -> np.ndarray:
    """D^T D of the order-th difference matrix D of n nodes (np.diff(np.eye(n), order,
    axis=0)), band by band in integers: exact, as a float matmul of D would be, but
    without BLAS (whose threads a dense product wakes, then spin on the other cores)."""
    stencil = np.diff(np.eye(order + 1, dtype=np.int64), order, axis=0)[0]
    gram = np.zeros((n, n), np.int64)
    rows = np.arange(n - order)
    for a in range(order + 1):
        for b in range(order + 1):
            gram[rows + a, rows + b] += stencil[a] * stencil[b]
    return gram


def _solve_qp(
    hess: np.ndarray, a: np.ndarray, lo: np.ndarray, hi: np.ndarray, fixed: dict[int, float]
) -> np.ndarray:
    """min 1/2 y'Hy s.t. lo <= A y <= hi and y[k] = fixed[k], by ADMM (as in OSQP).

    ``_core.solve_box_qp`` eliminates the fixed unknowns, factors the banded x-update
    matrix once and iterates until primal and dual residuals are below 1e-6 (or
    SMOOTH_ADMM_ITERS); the caller checks the lane limits on the fine path and tightens
    them by any excess, so a small infeasibility is harmless.
    """
    fix = np.array(sorted(fixed), dtype=np.int64)
    y, _, _, _ = _core.solve_box_qp(
        hess, a.reshape(-1, hess.shape[0]), lo, hi, fix,
        np.array([fixed[k] for k in fix], dtype=float), rho=SMOOTH_ADMM_RHO, sigma=1e-6,
        alpha=1.6, max_iter=SMOOTH_ADMM_ITERS, tol=1e-6)
    return y


def _clamped_spline(xn: np.ndarray, yn: np.ndarray) -> LateralFn:
    """Cubic spline through (xn, yn) with zero slope at both ends; constant outside.

    C2 inside, C1 at the ends (slope 0 meets the straight lead-in and run-out).
    Returns y(x) for arrays x.
    """
    n, h = len(xn), float(xn[1] - xn[0])
    # second derivatives m: tridiagonal system of the uniform clamped spline
    mat = np.zeros((n, n))
    rhs = np.zeros(n)
    mat[0, :2] = (2.0, 1.0)
    rhs[0] = 6.0 * (yn[1] - yn[0]) / h**2
    mat[-1, -2:] = (1.0, 2.0)
    rhs[-1] = -6.0 * (yn[-1] - yn[-2]) / h**2
    i = np.arange(1, n - 1)
    mat[i, i - 1], mat[i, i], mat[i, i + 1] = 1.0, 4.0, 1.0
    rhs[1:-1] = 6.0 * (yn[2:] - 2.0 * yn[1:-1] + yn[:-2]) / h**2
    m = _core.solve_spd_banded(mat, rhs)  # symmetric, diagonally dominant, tridiagonal

    def lateral(x: np.ndarray) -> np.ndarray:
        xc = np.clip(np.asarray(x, dtype=float), xn[0], xn[-1])
        k = np.clip(((xc - xn[0]) // h).astype(int), 0, n - 2)
        t1 = xc - xn[k]
        t0 = xn[k + 1] - xc
        return (m[k] * t0**3 + m[k + 1] * t1**3) / (6.0 * h) + (
            (yn[k] / h - m[k] * h / 6.0) * t0 + (yn[k + 1] / h - m[k + 1] * h / 6.0) * t1
        )

    return lateral


def _body_violation(
    path: np.ndarray, lanes: list[Lane], half_width: float, extent: tuple[float, float],
    margin: float,
) -> float:
    """Largest excess of the body side over the lane limits (minus margin) on `path`.

    Same body model as `_body_rows`, with the heading of the polyline (np.gradient).
    Negative: every lane constraint holds with room to spare.
    """
    x, y = path.T
    slope = np.gradient(y, x)
    worst = -np.inf
    for lane in lanes:
        slack = lane.width / 2.0 - half_width - margin
        x0, x1 = lane.x0, lane.x0 + lane.length
        d_back, d_front = np.maximum(x0 - x, -extent[1]), np.minimum(x1 - x, extent[0])
        on = d_front >= d_back
        for d in (d_back[on], d_front[on]):
            worst = max(worst, float(np.max(np.abs(y[on] + d * slope[on] - lane.y))) - slack)
    return worst


def smooth_lateral(
    lanes: list[Lane], half_width: float, extent: tuple[float, float], margin: float,
    spacing: float,
) -> LateralFn:
    """y(x) of the smooth reference: least curvature^2 (+ a little jerk^2) line that keeps
    the body inside every coned lane; entry-lane centre for x <= first gate, exit-lane
    centre from the last gate on. Solved on a SMOOTH_GRID node grid, interpolated by a
    clamped cubic spline; if the spline (checked at `spacing`/4) pokes out of a lane,
    the node constraints are tightened by the excess and the problem solved again.
    """
    for lane in lanes:
        if lane.width / 2.0 - half_width - margin < 0.0:
            raise ConfigError(
                f"vehicle does not fit lane {lane.section}: width {lane.width:.3f} m < "
                f"vehicle_width + 2 margin = {2 * (half_width + margin):.3f} m"
            )
    h = SMOOTH_GRID
    x_first, x_last = lanes[0].x0, lanes[-1].x0 + lanes[-1].length
    pad = 3
    n_in = int(round((x_last - x_first) / h))
    xn = x_first + h * np.arange(-pad, n_in + pad + 1)
    n = len(xn)
    hess = _difference_gram(2, n) / h**3 + SMOOTH_JERK_WEIGHT * _difference_gram(3, n) / h**5
    fixed = {k: (lanes[0].y if xn[k] <= x_first + 1e-9 else lanes[-1].y)
             for k in range(n) if xn[k] <= x_first + 1e-9 or xn[k] >= x_last - 1e-9}
    tighten = 0.0
    x_check = np.linspace(x_first, x_last, int(math.ceil((x_last - x_first) / (spacing / 4))) + 1)
    for _ in range(6):
        a, lo, hi = _body_rows(xn, lanes, half_width, extent, margin + tighten, h)
        yn = _solve_qp(hess, a, lo, hi, fixed)
        inner = slice(pad, pad + n_in + 1)
        lateral = _clamped_spline(xn[inner], yn[inner])
        excess = _body_violation(
            np.column_stack((x_check, lateral(x_check))), lanes, half_width, extent, margin
        )
        if excess <= 0.0:
            return lateral
        tighten += excess + 1e-4
    raise SolverError("smooth reference: could not meet the lane constraints")
