"""``vdsim-gym bench wallclock`` (``run_bench_wallclock``): the reference's jitter protocol
for mode C on this host (L2, Tc 20 ms, substep 0.5 ms, 10 s runs, a cheap controller) at
low load and under a CPU-burning load this command starts itself, with inherited and
pinned affinity; then the DLC baseline in mode C against mode A (docs/EVAL_MODES.md,
docs/BENCHMARKS.md)."""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from vdsim_gym._stages import Stages
from vdsim_gym.bench.throughput import check_count
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.eval.wallclock import load1


def cheap_controller(obs: dict[str, float], t: float) -> tuple[float, float]:
    """A few operations: hold a small steer and a speed."""
    return (0.01 * (1.0 if t < 5.0 else -1.0), 0.05 * (20.0 - obs["vx"]))


def _burn(stop: Any) -> None:
    x = 0.0
    while not stop.is_set():
        for i in range(20000):
            x += i * 1e-9


@contextmanager
def cpu_load(processes: int) -> Iterator[None]:
    """``processes`` busy processes for the duration of the block."""
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    procs = [ctx.Process(target=_burn, args=(stop,), daemon=True) for _ in range(processes)]
    for p in procs:
        p.start()
    try:
        time.sleep(1.0)  # let the load settle in the scheduler
        yield
    finally:
        stop.set()
        for p in procs:
            p.join(5.0)
            if p.is_alive():
                p.terminate()


@dataclass(frozen=True)
class Condition:
    name: str
    load: bool
    pinned: bool


CONDITIONS = (Condition("low load", False, False), Condition("low load", False, True),
              Condition("burning load", True, False), Condition("burning load", True, True))


def _pinning() -> dict[str, Any] | None:
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        return None
    return {"sim": cpus[0], "ctrl": [cpus[1]]}


def _row(cond: Condition, runs: list[dict[str, Any]], pin: dict[str, Any] | None) -> str:
    def rng(key: str, sub: str, scale: float = 1e3, fmt: str = ".2f") -> str:
        vals = [r[key][sub] * scale for r in runs]
        lo, hi = min(vals), max(vals)
        return f"{lo:{fmt}}" if f"{lo:{fmt}}" == f"{hi:{fmt}}" else f"{lo:{fmt}}-{hi:{fmt}}"

    loads = [r["load1_start"] for r in runs if r["load1_start"] is not None]
    load = f"{min(loads):.2f}-{max(loads):.2f}" if loads else "-"
    cores = (f"pinned sim {pin['sim']}, ctrl {pin['ctrl'][0]}" if cond.pinned and pin
             else "inherited")
    overruns = "/".join(str(r["n_overrun"]) for r in runs)
    rtfs = [r["rtf"] for r in runs]
    ok = sum(r["quality"]["ok"] for r in runs)
    return (f"{cond.name:<13} {load:>11} {cores:<22} {len(runs):>4} "
            f"{rng('control_period_s', 'p50'):>11} {rng('control_period_s', 'p99'):>13} "
            f"{rng('control_period_s', 'max'):>13} {overruns:>14} "
            f"{min(rtfs):.5f}-{max(rtfs):.5f} {ok}/{len(runs)}")


HEADER = (f"{'condition':<13} {'load1':>11} {'cores':<22} {'runs':>4} {'p50 [ms]':>11} "
          f"{'p99 [ms]':>13} {'max [ms]':>13} {'overruns/run':>14} {'RTF':<15} ok")


def jitter_table(runs: int = 5, duration: float = 10.0, load: bool = True,
                 stages: Stages | None = None) -> list[str]:
    pin = _pinning()
    lines = [HEADER, "-" * len(HEADER)]
    for cond in CONDITIONS:
        if (cond.load and not load) or (cond.pinned and pin is None):
            continue
        results = []
        with cpu_load(os.cpu_count() or 1) if cond.load else _nothing():
            for i in range(runs):
                if stages:
                    stages.start(f"{cond.name}, {'pinned' if cond.pinned else 'inherited'}, "
                                 f"run {i + 1}/{runs}")
                ev = ClosedLoopEval(plant_kwargs={"level": "L2", "substep_dt": 5e-4},
                                    controller=cheap_controller, control_period=0.02,
                                    mode="wallclock", duration=duration,
                                    initial_state={"vx": 20.0},
                                    cpu_affinity=pin if cond.pinned else None)
                results.append(ev.run().stats)
        lines.append(_row(cond, results, pin))
    return lines


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def dlc_c_vs_a(runs: int = 5, stages: Stages | None = None) -> list[str]:
    """The delay budget's case (Stanley + PI on the 3.5 m / 30 m lane change, L2, 20 m/s,
    Tc 20 ms, 10 s): mode A once, mode C ``runs`` times; e_y RMSE mean and spread."""
    from vdsim_gym.eval.delay_budget import Case, make_env, run_case

    env = make_env("L2")
    if stages:
        stages.start("DLC baseline, mode A")
    a = run_case(Case("A sync", "sync"), env).stats
    cs = []
    for i in range(runs):
        if stages:
            stages.start(f"DLC baseline, mode C run {i + 1}/{runs}")
        cs.append(run_case(Case("C wallclock", "wallclock"), env).stats)
    rmse = [c["e_y_rmse_m"] for c in cs]
    spread = statistics.stdev(rmse) if len(rmse) > 1 else 0.0
    apply_p50 = statistics.median(c["sample_to_apply_s"]["p50"] for c in cs) * 1e3
    return [
        f"{'case':<16} {'e_y RMSE [m]':>18} {'max |e_y| [m]':>14} {'samples':>9} "
        f"{'overruns':>9} {'apply p50 [ms]':>15}",
        f"{'A sync':<16} {a['e_y_rmse_m']:>18.4f} {a['e_y_max_m']:>14.4f} "
        f"{a['n_samples']:>9} {a['n_overrun']:>9} {'-':>15}",
        f"{'C wallclock x' + str(runs):<16} {statistics.mean(rmse):>9.4f} +- {spread:.4f} "
        f"{max(c['e_y_max_m'] for c in cs):>14.4f} "
        f"{statistics.mean(c['n_samples'] for c in cs):>9.0f} "
        f"{sum(c['n_overrun'] for c in cs):>9} {apply_p50:>15.3f}",
    ]


def run_bench_wallclock(runs: int = 5, duration: float = 10.0, load: bool = True,
                        dlc: bool = True, progress: bool = True) -> list[str]:
    check_count(runs, "runs")
    if not 0 < duration <= 600:
        raise ConfigError(f"duration must be in (0, 600] s, got {duration!r}")
    total = runs * (2 + 2 * load) + (runs + 1) * dlc
    stages = Stages("bench wallclock", total, progress)
    host = (f"host: {os.cpu_count()} logical CPUs, affinity "
            f"{sorted(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'}"
            f", load1 now {load1()}")
    lines = [host, f"Mode C jitter: L2, Tc 20 ms, substep 0.5 ms, {duration:g} s runs, "
             "cheap controller (period = time between control wakes; overrun = latched "
             "later than one period after its slot)", ""]
    lines += jitter_table(runs, duration, load, stages)
    if dlc:
        lines += ["", "DLC baseline (Stanley + PI, 3.5 m / 30 m lane change, L2, 20 m/s): "
                      "mode C against mode A"]
        lines += dlc_c_vs_a(runs, stages)
    stages.done()
    return lines


__all__ = ["cheap_controller", "cpu_load", "dlc_c_vs_a", "jitter_table",
           "run_bench_wallclock"]
