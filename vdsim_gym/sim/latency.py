"""Latency models: the computation delay c_k of each controller sample.

``LatencyModel.fixed(c)``, ``.uniform(lo, hi, seed)``, ``.normal(mu, sd, seed)`` (clipped
at zero), ``.empirical(samples, seed)`` (a recorded set of delays, drawn with
replacement; ``.from_wallclock(result)`` takes a mode-C run's) and ``.measured()`` (the
controller's own wall time). The random models draw
from a generator in the C++ core seeded per run, so two runs with the same seed draw the
same delays, on any platform. ``parse_delays("0,5,10ms")`` reads the delay lists and
latency specs of every command line (``vdsim-gym sweep --delays``, ``agents/train.py
--latency``) into models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.errors import ConfigError

LATENCY_KINDS = ("fixed", "uniform", "normal", "measured", "empirical")
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


def _check_seed(seed: Any) -> int:
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


@dataclass(frozen=True)
class LatencyModel:
    """A computation-delay model; build it with the class methods.

    The fields are checked whichever way the model is built (the class methods or the
    constructor): every delay it can draw lies in [0, MAX_DELAY_S].
    """

    kind: str
    a: float = 0.0  # first parameter [s]: fixed c, uniform lo, normal mu (see the properties)
    b: float = 0.0  # second parameter [s]: uniform hi, normal sd
    seed: int = 0
    # empirical: the recorded delays [s], ascending (the same set in any order is the same
    # model and draws the same delays)
    samples: tuple[float, ...] = field(default=(), repr=False)

    # The parameters by name (None where the kind has no such parameter).
    @property
    def c(self) -> float | None:
        """Fixed delay [s]."""
        return self.a if self.kind == "fixed" else None

    @property
    def lo(self) -> float | None:
        """Uniform lower bound [s]."""
        return self.a if self.kind == "uniform" else None

    @property
    def hi(self) -> float | None:
        """Uniform upper bound [s]."""
        return self.b if self.kind == "uniform" else None

    @property
    def mu(self) -> float | None:
        """Normal mean before clipping at 0 [s]."""
        return self.a if self.kind == "normal" else None

    @property
    def sd(self) -> float | None:
        """Normal standard deviation [s]."""
        return self.b if self.kind == "normal" else None

    def __post_init__(self) -> None:
        if self.kind not in LATENCY_KINDS:
            raise ConfigError(f"unknown latency kind {self.kind!r}; kinds are {LATENCY_KINDS}: "
                              f"{_HOW}")
        name = {"fixed": ("fixed latency c", "b"), "uniform": ("uniform lo", "uniform hi"),
                "normal": ("normal latency mu", "normal latency sd"),
                "measured": ("a", "b"), "empirical": ("a", "b")}[self.kind]
        a, b = _check_seconds(self.a, name[0]), _check_seconds(self.b, name[1])
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "seed", _check_seed(self.seed))
        object.__setattr__(self, "samples", _check_samples(self.samples, self.kind))
        if self.kind in ("fixed", "measured", "empirical") and (
                b != 0.0 or (self.kind != "fixed" and a != 0.0)):
            raise ConfigError(f"LatencyModel {self.kind!r} takes no other parameters, got "
                              f"a={a}, b={b}: {_HOW}")
        if self.kind == "uniform" and a > b:
            raise ConfigError(f"uniform latency needs lo <= hi, got lo={a} > hi={b}; swap them")
        if self.kind == "normal" and a + NORMAL_Z_MAX * b > MAX_DELAY_S:
            raise ConfigError(
                f"normal latency mu={a} s, sd={b} s can draw delays up to mu + {NORMAL_Z_MAX} "
                f"sd = {a + NORMAL_Z_MAX * b:.6g} s, beyond MAX_DELAY_S = {MAX_DELAY_S:g} s; "
                "use a smaller sd (delays are in seconds)")

    @classmethod
    def fixed(cls, c: float) -> LatencyModel:
        """c_k = c for every sample [s]."""
        return cls("fixed", c)

    @classmethod
    def uniform(cls, lo: float, hi: float, seed: int = 0) -> LatencyModel:
        """c_k ~ U[lo, hi] [s], from a generator seeded with ``seed`` at each run."""
        return cls("uniform", lo, hi, seed)

    @classmethod
    def normal(cls, mu: float, sd: float, seed: int = 0) -> LatencyModel:
        """c_k = max(0, N(mu, sd^2)) [s] with mu >= 0: clipped, a computation cannot end
        before it starts."""
        return cls("normal", mu, sd, seed)

    @classmethod
    def empirical(cls, samples: Any, seed: int = 0, *, column: str = "c_k") -> LatencyModel:
        """c_k drawn from recorded delays [s] with replacement, each with probability 1/n,
        from a generator seeded with ``seed`` at each run (the same seed, the same draws).

        ``samples``: a sequence or NumPy array of delays in seconds, or the path of a CSV
        file whose column ``column`` holds them (a header row, one delay a row). Every
        delay must be finite and in [0, MAX_DELAY_S]; at most MAX_EMPIRICAL_SAMPLES."""
        if isinstance(samples, (str, Path)):
            samples = _csv_column(Path(samples), column)
        return cls("empirical", seed=seed, samples=samples)

    @classmethod
    def from_wallclock(cls, result: Any, seed: int = 0) -> LatencyModel:
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
        return cls.empirical(c, seed)

    @classmethod
    def measured(cls) -> LatencyModel:
        """c_k = wall time of the controller call (time.perf_counter); not reproducible."""
        return cls("measured")

    @property
    def reproducible(self) -> bool:
        return self.kind != "measured"

    @property
    def max_delay(self) -> float:
        """The longest delay this model can draw [s] (measured: MAX_DELAY_S, its bound)."""
        if self.kind == "empirical":
            return self.samples[-1]
        return {"fixed": self.a, "uniform": self.b,
                "normal": self.a + NORMAL_Z_MAX * self.b, "measured": MAX_DELAY_S}[self.kind]

    @property
    def mean_delay(self) -> float:
        """Mean delay [s] of the draws: fixed c, uniform (lo + hi) / 2, normal the mean
        of max(0, N(mu, sd^2)) (the clipped draw); measured: nan (unknown in advance)."""
        if self.kind == "fixed":
            return self.a
        if self.kind == "empirical":
            return math.fsum(self.samples) / len(self.samples)
        if self.kind == "uniform":
            return (self.a + self.b) / 2.0
        if self.kind == "normal":
            mu, sd = self.a, self.b
            if sd == 0.0:
                return mu
            z = mu / sd
            cdf = 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
            pdf = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
            return mu * cdf + sd * pdf
        return math.nan

    def spec(self, seed: int | None = None) -> _core.LatencySpec:
        """The core's description of this model; ``seed`` overrides the model's own."""
        s = _core.LatencySpec()
        s.kind = getattr(_core.LatencyKind, self.kind)
        if self.kind == "fixed":
            s.c = self.a
        elif self.kind == "uniform":
            s.lo, s.hi = self.a, self.b
        elif self.kind == "normal":
            s.mu, s.sd = self.a, self.b
        elif self.kind == "empirical":
            s.samples = list(self.samples)
        s.seed = self.seed if seed is None else seed
        return s

    def sampler(self, seed: int | None = None) -> _core.LatencySampler:
        """A fresh generator of delays (one per run: same seed, same delays)."""
        return _core.LatencySampler(self.spec(seed))

    def describe(self) -> dict[str, Any]:
        """Parameters for result metadata."""
        params: dict[str, dict[str, Any]] = {
            "fixed": {"c_s": self.a},
            "uniform": {"lo_s": self.a, "hi_s": self.b, "seed": self.seed},
            "normal": {"mu_s": self.a, "sd_s": self.b, "seed": self.seed, "clipped_at": 0.0},
            "measured": {"clock": "time.perf_counter"},
        }
        if self.kind == "empirical":
            x = np.asarray(self.samples)
            params["empirical"] = {"n": int(x.size), "mean_s": self.mean_delay,
                                   "min_s": float(x[0]), "p50_s": float(np.median(x)),
                                   "p99_s": float(np.quantile(x, 0.99)),
                                   "max_s": float(x[-1]), "seed": self.seed}
        return {"kind": self.kind, **params[self.kind]}


def _check_samples(samples: Any, kind: str) -> tuple[float, ...]:
    """An empirical model's recorded delays, checked and sorted; () for the other kinds."""
    if kind != "empirical":
        if len(samples):
            raise ConfigError(f"LatencyModel {kind!r} takes no samples: {_HOW}")
        return ()
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


