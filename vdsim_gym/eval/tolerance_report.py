"""The ``vdsim-gym tolerance`` command's work (``run_tolerance``): the largest computation
(or sensor) delay each controller still passes (``vdsim_gym.eval.tolerance``), as a table
(``table``, with a warning where the success rate is not monotone: ``non_monotone``),
tolerance.csv, tolerance_points.csv (every evaluated delay, written as it comes) and a
plot (``plot``), into an output folder locked for the run."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vdsim_gym.eval.sweeps.lock import output_lock
from vdsim_gym.eval.sweeps.results import write_csv
from vdsim_gym.eval.sweeps.specs import check_env_kwargs, load_controllers
from vdsim_gym.eval.tolerance import Point, Tolerance, tolerance


def run_tolerance(controllers: Sequence[str], env_id: str, *, kind: str = "computation",
                  seeds: int = 64, max_delay: float = 0.5, start: float | None = None,
                  resolution: float | None = None,
                  scenarios: list[dict[str, Any]] | None = None,
                  env_kwargs: dict[str, Any] | None = None, metric: str | None = None,
                  algo: str | None = None, overrun: str = "skip",
                  out: str | Path = "tolerance_out", confidence: float | None = 0.95,
                  max_metric: float | None = None, make_plot: bool = True,
                  echo: Any = print, log: bool = True, trust: bool = False
                  ) -> list[Tolerance]:
    """The ``vdsim-gym tolerance`` command: searches each controller's tolerance
    (``tolerance.tolerance``; delays in seconds); writes tolerance.csv (one row per
    controller, after each), tolerance_points.csv (every evaluated delay, as it comes) and
    tolerance.png. ``trust``: run folders unpickled as SB3 does (``--trust``)."""
    env_kwargs = dict(env_kwargs or {})
    check_env_kwargs(env_id, env_kwargs)
    loaded = load_controllers(controllers, algo, ("--controllers", "--controllers"), env_id,
                              env_kwargs, trust=trust)
    if "torch" in sys.modules:  # as in sweep: a small network on one thread
        sys.modules["torch"].set_num_threads(1)
    out = Path(out)
    with output_lock(out):  # one run per output folder (SIGTERM: as Ctrl-C)
        results = _search_all(loaded, out, env_id, kind=kind, seeds=seeds,
                              scenarios=scenarios, max_delay=max_delay, start=start,
                              resolution=resolution, metric=metric, overrun=overrun,
                              log=log, confidence=confidence, max_metric=max_metric,
                              env_kwargs=env_kwargs)
        return _report(results, out, env_id, env_kwargs, make_plot, echo)


def _search_all(loaded: list[tuple[str, Any]], out: Path, env_id: str, *,
                env_kwargs: dict[str, Any], **kwargs: Any) -> list[Tolerance]:
    """Each controller's search, its rows written as it ends (``run_tolerance``, folder
    locked)."""
    for stale in ("tolerance.csv", "tolerance_points.csv", "tolerance.png"):
        (out / stale).unlink(missing_ok=True)  # a previous run's, not this one's
    results: list[Tolerance] = []
    rows: list[dict[str, Any]] = []
    points: list[dict[str, Any]] = []
    try:
        for name, pol in loaded:
            results.append(_search(name, pol, points, out, env_id, **kwargs, **env_kwargs))
            rows.append(_result_row(results[-1]))
            write_csv(out / "tolerance.csv", rows)
    except KeyboardInterrupt:
        if points:
            sys.stderr.write(f"tolerance: interrupted; the {len(points)} delays evaluated so "
                             f"far are in {out / 'tolerance_points.csv'}"
                             + (f", the finished controllers in {out / 'tolerance.csv'}"
                                if rows else "") + "\n")
        raise
    return results


def _report(results: list[Tolerance], out: Path, env_id: str, env_kwargs: dict[str, Any],
            make_plot: bool, echo: Any) -> list[Tolerance]:
    echo(table(results, env_id))
    for r in results:
        warning = non_monotone(r)
        if warning:
            echo(warning)
    written = [out / "tolerance.csv", out / "tolerance_points.csv"]
    if make_plot:
        written.append(plot(results, out / "tolerance.png", env_id, env_kwargs))
    echo("wrote " + ", ".join(str(p) for p in written))
    return results


def non_monotone(r: Tolerance) -> str | None:
    """A warning when a delay above the tolerance passed: bisection assumes that a
    controller passing at a delay passes at every shorter one, so its answer is then one
    edge of several (every point is in tolerance_points.csv); None otherwise."""
    edge = -1 if r.search.ticks is None else r.search.ticks
    above = sorted((q for q in r.search.points if q.ticks > edge), key=lambda q: q.ticks)
    passed = [q for q in above if q.passed]
    if not passed:
        return None
    failed = [q for q in above if not q.passed and q.ticks < passed[-1].ticks]

    def ms(q: Point) -> str:
        return f"{q.delay_s * 1e3:.1f} ms ({q.successes}/{q.n})"

    return (f"warning: {r.name}: the success rate is not monotone in the delay: "
            f"{', '.join(map(ms, passed))} passed above the tolerance"
            + (f", {', '.join(map(ms, failed))} failed below that" if failed else "")
            + "; the bisection found one edge of several (every point: "
              "tolerance_points.csv and the plot)")


def _search(name: str, policy: Any, points: list[dict[str, Any]], out: Path, env_id: str,
            *, kind: str, **kwargs: Any) -> Tolerance:
    """One controller's search; its points appended to ``points`` and the points file
    rewritten as each delay is evaluated (an interrupted search keeps them), then put in
    delay order."""
    done = len(points)

    def keep(q: Point, metric: str) -> None:
        points.append(_point_row(name, kind, metric, q))
        write_csv(out / "tolerance_points.csv", points)

    r = tolerance(policy, env_id, name=name, kind=kind, on_point=keep, **kwargs)
    points[done:] = [_point_row(r.name, r.kind, r.metric, q) for q in r.search.points]
    write_csv(out / "tolerance_points.csv", points)
    return r


def _result_row(r: Tolerance) -> dict[str, Any]:
    p = r.at_tolerance
    return {"controller": r.name, "kind": r.kind,
            "tolerance_ms": math.nan if r.delay_s is None else round(r.delay_s * 1e3, 6),
            "bounded": r.search.bounded, "episodes": p.n if p else 0,
            "successes": p.successes if p else 0, "lower_bound": p.lower if p else math.nan,
            "metric": r.metric,
            **{f"metric_{k}": (p.metric[k] if p else math.nan) for k in ("mean", "lo", "hi")},
            "evaluations": len(r.search.points)}


def _point_row(name: str, kind: str, metric: str, q: Point) -> dict[str, Any]:
    return {"controller": name, "kind": kind, "delay_ms": round(q.delay_s * 1e3, 6),
            "episodes": q.n, "successes": q.successes, "lower_bound": q.lower,
            "passed": q.passed, "metric": metric, **{f"metric_{k}": v for k, v in q.metric.items()}}


def table(results: Sequence[Tolerance], env_id: str) -> str:
    """The results as a text table."""
    if not results:
        return ""
    r0 = results[0]
    lines = [f"Delay tolerance on {env_id} ({r0.kind} delay): the largest delay with a "
             "success rate >= 95 % (at 95 % confidence, Clopper-Pearson, unless "
             "--confidence none)",
             f"{'controller':<28} {'tolerance':>12} {'successes':>10} {r0.metric + ' at it':>26}",
             "-" * 80]
    for r in results:
        p = r.at_tolerance
        if p is None:
            tol, succ, met = "none", "-", "-"
        else:
            tol = f"{'>= ' if not r.search.bounded else ''}{p.delay_s * 1e3:.1f} ms"
            succ = f"{p.successes}/{p.n}"
            m = p.metric
            met = f"{m['mean']:.4g} [{m['lo']:.4g}, {m['hi']:.4g}]"
        lines.append(f"{r.name:<28} {tol:>12} {succ:>10} {met:>26}")
    return "\n".join(lines)


def plot(results: Sequence[Tolerance], path: Path, env_id: str,
         env_kwargs: dict[str, Any] | None = None) -> Path:
    """Two panels against the delay: each controller's lower bound of the success rate
    (the 95 % line dashed, its tolerance marked) and its metric at each evaluated delay."""
    from vdsim_gym._plotting import figure, save_figure

    fig = figure(figsize=(11, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for r in results:
        pts = sorted(r.search.points, key=lambda q: q.ticks)
        x = [q.delay_s * 1e3 for q in pts]
        (line,) = ax1.plot(x, [q.lower for q in pts], "o-", label=r.name, ms=4)
        if r.delay_s is not None:
            ax1.axvline(r.delay_s * 1e3, color=line.get_color(), ls=":", lw=1)
        ax2.errorbar(x, [q.metric["mean"] for q in pts],
                     yerr=[[q.metric["mean"] - q.metric["lo"] for q in pts],
                           [q.metric["hi"] - q.metric["mean"] for q in pts]],
                     fmt="o", ms=4, capsize=2, color=line.get_color(), label=r.name)
    ax1.axhline(0.95, color="k", ls="--", lw=1)
    ax1.set_xlabel(f"{results[0].kind} delay [ms]" if results else "delay [ms]")
    ax1.set_ylabel("success rate, 95 % lower bound")
    ax1.set_title("pass: lower bound >= 0.95 (dashed)")
    ax1.legend(fontsize=8)
    ax2.set_xlabel(ax1.get_xlabel())
    if results:
        from vdsim_gym.eval.sweeps.report import metric_label

        ax2.set_ylabel(metric_label(env_id, results[0].metric, env_kwargs))
    ax2.set_title("metric at each evaluated delay (95 % interval)")
    fig.suptitle(f"Delay tolerance, {env_id}")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


__all__ = ["non_monotone", "plot", "run_tolerance", "table"]
