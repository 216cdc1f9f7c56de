"""Latency models: the computation delay c_k of each controller sample, one class per kind.

``FixedLatency(c)``, ``UniformLatency(lo, hi, seed)``, ``NormalLatency(mu, sd, seed)``
(clipped at zero), ``EmpiricalLatency(samples, seed)`` (a recorded set of delays, drawn
with replacement) and ``MeasuredLatency()`` (the controller's own wall time), each a
``LatencyModel`` that owns its check, its core spec, its label, its mean and its bound.
``LatencyModel.fixed(c)``, ``.uniform``, ``.normal``, ``.empirical``, ``.measured`` and
``.from_wallclock(result)`` (a mode-C run's delays) build them. The random models draw
from a generator in the C++ core seeded per run, so two runs with the same seed draw the
same delays, on any platform. The kinds are the core's (``_core.LatencyKind``). The delay
grammar of the command lines is ``vdsim_gym.config.delays``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.errors import ArgumentTypeError, ConfigError

# The kinds, in the core's order (its LatencyKind enum: the one list of them).
LATENCY_KINDS: tuple[str, ...] = tuple(_core.LatencyKind.__members__)
# Most recorded delays an empirical model keeps (each env core holds a copy).
MAX_EMPIRICAL_SAMPLES = 1_000_000
OVERRUN_POLICIES = ("skip", "queue")


# Longest computation delay any model may produce [s]: longer than every registered
# episode (40 s). A delay is simulated substep by substep until its command applies, so
# an absurd one (1e6 s) would be hours of work for nothing, and beyond ~2^53 substeps tick
# arithmetic overflows.
MAX_DELAY_S = 60.0
# Largest |z| Box-Muller can return from 53-bit uniforms (sqrt(-2 ln 2^-53) = 8.57): a
# normal model with mu + NORMAL_Z_MAX sd <= MAX_DELAY_S never draws beyond the bound.
NORMAL_Z_MAX = 8.6
_HOW = ("build it with LatencyModel.fixed(c), .uniform(lo, hi, seed), .normal(mu, sd, seed), "
        ".empirical(samples, seed) or .measured()")


def _check_seconds(value: Any, what: str) -> float:
    if not is_real(value) or not math.isfinite(value):
        raise ConfigError(f"{what} must be a finite number of seconds, got {value!r}")
    if value < 0:
        raise ConfigError(f"{what} must be >= 0 s (a delay cannot be negative), got {value!r}")
    if value > MAX_DELAY_S:
        raise ConfigError(
            f"{what} = {value!r} s exceeds the longest supported delay, MAX_DELAY_S = "
            f"{MAX_DELAY_S:g} s (longer than any episode); delays are seconds, not "
            "milliseconds: 20 ms is 0.02"
        )
    return float(value)


def check_seed(seed: Any) -> int:
    """A generator seed: an integer in [0, 2**64) (the core's uint64)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= seed < 2**64:
        raise ConfigError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return int(seed)


def check_delay_fits(what: str, delay: float, time_limit: float | None, fix: str) -> None:
    """The one check that a delay fits the episode: a ConfigError when ``delay`` [s] (a
    model's mean delay, or the top of a randomized range) is as long as the episode's
    ``time_limit`` [s] or longer (None: no limit, nothing to check). ``what`` names the
    delay and its source ("latency LatencyModel.fixed(20)", "randomize['obs_delay']"),
    ``fix`` the 20 ms form of it ("LatencyModel.fixed(0.02)"): such a delay is almost
    always milliseconds written as seconds. Used for the computation delay (``latency=``),
    the sensor delay (``obs_delay=``), the network delay (``NetworkModel(jitter=)``) and
    their ``randomize`` ranges."""
    if time_limit is not None and delay >= time_limit:
        raise ConfigError(
            f"{what} is {delay:g} s, as long as the episode (time_limit = {time_limit:g} s) "
            "or longer: nothing it delays would arrive before the episode ends. Delays are "
            f"in seconds, not milliseconds: for 20 ms write {fix}")


def _ms(v: float) -> str:
    return f"{v * 1e3:g}"


class LatencyModel:
    """A computation-delay model: one of the kind classes below, each a frozen dataclass
    whose fields are checked however it is built (every delay it can draw lies in [0,
    MAX_DELAY_S]). Build one with the class methods or the kind's class."""

    kind: ClassVar[str]  # the core's LatencyKind name
    seed: int = 0  # the generator's seed (the random kinds have it as a field)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind not in LATENCY_KINDS:  # a class per core kind, no other
            raise ArgumentTypeError(f"{cls.__name__}.kind {cls.kind!r} is not a core LatencyKind "
                            f"{LATENCY_KINDS}")

    # ---- constructors by kind
    @staticmethod
    def fixed(c: float) -> FixedLatency:
        """c_k = c for every sample [s]."""
        return FixedLatency(c)

    @staticmethod
    def uniform(lo: float, hi: float, seed: int = 0) -> UniformLatency:
        """c_k ~ U[lo, hi] [s], from a generator seeded with ``seed`` at each run."""
        return UniformLatency(lo, hi, seed)

    @staticmethod
    def normal(mu: float, sd: float, seed: int = 0) -> NormalLatency:
        """c_k = max(0, N(mu, sd^2)) [s] with mu >= 0: clipped, a computation cannot end
        before it starts."""
        return NormalLatency(mu, sd, seed)

    @staticmethod
    def empirical(samples: Any, seed: int = 0, *, column: str = "c_k") -> EmpiricalLatency:
        """c_k drawn from recorded delays [s] with replacement, each with probability 1/n,
        from a generator seeded with ``seed`` at each run (the same seed, the same draws).

        ``samples``: a sequence or NumPy array of delays in seconds, or the path of a CSV
        file whose column ``column`` holds them (a header row, one delay a row). Every
        delay must be finite and in [0, MAX_DELAY_S]; at most MAX_EMPIRICAL_SAMPLES."""
        if isinstance(samples, (str, Path)):
            samples = _csv_column(Path(samples), column)
        return EmpiricalLatency(samples, seed)

    @staticmethod
    def from_wallclock(result: Any, seed: int = 0) -> EmpiricalLatency:
        """An empirical model of the controller's computation delays measured in a mode-C
        run (``ClosedLoopEval(mode="wallclock").run()``: its ``samples["c_k"]``, the
        timed compute of each applied sample), so a controller measured once on the
        target host is swept with its real distribution."""
        samples = getattr(result, "samples", None)
        if samples is None or "c_k" not in samples:
            raise ConfigError("from_wallclock needs an EvalResult with samples['c_k'] (a "
                              f"ClosedLoopEval run), got {type(result).__name__}")
        mode = getattr(result, "meta", {}).get("eval_mode")
        if mode not in (None, "wallclock"):
            raise ConfigError(f"from_wallclock takes a mode-C run (mode='wallclock'); this "
                              f"result is mode {mode!r}, whose c_k come from its own model")
        c = np.asarray(samples["c_k"], dtype=float)
        applied = samples.get("applied") if hasattr(samples, "get") else None
        if applied is not None:
            c = c[np.asarray(applied, dtype=bool)]
        if c.size == 0:
            raise ConfigError("the wall-clock run has no applied sample to build a "
                              "distribution from; run it longer")
        return EmpiricalLatency(tuple(c.tolist()), seed)

    @staticmethod
    def measured() -> MeasuredLatency:
        """c_k = wall time of the controller call (time.perf_counter); not reproducible."""
        return MeasuredLatency()

    # ---- what every kind answers
    @property
    def reproducible(self) -> bool:
        return True

    @property
    def max_delay(self) -> float:
        """The longest delay this model can draw [s] (measured: MAX_DELAY_S, its bound)."""
        raise NotImplementedError

    @property
    def mean_delay(self) -> float:
        """Mean delay [s] of the draws (measured: nan, unknown in advance)."""
        raise NotImplementedError

    def label(self) -> str:
        """A short label (sweep scenario keys, tables): "fixed 10 ms"."""
        raise NotImplementedError

    def _params(self) -> dict[str, Any]:
        raise NotImplementedError

    def _fill(self, spec: _core.LatencySpec) -> None:
        """Write this kind's parameters into the core's spec."""

    def spec(self, seed: int | None = None) -> _core.LatencySpec:
        """The core's description of this model; ``seed`` overrides the model's own."""
        s = _core.LatencySpec()
        s.kind = getattr(_core.LatencyKind, self.kind)
        self._fill(s)
        s.seed = self.seed if seed is None else seed
        return s

    def sampler(self, seed: int | None = None) -> _core.LatencySampler:
        """A fresh generator of delays (one per run: same seed, same delays)."""
        return _core.LatencySampler(self.spec(seed))

    def describe(self) -> dict[str, Any]:
        """Parameters for result metadata."""
        return {"kind": self.kind, **self._params()}


@dataclass(frozen=True)
class FixedLatency(LatencyModel):
    """c_k = c for every sample [s]."""

    kind: ClassVar[str] = "fixed"
    c: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", _check_seconds(self.c, "fixed latency c"))

    @property
    def max_delay(self) -> float:
        return self.c

    @property
    def mean_delay(self) -> float:
        return self.c

    def label(self) -> str:
        return f"fixed {_ms(self.c)} ms"

    def _params(self) -> dict[str, Any]:
        return {"c_s": self.c}

    def _fill(self, spec: _core.LatencySpec) -> None:
        spec.c = self.c


@dataclass(frozen=True)
class UniformLatency(LatencyModel):
    """c_k ~ U[lo, hi] [s], from a generator seeded with ``seed`` at each run."""

    kind: ClassVar[str] = "uniform"
    lo: float
    hi: float
    seed: int = 0

    def __post_init__(self) -> None:
        lo, hi = _check_seconds(self.lo, "uniform lo"), _check_seconds(self.hi, "uniform hi")
        if lo > hi:
            raise ConfigError(f"uniform latency needs lo <= hi, got lo={lo} > hi={hi}; swap them")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "seed", check_seed(self.seed))

    @property
    def max_delay(self) -> float:
        return self.hi

    @property
    def mean_delay(self) -> float:
        return (self.lo + self.hi) / 2.0

    def label(self) -> str:
        return f"uniform {_ms(self.lo)}-{_ms(self.hi)} ms (seed {self.seed})"

    def _params(self) -> dict[str, Any]:
        return {"lo_s": self.lo, "hi_s": self.hi, "seed": self.seed}

    def _fill(self, spec: _core.LatencySpec) -> None:
        spec.lo, spec.hi = self.lo, self.hi