@dataclass(frozen=True)
class NetworkModel:
    """A network between the controller and the plant: ``NetworkModel(drop=p,
    burst=(p_good_to_bad, p_bad_to_good), jitter=LatencyModel..., seed=0)``.

    - ``drop``: each command is lost with probability p (Bernoulli).
    - ``burst``: a Gilbert-Elliott chain stepped once per command: good -> bad with the
      first probability, bad -> good with the second, before each command; in the bad
      state every command is lost, in the good one with probability ``drop``. Long-run
      loss pi_B + (1 - pi_B) drop with pi_B = p_gb / (p_gb + p_bg); a bad run lasts
      1 / p_bg commands on average.
    - ``jitter``: a ``LatencyModel`` of the network delay a delivered command takes on
      top of its computation (its apply tick is ``ceil((t_start + c_k + n_k) / dt)``).

    A lost command never applies: the previous one stays in force, as a hold-last
    actuator does. A command that arrives after a newer one (a long delay overtaken) is
    discarded. Each loss and discard is counted (``info["lost"]``, ``n_lost``,
    ``n_discarded``). Seeded per episode from the env's reset seed, like the latency.
    """

    drop: float = 0.0
    burst: tuple[float, float] | None = None
    jitter: LatencyModel | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if not is_real(self.drop) or not 0.0 <= self.drop <= 1.0:
            raise ConfigError(f"network drop is a probability in [0, 1], got {self.drop!r}")
        object.__setattr__(self, "drop", float(self.drop))
        if self.burst is not None:
            b = tuple(self.burst) if isinstance(self.burst, (list, tuple)) else None
            if b is None or len(b) != 2 or not all(
                    is_real(x) and 0.0 <= x <= 1.0 for x in b):
                raise ConfigError(f"network burst is (p_good_to_bad, p_bad_to_good), two "
                                  f"probabilities in [0, 1], got {self.burst!r}")
            if b[1] == 0.0 and b[0] > 0.0:
                raise ConfigError("network burst p_bad_to_good = 0 never leaves the bad "
                                  "state (every command lost from the first burst on); give "
                                  "it a probability > 0")
            object.__setattr__(self, "burst", (float(b[0]), float(b[1])))
        if self.jitter is not None:
            object.__setattr__(self, "jitter", check_latency(self.jitter))
            if self.jitter.kind == "measured":
                raise ConfigError("network jitter cannot be measured(); use a model of the "
                                  "network delay (fixed, uniform, normal, empirical)")
        object.__setattr__(self, "seed", _check_seed(self.seed))

    def __str__(self) -> str:
        """A short label (sweep scenario keys): "network(drop 0.05)"."""
        parts = [f"drop {self.drop:g}"] if self.drop else []
        if self.burst is not None:
            parts.append(f"burst {self.burst[0]:g}/{self.burst[1]:g}")
        if self.jitter is not None:
            parts.append(f"jitter {self.jitter.kind} {1e3 * self.jitter.mean_delay:g} ms")
        return f"network({', '.join(parts) or 'lossless'})"

    @property
    def loss_rate(self) -> float:
        """The long-run fraction of commands lost (closed form)."""
        if self.burst is None:
            return self.drop
        p_gb, p_bg = self.burst
        pi_b = p_gb / (p_gb + p_bg) if p_gb + p_bg > 0 else 0.0
        return pi_b + (1.0 - pi_b) * self.drop

    def spec(self) -> _core.NetworkSpec:
        s = _core.NetworkSpec()
        s.drop = self.drop
        if self.burst is not None:
            s.burst, (s.p_gb, s.p_bg) = True, self.burst
        s.jitter = (self.jitter or LatencyModel.fixed(0.0)).spec()
        s.seed = self.seed
        return s

    def channel(self, seed: int = 0) -> _core.NetworkChannel:
        """A fresh channel (its losses and delays) seeded as an env's episode with
        ``seed``: what ClosedLoopEval's callback form steps per command."""
        ch = _core.NetworkChannel(self.spec())
        ch.reseed(seed)
        return ch

    def describe(self) -> dict[str, Any]:
        return {"drop": self.drop, "burst": None if self.burst is None else list(self.burst),
                "jitter": None if self.jitter is None else self.jitter.describe(),
                "loss_rate": self.loss_rate, "seed": self.seed}


