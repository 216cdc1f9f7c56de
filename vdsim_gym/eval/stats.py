"""Interval statistics for sweeps, without scipy: the Student t 0.975 quantile
(``t_quantile_975``) and a mean with its 95 % interval (``mean_interval``). The RMS and max
|e_y| of an episode are ``vdsim_gym.tracking.ey_stats``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from vdsim_gym.errors import ConfigError

# t_{0.975, df} for df = 1..30 (two-sided 95 %); beyond 30 the Cornish-Fisher expansion
# below is within 1e-6 of the exact quantile (tests check both against the t density).
_T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
         2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
         2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
         2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
         2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (no scipy)."""
    if df < 1:
        raise ConfigError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160.0
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, lo, hi): mean +- t_{0.975, n-1} s / sqrt(n), s the sample standard
    deviation. n = 1 gives NaN bounds, n = 0 NaN everywhere."""
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(np.mean(x))
    if n == 1:
        return mean, math.nan, math.nan
    half = t_quantile_975(n - 1) * float(np.std(x, ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


__all__ = ["mean_interval", "t_quantile_975"]
