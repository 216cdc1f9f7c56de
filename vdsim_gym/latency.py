"""Latency models: the computation delay c_k of each controller sample.

``LatencyModel.fixed(c)``, ``.uniform(lo, hi, seed)``, ``.normal(mu, sd, seed)`` (clipped
at zero) and ``.measured()`` (the controller's own wall time). The random models draw
from a generator in the C++ core seeded per run, so two runs with the same seed draw the
same delays, on any platform.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from vdsim_gym import _core

LATENCY_KINDS = ("fixed", "uniform", "normal", "measured")
OVERRUN_POLICIES = ("skip", "queue")


def _check_seconds(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{what} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be >= 0 s (a delay cannot be negative), got {value!r}")
    return float(value)


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return seed


@dataclass(frozen=True)
class LatencyModel:
    """A computation-delay model; build it with the class methods."""

    kind: str
    a: float = 0.0  # fixed: c; uniform: lo; normal: mu [s]
    b: float = 0.0  # uniform: hi; normal: sd [s]
    seed: int = 0

    @classmethod
    def fixed(cls, c: float) -> LatencyModel:
        """c_k = c for every sample [s]."""
        return cls("fixed", _check_seconds(c, "fixed latency c"))

    @classmethod
    def uniform(cls, lo: float, hi: float, seed: int = 0) -> LatencyModel:
        """c_k ~ U[lo, hi] [s], from a generator seeded with ``seed`` at each run."""
        lo, hi = _check_seconds(lo, "uniform lo"), _check_seconds(hi, "uniform hi")
        if lo > hi:
            raise ValueError(f"uniform latency needs lo <= hi, got lo={lo} > hi={hi}; swap them")
        return cls("uniform", lo, hi, _check_seed(seed))

    @classmethod
    def normal(cls, mu: float, sd: float, seed: int = 0) -> LatencyModel:
        """c_k = max(0, N(mu, sd^2)) [s]: clipped, a computation cannot end before it starts."""
        if isinstance(mu, bool) or not isinstance(mu, (int, float)) or not math.isfinite(mu):
            raise ValueError(f"normal latency mu must be a finite number of seconds, got {mu!r}")
        sd = _check_seconds(sd, "normal latency sd")
        return cls("normal", float(mu), sd, _check_seed(seed))

    @classmethod
    def measured(cls) -> LatencyModel:
        """c_k = wall time of the controller call (time.perf_counter); not reproducible."""
        return cls("measured")

    @property
    def reproducible(self) -> bool:
        return self.kind != "measured"

    def spec(self, seed: int | None = None) -> _core.LatencySpec:
        """The core's description of this model; ``seed`` overrides the model's own."""
        s = _core.LatencySpec()
        s.kind = getattr(_core.LatencyKind, "external" if self.kind == "measured" else self.kind)
        s.a, s.b = self.a, self.b
        s.seed = self.seed if seed is None else seed
        return s

    def sampler(self, seed: int | None = None) -> _core.LatencySampler:
        """A fresh generator of delays (one per run: same seed, same delays)."""
        return _core.LatencySampler(self.spec(seed))

    def describe(self) -> dict[str, Any]:
        """Parameters for result metadata."""
        params = {
            "fixed": {"c_s": self.a},
            "uniform": {"lo_s": self.a, "hi_s": self.b, "seed": self.seed},
            "normal": {"mu_s": self.a, "sd_s": self.b, "seed": self.seed, "clipped_at": 0.0},
            "measured": {"clock": "time.perf_counter"},
        }[self.kind]
        return {"kind": self.kind, **params}


def check_overrun(overrun: Any) -> str:
    if overrun not in OVERRUN_POLICIES:
        raise ValueError(f"overrun must be one of {OVERRUN_POLICIES}, got {overrun!r}")
    return overrun


def check_latency(latency: Any) -> LatencyModel:
    if not isinstance(latency, LatencyModel):
        raise ValueError(
            "latency must be a LatencyModel (LatencyModel.fixed(0.01), .uniform(lo, hi, seed), "
            f".normal(mu, sd, seed) or .measured()), got {latency!r}"
        )
    return latency
