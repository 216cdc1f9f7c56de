"""The benchmark where the model is wrong (``vdsim-gym benchmark robust``, docs/RESULTS.md
and docs/TRAINING.md, "The robust benchmark").

Every controller is given only the nominal car and the nominal delay (30 ms, the middle of
the range); each episode then draws the real car and delay from ``ROBUST_RANDOMIZE``:
friction 0.6-1.0, mass 0.9-1.25, cornering stiffness 0.8-1.2 (scales), the computation
delay's mean 0-60 ms with a jitter of 0-50 % (each command uniform within mean (1 +- j)),
and a network loss of 0-5 % of the commands. Two tasks:

- ``dlc``: ISO 3888-1 at 20 m/s (VDSim-DLC-v0 as registered): e_y RMSE, max |e_y|, cone
  hits and completion;
- ``acc``: VDSim-ACC-v0 at its 0.1 s control period, the six scenario families: the
  time-gap error, RMS jerk, collisions and the smallest gap.

The episodes use reset seeds from ``SEED_BASE`` (10^6) on, which no training run uses (a
run's envs take seed + i and its evaluations seed + 10 000, seeds below 10^5 here); a run
folder whose seed is not below ``SEED_BASE - 20 000`` is refused. A group of run folders
(one configuration's training seeds) is scored per run (each metric's mean over the
episodes), then aggregated over the runs: the interquartile mean with rliable's 95 %
stratified bootstrap interval. A baseline is one controller: its mean over the episodes
with a 95 % interval. Each controller's cost per decision (one observation, CPU time) is
measured side by side (``decision_costs``), a learned one in its compiled form
(``vdsim_gym.policies.compiled``) when it has one.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.errors import ConfigError

ROBUST_RANDOMIZE: dict[str, Any] = {
    "friction": [0.6, 1.0], "mass": [0.9, 1.25], "cornering_stiffness": [0.8, 1.2],
    "latency": {"mean": [0.0, 0.06], "jitter": [0.0, 0.5]}, "loss": [0.0, 0.05]}
NOMINAL_DELAY = 0.03  # [s] the delay every controller is told: the range's middle
SEED_BASE = 1_000_000  # the benchmark's first reset seed


@dataclasses.dataclass(frozen=True)
class RobustTask:
    """A task of the benchmark: its env, the scenarios pooled, the metrics (the headline
    first) and the classical controllers it is run with (each
    told the nominal delay; a spec without ``delay=`` is told each episode's own mean
    delay, the strongest classical answer: an oracle on what a controller could measure)."""

    name: str
    env_id: str
    env_kwargs: dict[str, Any]
    scenarios: tuple[dict[str, Any], ...]
    metrics: tuple[str, ...]
    baselines: tuple[str, ...]
    nominal_delay: float = NOMINAL_DELAY


def _tasks() -> dict[str, RobustTask]:
    from vdsim_gym.envs.acc_scenarios import FAMILIES

    d = f"delay={NOMINAL_DELAY:g}"
    return {
        "dlc": RobustTask(
            "dlc", "VDSim-DLC-v0", {"randomize": ROBUST_RANDOMIZE}, (),
            ("rms_e_y", "max_abs_e_y", "cone_hit", "completed"),
            ("stanley", f"stanley_dc:{d}", f"mpc:{d}", "mpc:delay=0.045", "mpc")),
        "acc": RobustTask(
            "acc", "VDSim-ACC-v0", {"control_period": 0.1, "randomize": ROBUST_RANDOMIZE},
            tuple({"scenario": f} for f in FAMILIES),
            ("rms_time_gap_error", "rms_jerk", "collision", "min_gap"),
            ("acc_pid", "idm", f"acc_pid_dc:{d}", f"idm_dc:{d}", "acc_pid_dc")),
    }


TASKS = _tasks()


def task(name: str) -> RobustTask:
    if name not in TASKS:
        raise ConfigError(f"unknown robust task {name!r}; tasks: {', '.join(TASKS)}")
    return TASKS[name]


@dataclasses.dataclass
class Entry:
    """One controller's scores: ``values[metric]`` (runs, episodes) (a baseline: one
    run), the run folders (learned) and the cost per decision [us]."""

    name: str
    kind: str  # "baseline" | "learned"
    runs: tuple[str, ...]
    values: dict[str, np.ndarray]
    cost_us: tuple[float, float, float] = (math.nan, math.nan, math.nan)  # min, med, max


def _episode_values(rows: Sequence[Any], metrics: Sequence[str]) -> dict[str, np.ndarray]:
    """Each metric per episode (the sweep's rows): ``cone_hit`` 1 when an episode hit a
    cone, ``completed`` 1 when it reached the task's own end."""
    out: dict[str, list[float]] = {m: [] for m in metrics}
    for r in rows:
        for m in metrics:
            if m == "cone_hit":
                out[m].append(float(r.metrics.get("cone_hits", 0) > 0))
            elif m == "completed":
                out[m].append(float(r.completed))
            else:
                out[m].append(float(r.metrics.get(m, math.nan)))
    return {m: np.array(v, float) for m, v in out.items()}


def _check_runs(group: Sequence[str], which: str) -> None:
    """Every run folder of ``group`` holds ``which``.zip and was trained with seeds that
    cannot reach the benchmark's: checked before any episode runs."""
    from vdsim_gym._best import recover_best
    from vdsim_gym._files import read_yaml

    for run in group:
        recover_best(run)  # a best model a stop left staged: finished or dropped
        if not (Path(run) / f"{which}.zip").exists():
            raise ConfigError(f"--runs: no {which}.zip in {run}; give run folders of "
                              "vdsim-gym train")
        cfg_path = Path(run) / "config.yml"
        cfg = read_yaml(cfg_path, "the run's configuration") if cfg_path.exists() else None
        seed = cfg.get("seed") if isinstance(cfg, dict) else None
        if isinstance(seed, int) and seed >= SEED_BASE - 20_000:
            raise ConfigError(f"{run}: trained with seed {seed}, whose envs or evaluations "
                              f"reach the benchmark's seeds (from {SEED_BASE}); train with "
                              f"seeds below {SEED_BASE - 20_000}")


def evaluate(t: RobustTask, baselines: Sequence[str], groups: Sequence[Sequence[str]], *,
             seeds: int = 64, which: str = "best_model", progress: bool = True,
             trust: bool = False) -> list[Entry]:
    """Every baseline and every group of runs on ``seeds`` held-out episodes per scenario
    (module doc); entries in the order given, baselines first."""
    from vdsim_gym.eval.sweeps import sweep
    from vdsim_gym.eval.sweeps.specs import load_controllers
    from vdsim_gym.policies.loading import ResidualPolicy, load_policy

    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise ConfigError(f"seeds must be a whole number >= 1 (episodes per scenario), got "
                          f"{seeds!r}")
    for group in groups:  # a bad folder fails before the baselines' sweeps
        _check_runs(group, which)
    seed_list = list(range(SEED_BASE, SEED_BASE + seeds))
    scen = [dict(s) for s in t.scenarios] or None
    entries: list[Entry] = []

    def run(policy: Any, label: str) -> dict[str, np.ndarray]:
        res = sweep(policy, t.env_id, latencies=[None], seeds=seed_list, scenarios=scen,
                    progress=progress, progress_label=label, **t.env_kwargs)
        return _episode_values(res.table, t.metrics)

    for name, spec_pol in load_controllers(list(baselines), None,
                                           ("--baselines", "--baselines"), trust=trust):
        v = run(spec_pol, f"{name} (baseline)")
        entries.append(Entry(name, "baseline", (), {m: x[None] for m, x in v.items()}))
    for group in groups:
        per_run: dict[str, list[np.ndarray]] = {m: [] for m in t.metrics}
        for k, path in enumerate(group):
            pol: Any = load_policy(Path(path) / f"{which}.zip", trust=trust)
            if isinstance(pol, ResidualPolicy):
                pol = pol.factory()
            v = run(pol, f"{Path(path).name} ({k + 1}/{len(group)})")
            for m in t.metrics:
                per_run[m].append(v[m])
        name = Path(group[0]).name.rsplit("_s", 1)[0]
        entries.append(Entry(name, "learned", tuple(map(str, group)),
                             {m: np.stack(x) for m, x in per_run.items()}))
    return entries


def summarize(entries: Sequence[Entry], t: RobustTask, *, reps: int = 2000
              ) -> list[dict[str, Any]]:
    """A row per controller: for each metric its point value with a 95 % interval
    (learned: IQM over the runs of each run's episode mean, rliable's stratified
    bootstrap; baseline: the mean over the episodes); the episodes with a cone hit or a
    collision, the smallest gap, and the cost per decision."""
    from vdsim_gym.eval.stats import mean_interval
    from vdsim_gym.training.seeds import SeedScores, aggregate

    rows = []
    for e in entries:
        row: dict[str, Any] = {"controller": e.name, "kind": e.kind,
                               "runs": max(1, len(e.runs)),
                               "episodes": int(next(iter(e.values.values())).shape[1])}
        for m in t.metrics:
            x = e.values[m]
            if e.kind == "learned":
                per_run = np.array([_finite_mean(r) for r in x])
                sc = SeedScores(e.name, e.runs, ("robust",), m, per_run[:, None],
                                np.ones((len(per_run), 1), bool))
                agg = aggregate(sc, reps=reps)
                point, lo, hi = float(agg.iqm[0]), float(agg.lo[0]), float(agg.hi[0])
                row[f"{m}_per_run"] = " ".join(f"{v:.6g}" for v in per_run)
            else:
                flat = x.reshape(-1)
                point, lo, hi = mean_interval(flat[np.isfinite(flat)])
                row[f"{m}_per_run"] = ""
            row[m], row[f"{m}_lo"], row[f"{m}_hi"] = point, lo, hi
        if "min_gap" in e.values:
            g = e.values["min_gap"]
            row["smallest_gap"] = float(np.nanmin(g)) if np.isfinite(g).any() else math.nan
        for key in ("cone_hit", "collision"):
            if key in e.values:
                row[f"{key}_episodes"] = int((e.values[key] > 0).sum())
        row["us_per_decision"], row["us_min"], row["us_max"] = e.cost_us[1], e.cost_us[0], \
            e.cost_us[2]
        rows.append(row)
    return rows


def _finite_mean(x: np.ndarray) -> float:
    v = x[np.isfinite(x)]
    return float(v.mean()) if v.size else math.nan


def decision_costs(t: RobustTask, named: Sequence[tuple[str, Any]], *, samples: int = 200,
                   repeats: int = 5) -> dict[str, tuple[float, float, float]]:
    """CPU time per decision [us] of each (name, policy or factory): ``samples``
    observations of the task's env (driven by its first baseline, the nominal car and
    delay), each predicted alone as a controller on the car does; the controllers interleaved in
    ``repeats`` blocks; (min, median, max) over the blocks."""
    import gymnasium as gym

    from vdsim_gym.config.latency import LatencyModel
    from vdsim_gym.eval.sweeps.specs import load_controllers

    # the nominal car and delay: a controller that follows its env's delay compensates it
    env_kwargs = {**{k: v for k, v in t.env_kwargs.items() if k != "randomize"},
                  "latency": LatencyModel.fixed(NOMINAL_DELAY),
                  **(dict(t.scenarios[0]) if t.scenarios else {})}
    (_, driver), = load_controllers([t.baselines[0]], None, ("", ""))
    observed: dict[str, list[np.ndarray]] = {}  # per observation layout (a policy's
    policies = []  # required_env_kwargs: its action history)
    for name, pol in named:
        required = dict(getattr(pol, "required_env_kwargs", None) or {})
        key = repr(sorted(required.items()))
        env = gym.make(t.env_id, **env_kwargs, **required)
        try:
            if key not in observed:
                observed[key] = _observations(env, driver, samples)
            p = pol(env) if not hasattr(pol, "predict") else pol
            if hasattr(p, "bind") and not getattr(p, "bound", True):
                p = p.for_env(env)
        finally:
            env.close()
        policies.append((name, p, observed[key]))
    times: dict[str, list[float]] = {n: [] for n, _, _ in policies}
    for _ in range(repeats):
        for name, p, seen in policies:
            p.predict(seen[0])  # warm: caches, the first call's allocations
            t0 = time.process_time()
            for o in seen:
                p.predict(o)
            times[name].append((time.process_time() - t0) / len(seen) * 1e6)
    return {n: (min(v), float(np.median(v)), max(v)) for n, v in times.items()}


def _observations(env: Any, driver: Any, samples: int) -> list[np.ndarray]:
    """``samples`` observations of ``env`` driven by ``driver`` (a controller or its
    factory), from the benchmark's first seed on."""
    drive = driver(env) if not hasattr(driver, "predict") else driver
    obs, _ = env.reset(seed=SEED_BASE)
    seen: list[np.ndarray] = []
    while len(seen) < samples:
        seen.append(np.asarray(obs, np.float32))
        a, _ = drive.predict(obs)
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            obs, _ = env.reset(seed=SEED_BASE + len(seen))
    return seen


def run_robust(task_name: str, *, baselines: Sequence[str] | None = None,
               groups: Sequence[Sequence[str]] = (), seeds: int = 64,
               which: str = "best_model", out: str | Path = "robust_out",
               make_plot: bool = True, costs: bool = True, echo: Callable[[str], Any] = print,
               progress: bool = True, trust: bool = False) -> list[dict[str, Any]]:
    """``vdsim-gym benchmark robust``: evaluates, prints the table, writes
    robust_<task>.csv and robust_<task>.png (DLC: the metrics with their intervals; ACC:
    time-gap error against jerk, the Pareto view); returns the rows."""
    from vdsim_gym.eval.sweeps.results import write_csv
    from vdsim_gym.training.robust_report import plot, table

    t = task(task_name)
    base = list(t.baselines if baselines is None else baselines)
    entries = evaluate(t, base, groups, seeds=seeds, which=which, progress=progress,
                       trust=trust)
    if costs:
        from vdsim_gym.eval.sweeps.specs import load_controllers
        from vdsim_gym.policies.loading import ResidualPolicy, load_policy

        named: list[tuple[str, Any]] = list(load_controllers(base, None, ("", ""),
                                                             trust=trust))
        for e in entries:
            if e.kind == "learned":  # as it would run on the car: compiled when it can be
                pol: Any = load_policy(Path(e.runs[0]) / f"{which}.zip", trust=trust)
                if isinstance(pol, ResidualPolicy):
                    pol = pol.factory()
                else:
                    from vdsim_gym.policies.compiled import compile_policy

                    try:
                        pol = compile_policy(pol)
                    except ConfigError:
                        pass  # an actor it cannot take: torch's predict is timed
                named.append((e.name, pol))
        cost = decision_costs(t, named)
        for e in entries:
            e.cost_us = cost.get(e.name, e.cost_us)
    rows = summarize(entries, t)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / f"robust_{t.name}.csv"
    write_csv(csv, rows)
    echo(table(rows, t, seeds))
    written = [csv]
    if make_plot:
        written.append(plot(rows, t, out / f"robust_{t.name}.png"))
    echo("wrote " + ", ".join(map(str, written)))
    return rows


__all__ = ["NOMINAL_DELAY", "ROBUST_RANDOMIZE", "SEED_BASE", "TASKS", "Entry", "RobustTask",
           "decision_costs", "evaluate", "run_robust", "summarize", "task"]