def check_network(network: Any) -> NetworkModel | None:
    if network is None or isinstance(network, NetworkModel):
        return network
    raise ConfigError(f"network must be None or a NetworkModel(drop=..., burst=..., "
                      f"jitter=...), got {network!r} (from vdsim_gym import NetworkModel)")


def check_overrun(overrun: Any) -> str:
    if overrun not in OVERRUN_POLICIES:
        raise ConfigError(f"overrun must be one of {OVERRUN_POLICIES}, got {overrun!r}")
    return overrun


def check_latency(latency: Any) -> LatencyModel:
    if not isinstance(latency, LatencyModel):
        raise ConfigError(
            "latency must be a LatencyModel (LatencyModel.fixed(0.01), .uniform(lo, hi, seed), "
            f".normal(mu, sd, seed) or .measured()), got {latency!r}"
        )
    return latency


def check_obs_delay(obs_delay: Any) -> LatencyModel | None:
    """A sensor delay (``obs_delay=``): None, or a LatencyModel the core draws the
    observation's age from (fixed, uniform, normal or empirical; not measured)."""
    if obs_delay is None:
        return None
    if is_real(obs_delay):
        raise ConfigError(
            f"obs_delay must be a LatencyModel, got the number {obs_delay!r}; for a sensor "
            f"age of {obs_delay!s} s pass obs_delay=LatencyModel.fixed({obs_delay!s}) "
            "(from vdsim_gym import LatencyModel)")
    if not isinstance(obs_delay, LatencyModel):
        raise ConfigError(
            "obs_delay must be a LatencyModel (LatencyModel.fixed(0.03), .uniform(lo, hi, "
            f"seed), .normal(mu, sd, seed) or .empirical(samples)), got {obs_delay!r}")
    if obs_delay.kind == "measured":
        raise ConfigError(
            "obs_delay=LatencyModel.measured(): a sensor's age is drawn from a model; "
            "measured() is the controller's own compute time (latency=). Pass a fixed, "
            "uniform, normal or empirical model (e.g. LatencyModel.from_wallclock(result))")
    return obs_delay


