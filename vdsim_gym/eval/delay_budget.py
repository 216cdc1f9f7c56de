"""The delay budget of the Stanley + PI baseline on the "3.5 m over 30 m" lane change
(``vdsim-gym delay-budget``: ``run_delay_budget``).

Reproduces the reference's example on our core: L2, 20 m/s, Tc = 20 ms, substep 0.5 ms,
10 s (500 control samples), as mode A and as mode B with fixed delays of 0, 5, 10 and
20 ms, plus uniform and normal delays and an overrun case under both policies. Then it
splits a total loop budget (``--budget``, 40 ms by default) into its parts: all of it as
the sensor's age, the computation, the network or the steering channel's dead time, and a
quarter each. Prints the table (the parts [ms], e_y RMSE, max |e_y|, samples, overruns),
writes ``delay_budget.csv`` and a plot of e_y RMSE against the delay
(``delay_budget.png``).

The controller is the baseline itself (``vdsim_gym.controllers.stanley_pi``, its code
unchanged), built from a ``VDSim-DLC-v0`` env on the same course. ``PathObservation``
(vdsim_gym.eval.policy_adapter)
turns the Plant's observation dict into that env's normalized observation vector with
the core's own path projection (``_core.PathTracker``), the same computation the env
runs in C++; ``tests/cli/test_delay_budget.py`` checks that the vectors are bit for bit
the env's. The action becomes a plant command through the env's ``action_to_command``.
"""

from __future__ import annotations

import csv
import math
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym import _table
from vdsim_gym._checks import check_seconds
from vdsim_gym._files import atomic_open
from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.eval.closed_loop import ClosedLoopEval, EvalResult
from vdsim_gym.eval.policy_adapter import PolicyController
from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR
from vdsim_gym.timing import whole_ticks

PRESET = "lane_change_3p5_30"
SPEED = 20.0  # [m/s]
CONTROL_PERIOD = 0.02  # [s]
SUBSTEP_DT = 5e-4  # [s]
DURATION = 10.0  # [s], 500 samples
# Longest run [s]: 30 000 samples, about a minute for the 9 runs here. Beyond it, a
# duration is a typo (1e6 s would simulate for hours), refused up front.
MAX_DURATION = 600.0
# The reference's figures (their core, same scenario): fixed delay [ms] -> e_y RMSE, max [m].
REFERENCE_FIGURES = {0: (0.0924, 0.2609), 5: (0.0946, 0.2710), 10: (0.0972, 0.2818),
                     20: (0.1048, 0.3059)}


def make_env(level: str = "L2", integrator: str = DEFAULT_INTEGRATOR,
             vehicle: Any = "generic_sedan") -> gym.Env:
    """The DLC env whose course, observation layout, action mapping and vehicle (a name,
    a YAML path, a mapping of overrides or a VehicleConfig) the budget uses."""
    env = gym.make("VDSim-DLC-v0", preset=PRESET, speed=SPEED, level=level,
                   substep_dt=SUBSTEP_DT, control_period=CONTROL_PERIOD, longitudinal="force",
                   terminate_on_cone=False, integrator=integrator, vehicle=vehicle)
    env.reset(seed=0)
    return env


def start_state(env: gym.Env) -> dict[str, float]:
    """On the path at s = 0, path heading, vx = the course speed (no start noise)."""
    base: Any = env.unwrapped  # the path env: its own attributes
    course = base.course
    (x0, y0), (x1, y1) = course.path[0], course.path[1]
    return {"X": float(x0), "Y": float(y0), "psi": math.atan2(y1 - y0, x1 - x0),
            "vx": float(course.start_speed)}


@dataclass(frozen=True)
class Case:
    name: str
    mode: str
    latency: LatencyModel | None = None
    overrun: str | None = None
    # the other parts of a loop's delay: the sensor's age, the network's delay, the
    # steering channel's dead time [s]
    obs_delay: LatencyModel | None = None
    network: NetworkModel | None = None
    steer_delay: float = 0.0

    @property
    def mean_delay_ms(self) -> float:
        """Mean c_k of the model [ms] (``LatencyModel.mean_delay``: normal is clipped)."""
        return 0.0 if self.latency is None else 1e3 * self.latency.mean_delay

    @property
    def parts_ms(self) -> tuple[float, float, float, float]:
        """Mean sensor age, computation, network delay and steering dead time [ms]."""
        def mean(m: LatencyModel | None) -> float:
            return 0.0 if m is None else 1e3 * m.mean_delay

        net = None if self.network is None else self.network.jitter
        return mean(self.obs_delay), self.mean_delay_ms, mean(net), 1e3 * self.steer_delay


