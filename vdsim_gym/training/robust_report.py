"""The robust benchmark's table and plots (``vdsim_gym.training.robust``): DLC's metrics
with their intervals per controller, ACC's time-gap error against jerk (the Pareto view:
lower-left is better, a controller with a collision marked)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

LABELS = {"rms_e_y": "e_y RMSE [m]", "max_abs_e_y": "max |e_y| [m]",
          "cone_hit": "cone-hit episodes", "completed": "completed",
          "rms_time_gap_error": "time-gap error RMS [s]", "rms_jerk": "RMS jerk [m/s^3]",
          "collision": "collision episodes", "min_gap": "min gap [m]"}


def _cell(row: dict[str, Any], m: str, fraction: bool) -> str:
    v, lo, hi = row[m], row[f"{m}_lo"], row[f"{m}_hi"]
    if not math.isfinite(v):
        return "-"
    if fraction:
        return f"{100 * v:.1f} % [{100 * lo:.1f}, {100 * hi:.1f}]"
    return f"{v:.4g} [{lo:.4g}, {hi:.4g}]"


def table(rows: Sequence[dict[str, Any]], t: Any, seeds: int) -> str:
    """The benchmark's table: each metric's point value (learned: IQM over runs;
    baseline: mean over episodes) with its 95 % interval, the smallest gap (ACC) and the
    CPU time per decision."""
    scen = f" x {len(t.scenarios)} scenarios" if t.scenarios else ""
    head = [f"robust benchmark '{t.name}' on {t.env_id}: the nominal car and a "
            f"{1000 * t.nominal_delay:g} ms delay told, each episode's car and delay "
            f"drawn; {seeds} held-out seeds{scen} per controller; learned: IQM over runs, "
            "baselines: mean over episodes, [95 % interval]"]
    cols = ["controller", "runs"] + [LABELS.get(m, m) for m in t.metrics]
    if "min_gap" in t.metrics:
        cols.append("smallest gap [m]")
    cols.append("us/decision")
    body = []
    for r in rows:
        line = [r["controller"], str(r["runs"])]
        for m in t.metrics:
            line.append(_cell(r, m, m in ("cone_hit", "completed", "collision")))
        if "min_gap" in t.metrics:
            line.append(f"{r.get('smallest_gap', math.nan):.2f}")
        us = r.get("us_per_decision", math.nan)
        line.append("-" if not math.isfinite(us) else f"{us:.3g}")
        body.append(line)
    widths = [max(len(c), *(len(b[i]) for b in body)) if body else len(c)
              for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([*head, fmt.format(*cols), *(fmt.format(*b) for b in body)])


def plot(rows: Sequence[dict[str, Any]], t: Any, path: Path) -> Path:
    from vdsim_gym._plotting import figure, save_figure

    if t.name == "acc":
        fig = figure(figsize=(6.5, 4.5))
        ax = fig.subplots()
        for r in rows:
            x, y = r["rms_time_gap_error"], r["rms_jerk"]
            xerr = [[x - r["rms_time_gap_error_lo"]], [r["rms_time_gap_error_hi"] - x]]
            yerr = [[y - r["rms_jerk_lo"]], [r["rms_jerk_hi"] - y]]
            crashed = r.get("collision_episodes", 0) > 0
            ax.errorbar([x], [y], xerr=xerr, yerr=yerr, fmt="x" if crashed else
                        ("o" if r["kind"] == "learned" else "s"), capsize=3, ms=6,
                        label=f"{r['controller']}" + (
                            f" ({r['collision_episodes']} collision"
                            f"{'s' if r['collision_episodes'] != 1 else ''})"
                            if crashed else ""))
        ax.set_xlabel(LABELS["rms_time_gap_error"])
        ax.set_ylabel(LABELS["rms_jerk"])
        ax.set_title("robust ACC: lower-left is better (x: collided)")
    else:
        metrics = [m for m in t.metrics]
        fig = figure(figsize=(3.2 * len(metrics), 3.6))
        axes = fig.subplots(1, len(metrics))
        names = [r["controller"] for r in rows]
        y = np.arange(len(rows))
        for ax, m in zip(np.atleast_1d(axes), metrics, strict=True):
            v = np.array([r[m] for r in rows])
            lo = np.array([r[f"{m}_lo"] for r in rows])
            hi = np.array([r[f"{m}_hi"] for r in rows])
            colors = ["C0" if r["kind"] == "learned" else "C7" for r in rows]
            ax.barh(y, v, color=colors)
            ax.errorbar(v, y, xerr=[v - lo, hi - v], fmt="none", ecolor="k", capsize=3)
            ax.set_title(LABELS.get(m, m), fontsize=9)
            ax.set_yticks(y, names if ax is np.atleast_1d(axes)[0] else [""] * len(y),
                          fontsize=8)
            ax.grid(alpha=0.3, axis="x")
        fig.suptitle(f"robust {t.name}: {t.env_id} (blue: learned, IQM over runs)",
                     fontsize=10)
    ax0 = fig.axes[0]
    if t.name == "acc":
        ax0.grid(alpha=0.3)
        ax0.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


__all__ = ["LABELS", "plot", "table"]