# ------------------------------------------------------------------ the delay grammar

_UNITS = {"ms": 1e-3, "s": 1.0}


def _split_unit(token: str) -> tuple[str, str | None]:
    for unit in ("ms", "s"):  # "ms" first: "10ms" ends in "s" too
        if token.endswith(unit):
            return token[: -len(unit)].strip(), unit
    return token, None


_FORMS = ("a number with ms or s (10ms, or fixed:10ms), uniform:LO-HI (or uniform:LO:HI), "
          "normal:MU,SD (or normal:MU:SD, normal:MU+-SD), empirical:FILE.csv[:COLUMN] or none")


def _number(text: str, item: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"delay item {item!r} is not a number; items are {_FORMS}, "
                          "e.g. 0,5,10,20ms") from None
    if not math.isfinite(value):
        raise ConfigError(f"delay item {item!r}: {text!r} is not finite; give a delay in "
                          "ms or s, e.g. 10ms")
    if value < 0:
        raise ConfigError(f"delay item {item!r}: a delay cannot be negative; give 0 or "
                          "more, e.g. 0,5,10ms")
    return value


def parse_delays(text: str) -> list[LatencyModel | None]:
    """Latency models from a list like "0,5,10,20,40ms".

    Items: a number (fixed delay; also "fixed:X"), "uniform:LO-HI" (or "uniform:LO:HI", as
    agents/train.py's --latency writes it), "normal:MU,SD" (or "normal:MU:SD",
    "normal:MU+-SD"), "empirical:FILE.csv" or "empirical:FILE.csv:COLUMN" (recorded delays
    in seconds, column ``c_k`` by default: ``LatencyModel.empirical``), "none" (no
    latency); random models take an optional "@SEED" (default 0). One grammar for every
    command line (vdsim-gym sweep, agents/compare.py, agents/train.py --latency). Units
    ms or s; an item without one takes the unit of the next item that has one, else of the
    last ("0,5,10ms" is 0, 5 and 10 ms).
    """
    if not isinstance(text, str) or not text.strip():
        raise ConfigError("--delays is empty; e.g. --delays 0,5,10,20,40ms")
    raw = [t.strip() for t in text.split(",")]
    tokens: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        if tok.startswith("normal:") and "+-" not in tok and ":" not in tok[7:] \
                and i + 1 < len(raw):
            tok, i = f"{tok},{raw[i + 1]}", i + 1  # normal:MU,SD spans a comma
        tokens.append(tok)
        i += 1
    parsed: list[tuple[str, str, str | None, int]] = []  # (kind, body, unit, seed)
    for tok in tokens:
        if not tok:
            raise ConfigError(f"--delays {text!r} has an empty item")
        body, seed = tok, 0
        if "@" in body:
            body, seed_text = body.rsplit("@", 1)
            try:
                seed = int(seed_text)
            except ValueError:
                raise ConfigError(f"delay item {tok!r}: seed {seed_text!r} is not an "
                                  "integer") from None
        kind, _, rest = body.partition(":") if ":" in body else ("fixed", "", body)
        if kind == "empirical":  # a CSV of delays in seconds: no unit of its own
            parsed.append(("empirical", rest.strip(), None, seed))
            continue
        rest, unit = _split_unit(rest.strip())
        if kind not in ("fixed", "uniform", "normal") and body != "none":
            raise ConfigError(f"delay item {tok!r}: unknown kind {kind!r}; items are {_FORMS}")
        parsed.append(("none" if body == "none" else kind, rest, unit, seed))
    units = [u for _, _, u, _ in parsed]
    if not any(u for k, _, u, _ in parsed if k != "none") and \
            any(k not in ("none", "empirical") for k, *_ in parsed):
        raise ConfigError(f"{text!r} has no unit: end it with ms or s (e.g. 20ms or "
                          "0,5,10ms)")
    out: list[LatencyModel | None] = []
    for j, (kind, body, unit, seed) in enumerate(parsed):
        if kind == "none":
            out.append(None)
            continue
        if kind == "empirical":
            path, _, column = body.rpartition(":") if body.count(":") and \
                not body.endswith(".csv") else (body, "", "")
            out.append(LatencyModel.empirical(path or body, seed, column=column or "c_k"))
            continue
        unit = unit or next((u for u in units[j:] if u), None) or \
            next(u for u in reversed(units) if u)
        try:
            out.append(_model(kind, body, _UNITS[unit], seed, tokens[j]))
        except ValueError as exc:
            msg = str(exc)
            raise ConfigError(msg if msg.startswith("delay item") else
                              f"delay item {tokens[j]!r}: {msg}") from None
    return out


