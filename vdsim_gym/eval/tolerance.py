"""How much delay a controller survives: the largest delay at which it still passes.

A delay **passes** when the episodes' success rate is at least ``required`` (95 %) with
one-sided ``confidence`` (95 %): the Clopper-Pearson lower bound of the rate, from k
successes in n episodes, is at least ``required``. An episode succeeds when it completes
(no termination, not cut by the time limit) without a cone hit or a collision. With 64
episodes that means no failure at all (the bound is 0.05^(1/64) = 0.954); with 59 or
fewer even a clean record does not pass, so ``tolerance`` refuses fewer.

``find_tolerance`` searches the substep grid: the delay 0 first (a controller that fails
there tolerates nothing), then doubling from ``start`` to the first failing delay (or
``max_delay``, which then bounds the answer from below), then bisection between the last
passing and the first failing delay down to ``resolution`` ticks. Each delay is one sweep
cell (``vdsim_gym.eval.sweep``): every seed and scenario, with the computation delay
(``kind="computation"``: ``LatencyModel.fixed(d)``, overrun skip) or the sensor delay
(``kind="sensor"``: ``obs_delay=LatencyModel.fixed(d)``). Bisection assumes that a
controller passing at a delay passes at every shorter one; the evaluated points are
all reported, so a curve that is not monotone shows.

``vdsim-gym tolerance`` (docs/SWEEPS.md, "Delay tolerance") runs it for several
controllers and writes a table and a plot.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vdsim_gym._checks import check_finite, check_number, is_integer, is_real
from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import whole_ticks

KINDS = ("computation", "sensor")


def clopper_pearson_lower(k: int, n: int, confidence: float = 0.95) -> float:
    """The one-sided lower confidence bound of a success probability from k successes in
    n trials (Clopper and Pearson, Biometrika 26, 1934): the p at which P(X >= k) =
    1 - confidence for X ~ Binomial(n, p); 0 for k = 0. Found by bisection on the exact
    binomial tail (log-space terms), to 1e-12."""
    if not (is_integer(n) and is_integer(k) and 0 <= k <= n and n >= 1):
        raise ConfigError(f"need 0 <= k <= n and n >= 1, got k={k!r}, n={n!r}")
    if not (is_real(confidence) and 0.0 < confidence < 1.0):
        raise ConfigError(f"confidence must be in (0, 1), got {confidence!r}")
    k, n = int(k), int(n)
    if k == 0:
        return 0.0
    alpha = 1.0 - confidence
    if k == n:
        return alpha ** (1.0 / n)  # P(X = n) = p^n

    def upper_tail(p: float) -> float:  # P(X >= k), rising in p
        lp, lq = math.log(p), math.log1p(-p)
        terms = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                 + i * lp + (n - i) * lq for i in range(k, n + 1)]
        top = max(terms)
        return math.exp(top) * math.fsum(math.exp(t - top) for t in terms)

    lo, hi = 0.0, 1.0
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        if upper_tail(mid) < alpha:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def min_episodes(required: float = 0.95, confidence: float = 0.95) -> int:
    """The fewest episodes with which a clean record passes: n with
    (1 - confidence)^(1/n) >= required."""
    return math.ceil(math.log(1.0 - confidence) / math.log(required) - 1e-12)


@dataclass(frozen=True)
class Point:
    """One evaluated delay."""

    ticks: int
    delay_s: float
    n: int
    successes: int
    lower: float  # the Clopper-Pearson lower bound of the success rate
    passed: bool
    metric: dict[str, float] = field(default_factory=dict)  # mean, lo, hi of the metric


@dataclass(frozen=True)
class ToleranceSearch:
    """``ticks``: the largest passing delay found (None: the delay 0 fails);
    ``bounded``: whether a failing delay was found above it (else it passed up to the
    search's maximum, which is then a lower bound); ``points``: every evaluated delay."""

    ticks: int | None
    bounded: bool
    points: tuple[Point, ...]


def find_tolerance(evaluate: Callable[[int], Point], *, max_ticks: int, start_ticks: int,
                   resolution_ticks: int = 1,
                   log: Callable[[Point], None] | None = None) -> ToleranceSearch:
    """The largest passing delay in ticks on [0, max_ticks] (module docstring);
    ``evaluate(ticks)`` evaluates one delay."""
    for name, v, low in (("max_ticks", max_ticks, 1), ("start_ticks", start_ticks, 1),
                         ("resolution_ticks", resolution_ticks, 1)):
        if not (is_integer(v) and v >= low):
            raise ConfigError(f"{name} must be an integer >= {low}, got {v!r}")
    max_ticks, start_ticks = int(max_ticks), int(start_ticks)
    resolution_ticks = int(resolution_ticks)
    seen: dict[int, Point] = {}

    def ev(t: int) -> bool:
        if t not in seen:
            seen[t] = evaluate(t)
            if log is not None:
                log(seen[t])
        return seen[t].passed

    def done(ticks: int | None, bounded: bool) -> ToleranceSearch:
        return ToleranceSearch(ticks, bounded, tuple(seen[t] for t in sorted(seen)))

    if not ev(0):
        return done(None, True)
    good, bad = 0, None
    t = min(start_ticks, max_ticks)
    while True:
        if ev(t):
            good = t
            if t >= max_ticks:
                return done(good, False)
            t = min(2 * t, max_ticks)
        else:
            bad = t
            break
    while bad - good > resolution_ticks:
        mid = (good + bad) // 2
        if ev(mid):
            good = mid
        else:
            bad = mid
    return done(good, True)


def episode_succeeded(row: Any) -> bool:
    """Completed without a cone hit or a collision (a SweepRow)."""
    m = row.metrics
    return bool(row.completed) and not m.get("cone_hits", 0) and not m.get("collision", 0)


@dataclass(frozen=True)
class Tolerance:
    """One controller's result: the search, and the delay it tolerates [s] (None: none)."""

    name: str
    kind: str
    search: ToleranceSearch
    substep_dt: float
    metric: str

    @property
    def delay_s(self) -> float | None:
        t = self.search.ticks
        return None if t is None else t * self.substep_dt

    @property
    def at_tolerance(self) -> Point | None:
        t = self.search.ticks
        return None if t is None else next(p for p in self.search.points if p.ticks == t)


def tolerance(policy: PolicyPredictor | Callable[[Any], PolicyPredictor], env_id: str, *,
              name: str = "", kind: str = "computation",
              seeds: int | Sequence[int] = 64, scenarios: Sequence[dict[str, Any]] | None = None,
              max_delay: float = 0.5, start: float | None = None,
              resolution: float | None = None,
              required: float = 0.95, confidence: float | None = 0.95,
              metric: str | None = None, max_metric: float | None = None,
              overrun: str = "skip", num_envs: int = 64, log: bool = True,
              on_point: Callable[[Point, str], None] | None = None,
              **env_kwargs: Any) -> Tolerance:
    """The largest computation (or sensor) delay ``policy`` passes on ``env_id`` (module
    docstring). ``policy``: as ``sweep`` takes it (an object with predict, or a factory
    ``make(env)``, which is then built per delay: a delay-compensating controller sees
    each delay). ``start``: the first delay after 0 [s] (default 20 ms, or one substep
where that is longer). ``resolution``: the bisection's step [s] (default one substep).
    ``metric``: the summary field reported at each delay (default the env's headline
    metric); ``max_metric``: an episode succeeds only if that metric is also at most this
    (e.g. the dyno's speed-error RMS, whose episodes always complete). ``confidence=None``
    takes the success rate itself, without a bound: for a deterministic env (the dyno),
    whose reruns repeat one episode, a bound over them would count one episode many
    times. ``log``: a line per evaluated delay on stderr. ``on_point(point, metric)``:
    called after each evaluated delay (the command writes its points file as they come,
    so an interrupted search keeps them)."""
    import gymnasium as gym

    from vdsim_gym.eval.sweeps import sweep
    from vdsim_gym.eval.sweeps.results import sweep_metrics

    if kind not in KINDS:
        raise ConfigError(f"kind must be one of {KINDS}, got {kind!r}")
    n_seeds = len(seeds) if isinstance(seeds, Sequence) else int(seeds)
    required = check_number(required, "required", 0.0, 1.0, open_low=True,
                            what="a success rate")
    if confidence is not None:
        confidence = check_number(confidence, "confidence", 0.0, 1.0, open_low=True,
                                  open_high=True, what="a confidence")
    if max_metric is not None:
        max_metric = check_finite(max_metric, "max_metric")
    n_episodes = n_seeds * max(1, len(scenarios or [{}]))
    if confidence is not None:
        need = min_episodes(required, confidence) if required < 1.0 else math.inf
        if n_episodes < need:
            raise ConfigError(f"{n_episodes} episodes per delay cannot show a {required:.0%} "
                              f"success rate with {confidence:.0%} confidence; give at least "
                              f"{need} (seeds x scenarios), or confidence=None for a "
                              "deterministic env")
    bad = {"latency", "obs_delay"} & set(env_kwargs)
    if bad:
        raise ConfigError(f"{sorted(bad)}: the search sets the delay; drop them")
    probe = gym.make(env_id, **{**env_kwargs, **(scenarios or [{}])[0]})
    try:
        base: Any = probe.unwrapped
        dt = base.physics.substep_dt
        metrics = sweep_metrics(base.summary_names)
        labels = dict(base.METRIC_LABELS)
    finally:
        probe.close()
    metric = metric or next((m for m in labels if m in metrics), metrics[0])
    if metric not in metrics:
        raise ConfigError(f"metric {metric!r} is not one of {env_id}'s: {', '.join(metrics)}")
    max_ticks = whole_ticks(max_delay, dt, "max_delay")
    start_ticks = (max(1, math.ceil(0.02 / dt - 1e-9)) if start is None
                   else whole_ticks(start, dt, "start"))
    res_ticks = 1 if resolution is None else whole_ticks(resolution, dt, "resolution")
    label = name or getattr(policy, "name", "") or repr(policy)

    def evaluate(ticks: int) -> Point:
        d = ticks * dt
        model = LatencyModel.fixed(d) if ticks else None
        kw = dict(env_kwargs)
        if kind == "sensor" and model is not None:
            kw["obs_delay"] = model
        result = sweep(policy, env_id, latencies=[model if kind == "computation" else None],
                       seeds=seeds, scenarios=scenarios, overrun=overrun, progress=False,
                       num_envs=num_envs, **kw)
        rows = result.table
        values = np.array([r.metrics.get(metric, math.nan) if metric in r.metrics else
                           getattr(r, metric, math.nan) for r in rows], dtype=float)
        ok = [episode_succeeded(r) and (max_metric is None or bool(v <= max_metric))
              for r, v in zip(rows, values, strict=True)]
        k = sum(ok)
        lower = (k / len(rows) if confidence is None
                 else clopper_pearson_lower(k, len(rows), confidence))
        return Point(ticks, d, len(rows), k, lower, lower >= required,
                     _mean_ci(values))

    def say(p: Point) -> None:
        if on_point is not None:
            on_point(p, metric)
        if log:
            m = p.metric
            sys.stderr.write(f"{label}: {kind} delay {p.delay_s * 1e3:.1f} ms: "
                             f"{p.successes}/{p.n} succeeded, lower bound {p.lower:.3f} -> "
                             f"{'pass' if p.passed else 'fail'}; {metric} "
                             f"{m.get('mean', math.nan):.4g}\n")

    search = find_tolerance(evaluate, max_ticks=max_ticks, start_ticks=start_ticks,
                            resolution_ticks=res_ticks, log=say)
    return Tolerance(label, kind, search, dt, metric)


def _mean_ci(values: np.ndarray) -> dict[str, float]:
    """Mean and 95 % interval over the finite values, as the sweeps' cells have them
    (``eval.stats.mean_interval``: Student's t)."""
    from vdsim_gym.eval.stats import mean_interval

    mean, lo, hi = mean_interval(values[np.isfinite(values)])
    return {"mean": mean, "lo": lo, "hi": hi}
