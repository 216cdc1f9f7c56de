"""Sweeps: one controller over a grid of latency models x scenarios x seeds, batched.

``sweep(policy, env_id, latencies=[...], seeds=64)`` runs one episode per (cell, seed),
where a cell is a (latency model, scenario) pair, on vector envs of ``num_envs``
episodes. Each batch step makes one batched ``policy.predict`` call (baselines and SB3
policies both predict on a batch); the result is a tidy table (one row per episode) and
a summary per cell (mean and 95 % interval). ``backend="ray"`` runs the batches as Ray
tasks. docs/SWEEPS.md is the manual.

The package is split by concern: ``grid`` (cells, seeds, checks, labels), ``runner``
(one batch on a vector env), ``backends`` (local or Ray, progress), ``results``
(rows, per-cell summaries, CSV), ``report`` (tables and plots), ``lock`` (one writer per
output folder), ``specs`` (the commands' controller specs and env kwargs, checked before
any work) and ``compare`` (``run_sweep``: several controllers on one grid, the
``vdsim-gym sweep`` and ``compare`` commands); the interval math is in
``vdsim_gym.eval.stats``.

Determinism: a row depends only on its (cell, seed) and on what ``policy.predict``
returns for its observations: env i of a batch is reset with the episode's own seed and
the env step is row-wise, so batch packing, ``num_envs``, ``threads`` and the backend do
not change it. A row-wise policy (the baselines: elementwise numpy) gives bit-identical
rows; a neural network's output for one row can change in the last bits with the batch
it is computed in (BLAS kernels block rows by the CPU's vector width), so with
``predict="batch"`` its rows agree within rounding only, and ``predict="row"`` (one
predict call per row) makes them exact at the cost of one call per env and step.
docs/SWEEPS.md states the guarantee.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import gymnasium as gym

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym.config.latency import LatencyModel, check_overrun
from vdsim_gym.controllers.base import PolicyPredictor
from vdsim_gym.errors import ArgumentTypeError, ConfigError
from vdsim_gym.eval.sweeps.backends import RAY_MISSING, _import_ray, _Progress, _run_local, _run_ray
from vdsim_gym.eval.sweeps.grid import (
    _batches,
    _Cell,
    _check_env_id,
    _check_latencies,
    _check_scenarios,
    _check_seeds,
    _grid,
    _Job,
    latency_label,
    mean_delay_ms,
    scenario_key,
)
from vdsim_gym.eval.sweeps.results import (
    BASE_LABELS,
    METRICS,
    CellSummary,
    SweepResult,
    SweepRow,
    metric_names,
    summarize,
)

BACKENDS = ("local", "ray")
# "batch": one predict call per batch step; "row": one call per env and step, so a
# neural policy's output for a row cannot depend on the rows it is batched with.
PREDICT_MODES = ("batch", "row")


def sweep(
    policy: PolicyPredictor | Callable[[gym.Env], PolicyPredictor],
    env_id: str,
    *,
    latencies: Sequence[LatencyModel | None],
    seeds: int | Sequence[int] = 8,
    scenarios: Sequence[dict[str, Any]] | None = None,
    num_envs: int = 64,
    backend: str = "local",
    address: str | None = None,
    threads: int = 0,
    overrun: str = "skip",
    progress: bool = True,
    progress_label: str | None = None,
    batches_per_task: int = 1,
    predict: str = "batch",
    **env_kwargs: Any,
) -> SweepResult:
    """Runs ``policy`` for one episode per (latency, scenario, seed) and tabulates them.

    Args:
        policy: an object with SB3's ``predict`` (a trained model, a baseline), or a
            factory ``make_policy(env) -> object with predict`` (e.g.
            ``vdsim_gym.controllers.stanley_pi``), called with an env of the cell
            (shared kwargs + scenario kwargs + the cell's latency) once per batch and
            cell, so a delay-compensating controller reads the delay it compensates.
        env_id: a registered id, e.g. "VDSim-DLC-v0".
        latencies: LatencyModel (fixed, uniform, normal) or None (no latency) per cell.
        seeds: a count n (seeds 0..n-1) or the reset seeds themselves.
        scenarios: dicts of env kwargs, one cell column each (default: one, ``{}``).
        num_envs: episodes per vector env (a batch may mix cells).
        backend: "local" (batches in this process) or "ray" (chunks of
            ``batches_per_task`` batches as Ray tasks; ``ray.init(address=address)``
            unless Ray is already initialized).
        threads: worker threads of the vector env (0: its default).
        overrun: "skip" | "queue", for every latency model.
        progress: a progress bar (tqdm when installed, else printed lines), on stderr.
        progress_label: the bar's name (default "sweep"), e.g. which controller of several.
        predict: "batch" (one ``predict`` call per batch step) or "row" (one call per
            env and step: exact rows for neural policies whatever the packing, slower;
            see the module docstring).
        **env_kwargs: shared ``gym.make`` kwargs (e.g. level="L1").

    Returns:
        SweepResult: ``table`` (SweepRow per episode, grid order), ``summary``
        (CellSummary per cell), ``meta``.
    """
    env_id = _check_env_id(env_id)
    lats = _check_latencies(latencies)
    seed_list = _check_seeds(seeds)
    scens = _check_scenarios(scenarios)
    overrun = check_overrun(overrun)
    if isinstance(num_envs, bool) or not isinstance(num_envs, int) or num_envs < 1:
        raise ConfigError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ConfigError(f"threads must be an integer >= 0 (0: default), got {threads!r}")
    if backend not in BACKENDS:
        raise ConfigError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if isinstance(batches_per_task, bool) or not isinstance(batches_per_task, int) \
            or batches_per_task < 1:
        raise ConfigError(f"batches_per_task must be an integer >= 1, got {batches_per_task!r}")
    if not hasattr(policy, "predict") and not callable(policy):
        raise ArgumentTypeError(f"policy must have predict() or be a factory make_policy(env), "
                                f"got {policy!r}")
    bad = {"latency", "overrun"} & set(env_kwargs)
    if bad:
        raise ConfigError(f"{sorted(bad)} are sweep arguments (latencies=, overrun=), not "
                          "shared env kwargs")
    if predict not in PREDICT_MODES:
        raise ConfigError(f"predict must be one of {PREDICT_MODES}, got {predict!r}")
    # A trained policy's observation options (its run's action_history) shape the env.
    from vdsim_gym.policies.env_kwargs import required_env_kwargs

    env_kwargs = required_env_kwargs(policy, env_kwargs, "the sweep's env kwargs")
    if backend == "ray":
        _import_ray()  # fail before any work

    shared = {**env_kwargs, "overrun": overrun}
    scenario_phases = []  # per scenario: its cycles' phases (the dyno's), or None
    phase_metrics: dict[str, str] | None = None
    for sc in scens:  # argument errors now, in this process, with the env's own message
        probe = gym.make(env_id, **{**shared, **sc})
        base: Any = probe.unwrapped  # a CoreEnv: its own attributes
        labels = dict(base.METRIC_LABELS)
        phases = getattr(base, "cycle_phases", None)
        scenario_phases.append(None if phases is None or not any(n for _, n in phases)
                               else [[c, list(n)] for c, n in phases])
        phase_metrics = getattr(base, "PHASE_METRICS", None)
        probe.close()
    cells = tuple(_Cell(lat, sc, scenario_key(sc), latency_label(lat), mean_delay_ms(lat))
                  for sc in scens for lat in lats)
    job = _Job(env_id, shared, cells, policy, threads, predict)
    episodes = _grid(cells, seed_list)
    batches = _batches(episodes, num_envs)

    t0 = time.perf_counter()
    bar = _Progress(len(episodes), progress, progress_label)
    try:
        chunks: Iterable[list[SweepRow]] = (
            _run_local(job, batches, bar) if backend == "local"
            else _run_ray(job, batches, bar, address, batches_per_task))
        rows = [r for chunk in chunks for r in chunk]
    finally:
        bar.close()
    order = {ep: k for k, ep in enumerate(episodes)}
    rows.sort(key=lambda r: order[(r.cell, r.seed)])
    meta = {
        "env_id": env_id, "env_kwargs": dict(env_kwargs), "overrun": overrun,
        "latencies": [latency_label(x) for x in lats],
        "scenarios": [scenario_key(s) for s in scens], "seeds": seed_list,
        "num_envs": num_envs, "backend": backend, "threads": threads,
        "n_episodes": len(rows), "n_batches": len(batches),
        "wall_time_s": time.perf_counter() - t0, "predict": predict,
        "vdsim_gym_version": _version(), "metrics": list(metric_names(rows)),
        "metric_labels": {**BASE_LABELS, **labels},
        # per cell, its scenario's cycles as [name, [phase names]] (SweepResult.phase_summary)
        "cell_phases": [scenario_phases[i // len(lats)] for i in range(len(cells))],
        "phase_metrics": dict(phase_metrics) if phase_metrics else None,
    }
    return SweepResult(rows, summarize(rows), meta)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vdsim-gym")
    except PackageNotFoundError:
        return "unknown"


__all__ = [
    "BACKENDS", "METRICS", "PREDICT_MODES", "RAY_MISSING", "CellSummary", "SweepResult",
    "SweepRow", "latency_label", "mean_delay_ms", "scenario_key", "summarize", "sweep",
]
