"""Many seeds of one training configuration, and statistics that say how much one run
tells: the interquartile mean (IQM) over seeds with 95 % stratified bootstrap intervals
(Agarwal et al., "Deep RL at the edge of the statistical precipice", NeurIPS 2021; the
``rliable`` package, the ``stats`` extra), learning curves with bands, and the seeds that
failed counted, not hidden.

- ``train_seeds(algo, env_id, seeds, name=...)``: one run folder per seed,
  ``<out>/<name>_s<seed>``, sequentially or ``jobs`` at a time in worker processes.
- ``seed_scores(runs, env_id, delays)``: each run's policy swept over the delays on the
  same evaluation seeds; per run and delay the mean of the metric and whether every
  episode succeeded (completed, no cone hit, no collision).
- ``aggregate(scores)``: per delay the IQM over the runs with its 95 % stratified
  bootstrap interval (``rliable.library.get_interval_estimates``, a fixed random state,
  so the same scores give the same interval), the mean, and the failed runs.
- ``learning_curves(runs, png)``: the runs' deterministic evaluations (eval_metrics.npz)
  against env steps, IQM with a bootstrap band.

``vdsim-gym seeds-report`` (docs/TRAINING.md, "Many seeds") is the command line.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.errors import TrainingError

RLIABLE_MISSING = ("multi-seed statistics need rliable: pip install 'vdsim-gym[stats]' "
                   "(rliable, and pandas<3 for its arch dependency)")


def _rliable() -> tuple[Any, Any]:
    try:
        from rliable import library, metrics
    except ImportError as exc:
        raise ImportError(RLIABLE_MISSING, name="rliable") from exc
    return library, metrics


def _intervals(library: Any, scores: dict[str, np.ndarray], func: Any, reps: int,
               seed: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's stratified bootstrap, reproducible: its resampling draws from numpy's
    global generator (``StratifiedBootstrap.update_indices`` calls ``np.random.choice``;
    the ``random_state`` it passes on to arch does not reach those draws), so that
    generator is seeded for the call and given back its state after."""
    import warnings

    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():  # arch's note that it will prefer a Generator
            warnings.filterwarnings("ignore", message="random_state is deprecated",
                                    category=FutureWarning)
            return library.get_interval_estimates(scores, func, reps=reps,
                                                  random_state=np.random.RandomState(seed))
    finally:
        np.random.set_state(state)


def iqm(values: np.ndarray) -> float:
    """The interquartile mean: the mean of the middle 50 % (rliable's definition, scipy's
    trimmed mean of 25 % at each end)."""
    _, metrics = _rliable()
    return float(metrics.aggregate_iqm(np.asarray(values, float).reshape(-1, 1)))


# More runs than this from one command is a typo ("0-1000000"), not a study.
MAX_RUNS = 1000


def train_seeds(algo: str, env_id: str, seeds: Sequence[int], *, name: str,
                out: str | Path = "runs", jobs: int = 1, **train_kwargs: Any) -> list[Path]:
    """``vdsim_gym.training.train`` once per seed into ``<out>/<name>_s<seed>``;
    ``jobs`` > 1 runs that many at once in worker processes (each torch on one thread).
    A run folder that exists is an error before anything trains, and so are more than
    ``MAX_RUNS`` seeds. A stop (Ctrl-C, SIGTERM) ends every run with its folder saved,
    says on stderr what each run folder holds, and raises KeyboardInterrupt."""
    from vdsim_gym.training.options import check_run_name
    from vdsim_gym.training.run import train

    seeds = list(seeds)
    if len(seeds) > MAX_RUNS:
        raise TrainingError(f"{len(seeds)} seeds: at most {MAX_RUNS} runs from one command; "
                            "give fewer seeds (e.g. --seeds 0-9) and run the rest as "
                            "further commands")
    if not seeds or len(set(seeds)) != len(seeds) or not all(
            isinstance(s, int) and s >= 0 for s in seeds):
        raise TrainingError(f"seeds must be distinct integers >= 0, got {seeds!r}")
    if not (isinstance(jobs, int) and jobs >= 1):
        raise TrainingError(f"jobs must be an integer >= 1, got {jobs!r}")
    check_run_name(name, out)
    dirs = [check_run_name(f"{name}_s{s}", out) for s in seeds]
    taken = [d for d in dirs if d.exists()]
    if taken:
        raise TrainingError(f"run folder {taken[0]} exists; pass another name (or --out)")
    kwargs = [dict(train_kwargs, seed=s, out=out, run_name=d.name) for s, d in zip(
        seeds, dirs, strict=True)]
    if jobs == 1:
        done = 0
        try:
            for kw in kwargs:
                done += 1
                train(algo, env_id, **kw)
                sys.stderr.write(f"trained seed {kw['seed']} -> {Path(out) / kw['run_name']}"
                                 "\n")
        except KeyboardInterrupt:
            _report_stopped(dirs, done)
            raise
        return dirs
    _train_parallel(algo, env_id, kwargs, jobs)
    return dirs


