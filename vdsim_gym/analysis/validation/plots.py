"""The time histories, ours against theirs, one panel per maneuver and level
(``plot``, docs/img/validation_commonroad.png)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from vdsim_gym.analysis.validation.commonroad import MODELS
from vdsim_gym.analysis.validation.maneuvers import (
    BRAKE_ACCEL,
    SINE_FREQ,
    SINE_STEER,
    STEP_STEER,
    Run,
    cached_run,
)


def _decel(run: Run) -> tuple[np.ndarray, np.ndarray]:
    return run.t[1:], -np.diff(run.vx) / np.diff(run.t)


_PANELS: dict[str, tuple[Callable[[Run], tuple[np.ndarray, np.ndarray]], str, str, str]] = {
    "circular": (lambda r: (r.steer, r.ay), "steer [rad]", "ay [m/s^2]",
                 "steady-state circular: 20 m/s, steer ramp 0.005 rad/s"),
    "step": (lambda r: (r.t, r.r), "t [s]", "yaw rate [rad/s]",
             f"step steer {STEP_STEER} rad at 20 m/s"),
    "sine": (lambda r: (r.t, r.r), "t [s]", "yaw rate [rad/s]",
             f"sine steer {SINE_FREQ:g} Hz, {SINE_STEER} rad at 20 m/s"),
    "braking": (_decel, "t [s]", "deceleration [m/s^2]",
                f"braking from 100 km/h, torque m R_w {-BRAKE_ACCEL:g} m/s^2"),
}


def plot(path: str | Path, integrator: str | None = None) -> Path:
    """Ours against theirs, one panel per maneuver (rows) and level (columns), as a PNG."""
    from vdsim_gym._plotting import figure, save_figure

    fig = figure(figsize=(11, 12))
    axes = fig.subplots(len(_PANELS), 2, squeeze=False)
    for j, level in enumerate(("L1", "L2")):
        for i, (name, (xy, xl, yl, title)) in enumerate(_PANELS.items()):
            ax = axes[i][j]
            theirs = cached_run("commonroad", level, name)
            ours = cached_run("ours", level, name, integrator)
            ax.plot(*xy(theirs), color="black", lw=1.6, label=f"CommonRoad {MODELS[level]}")
            ax.plot(*xy(ours), color="tab:red", lw=1.0, ls="--", label=f"ours {level}")
            ax.set_title(f"{level} vs {MODELS[level]}: {title}", fontsize=9)
            ax.set_xlabel(xl, fontsize=8)
            ax.set_ylabel(yl, fontsize=8)
            ax.tick_params(labelsize=7)
            if name == "braking":  # the steady part (the first 20 ms spin the wheels down)
                ax.set_ylim(6.0, 7.0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, out, dpi=90)
    return out
