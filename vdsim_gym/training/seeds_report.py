"""The ``vdsim-gym seeds-report`` command's work (``run_seeds_report``): training seeds of
each configuration against classical baselines over delays, with rliable's statistics
(``vdsim_gym.training.seeds``): seeds_report.csv, the table (``table``), the metric
against the delay (``plot``) and the learning curves with bands. ``runs_env`` is the env
the runs were trained on, from their config.yml."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError


def runs_env(groups: Sequence[Sequence[str]], env_id: str | None,
             env_kwargs: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The env id and gym.make kwargs the runs were trained on (each run folder's
    config.yml), with ``env_kwargs`` (the user's) on top: runs of different envs or env
    kwargs, an ``env_id`` other than theirs, or an env kwarg that sets a recorded one to
    another value are a ConfigError naming both. A run without config.yml takes
    ``env_id`` (then required)."""
    from vdsim_gym._files import read_yaml

    found: dict[str, tuple[str, dict[str, Any]]] = {}
    for g in groups:
        for run in g:
            cfg_path = Path(run) / "config.yml"
            if not cfg_path.exists():
                continue
            cfg = read_yaml(cfg_path, "the run's configuration")
            if not isinstance(cfg, dict) or not isinstance(cfg.get("env_id"), str):
                raise ConfigError(f"{cfg_path}: no env_id in the run's configuration; "
                                  "give run folders of vdsim-gym train")
            found[str(run)] = (cfg["env_id"], dict(cfg.get("env_kwargs") or {}))
    if not found:
        if env_id is None:
            raise ConfigError("--runs: no config.yml in the run folders, so their env is "
                              "unknown; give --env (the env they were trained on)")
        return env_id, dict(env_kwargs or {})
    (first, (run_env, run_kwargs)), *rest = found.items()
    for other, (e, kw) in rest:
        if e != run_env:
            raise ConfigError(f"--runs: {first} was trained on {run_env}, {other} on {e}; "
                              "report runs of one env per command")
        if kw != run_kwargs:
            raise ConfigError(f"--runs: {first} was trained with env kwargs {run_kwargs}, "
                              f"{other} with {kw}; report runs of one env per command")
    if env_id is not None and env_id != run_env:
        raise ConfigError(f"--env {env_id}, but the runs were trained on {run_env} ({first}"
                          "/config.yml); drop --env (the runs' env is used) or give runs "
                          f"of {env_id}")
    for key, value in (env_kwargs or {}).items():
        if key in run_kwargs and run_kwargs[key] != value:
            raise ConfigError(f"--env-kwargs sets {key}={value!r}, but the runs were trained "
                              f"with {key}={run_kwargs[key]!r} ({first}/config.yml); drop "
                              f"{key} from --env-kwargs")
    return run_env, {**run_kwargs, **dict(env_kwargs or {})}


def run_seeds_report(groups: Sequence[Sequence[str]], env_id: str | None, delays: str, *,
                     seeds: int = 64, which: str = "model", metric: str | None = None,
                     baselines: Sequence[str] = (), env_kwargs: dict[str, Any] | None = None,
                     scenarios: list[dict[str, Any]] | None = None,
                     out: str | Path = "seeds_report", make_plot: bool = True,
                     echo: Any = print, progress: bool = True, trust: bool = False
                     ) -> dict[str, Any]:
    """Each group of run folders (one configuration's seeds) evaluated over ``delays`` (the
    delay grammar); writes seeds_report.csv (a row per configuration or baseline and delay),
    seeds_report.png and learning_curves.png; prints the table. ``env_id`` None: the
    runs' own (``runs_env``: their config.yml, which every run and ``env_id`` and
    ``env_kwargs`` must agree with); the baselines run on the same env. ``trust``: the
    run folders unpickled as SB3 does (``load_policy``)."""
    from vdsim_gym._best import recover_best
    from vdsim_gym.config.delays import parse_delays
    from vdsim_gym.eval.stats import mean_interval
    from vdsim_gym.eval.sweeps import sweep
    from vdsim_gym.eval.sweeps.report import metric_label
    from vdsim_gym.eval.sweeps.results import write_csv
    from vdsim_gym.eval.sweeps.specs import load_controllers
    from vdsim_gym.eval.tolerance import episode_succeeded
    from vdsim_gym.training.seeds import aggregate, learning_curves, seed_scores

    for g in groups:
        for p in g:
            recover_best(p)  # a best model a stop left staged: finished or dropped
        missing = [p for p in g if not (Path(p) / f"{which}.zip").exists()]
        if not g or missing:
            raise ConfigError(f"--runs: no {which}.zip in {missing[0] if missing else g!r}; "
                              "give run folders of vdsim-gym train")
    env_id, env_kwargs = runs_env(groups, env_id, env_kwargs)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    aggs = []
    for g in groups:
        scores = seed_scores(g, env_id, delays, seeds=seeds, which=which, metric=metric,
                             scenarios=scenarios, progress=progress, trust=trust,
                             **env_kwargs)
        metric = scores.metric
        aggs.append((aggregate(scores), scores))
    rows: list[dict[str, Any]] = []
    for agg, sc in aggs:
        for j, d in enumerate(agg.delays):
            rows.append({"controller": agg.name, "kind": "trained", "delay": d,
                         "runs": agg.n_runs, "metric": sc.metric, "iqm": agg.iqm[j],
                         "lo": agg.lo[j], "hi": agg.hi[j], "mean": agg.mean[j],
                         "failed_runs": int(agg.failed[j]),
                         "per_run": " ".join(f"{v:.6g}" for v in sc.values[:, j])})
    for name, pol in load_controllers(list(baselines), None, ("--baselines", "--baselines"),
                                      trust=trust):
        res = sweep(pol, env_id, latencies=parse_delays(delays), seeds=seeds,
                    progress=progress, progress_label=f"{name} (baseline)",
                    scenarios=scenarios, **env_kwargs)
        m = metric or "rms_e_y"
        by_delay: dict[str, list[Any]] = {}
        for r in res.table:  # pooled over the scenarios, as the trained runs' values are
            by_delay.setdefault(r.latency, []).append(r)
        for label, eps in by_delay.items():
            v = np.array([r.metrics.get(m, math.nan) for r in eps], float)
            mean, lo, hi = mean_interval(v[np.isfinite(v)])
            rows.append({"controller": name, "kind": "baseline", "delay": label,
                         "runs": 1, "metric": m, "iqm": math.nan, "lo": lo, "hi": hi,
                         "mean": mean,
                         "failed_runs": int(not all(episode_succeeded(r) for r in eps)),
                         "per_run": ""})
    write_csv(out / "seeds_report.csv", rows)
    # one scenario: labelled on its env (a dyno phase's field names that cycle's phase)
    one = scenarios[0] if scenarios and len(scenarios) == 1 else {}
    label = metric_label(env_id, metric or "rms_e_y", {**env_kwargs, **one})
    echo(table(rows, env_id, seeds, label))
    written = [out / "seeds_report.csv"]
    if make_plot:
        written.append(plot(rows, out / "seeds_report.png", env_id, label))
        written.append(learning_curves([list(g) for g in groups],
                                       out / "learning_curves.png",
                                       metric=metric or "rms_e_y",
                                       labels=[a.name for a, _ in aggs], axis_label=label))
    echo("wrote " + ", ".join(map(str, written)))
    return {"rows": rows, "aggregates": [a for a, _ in aggs]}


