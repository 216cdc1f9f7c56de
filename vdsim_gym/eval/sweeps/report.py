"""Sweep reports: the text table of cell summaries (``summary_table``,
``SUMMARY_COLUMNS``) and the metric-against-delay plot (``plot``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from vdsim_gym import _table
from vdsim_gym.eval.sweeps.results import METRICS, CellSummary, SweepResult

SUMMARY_COLUMNS: tuple[_table.Column, ...] = (
    ("controller", "controller", "<14", ""),
    ("scenario", "scenario", "<10", ""),
    ("latency", "latency", "<24", ""),
    ("n", "n", ">4", "d"),
    ("done", "n_completed", ">4", "d"),
    ("e_y RMSE [m] (95 %)", "ey_rmse", "<26", ""),
    ("max |e_y| [m]", "ey_max", ">13", ".4f"),
    ("return", "ret", ">8", ".1f"),
    ("cone hits", "cones", ">9", ".2f"),
    ("overruns", "overruns", ">8", ".1f"),
)


def _fmt_interval(mean: float, lo: float, hi: float) -> str:
    if math.isnan(lo):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{lo:.4f}, {hi:.4f}]"


def summary_table(results: dict[str, SweepResult]) -> str:
    """Text table of the cell summaries of one or more named sweeps."""
    from types import SimpleNamespace

    rows = []
    for name, res in results.items():
        for s in res.summary:
            rows.append(SimpleNamespace(
                controller=name, scenario=s.scenario, latency=s.latency, n=s.n,
                n_completed=s.n_completed, ey_rmse=_fmt_interval(*s.interval("ey_rmse_m")),
                ey_max=s.ey_max_m_mean, ret=s.episode_return_mean, cones=s.cone_hits_mean,
                overruns=s.n_overrun_mean))
    return _table.format_table(rows, SUMMARY_COLUMNS)


def plot(results: dict[str, SweepResult], path: str | Path, *, metric: str = "ey_rmse_m",
         title: str | None = None) -> Path:
    """``metric`` (a METRICS name) against the mean delay, with the 95 % band: one line
    per controller, scenario and latency kind ("none" joins "fixed" at 0 ms)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    labels = {"ey_rmse_m": "e_y RMSE [m]", "ey_max_m": "max |e_y| [m]",
              "episode_return": "episode return", "cone_hits": "cone hits per episode",
              "n_overrun": "overruns per episode"}
    fig, ax = plt.subplots(figsize=(7, 4.2))
    color, hollow = 0, False
    for name, res in results.items():
        lines: dict[tuple[str, str], list[CellSummary]] = {}
        for s in res.summary:
            kind = s.latency.split(" ")[0]
            lines.setdefault((s.scenario, "fixed" if kind == "none" else kind), []).append(s)
        many_scen = len({k[0] for k in lines}) > 1
        for (scen, kind), cells in lines.items():
            cells = sorted(cells, key=lambda s: s.mean_delay_ms)
            x = [s.mean_delay_ms for s in cells]
            m, lo, hi = (np.array(v) for v in zip(*(s.interval(metric) for s in cells),
                                                  strict=True))
            label = name + (f" {scen}" if many_scen else "") + \
                ("" if kind == "fixed" else f" ({kind}, at its mean delay)")
            c = f"C{color % 10}"
            color += 1
            ax.plot(x, m, "o-" if kind == "fixed" else "s--", color=c, label=label)
            ax.fill_between(x, lo, hi, color=c, alpha=0.2, lw=0)
            short = [(xi, mi) for xi, mi, s in zip(x, m, cells, strict=True)
                     if s.n_completed < s.n]
            if short:  # episodes that ended early: their metric covers less course
                ax.plot(*zip(*short, strict=True), "o", ms=9, mfc="white", color=c, zorder=3)
                hollow = True
    if hollow:
        ax.text(0.01, 0.01, "hollow: not every episode reached the course end",
                transform=ax.transAxes, fontsize=7, va="bottom")
    ax.set_xlabel("mean computation delay [ms]")
    ax.set_ylabel(labels[metric] + " (mean, 95 % interval)")
    if title:
        ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["SUMMARY_COLUMNS", "plot", "summary_table"]