def _model(kind: str, body: str, scale: float, seed: int, item: str) -> LatencyModel:
    """One delay item's model; ``body`` without its unit, ``scale`` the unit in s."""
    if kind == "fixed":
        return LatencyModel.fixed(_number(body, item) * scale)
    if kind == "uniform":
        lo, sep, hi = body.partition("-") if "-" in body else body.partition(":")
        if not sep:
            raise ConfigError(f"delay item {item!r}: write uniform:LO-HI or uniform:LO:HI")
        return LatencyModel.uniform(_number(lo, item) * scale, _number(hi, item) * scale,
                                    seed=seed)
    mu, sep, sd = (body.partition("+-") if "+-" in body else body.partition(",")
                   if "," in body else body.partition(":"))
    if not sep:
        raise ConfigError(f"delay item {item!r}: write normal:MU,SD or normal:MU:SD")
    return LatencyModel.normal(_number(mu, item) * scale, _number(sd, item) * scale,
                               seed=seed)


def sensor_schedule(model: LatencyModel, substep_dt: float, ticks_per_period: int) -> Any:
    """The sensor delay's capture schedule (the core's ``SensorSchedule``, the env
    cores' rule: docs/ENVS.md, "Sensor delay"); ClosedLoopEval's callback form drives it
    (``reset(seed)``, ``plan(until)``, ``captures()``, ``release_before(j)``)."""
    return _core.SensorSchedule(model.spec(), substep_dt, ticks_per_period)


def async_timeline(substep_dt: float, ticks_per_period: int, overrun: str) -> Any:
    """Mode B's timeline (the core's ``AsyncTimeline``): one worker computes the samples
    in turn; the command of sample k applies at ``ceil((t_start + c_k) / substep_dt)``;
    ``overrun`` ("skip" or "queue") decides what a late one does to the next sample. The
    env cores hold their own; ClosedLoopEval's Plant form drives this one."""
    timeline = _core.AsyncTimeline(substep_dt, ticks_per_period,
                                   getattr(_core.OverrunPolicy, check_overrun(overrun)))
    timeline.reset()
    return timeline