DEFAULT_BUDGET = 0.04  # [s]: the total split into parts (two control periods)


def budget_cases(total: float = DEFAULT_BUDGET) -> list[Case]:
    """A total loop delay [s] as each part alone, then a quarter each: what the same
    budget costs depending on where in the loop it sits."""
    fx, ms = LatencyModel.fixed, f"{total * 1e3:g} ms"
    q = total / 4.0
    qms = f"{q * 1e3:g}"
    zero = fx(0.0)
    return [
        Case(f"budget: compute {ms}", "virtual_async", fx(total), "skip"),
        Case(f"budget: sensor {ms}", "virtual_async", zero, "skip", obs_delay=fx(total)),
        Case(f"budget: network {ms}", "virtual_async", zero, "skip",
             network=NetworkModel(jitter=fx(total))),
        Case(f"budget: steer {ms}", "virtual_async", zero, "skip", steer_delay=total),
        Case(f"budget: {qms} x 4", "virtual_async", fx(q), "skip", obs_delay=fx(q),
             network=NetworkModel(jitter=fx(q)), steer_delay=q),
    ]


def default_cases(budget: float | None = DEFAULT_BUDGET) -> list[Case]:
    fx = LatencyModel.fixed
    cases = [Case("A sync", "sync")]
    cases += [Case(f"B fixed {ms} ms", "virtual_async", fx(ms / 1000.0), "skip")
              for ms in (0, 5, 10, 20)]
    cases += [
        Case("B uniform 0-20 ms", "virtual_async", LatencyModel.uniform(0.0, 0.02, seed=0),
             "skip"),
        Case("B normal 10+-5 ms", "virtual_async", LatencyModel.normal(0.01, 0.005, seed=0),
             "skip"),
        Case("B fixed 25 ms skip", "virtual_async", fx(0.025), "skip"),
        Case("B fixed 25 ms queue", "virtual_async", fx(0.025), "queue"),
    ]
    return cases + ([] if budget is None else budget_cases(budget))


@dataclass(frozen=True)
class Row:
    case: str
    mode: str
    latency: str
    overrun: str
    mean_delay_ms: float
    sensor_ms: float
    network_ms: float
    steer_ms: float
    total_ms: float
    ey_rmse_m: float
    ey_max_m: float
    samples: int
    overruns: int
    skipped: int


def run_case(case: Case, env: gym.Env, *, level: str = "L2", duration: float = DURATION,
             trace_path: str | Path | None = None) -> EvalResult:
    base: Any = env.unwrapped  # the path env: its own attributes
    channels = {"channel_delays": {"steer": case.steer_delay}} if case.steer_delay else {}
    ev = ClosedLoopEval(
        plant_kwargs=dict(level=level, substep_dt=SUBSTEP_DT, longitudinal="force",
                          integrator=base.integrator, vehicle=base.vehicle, **channels),
        controller=PolicyController(env), control_period=CONTROL_PERIOD, mode=case.mode,
        latency=case.latency, overrun=case.overrun, duration=duration,
        reference_path=base.course.path, initial_state=start_state(env),
        trace_path=trace_path, obs_delay=case.obs_delay, network=case.network,
    )
    return ev.run()


def slug(name: str) -> str:
    """A case name as a file name: "B fixed 10 ms" -> "b_fixed_10_ms"."""
    return "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_").replace(
        "__", "_")


# The runs the overlay render shows (their delays side by side).
OVERLAY_CASES = ("A sync", "B fixed 10 ms", "B fixed 20 ms", "B fixed 25 ms queue")


MAX_BUDGET = 1.0  # [s]: a loop delay beyond a second is a unit slip (ms for s)


def check_budget(budget: float | None) -> float | None:
    """None (no split), or a total delay in (0, MAX_BUDGET] s that is a whole number of
    substeps in each quarter (the steering dead time is whole substeps)."""
    if budget is None:
        return None
    budget = check_seconds(budget, "budget", maximum=MAX_BUDGET)
    whole_ticks(budget / 4.0, SUBSTEP_DT, "budget / 4 (a quarter of the budget)")
    return budget


def check_duration(duration: float) -> float:
    """A finite duration in (0, MAX_DURATION] s that is a whole number of substeps."""
    duration = check_seconds(duration, "duration", maximum=MAX_DURATION)
    whole_ticks(duration, SUBSTEP_DT, "duration")
    return duration