def _decimals(values: Sequence[float], digits: int = 4) -> int:
    """Decimals that give the largest finite value ``digits`` significant digits: one
    precision for a whole column."""
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0.0]
    if not finite:
        return digits
    return max(0, digits - 1 - math.floor(math.log10(max(finite))))


def table(rows: Sequence[dict[str, Any]], env_id: str, seeds: int,
          metric_label: str = "value") -> str:
    """The report as text: the metric named with its unit in the header, every value of
    the column at one precision."""
    values = [r["iqm"] if r["kind"] == "trained" else r["mean"] for r in rows]
    d = _decimals([*values, *(r["lo"] for r in rows), *(r["hi"] for r in rows)])
    head = f"{metric_label} [95 %]"
    cells = [f"{v:.{d}f} [{r['lo']:.{d}f}, {r['hi']:.{d}f}]" for v, r in zip(values, rows,
                                                                         strict=True)]
    width = max([len(head), *map(len, cells)])
    lines = [f"{env_id}, {seeds} evaluation seeds per delay; trained: IQM over runs "
             "[95 % stratified bootstrap], failed runs (an episode without success); "
             "baselines: mean [95 %]",
             f"{'controller':<28} {'delay':<14} {'runs':>4} {head:>{width}} {'failed':>7}",
             "-" * (58 + width)]
    for r, cell in zip(rows, cells, strict=True):
        lines.append(f"{r['controller']:<28} {r['delay']:<14} {r['runs']:>4} {cell:>{width}} "
                     f"{r['failed_runs']:>7}")
    return "\n".join(lines)


def plot(rows: Sequence[dict[str, Any]], path: Path, env_id: str,
         metric_label: str | None = None) -> Path:
    """The metric against the delay: trained configurations' IQM with their intervals,
    baselines' means with theirs."""
    from vdsim_gym._plotting import figure, save_figure

    fig = figure(figsize=(7, 4))
    ax = fig.subplots()
    names = list(dict.fromkeys(r["controller"] for r in rows))
    for k, name in enumerate(names):
        rs = [r for r in rows if r["controller"] == name]
        x = np.arange(len(rs)) + (k - (len(names) - 1) / 2) * 0.08
        y = np.array([r["iqm"] if r["kind"] == "trained" else r["mean"] for r in rs])
        lo, hi = np.array([r["lo"] for r in rs]), np.array([r["hi"] for r in rs])
        trained = rs[0]["kind"] == "trained"
        label = f"{name} (IQM of {rs[0]['runs']} runs)" if trained else f"{name} (baseline)"
        ax.errorbar(x, y, yerr=[y - lo, hi - y], fmt="o-" if rs[0]["kind"] == "trained"
                    else "s--", ms=4, capsize=3, label=label)
        ax.set_xticks(np.arange(len(rs)), [r["delay"] for r in rs])
    ax.set_ylabel(metric_label or (rows[0]["metric"] if rows else ""))
    ax.set_xlabel("computation delay")
    ax.set_title(env_id)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)
    return path


__all__ = ["plot", "run_seeds_report", "runs_env", "table"]