def _report_stopped(dirs: Sequence[Path], started: int) -> None:
    """After a stop: what each run folder holds (``describe_run``), the runs never
    started named as such."""
    from vdsim_gym.training.run_folder import describe_run

    lines = [describe_run(d) for d in dirs[:started]]
    if started < len(dirs):
        lines.append(f"not started: {', '.join(str(d) for d in dirs[started:])}")
    sys.stderr.write("stopped; the run folders:\n" + "".join(f"  {ln}\n" for ln in lines))
    sys.stderr.flush()


def _train_parallel(algo: str, env_id: str, kwargs: list[dict[str, Any]], jobs: int) -> None:
    """The runs ``jobs`` at a time, each in a worker process (spawned: a fresh
    interpreter). Ctrl-C or SIGTERM stops them all: each worker gets SIGTERM, which its
    ``train`` turns into a stop that saves the run folder, and is waited for (signals
    held meanwhile), then what each run folder holds is said on stderr; a worker that
    fails stops the others the same way and is a TrainingError naming its seed. A worker
    dies with this process: if it is killed (SIGKILL), each worker gets SIGTERM from the
    kernel and saves its folder (``_die_with_parent``)."""
    import multiprocessing as mp
    import os

    from vdsim_gym._signals import raise_on_sigterm, restore_sigterm, signals_held
    from vdsim_gym.training.run_folder import describe_run

    ctx = mp.get_context("spawn")
    pending = list(kwargs)
    running: list[tuple[Any, dict[str, Any]]] = []
    dirs = [Path(kw["out"]) / kw["run_name"] for kw in kwargs]
    previous = raise_on_sigterm()
    stopped = False
    try:
        while pending or running:
            while pending and len(running) < jobs:
                kw = pending[0]
                proc = ctx.Process(target=_train_one, args=(algo, env_id, kw, os.getpid()))
                _start_ignoring_sigint(proc)
                pending.pop(0)
                running.append((proc, kw))
            for proc, kw in list(running):
                proc.join(timeout=0.2)
                if proc.exitcode is None:
                    continue
                running.remove((proc, kw))
                run = Path(kw["out"]) / kw["run_name"]
                if proc.exitcode != 0:
                    raise TrainingError(f"seed {kw['seed']} failed (exit code "
                                        f"{proc.exitcode}; its message above); "
                                        f"{describe_run(run)}")
                sys.stderr.write(f"trained seed {kw['seed']} -> {run}\n")
    except KeyboardInterrupt:
        stopped = True
        raise
    finally:  # stopped or failed: the others stop and save, and are waited for
        with signals_held("waiting for the workers to save their run folders",
                          raise_after=False):
            _stop_workers(running)
        restore_sigterm(previous)
        if stopped:
            _report_stopped(dirs, len(kwargs) - len(pending))


