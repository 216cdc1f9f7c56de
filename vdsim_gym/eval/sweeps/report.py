"""Sweep reports: the text table of cell summaries (``summary_table``) and the
metric-against-delay plot (``plot``), both labelled from the task's ``METRIC_LABELS``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym import _table
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.sweeps.results import BASE_LABELS, METRICS, CellSummary, SweepResult


def _fmt_interval(mean: float, lo: float, hi: float) -> str:
    if math.isnan(lo):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{lo:.4f}, {hi:.4f}]"


def _labels(res: SweepResult) -> dict[str, str]:
    """Metric -> label (with units) of a sweep: the task's labelled metrics first."""
    return dict(res.meta.get("metric_labels") or BASE_LABELS)


def metric_label(env_id: str, metric: str, env_kwargs: dict[str, Any] | None = None) -> str:
    """A metric's label with its unit on ``env_id`` (the env's METRIC_LABELS, e.g.
    "e_y RMSE [m]"; the return and the overruns: BASE_LABELS; a dyno phase's field by
    its env's ``metric_label``: "speed error RMS [m/s], phase 3 (extra_high)"), or its
    name: for the axes and headers of reports that hold names only."""
    import gymnasium as gym

    env = gym.make(env_id, **(env_kwargs or {}))
    try:
        labels = {**BASE_LABELS, **dict(getattr(env.unwrapped, "METRIC_LABELS", {}))}
        own = getattr(env.unwrapped, "metric_label", None)  # the dyno's names its phases
        if metric not in labels and own is not None:
            return str(own(metric))
    finally:
        env.close()
    return labels.get(metric, metric)


def headline_metric(res: SweepResult) -> str:
    """The metric a report leads with: the task's first labelled one (path: rms_e_y)."""
    task = [m for m in _labels(res) if m not in METRICS]
    return task[0] if task else METRICS[0]


def summary_table(results: dict[str, SweepResult]) -> str:
    """Text table of the cell summaries of one or more named sweeps: per cell n,
    completions, the headline metric with its 95 % interval, the means of the task's
    other labelled metrics, the return and the overruns (every metric is in the CSVs)."""
    from types import SimpleNamespace

    first = next(iter(results.values()))
    labels = _labels(first)
    head = headline_metric(first)
    task = [m for m in labels if m not in METRICS and m != head]
    columns: list[_table.Column] = [
        ("controller", "controller", "<14", ""), ("scenario", "scenario", "<10", ""),
        ("latency", "latency", "<24", ""), ("n", "n", ">4", "d"),
        ("done", "n_completed", ">4", "d"),
        (f"{labels.get(head, head)} (95 %)", "head", "<26", ""),
        *((labels[m], m, f">{len(labels[m])}", ".4f") for m in task),
        ("return", "episode_return", ">8", ".1f"), ("overruns", "n_overrun", ">8", ".1f"),
    ]
    rows = []
    for name, res in results.items():
        for s in res.summary:
            rows.append(SimpleNamespace(
                controller=name, scenario=s.scenario, latency=s.latency, n=s.n,
                n_completed=s.n_completed, head=_fmt_interval(*s.interval(head)),
                **{m: s.interval(m)[0] for m in (*task, *METRICS)}))
    return _table.format_table(rows, columns)


def phase_table(results: dict[str, SweepResult]) -> str:
    """Text table of the per-phase summaries (``SweepResult.phase_summary``) of one or
    more named sweeps: per controller, scenario, latency, cycle and phase, n and each
    phase metric's mean with its 95 % interval, as a lab reports a cycle by phase. Empty
    when no sweep has phases."""
    from types import SimpleNamespace

    first = next(iter(results.values()))
    fields_ = first.meta.get("phase_metrics") or {}
    labels = _labels(first)
    rows = [SimpleNamespace(controller=name, **p,
                            **{m: _fmt_interval(p[f"{m}_mean"], p[f"{m}_lo"], p[f"{m}_hi"])
                               for m in fields_})
            for name, res in results.items() for p in res.phase_summary()]
    if not rows:
        return ""
    columns: list[_table.Column] = [
        ("controller", "controller", "<14", ""), ("scenario", "scenario", "<10", ""),
        ("latency", "latency", "<12", ""), ("cycle", "cycle", "<12", ""),
        ("phase", "name", "<10", ""), ("n", "n", ">4", "d"),
        *((labels.get(m, m), m, "<26", "") for m in fields_),
    ]
    return _table.format_table(rows, columns)


def plot(results: dict[str, SweepResult], path: str | Path, *, metric: str | None = None,
         title: str | None = None) -> Path:
    """``metric`` (default: the headline metric, path: rms_e_y) against the mean delay,
    with the 95 % band: one line per controller, scenario and latency kind ("none"
    joins "fixed" at 0 ms)."""
    from vdsim_gym._plotting import figure, save_figure

    first = next(iter(results.values()))
    metric = headline_metric(first) if metric is None else metric
    if metric not in first.metrics:
        raise ConfigError(f"metric must be one of {', '.join(first.metrics)} (this sweep's "
                          f"metrics), got {metric!r}")
    labels = _labels(first)
    scenarios = list(dict.fromkeys(s.scenario for r in results.values() for s in r.summary))
    by_scenario = len(scenarios) > 1  # then a colour per scenario, a line style per controller
    styles = ("-", "--", ":", "-.")
    fig = figure(figsize=(9.5, 4.4) if by_scenario else (7, 4.2))
    ax = fig.subplots()
    color, hollow = 0, False
    for ci, (name, res) in enumerate(results.items()):
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
            if by_scenario:
                c = f"C{scenarios.index(scen) % 10}"
                fmt = ("o" if kind == "fixed" else "s") + styles[ci % len(styles)]
            else:
                c = f"C{color % 10}"
                color += 1
                fmt = "o-" if kind == "fixed" else "s--"
            ax.plot(x, m, fmt, color=c, label=label)
            ax.fill_between(x, lo, hi, color=c, alpha=0.2, lw=0)
            short = [(xi, mi) for xi, mi, s in zip(x, m, cells, strict=True)
                     if s.n_completed < s.n]
            if short:  # episodes that ended early: their metric covers less course
                ax.plot(*zip(*short, strict=True), "o", ms=9, mfc="white", color=c, zorder=3)
                hollow = True
    ax.set_xlabel("mean computation delay [ms]")
    ax.set_ylabel(labels.get(metric, metric) + " (mean, 95 % interval)")
    if title:  # wrapped: env kwargs (randomize={...}) make it wider than the figure
        ax.set_title(title, fontsize=9, wrap=True)
    ax.grid(alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    if hollow:  # a legend entry, placed with the legend: a fixed corner note overlapped lines
        from matplotlib.lines import Line2D

        handles.append(Line2D([], [], ls="none", marker="o", ms=9, mfc="white", color="0.4"))
        names.append("not every episode completed\n(reached its task's end)")
    if by_scenario:  # many lines: the legend beside the axes, not over them
        ax.legend(handles, names, fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        ax.legend(handles, names, fontsize=7, loc="best")
    fig.tight_layout()
    path = Path(path)
    save_figure(fig, path, dpi=110)
    return path


__all__ = ["headline_metric", "metric_label", "phase_table", "plot", "summary_table"]
