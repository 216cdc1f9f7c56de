"""A run's learning curves: ``plot_learning_curves`` draws the return and the task metric
against env steps and wall time from the run folder's monitor.csv and evaluations."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vdsim_gym._files import open_csv, open_user_file, read_user_text, read_yaml
from vdsim_gym.errors import ConfigError, TrainingError


def load_npz(path: str | Path, what: str) -> dict[str, np.ndarray]:
    """The arrays of a run folder's ``.npz`` file (``what`` it is: "the evaluation log"),
    read whole; a damaged file (truncated by a killed writer of an older version, not a
    zip) is a TrainingError naming the file and the fix, not numpy's or zipfile's
    exception."""
    import zipfile

    path = Path(path)
    try:
        with open_user_file(path, what, "rb", max_bytes=None) as fh, \
                np.load(fh, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as exc:
        if isinstance(exc, ConfigError):  # open_user_file's: it names the file
            raise
        raise TrainingError(f"{path}: {what} is damaged ({type(exc).__name__}: {exc}); "
                            "delete it (the run's models stay usable) or retrain the run"
                            ) from None


def plot_learning_curves(run: str | Path, png: str | Path, *, window: int = 50,
                         max_steps: int | None = None, metric: str | None = None) -> Path:
    """Training episodes' return and task metric against env steps and wall time.

    The top row is the return, the bottom row the task's metric (``metric``, default the
    env's first: e_y RMSE, min gap, speed-error RMS), both from ``monitor.csv`` as a
    ``window``-episode running mean, with EvalCallback's deterministic evaluations
    (``evaluations.npz``, ``eval_metrics.npz``) on the steps axis. A run from before the
    metric columns existed gets the return row alone."""
    import csv

    from vdsim_gym._plotting import figure, save_figure

    run = Path(run)
    with open_csv(run / "monitor.csv", "the run's monitor.csv") as fh:
        rows = list(csv.DictReader(line for line in fh if not line.startswith("#")))
    if not rows:
        raise TrainingError(f"{run / 'monitor.csv'} has no finished episode yet")
    extra = [k for k in rows[0] if k not in ("r", "l", "t")]
    if metric is not None and metric not in extra:
        raise TrainingError(f"metric {metric!r} is not in {run / 'monitor.csv'}; it has "
                            f"{', '.join(extra) or 'no task metric columns'}")
    metric = metric or (extra[0] if extra else None)
    steps = np.cumsum([int(float(r["l"])) for r in rows])
    wall = np.array([float(r["t"]) for r in rows]) / 60.0
    keep = steps <= (max_steps or steps[-1])
    k = min(window, int(keep.sum()))
    series = [("r", "episode return")] + ([(metric, _metric_label(run, metric))]
                                          if metric else [])
    fig = figure(figsize=(11, 3.6 * len(series)))
    axes = fig.subplots(len(series), 2, squeeze=False)
    evals = {"r": run / "evaluations.npz", metric: run / "eval_metrics.npz"}
    for (key, label), (a1, a2) in zip(series, axes, strict=True):
        y = np.array([float(r[key]) if r[key] not in ("", None) else np.nan for r in rows])
        y, st, wt = y[keep], steps[keep], wall[keep]
        ok = np.isfinite(y)
        smooth = np.convolve(y[ok], np.ones(k) / k, mode="valid") if ok.sum() >= k else None
        a1.plot(st[ok], y[ok], ".", ms=1.5, alpha=0.25, color="C0")
        if smooth is not None:
            a1.plot(st[ok][k - 1:], smooth, color="C0", label=f"training, {k}-episode mean")
            a2.plot(wt[ok][k - 1:], smooth, color="C0")
        path = evals[key]
        if path.exists():
            d = load_npz(path, "the evaluation log")
            vals = d["results"] if key == "r" else d[key]
            sel = d["timesteps"] <= (max_steps or d["timesteps"].max())
            with np.errstate(all="ignore"):
                mean = np.nanmean(np.asarray(vals, float), axis=1)
            a1.plot(d["timesteps"][sel], mean[sel], "o-", ms=3, color="C1",
                    label="evaluation (deterministic)")
        a1.set_xlabel("env steps")
        a2.set_xlabel("wall time [min]")
        for ax in (a1, a2):
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        a1.legend(fontsize=8)
    axes[0][0].set_title(run.name)
    fig.tight_layout()
    save_figure(fig, png, dpi=110)
    return Path(png)


def _metric_label(run: Path, metric: str) -> str:
    """The env's label for a metric ("e_y RMSE [m]"), from the run's env id."""
    import gymnasium as gym
    from gymnasium.envs.registration import load_env_creator

    try:
        env_id = read_yaml(run / "config.yml", "the run's config.yml")["env_id"]
        entry = gym.spec(env_id).entry_point
        cls = load_env_creator(entry) if isinstance(entry, str) else entry
        return getattr(cls, "METRIC_LABELS", {}).get(metric, metric)
    except (ConfigError, KeyError, TypeError, gym.error.Error):  # no config: the raw name
        return metric


def run_summary(run: str | Path, labels: dict[str, str] | None = None) -> str:
    """What a finished run's evaluations say, for the end of ``vdsim-gym train``: the last
    evaluation (steps, mean return, the task's first metric, failed episodes) and the
    best model's (best.json: by return or by ``--select-by``). ``labels``: the task's
    metric labels (name -> label with unit); missing ones print the metric's name."""
    import json

    from vdsim_gym._best import recover_best

    run = Path(run)
    recover_best(run)  # a best model a stop left staged: finished or dropped
    lines = []
    metrics_path, evals_path = run / "eval_metrics.npz", run / "evaluations.npz"
    if not evals_path.is_file():
        return "  no evaluation yet (the run ended before its first: --eval-freq)"
    ev = load_npz(evals_path, "the evaluation log")
    steps, returns = ev["timesteps"], ev["results"]
    head, values, failed = None, None, None
    if metrics_path.is_file():
        em = load_npz(metrics_path, "the evaluations' task metrics")
        names = [k for k in em if k not in ("timesteps", "failed_episodes")]
        failed = em["failed_episodes"]
        if names:
            head, values = names[0], em[names[0]]
    label = (labels or {}).get(head or "", head)
    n = returns.shape[1]
    last = [f"mean return {float(np.mean(returns[-1])):.1f}"]
    if values is not None and len(values):
        last.append(f"{label} {float(np.nanmean(values[-1])):.4g}")
    if failed is not None and len(failed):
        last.append(f"{int(failed[-1])} of {n} episodes failed")
    lines.append(f"  final evaluation ({int(steps[-1])} steps, {n} episodes): "
                 + ", ".join(last))
    best_path = run / "best.json"
    if best_path.is_file():
        best = json.loads(read_user_text(best_path, "the run's best.json"))
        by = best.get("select_by", "return")
        what = [f"mean return {best['mean_return']:.1f}"]
        if by != "return" and by in best:
            what.append(f"{(labels or {}).get(by, by)} {best[by]:.4g}")
        what.append(f"{best['failed_episodes']} of {best['episodes']} episodes failed")
        lines.append(f"  best model (by {by}, {best['timesteps']} steps): " + ", ".join(what)
                     + f" -> {run / 'best_model.zip'}")
    if failed is not None and len(failed) and int(failed[-1]) == n:
        lines.append("  every evaluation episode of the last evaluation failed: train longer "
                     "(--timesteps) or check the task's settings")
    return "\n".join(lines)