@dataclass(frozen=True)
class NormalLatency(LatencyModel):
    """c_k = max(0, N(mu, sd^2)) [s] with mu >= 0: clipped, a computation cannot end
    before it starts."""

    kind: ClassVar[str] = "normal"
    mu: float
    sd: float
    seed: int = 0

    def __post_init__(self) -> None:
        mu = _check_seconds(self.mu, "normal latency mu")
        sd = _check_seconds(self.sd, "normal latency sd")
        if mu + NORMAL_Z_MAX * sd > MAX_DELAY_S:
            raise ConfigError(
                f"normal latency mu={mu} s, sd={sd} s can draw delays up to mu + {NORMAL_Z_MAX} "
                f"sd = {mu + NORMAL_Z_MAX * sd:.6g} s, beyond MAX_DELAY_S = {MAX_DELAY_S:g} s; "
                "use a smaller sd (delays are in seconds)")
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "sd", sd)
        object.__setattr__(self, "seed", check_seed(self.seed))

    @property
    def max_delay(self) -> float:
        return self.mu + NORMAL_Z_MAX * self.sd

    @property
    def mean_delay(self) -> float:
        """The mean of max(0, N(mu, sd^2)), the clipped draw."""
        mu, sd = self.mu, self.sd
        if sd == 0.0:
            return mu
        z = mu / sd
        cdf = 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
        pdf = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        return mu * cdf + sd * pdf

    def label(self) -> str:
        return f"normal {_ms(self.mu)}+-{_ms(self.sd)} ms (seed {self.seed})"

    def _params(self) -> dict[str, Any]:
        return {"mu_s": self.mu, "sd_s": self.sd, "seed": self.seed, "clipped_at": 0.0}

    def _fill(self, spec: _core.LatencySpec) -> None:
        spec.mu, spec.sd = self.mu, self.sd


