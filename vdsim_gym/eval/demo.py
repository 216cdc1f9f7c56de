"""The demo (``vdsim-gym demo``: ``run_demo``): the Stanley + PI baseline through the
double lane changes.

Writes ``demo_results.csv`` (one row per preset), ``demo_dlc.png`` (driven path,
reference and cone gates) and each run as a trace, and prints the table.
"""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym import _table
from vdsim_gym._files import atomic_open
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.envs.courses import load_scenario
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR
from vdsim_gym.tracking import ey_stats


@dataclass(frozen=True)
class DemoResult:
    preset: str
    speed_mps: float
    ey_rmse_m: float
    ey_max_m: float
    cone_hits: int
    pass_speed_mps: float
    completed: bool
    steps: int


SCENARIOS = {"iso3888_1": "dlc_iso3888_1", "iso3888_2": "dlc_iso3888_2",
             "lane_change_3p5_30": "lane_change_3p5_30"}


def check_preset(preset: str) -> str:
    if not isinstance(preset, str) or preset not in SCENARIOS:
        raise ConfigError(f"unknown preset {preset!r}; choose from {', '.join(SCENARIOS)}")
    return preset


def scenario_speed(preset: str) -> float:
    """The entry speed of the preset's scenario file (envs/scenarios) [m/s]."""
    return float(load_scenario(SCENARIOS[check_preset(preset)])["speed"])


def drive(preset: str, *, speed: float | None = None, level: str = "L2", seed: int = 0,
          trace_path: str | Path | None = None, integrator: str = DEFAULT_INTEGRATOR
          ) -> tuple[DemoResult, np.ndarray, gym.Env]:
    """One episode of the baseline; returns the result, the driven XY and the env. With
    ``trace_path`` the episode is recorded there as a .vdtrace (docs/TRACES.md);
    ``integrator="heun"``: the reference configuration (the figures before the
    training-grade default)."""
    check_preset(preset)
    speed = scenario_speed(preset) if speed is None else speed
    env = gym.make("VDSim-DLC-v0", preset=preset, speed=speed, level=level,
                   terminate_on_cone=False, integrator=integrator)
    if trace_path is not None:
        from vdsim_gym.wrappers import RecordTrace

        env = RecordTrace(env, trace_path)
    policy = stanley_pi(env)
    obs, info = env.reset(seed=seed)
    e_y = []
    done = False
    first = True
    while not done:
        action, _ = policy.predict(obs, episode_start=np.array([first]))
        first = False
        obs, _, terminated, truncated, info = env.step(action)
        e_y.append(info["e_y"])
        done = terminated or truncated
    ey_rmse, ey_max = ey_stats(e_y)
    result = DemoResult(
        preset=preset,
        speed_mps=speed,
        ey_rmse_m=ey_rmse,
        ey_max_m=ey_max,
        cone_hits=int(info["cone_hits"]),
        pass_speed_mps=float(info.get("pass_speed", float("nan"))),
        completed=bool(truncated and not terminated),
        steps=len(e_y),
    )
    base: Any = env.unwrapped  # the path env: its own attributes
    return result, base.trajectory, env


# (title, DemoResult field, alignment, number format)
COLUMNS = (
    ("preset", "preset", "<20", ""),
    ("speed [m/s]", "speed_mps", ">11", ".2f"),
    ("e_y RMSE [m]", "ey_rmse_m", ">12", ".4f"),
    ("max |e_y| [m]", "ey_max_m", ">13", ".4f"),
    ("cones hit", "cone_hits", ">9", "d"),
    ("pass speed [m/s]", "pass_speed_mps", ">16", ".2f"),
    ("completed", "completed", ">9", ""),
)


def format_table(results: list[DemoResult]) -> str:
    return _table.format_table(results, COLUMNS)


def plot(runs: list[tuple[DemoResult, np.ndarray, gym.Env]], path: Path) -> None:
    from vdsim_gym._plotting import figure, save_figure

    fig = figure(figsize=(11, 3.0 * len(runs)))
    axes = fig.subplots(len(runs), 1, squeeze=False)

    def title(res: DemoResult, factor: float) -> str:
        return (f"{res.preset}: e_y RMSE {res.ey_rmse_m:.3f} m, max {res.ey_max_m:.3f} m, "
                f"{res.cone_hits} cones hit, pass {res.pass_speed_mps:.1f} m/s "
                f"(Y scale exaggerated {factor:.2g}x)")

    for ax, (res, xy, env) in zip(axes[:, 0], runs, strict=True):
        base: Any = env.unwrapped  # the path env: its own attributes
        course = base.course
        ax.plot(course.path[:, 0], course.path[:, 1], "k--", lw=1, label="reference")
        if len(course.cones):
            hit = np.asarray(base.cone_hit_flags, dtype=bool)
            ax.plot(*course.cones[~hit].T, "o", color="orange", ms=4, label="cones")
            if hit.any():
                ax.plot(*course.cones[hit].T, "o", color="red", ms=5, label="cones hit")
        ax.plot(xy[:, 0], xy[:, 1], "b-", lw=1.5, label="driven (CG)")
        ax.set_title(title(res, 0.0), fontsize=9)  # the layout's room; factor set below
        ax.set_xlabel("X [m]")
        ax.set_ylabel("Y [m]")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=7, ncol=4)
    fig.tight_layout()
    # A course is ~120-180 m long and ~5 m wide: at equal aspect the lateral motion would
    # be a few pixels high, so Y keeps its own scale and each title states how much it is
    # exaggerated, measured on the laid-out axes.
    for ax, (res, _, _) in zip(axes[:, 0], runs, strict=True):
        ax.set_title(title(res, y_exaggeration(ax)), fontsize=9)
    save_figure(fig, path, dpi=110)


def y_exaggeration(ax) -> float:
    """How many times a metre of Y is drawn longer than a metre of X on ``ax`` (1 at
    equal aspect), from its position in the figure and its data limits."""
    box = ax.get_position()
    fig_w, fig_h = ax.figure.get_size_inches()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    return (box.height * fig_h / abs(y1 - y0)) / (box.width * fig_w / abs(x1 - x0))


def run_demo(out: str | Path = "demo_out", presets: list[str] | None = None,
             speed: float | None = None, level: str = "L2",
             integrator: str = DEFAULT_INTEGRATOR) -> list[DemoResult]:
    presets = [check_preset(p) for p in presets or SCENARIOS]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs: list[tuple[DemoResult, np.ndarray, gym.Env]] = []
    try:  # the envs close even when a run or the plot fails (bad speed, no matplotlib)
        for p in presets:
            runs.append(drive(p, speed=speed, level=level, integrator=integrator,
                              trace_path=out / "traces" / f"{p}.vdtrace"))
        results = [r[0] for r in runs]
        with atomic_open(out / "demo_results.csv") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(asdict(results[0])))
            writer.writeheader()
            writer.writerows(asdict(r) for r in results)
        plot(runs, out / "demo_dlc.png")
    finally:
        for _, _, env in runs:
            env.close()
    print(f"Stanley + PI baseline, VDSim-DLC-v0, {level}, integrator {integrator}")
    print(format_table(results))
    print(f"\nwrote {out / 'demo_results.csv'} and {out / 'demo_dlc.png'}; the runs as "
          f"traces in {out / 'traces'} (vdsim-gym render {out / 'traces'}/<preset>.vdtrace)")
    return results
