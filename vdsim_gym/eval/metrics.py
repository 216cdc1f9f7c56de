"""Tracking metrics: the signed lateral error of a trajectory against a reference polyline.

``lateral_error`` uses the same geometry as the environments' path projection (the core's
``PathTracker``): the closest point of the polyline, whose first and last segments extend
as rays (so a point before the start or past the end is measured along the end segment's
normal), and the sign of the cross product of the segment direction with the offset
(+ when the point is LEFT of the path, ISO 8855).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError
from vdsim_gym.tracking import check_path, ey_stats

_CHUNK = 4096  # points per block: bounds the (points x segments) work arrays


def lateral_error(xy: Any, path: Any) -> np.ndarray:
    """Signed distance [m] of each point of ``xy`` (N, 2) from the polyline ``path`` (M, 2).

    The distance is to the closest point of the polyline (end segments extended as rays);
    the sign is + left of the path, - right. Returns shape (N,); a single point (2,)
    gives shape (1,).
    """
    p = check_path(path)
    pts = np.asarray(xy, dtype=float)
    if pts.shape == (2,):
        pts = pts.reshape(1, 2)
    if pts.ndim != 2 or pts.shape[1] != 2:
        raise ConfigError(f"xy must have shape (N, 2) (or (2,)), got {np.shape(xy)}")
    a, d = p[:-1], np.diff(p, axis=0)  # segment starts and directions, (S, 2)
    l2 = np.sum(d * d, axis=1)
    lo = np.zeros(len(d))
    hi = np.ones(len(d))
    lo[0], hi[-1] = -np.inf, np.inf  # rays before the start and past the end
    out = np.empty(len(pts))
    for start in range(0, len(pts), _CHUNK):
        q = pts[start:start + _CHUNK]
        rel = q[:, None, :] - a[None, :, :]  # (n, S, 2)
        t = np.clip(np.einsum("nsk,sk->ns", rel, d) / l2, lo, hi)
        off = rel - t[:, :, None] * d[None, :, :]  # point minus closest point of each segment
        d2 = np.sum(off * off, axis=2)
        j = np.argmin(d2, axis=1)  # first minimum, as the core's search
        rows = np.arange(len(q))
        o, dj = off[rows, j], d[j]
        cross = dj[:, 0] * o[:, 1] - dj[:, 1] * o[:, 0]
        out[start:start + len(q)] = np.copysign(np.sqrt(d2[rows, j]), cross)
    return out


def tracking_stats(e_y: Any) -> dict[str, float | int]:
    """e_y RMSE and max |e_y| [m] over the given samples (NaN when there are none)."""
    e = np.asarray(e_y, dtype=float).reshape(-1)
    rmse, emax = ey_stats(e)
    return {"e_y_rmse_m": rmse, "e_y_max_m": emax, "e_y_n": int(e.size)}