@dataclass(frozen=True)
class EmpiricalLatency(LatencyModel):
    """c_k drawn with replacement from recorded delays [s] (``LatencyModel.empirical``
    also reads them from a CSV). ``samples`` is kept ascending: the same set in any order
    is the same model and draws the same delays."""

    kind: ClassVar[str] = "empirical"
    samples: tuple[float, ...] = field(repr=False)
    seed: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "samples", _check_samples(self.samples))
        object.__setattr__(self, "seed", check_seed(self.seed))

    @property
    def max_delay(self) -> float:
        return self.samples[-1]

    @property
    def mean_delay(self) -> float:
        return math.fsum(self.samples) / len(self.samples)

    def label(self) -> str:
        return (f"empirical n={len(self.samples)} mean {self.mean_delay * 1e3:.4g} ms "
                f"(seed {self.seed})")

    def _params(self) -> dict[str, Any]:
        x = np.asarray(self.samples)
        return {"n": int(x.size), "mean_s": self.mean_delay, "min_s": float(x[0]),
                "p50_s": float(np.median(x)), "p99_s": float(np.quantile(x, 0.99)),
                "max_s": float(x[-1]), "seed": self.seed}

    def _fill(self, spec: _core.LatencySpec) -> None:
        spec.samples = list(self.samples)