def _start_ignoring_sigint(proc: Any) -> None:
    """Starts ``proc`` with SIGINT ignored (a disposition a spawned interpreter inherits
    and keeps): Ctrl-C at a terminal reaches the whole process group, and a worker is
    stopped by this process instead (SIGTERM, after which it saves its run folder), never
    halfway through its interpreter's start-up."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        proc.start()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        proc.start()
    finally:
        signal.signal(signal.SIGINT, previous)


def _stop_workers(running: list[tuple[Any, dict[str, Any]]]) -> None:
    for proc, _ in running:
        if proc.exitcode is None:
            proc.terminate()
    for proc, _ in running:
        proc.join()
    running.clear()


def _die_with_parent(parent_pid: int) -> None:
    """This worker gets SIGTERM (a stop that saves its run folder) when its parent dies,
    even by SIGKILL: Linux's ``prctl(PR_SET_PDEATHSIG)``, elsewhere a thread that watches
    the parent's pid. A parent that died before the request was made is caught by
    comparing the parent's pid (the race)."""
    import ctypes
    import os
    import signal
    import threading
    import time

    armed = False
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) == 0  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent_pid:
        raise KeyboardInterrupt("the parent process is gone")
    if armed:
        return

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="vdsim-parent-watch", daemon=True).start()


def _train_one(algo: str, env_id: str, kwargs: dict[str, Any], parent_pid: int) -> None:
    """A worker's run; a user error is one line on stderr and exit code 2, a stop
    (SIGTERM from the parent, or from the kernel when the parent died; SIGINT is ignored,
    ``_start_ignoring_sigint``) saves the run and exits with 130."""
    from vdsim_gym._signals import raise_on_sigterm
    from vdsim_gym.errors import ConfigError

    try:
        raise_on_sigterm()  # before anything: a stop is an interrupt from the start
        _die_with_parent(parent_pid)
        from vdsim_gym.training.run import train

        train(algo, env_id, **{**kwargs, "progress_bar": False})
    except ConfigError as exc:
        sys.stderr.write(f"seed {kwargs['seed']}: {exc}\n")
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None


@dataclass(frozen=True)
class SeedScores:
    """``values[run, delay]``: the metric's mean over a run's evaluation episodes;
    ``clean[run, delay]``: every episode succeeded."""

    name: str
    runs: tuple[str, ...]
    delays: tuple[str, ...]
    metric: str
    values: np.ndarray
    clean: np.ndarray


def seed_scores(runs: Sequence[str | Path], env_id: str, delays: str, *, name: str = "",
                seeds: int | Sequence[int] = 64, which: str = "model",
                metric: str | None = None, scenarios: Sequence[dict[str, Any]] | None = None,
                progress: bool = False, trust: bool = False, **env_kwargs: Any) -> SeedScores:
    """Each run's policy (``which``: "model" or "best_model") swept over ``delays`` (the
    sweep grammar) on the same evaluation ``seeds``; ``progress``: a bar per run on
    stderr; ``trust``: ``load_policy``'s (unpickle the run folders as SB3 does)."""
    from vdsim_gym.config.delays import parse_delays
    from vdsim_gym.eval.sweeps import sweep
    from vdsim_gym.eval.tolerance import episode_succeeded
    from vdsim_gym.policies.loading import ResidualPolicy, load_policy

    if not runs:
        raise TrainingError("no run folders given")
    lats = parse_delays(delays)
    values: list[list[float]] = []
    clean: list[list[bool]] = []
    labels: tuple[str, ...] = ()
    metric_used = metric
    for k, run in enumerate(runs):
        path = Path(run)
        pol: Any = load_policy(path / f"{which}.zip", trust=trust)
        if isinstance(pol, ResidualPolicy):
            pol = pol.factory()
        res = sweep(pol, env_id, latencies=lats, seeds=seeds, scenarios=scenarios,
                    progress=progress, progress_label=f"{path.name} ({k + 1}/{len(runs)})",
                    **env_kwargs)
        if metric_used is None:
            task = [m for m in res.meta["metric_labels"] if m in res.meta["metrics"]
                    and m not in ("episode_return", "n_overrun")]
            metric_used = task[0] if task else "episode_return"
        per_delay: dict[str, list[Any]] = {}
        for row in res.table:
            per_delay.setdefault(row.latency, []).append(row)
        labels = tuple(per_delay)
        values.append([_finite_mean([r.metrics.get(metric_used, math.nan) for r in rs])
                       for rs in per_delay.values()])
        clean.append([all(episode_succeeded(r) for r in rs) for rs in per_delay.values()])
    return SeedScores(name or Path(runs[0]).name.rsplit("_s", 1)[0],
                      tuple(str(r) for r in runs), labels, str(metric_used),
                      np.array(values, float), np.array(clean, bool))