def _progress(items: list[Case]) -> Iterable[Case]:
    """tqdm, else a line per run as it starts; on stderr, so stdout is the table."""
    try:
        from tqdm import tqdm
    except ImportError:
        for i, c in enumerate(items, start=1):
            print(f"[delay budget {i}/{len(items)}] {c.name}", file=sys.stderr, flush=True)
            yield c
        return
    yield from tqdm(items, desc="delay budget", unit="run")


def run_budget(cases: list[Case] | None = None, *, level: str = "L2",
               duration: float = DURATION, progress: bool = False,
               trace_dir: str | Path | None = None, integrator: str = DEFAULT_INTEGRATOR,
               vehicle: Any = "generic_sedan") -> tuple[list[Row], list[EvalResult]]:
    cases = default_cases() if cases is None else cases
    for case in cases:  # a steering dead time is whole substeps (checked before any run)
        whole_ticks(case.steer_delay, SUBSTEP_DT, "the steering dead time", allow_zero=True)
    duration = check_duration(duration)
    env = make_env(level, integrator, vehicle)
    rows, results = [], []
    it: Iterable[Case] = _progress(cases) if progress else cases
    for case in it:
        res = run_case(case, env, level=level, duration=duration,
                       trace_path=None if trace_dir is None else
                       Path(trace_dir) / f"{slug(case.name)}.vdtrace")
        s = res.stats
        sensor, compute, network, steer = case.parts_ms
        rows.append(Row(
            case=case.name, mode=case.mode,
            latency="none" if case.latency is None else case.latency.kind,
            overrun=case.overrun or "-", mean_delay_ms=compute, sensor_ms=sensor,
            network_ms=network, steer_ms=steer, total_ms=sensor + compute + network + steer,
            ey_rmse_m=s["e_y_rmse_m"], ey_max_m=s["e_y_max_m"], samples=s["n_samples"],
            overruns=s["n_overrun"], skipped=s["n_skipped"],
        ))
        results.append(res)
    env.close()
    return rows, results


COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    ("case", "case", "<26", ""),
    ("sensor", "sensor_ms", ">6", "g"),
    ("compute", "mean_delay_ms", ">7", "g"),
    ("network", "network_ms", ">7", "g"),
    ("steer", "steer_ms", ">5", "g"),
    ("total [ms]", "total_ms", ">10", "g"),
    ("e_y RMSE [m]", "ey_rmse_m", ">12", ".4f"),
    ("max |e_y| [m]", "ey_max_m", ">13", ".4f"),
    ("samples", "samples", ">7", "d"),
    ("overruns", "overruns", ">8", "d"),
    ("skipped", "skipped", ">7", "d"),
)


def format_table(rows: list[Row]) -> str:
    return _table.format_table(rows, COLUMNS)


def format_markdown(rows: list[Row]) -> str:
    return _table.format_markdown(rows, COLUMNS)


BUDGET_PREFIX = "budget: "  # the cases of budget_cases()