@dataclass(frozen=True)
class MeasuredLatency(LatencyModel):
    """c_k = the wall time of the controller's call (time.perf_counter): not
    reproducible, and bounded by MAX_DELAY_S only."""

    kind: ClassVar[str] = "measured"

    @property
    def reproducible(self) -> bool:
        return False

    @property
    def max_delay(self) -> float:
        return MAX_DELAY_S

    @property
    def mean_delay(self) -> float:
        return math.nan

    def label(self) -> str:
        return "measured"

    def _params(self) -> dict[str, Any]:
        return {"clock": "time.perf_counter"}


def _check_samples(samples: Any) -> tuple[float, ...]:
    """An empirical model's recorded delays, checked and sorted."""
    if isinstance(samples, (str, bytes)) or not isinstance(samples, (Sequence, np.ndarray)):
        raise ConfigError(f"empirical latency samples must be a sequence or array of delays "
                          f"[s] (or a CSV path), got {type(samples).__name__}")
    try:
        raw = np.asarray(samples)
    except (TypeError, ValueError):
        raw = np.asarray([None], dtype=object)
    if raw.dtype.kind not in "iuf":  # booleans (True is not 1 s), strings, objects
        raise ConfigError(
            "empirical latency samples must be real numbers of seconds (not booleans, "
            f"strings or objects), got {str(samples)[:80]}; pass the recorded delays, e.g. "
            "LatencyModel.empirical([0.010, 0.012, 0.031])")
    x = raw.astype(float)
    if x.ndim != 1 or x.size == 0:
        raise ConfigError(f"empirical latency needs a non-empty 1-D set of delays, got shape "
                          f"{x.shape}")
    if x.size > MAX_EMPIRICAL_SAMPLES:
        raise ConfigError(f"empirical latency keeps at most {MAX_EMPIRICAL_SAMPLES} delays, "
                          f"got {x.size}; subsample them (np.random.default_rng(0).choice)")
    bad = ~np.isfinite(x) | (x < 0) | (x > MAX_DELAY_S)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ConfigError(
            f"empirical latency sample {i} is {float(x[i])!r}: every delay must be finite, >= 0 s "
            f"and <= MAX_DELAY_S = {MAX_DELAY_S:g} s (delays are seconds: 20 ms is 0.02)")
    return tuple(float(v) for v in np.sort(x))


def _csv_column(path: Path, column: str) -> np.ndarray:
    """The numbers in ``column`` of a CSV file with a header row; an empty cell (a sample
    without a delay, such as one a run stopped before applying) is skipped."""
    import csv

    from vdsim_gym._files import open_csv

    with open_csv(path, "an empirical latency CSV", max_bytes=64 * 2**20) as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or column not in reader.fieldnames:
            raise ConfigError(f"{path}: no column {column!r} (columns: "
                              f"{', '.join(reader.fieldnames or [])}); pass column=...")
        out = []
        for line, row in enumerate(reader, start=2):
            if row[column] == "":
                continue
            try:
                out.append(float(row[column]))
            except (TypeError, ValueError):
                raise ConfigError(f"{path}, line {line}: {column} = {row[column]!r} is not a "
                                  "number of seconds") from None
    return np.asarray(out)


def check_overrun(overrun: Any) -> str:
    if overrun not in OVERRUN_POLICIES:
        raise ConfigError(f"overrun must be one of {OVERRUN_POLICIES}, got {overrun!r}")
    return overrun


def check_latency(model: Any, what: str = "latency", *, measured: bool = True) -> LatencyModel:
    """The one check of a latency model given to the package (``latency=``, ``obs_delay=``,
    a network's ``jitter``, a sweep's ``latencies``): a LatencyModel, and where ``measured``
    is False not ``MeasuredLatency`` (a delay drawn from a model, not timed). A number gets
    the fix that names its model."""
    if is_real(model):
        raise ConfigError(
            f"{what} must be a LatencyModel, got the number {model!r}; for a delay of "
            f"{model!s} s pass {what}=LatencyModel.fixed({model!s}) (from vdsim_gym import "
            "LatencyModel)")
    if not isinstance(model, LatencyModel):
        raise ConfigError(f"{what} must be a LatencyModel: {_HOW}; got {model!r}")
    if not measured and not model.reproducible:
        raise ConfigError(
            f"{what}=LatencyModel.measured(): this delay is drawn from a model; measured() "
            "is the controller's own compute time (latency=). Pass a fixed, uniform, normal "
            "or empirical model (e.g. LatencyModel.from_wallclock(result))")
    return model


def check_obs_delay(obs_delay: Any) -> LatencyModel | None:
    """A sensor delay (``obs_delay=``): None, or a LatencyModel the core draws the
    observation's age from (fixed, uniform, normal or empirical; not measured)."""
    return None if obs_delay is None else check_latency(obs_delay, "obs_delay", measured=False)
