"""The jobs of ``vdsim-gym acc`` (``run_acc``: the reference ACC workflow, config + sensor
CSV + gains -> results CSV, and its plot) and ``vdsim-gym acc-metrics``
(``run_acc_metrics``: its segmented metrics as JSON), with the packaged defaults of the
workflow's inputs; docs/ACC.md. The workflow itself is ``acc_workflow``, the metrics
``acc_metrics``."""

from __future__ import annotations

import json
from pathlib import Path

from vdsim_gym._data import data_dir, scenarios_dir
from vdsim_gym.eval.acc_metrics import read_results, segmented_metrics
from vdsim_gym.eval.acc_workflow import WorkflowResult, load_config, run_workflow


def default_config() -> Path:
    return scenarios_dir() / "acc.yaml"


def default_sensor() -> Path:
    return data_dir() / "acc_lead.csv"


def default_gains() -> Path:
    return scenarios_dir() / "acc_gains.yaml"


def run_acc(*, config: str | Path | None = None, sensor: str | Path | None = None,
            gains: str | Path | None = None, out: str | Path = "acc_results.csv",
            plant: str = "point_mass", vehicle: str = "generic_sedan", plot: bool = False
            ) -> list[str]:
    """Runs the workflow (None: the packaged config, sensor file, gains); the lines to
    print. ``plot``: also ``<out>.png``."""
    if plot:  # before the run: a missing extra is reported before any work
        import matplotlib  # noqa: F401
    res = run_workflow(config or default_config(), sensor or default_sensor(),
                       gains or default_gains(), out, plant=plant, vehicle=vehicle)
    lines = [_summary(res, plant)]
    if plot:
        png = res.path.with_suffix(".png")
        cfg = load_config(config or default_config())
        plot_results(res.path, png, set_speed=cfg.acc.set_speed,
                     title=f"ACC workflow, plant {plant}")
        lines.append(f"plot: {png}")
    return lines


def _summary(res: WorkflowResult, plant: str) -> str:
    modes = ", ".join(f"{m} {n}" for m, n in res.mode_counts.items())
    dmin = "no lead" if res.min_distance is None else f"{res.min_distance:.2f} m"
    return (f"wrote {res.path}: {res.rows} rows ({res.duration:g} s, plant {plant}); "
            f"rows per mode: {modes}; min distance {dmin}")


def run_acc_metrics(*, csv_path: str | Path, set_speed: float, dt: float,
                    follow_stable_window: float = 10.0, speed_ss_window: float = 5.0,
                    min_safe_distance: float = 0.0) -> str:
    """The segmented metrics of a results CSV (``acc_metrics.segmented_metrics``) as
    indented JSON."""
    table = read_results(csv_path)
    metrics = segmented_metrics(table, set_speed=set_speed, dt=dt,
                                follow_stable_window=follow_stable_window,
                                speed_ss_window=speed_ss_window,
                                min_safe_distance=min_safe_distance)
    return json.dumps(metrics, indent=2)


def plot_results(csv_path: Path, png: Path, *, set_speed: float, title: str = "") -> None:
    """Speed, distance and command against time, the modes shaded."""
    from vdsim_gym._plotting import figure, save_figure
    from vdsim_gym.eval.acc_metrics import segments

    tab = read_results(csv_path)
    t = tab.time
    fig = figure(figsize=(9, 7))
    axes = fig.subplots(3, 1, sharex=True)
    colors = {"follow": "tab:blue", "emergency": "tab:red"}
    for mode, a, b in segments(tab.mode):
        end = t[min(b, len(t) - 1)]  # to the next row: a one-row segment stays visible
        for ax in axes:
            if mode in colors:
                ax.axvspan(t[a], end, color=colors[mode], alpha=0.15, lw=0)
    axes[0].plot(t, tab.ego_speed, label="ego speed")
    axes[0].axhline(set_speed, color="k", ls=":", lw=1, label="set speed")
    axes[0].set_ylabel("speed [m/s]")
    axes[1].plot(t, tab.distance, label="distance")
    axes[1].plot(t, tab.distance - tab.distance_error, ls="--", label="desired distance")
    axes[1].set_ylabel("distance [m]")
    axes[2].plot(t, tab.acceleration_cmd, color="tab:green")
    emergency = [i for i, m in enumerate(tab.mode) if m == "emergency"]
    if emergency:
        axes[2].plot(t[emergency], tab.acceleration_cmd[emergency], "v", color="tab:red",
                     ms=5, label="emergency")
        axes[2].legend(loc="best", fontsize=8)
    axes[2].set_ylabel("command [m/s^2]")
    axes[2].set_xlabel("time [s]")
    for ax in axes[:2]:
        ax.legend(loc="best", fontsize=8)
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].set_title(f"{title} (shaded: blue follow, red emergency)")
    fig.tight_layout()
    save_figure(fig, png, dpi=110)
