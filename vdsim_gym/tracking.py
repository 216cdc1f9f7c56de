"""Path-tracking helpers shared by the envs, the evaluation and the reports (one home).

``ey_stats`` is the e_y RMS and max of an episode, as every report states them;
``check_path`` validates a reference polyline with the error users see everywhere.
Imports numpy only, so the envs can use it below the evaluation layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError


def ey_stats(e_y: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """(RMS, max |.|) of an episode's per-step e_y [m]; (nan, nan) for no samples."""
    e = np.ascontiguousarray(e_y, dtype=float).reshape(-1)
    if e.size == 0:
        return math.nan, math.nan
    # np.mean's sum and division (pairwise add.reduce, then / n) without its errstate
    # wrapper: the same bits, a few microseconds less per call.
    return math.sqrt(float(np.add.reduce(e * e)) / e.size), float(np.max(np.abs(e)))


def check_path(path: Any, what: str = "reference path") -> np.ndarray:
    """An (M >= 2, 2) finite polyline without repeated points, as a float array."""
    p = np.asarray(path, dtype=float)
    if p.ndim != 2 or p.shape[1] != 2 or p.shape[0] < 2:
        raise ConfigError(f"{what} must be an (M >= 2, 2) polyline, got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ConfigError(f"{what} must be finite")
    seg = np.hypot(*np.diff(p, axis=0).T)
    if not np.all(seg > 0):
        i = int(np.argmin(seg))
        raise ConfigError(f"{what} points {i} and {i + 1} coincide; remove repeated points")
    return p


__all__ = ["check_path", "ey_stats"]