def plot(rows: list[Row], path: Path) -> None:
    """e_y RMSE against the computation delay (with the reference's curve); with the
    budget's rows, a second panel: what the same total costs in each part of the loop."""
    from vdsim_gym._plotting import figure, save_figure

    budget = [r for r in rows if r.case.startswith(BUDGET_PREFIX)]
    rows = [r for r in rows if not r.case.startswith(BUDGET_PREFIX)]
    fig = figure(figsize=(11.5, 4.4) if budget else (7, 4.2))
    axes = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.35, 1]}) if budget \
        else [fig.subplots()]
    ax = axes[0]
    fixed = [r for r in rows if r.latency == "fixed" and r.overruns == 0
             and r.total_ms == r.mean_delay_ms]  # computation alone
    ax.plot([r.mean_delay_ms for r in fixed], [r.ey_rmse_m for r in fixed], "o-",
            color="C0", label="B fixed delay, this core")
    ref = sorted(REFERENCE_FIGURES.items())
    ax.plot([d for d, _ in ref], [v[0] for d, v in ref], "s--", color="0.5", mfc="none",
            label="reference's figures (their core)")
    top = 1.5 * max([r.ey_rmse_m for r in fixed] + [v[0] for _, v in ref])
    markers = iter(("D", "v", "x", "+", "^", "<", ">"))
    left_out = []
    sync = None
    for i, r in enumerate(rows):
        if r.mode == "sync":
            sync = r.ey_rmse_m
            ax.axhline(r.ey_rmse_m, color="C2", lw=1, ls=":", label=f"A sync ({r.ey_rmse_m:.4f} m)")
        elif r in fixed:
            continue
        elif math.isfinite(r.ey_rmse_m) and r.ey_rmse_m < top:
            note = f", {r.overruns} overruns" if r.overruns else ""
            ax.plot(r.mean_delay_ms, r.ey_rmse_m, next(markers, "o"), ms=7, color=f"C{i % 10}",
                    label=f"{r.case} (at its mean delay{note})")
        else:
            left_out.append(f"{r.case}: {r.ey_rmse_m:.3g} m")
    if left_out:
        ax.text(0.98, 0.06, "off scale:\n" + "\n".join(left_out), transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7)
    ax.set_xlabel("computation delay c_k [ms]")
    ax.set_ylabel("e_y RMSE [m]")
    ax.set_title("Stanley + PI, 3.5 m / 30 m lane change, 20 m/s, L2, Tc 20 ms", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    if budget:
        bx = axes[1]
        names = [r.case[len(BUDGET_PREFIX):] for r in budget]
        y = list(range(len(budget)))[::-1]
        bars = bx.barh(y, [r.ey_rmse_m for r in budget],
                       color=["C3" if r.overruns else "C0" for r in budget])
        for bar, r in zip(bars, budget, strict=True):
            note = f"  {r.ey_rmse_m:.3f} m" + (f", {r.overruns} overruns" if r.overruns else "")
            bx.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, note, va="center",
                    fontsize=7)
        bx.set_yticks(y, names, fontsize=8)
        if sync is not None:
            bx.axvline(sync, color="C2", lw=1, ls=":", label="A sync (no delay)")
            bx.legend(fontsize=7, loc="lower right")
        widest = max((r.ey_rmse_m for r in budget if math.isfinite(r.ey_rmse_m)), default=0.0)
        if widest > 0:  # room for the labels (a very short run may have no error yet)
            bx.set_xlim(0, 1.45 * widest)
        bx.set_xlabel("e_y RMSE [m]")
        bx.set_title(f"one budget of {budget[0].total_ms:g} ms, by where it sits", fontsize=9)
        bx.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def run_delay_budget(out: str | Path = "delay_budget_out", *, level: str = "L2",
                     duration: float = DURATION, make_plot: bool = True, gif: bool = False,
                     integrator: str = DEFAULT_INTEGRATOR, echo: Callable[[str], Any] = print,
                     vehicle: str = "generic_sedan", budget: float | None = DEFAULT_BUDGET
                     ) -> list[Row]:
    """The ``vdsim-gym delay-budget`` command: runs the cases (``default_cases``: the
    budget's split with ``budget``; None: no split), writes delay_budget.csv, each run's
    trace and (``make_plot``) the plot and the overlay (``gif``: also animated) into
    ``out``, and prints the table."""
    duration = check_duration(duration)  # before the folder is made
    cases = default_cases(check_budget(budget))
    load_vehicle(vehicle)  # likewise: an unknown vehicle is one clear error
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    traces = out / "traces"
    rows, _ = run_budget(cases, level=level, duration=duration, progress=True,
                         trace_dir=traces, integrator=integrator, vehicle=vehicle)
    with atomic_open(out / "delay_budget.csv") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(asdict(rows[0])))
        writer.writeheader()
        writer.writerows(asdict(r) for r in rows)
    echo(f"Delay budget: Stanley + PI, {PRESET} at {SPEED:g} m/s, {vehicle}, {level}, "
         f"{integrator}, "
         f"Tc {CONTROL_PERIOD * 1e3:g} ms, substep {SUBSTEP_DT * 1e3:g} ms, {duration:g} s")
    echo(format_table(rows))
    written = [out / "delay_budget.csv"]
    if make_plot:
        from vdsim_gym.render.trace import render_gif, render_png

        plot(rows, out / "delay_budget.png")
        overlay = [traces / f"{slug(name)}.vdtrace" for name in OVERLAY_CASES]
        written += [out / "delay_budget.png",
                    render_png(overlay, out / "delay_budget_overlay.png",
                               labels=OVERLAY_CASES, at=5.0,
                               title="the same controller under growing computation delay")]
        if gif:
            written.append(render_gif(overlay, out / "delay_budget_overlay.gif",
                                      labels=OVERLAY_CASES, speed=1.0,
                                      title="the same controller under growing delay"))
    echo("\nwrote " + ", ".join(str(p) for p in written) + f"; every run as a trace in {traces}")
    return rows