def _finite_mean(values: Sequence[float]) -> float:
    """The mean over the values where the metric is defined (a time-gap error has none
    without a lead: those episodes do not count); NaN if none is."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else math.nan


@dataclass(frozen=True)
class Aggregate:
    """Per delay: the IQM over runs, its 95 % stratified bootstrap interval, the mean,
    and how many runs failed (an episode without success)."""

    name: str
    delays: tuple[str, ...]
    iqm: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    mean: np.ndarray
    failed: np.ndarray
    n_runs: int


def aggregate(scores: SeedScores, *, reps: int = 5000, seed: int = 0) -> Aggregate:
    """IQM and 95 % stratified bootstrap intervals over the runs (rliable), each delay a
    task; ``seed`` fixes the bootstrap's random state."""
    library, metrics = _rliable()
    v = scores.values
    if v.ndim != 2 or v.shape[0] < 1:
        raise TrainingError("need a (runs, delays) score array")

    def per_task(x: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(x[:, [j]]) for j in range(x.shape[1])])

    point, interval = _intervals(library, {"s": v}, per_task, reps, seed)
    return Aggregate(scores.name, scores.delays, point["s"], interval["s"][0],
                     interval["s"][1], v.mean(axis=0), (~scores.clean).sum(axis=0),
                     v.shape[0])


def learning_curves(runs: Sequence[Any], png: str | Path, *, metric: str = "rms_e_y",
                    labels: Sequence[str] | None = None, reps: int = 2000,
                    axis_label: str | None = None) -> Path:
    """IQM over runs of the deterministic evaluations' ``metric`` against env steps with
    a 95 % bootstrap band; several groups of runs: ``runs`` a list of lists.
    ``axis_label``: the metric with its unit (default its name)."""
    from vdsim_gym._plotting import figure, save_figure
    from vdsim_gym.training.curves import load_npz

    library, metrics = _rliable()
    groups = [list(g) for g in runs] if runs and not isinstance(runs[0], (str, Path)) \
        else [list(runs)]
    names = list(labels or [Path(g[0]).name.rsplit("_s", 1)[0] for g in groups])
    fig = figure(figsize=(7, 4))
    ax = fig.subplots()
    for g, label in zip(groups, names, strict=True):
        curves, steps = [], None
        for run in g:
            path = Path(run) / "eval_metrics.npz"
            if not path.exists():
                raise TrainingError(f"{path} is missing: the run has no evaluation yet")
            d = load_npz(path, "the evaluations' task metrics")
            if metric not in d:
                raise TrainingError(f"{path} has no {metric!r} (it has "
                                    f"{', '.join(k for k in d if k != 'timesteps')})")
            with np.errstate(all="ignore"):
                curves.append(np.nanmean(np.asarray(d[metric], float), axis=1))
            steps = d["timesteps"] if steps is None or len(d["timesteps"]) < len(steps) \
                else steps
        assert steps is not None
        n = min(len(c) for c in curves)
        data = np.array([c[:n] for c in curves])[:, None, :]  # runs x 1 task x steps
        point, interval = _intervals(
            library, {"g": data}, lambda x: np.array([metrics.aggregate_iqm(x[..., t])
                                                      for t in range(x.shape[-1])]), reps, 0)
        (line,) = ax.plot(steps[:n], point["g"], label=f"{label} (IQM of {len(g)} runs)")
        ax.fill_between(steps[:n], interval["g"][0], interval["g"][1],
                        color=line.get_color(), alpha=0.2)
    ax.set_xlabel("env steps")
    ax.set_ylabel(f"evaluation {axis_label or metric}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, png, dpi=110)
    return Path(png)


__all__ = ["MAX_RUNS", "Aggregate", "SeedScores", "aggregate", "iqm", "learning_curves",
           "seed_scores", "train_seeds"]
