"""Sweeps: one controller over a grid of latency models x scenarios x seeds, batched.

``sweep(policy, env_id, latencies=[...], seeds=64)`` runs one episode per (cell, seed),
where a cell is a (latency model, scenario) pair, on vector envs of ``num_envs``
episodes. Each batch step makes one batched ``policy.predict`` call (baselines and SB3
policies both predict on a batch); the result is a tidy table (one row per episode) and
a summary per cell (mean and 95 % interval). ``backend="ray"`` runs the batches as Ray
tasks. docs/SWEEPS.md is the manual.

Results live in ``sweep_results``, the interval math in ``stats``, reports in
``sweep_report`` and the ``vdsim-gym sweep`` command in ``vdsim_gym.cli.sweep``.

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

import importlib
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym.envs.vector import VDSimVectorEnv
from vdsim_gym.eval.stats import ey_stats
from vdsim_gym.eval.sweep_results import METRICS, CellSummary, SweepResult, SweepRow, summarize
from vdsim_gym.latency import LatencyModel, check_overrun

BACKENDS = ("local", "ray")
# "batch": one predict call per batch step; "row": one call per env and step, so a
# neural policy's output for a row cannot depend on the rows it is batched with.
PREDICT_MODES = ("batch", "row")
RAY_MISSING = "backend='ray' needs Ray: pip install 'vdsim-gym[ray]'"


# ---------------------------------------------------------------------------- the batch seam


def _make_batch(env_id: str, per_env_kwargs: Sequence[dict[str, Any]],
                env_kwargs: dict[str, Any], threads: int) -> gym.vector.VectorEnv:
    """A vector env of ``len(per_env_kwargs)`` envs on the core's vector session: env i
    behaves as ``gym.make(env_id, **env_kwargs, **per_env_kwargs[i])``, NEXT_STEP
    autoreset; one GIL-released call steps the whole batch on ``threads`` workers.
    """
    return VDSimVectorEnv(env_id, len(per_env_kwargs), threads=threads,
                          autoreset_mode="next_step", per_env_kwargs=list(per_env_kwargs),
                          **env_kwargs)


# ---------------------------------------------------------------------------- the grid


def latency_label(latency: LatencyModel | None) -> str:
    if latency is None:
        return "none"

    def ms(v: float) -> str:
        return f"{v * 1e3:g}"

    if latency.kind == "fixed":
        return f"fixed {ms(latency.a)} ms"
    if latency.kind == "uniform":
        return f"uniform {ms(latency.a)}-{ms(latency.b)} ms (seed {latency.seed})"
    if latency.kind == "normal":
        return f"normal {ms(latency.a)}+-{ms(latency.b)} ms (seed {latency.seed})"
    return latency.kind


def mean_delay_ms(latency: LatencyModel | None) -> float:
    """Mean computation delay of the model [ms] (``LatencyModel.mean_delay``)."""
    return 0.0 if latency is None else 1e3 * latency.mean_delay


def scenario_key(scenario: dict[str, Any]) -> str:
    if not scenario:
        return "default"
    return ",".join(f"{k}={v}" for k, v in sorted(scenario.items()))


@dataclass(frozen=True)
class _Cell:
    latency: LatencyModel | None
    scenario: dict[str, Any]
    key: str
    label: str
    delay_ms: float


@dataclass(frozen=True)
class _Job:
    """What a worker needs to run batches (picklable, for Ray)."""

    env_id: str
    env_kwargs: dict[str, Any]  # shared kwargs, overrun included
    cells: tuple[_Cell, ...]
    policy: Any
    threads: int
    max_episode_steps: int | None
    predict: str = "batch"


def _check_env_id(env_id: Any) -> str:
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env_id must be a registered env id string, got {env_id!r}")
    if ":" in env_id:  # "module:Id", as gym.make accepts
        module, env_id = env_id.split(":", 1)
        importlib.import_module(module)
    ids = ", ".join(sorted(i for i in gym.registry if i.startswith("VDSim")))
    if env_id not in gym.registry:
        raise ValueError(f"unknown env id {env_id!r}; registered VDSim ids: {ids}")
    entry = gym.spec(env_id).entry_point
    if not (isinstance(entry, str) and entry.startswith("vdsim_gym.")):
        raise ValueError(f"{env_id!r} is not a VDSim env: a sweep runs on the core's vector "
                         f"session, so it needs one of {ids}")
    return env_id


def _check_latencies(latencies: Any) -> list[LatencyModel | None]:
    if isinstance(latencies, LatencyModel) or latencies is None:
        raise ValueError("latencies must be a sequence of LatencyModel or None, e.g. "
                         "[None, LatencyModel.fixed(0.01)]")
    out = list(latencies)
    if not out:
        raise ValueError("latencies is empty: give at least one LatencyModel (or None for "
                         "no latency)")
    for lat in out:
        if lat is not None and not isinstance(lat, LatencyModel):
            hint = (f"; for a fixed delay of {lat} s use LatencyModel.fixed({lat})"
                    if isinstance(lat, (int, float)) and not isinstance(lat, bool) else "")
            raise ValueError(f"each latency must be a LatencyModel or None, got {lat!r}{hint}")
        if lat is not None and not lat.reproducible:
            raise ValueError("LatencyModel.measured() times the controller's wall clock and "
                             "is not reproducible; a sweep needs fixed, uniform or normal")
    if len(set(out)) != len(out):
        raise ValueError(f"latencies has duplicates: {[latency_label(x) for x in out]}")
    return out


def _check_seeds(seeds: Any) -> list[int]:
    if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
        if seeds < 1:
            raise ValueError(f"seeds must be >= 1 (the number of seeds 0..n-1) or a "
                             f"sequence of seeds, got {seeds}")
        return list(range(int(seeds)))
    try:
        out = list(seeds)
    except TypeError:
        raise ValueError(f"seeds must be an int (count) or a sequence of ints, "
                         f"got {seeds!r}") from None
    if not out:
        raise ValueError("seeds is empty: give a count (seeds=8) or a list of seeds")
    for s in out:
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s < 0:
            raise ValueError(f"each seed must be an integer >= 0, got {s!r}")
    if len(set(out)) != len(out):
        raise ValueError("seeds has duplicates; each (cell, seed) is one episode")
    return [int(s) for s in out]


def _check_scenarios(scenarios: Any) -> list[dict[str, Any]]:
    out = [{}] if scenarios is None else list(scenarios)
    if not out:
        raise ValueError("scenarios is empty: pass None for the env's defaults, or dicts "
                         "of env kwargs")
    for sc in out:
        if not isinstance(sc, dict):
            raise ValueError(f"each scenario must be a dict of env kwargs, got {sc!r}")
        bad = {"latency", "overrun"} & set(sc)
        if bad:
            raise ValueError(f"scenario {sc!r} sets {sorted(bad)}: these are sweep "
                             "arguments (latencies=, overrun=)")
    keys = [scenario_key(sc) for sc in out]
    if len(set(keys)) != len(keys):
        raise ValueError(f"scenarios has duplicates: {keys}")
    return out


def _grid(cells: Sequence[_Cell], seeds: Sequence[int]) -> list[tuple[int, int]]:
    """Episodes (cell index, seed) in grid order."""
    return [(c, s) for c in range(len(cells)) for s in seeds]


def _batches(episodes: list[tuple[int, int]], num_envs: int) -> list[list[tuple[int, int]]]:
    return [episodes[i:i + num_envs] for i in range(0, len(episodes), num_envs)]


# ---------------------------------------------------------------------------- running a batch


def _is_factory(policy: Any) -> bool:
    return not hasattr(policy, "predict")


def _predict(policy: Any, obs: np.ndarray, first: bool, mode: str) -> np.ndarray:
    if mode == "row":
        return np.concatenate([_predict(policy, obs[i:i + 1], first, "batch")
                               for i in range(len(obs))])
    n = len(obs)
    action, _ = policy.predict(obs, episode_start=np.full(n, first), deterministic=True)
    action = np.asarray(action)
    if action.shape != (n, 2):
        raise ValueError(f"policy.predict on a ({n}, {obs.shape[1]}) batch returned shape "
                         f"{action.shape}; a sweep needs ({n}, 2) actions")
    return action


def _reset(venv: gym.vector.VectorEnv, seeds: list[int]) -> np.ndarray:
    consecutive = all(b - a == 1 for a, b in zip(seeds, seeds[1:], strict=False))
    obs, _ = venv.reset(seed=seeds[0] if consecutive else seeds)  # env i: seeds[i]
    return obs


def _info_array(infos: dict[str, Any], key: str) -> np.ndarray | None:
    value = infos.get(key)
    return None if value is None else np.asarray(value)


def _end_reason(infos: dict[str, Any], i: int, terminated: bool, steps: int,
                max_steps: int | None) -> str:
    outcome, mask = infos.get("outcome"), infos.get("_outcome")
    if outcome is not None and mask is not None and mask[i]:
        return str(outcome[i])
    if terminated:
        return "terminated"
    return "time_limit" if max_steps is not None and steps >= max_steps else "course_end"


def _run_batch(job: _Job, batch: list[tuple[int, int]]) -> list[SweepRow]:
    """One episode per env of ``batch`` ((cell, seed) pairs); rows in batch order."""
    cells = job.cells
    per_env = [{"latency": cells[c].latency, **cells[c].scenario} for c, _ in batch]
    n = len(batch)
    # One predict call per scenario present (a factory builds its policy from an env of
    # that scenario); with one scenario, or a policy object, one call for the batch.
    groups: dict[str, list[int]] = {}
    for i, (c, _) in enumerate(batch):
        groups.setdefault(cells[c].key if _is_factory(job.policy) else "", []).append(i)
    policies = []
    for rows in groups.values():
        if _is_factory(job.policy):
            scenario = cells[batch[rows[0]][0]].scenario
            template = gym.make(job.env_id, **{**job.env_kwargs, **scenario})
            try:
                pol = job.policy(template)
            finally:
                template.close()
            if not hasattr(pol, "predict"):
                raise TypeError(f"the policy factory returned {pol!r}, which has no predict()")
        else:
            pol = job.policy
        policies.append((np.asarray(rows), pol))

    venv = _make_batch(job.env_id, per_env, job.env_kwargs, job.threads)
    try:
        obs = _reset(venv, [s for _, s in batch])
        active = np.ones(n, dtype=bool)
        steps = np.zeros(n, dtype=np.int64)
        ret = np.zeros(n)
        hits = np.zeros(n, dtype=np.int64)
        n_over = np.zeros(n, dtype=np.int64)
        n_skip = np.zeros(n, dtype=np.int64)
        e_hist: list[np.ndarray] = []
        terminated_at = np.zeros(n, dtype=bool)
        ends: list[str] = [""] * n
        first = True
        while active.any():
            actions = np.zeros((n, 2))
            for rows, pol in policies:
                actions[rows] = _predict(pol, obs[rows], first, job.predict)
            actions[~active] = 0.0  # finished envs: this step is their autoreset, ignored
            obs, rewards, term, trunc, infos = venv.step(actions)
            first = False
            e_hist.append(np.array(_info_array(infos, "e_y"), dtype=float))
            ret[active] += np.asarray(rewards, dtype=float)[active]
            steps[active] += 1
            hits[active] = _info_array(infos, "cone_hits")[active]
            for key, acc in (("n_overrun", n_over), ("n_skipped", n_skip)):
                vals = _info_array(infos, key)
                if vals is not None:
                    mask = infos.get("_" + key)
                    take = active if mask is None else active & np.asarray(mask, dtype=bool)
                    acc[take] = vals[take]
            done = active & (np.asarray(term) | np.asarray(trunc))
            for i in np.flatnonzero(done):
                terminated_at[i] = bool(term[i])
                ends[i] = _end_reason(infos, i, bool(term[i]), int(steps[i]),
                                      job.max_episode_steps)
            active &= ~done
    finally:
        venv.close()

    e_mat = np.stack(e_hist)  # (T, n)
    out = []
    for i, (c, seed) in enumerate(batch):
        cell = cells[c]
        rmse, emax = ey_stats(e_mat[: steps[i], i])
        out.append(SweepRow(
            cell=c, env_id=job.env_id, scenario=cell.key, latency=cell.label,
            mean_delay_ms=cell.delay_ms,
            overrun=job.env_kwargs["overrun"] if cell.latency is not None else "-",
            seed=seed, steps=int(steps[i]), ey_rmse_m=rmse, ey_max_m=emax,
            cone_hits=int(hits[i]), episode_return=float(ret[i]), n_overrun=int(n_over[i]),
            n_skipped=int(n_skip[i]), outcome="terminated" if terminated_at[i] else "truncated",
            end=ends[i], completed=ends[i] == "course_end",
        ))
    return out


def _run_chunk(job: _Job, batches: list[list[tuple[int, int]]]) -> list[SweepRow]:
    return [row for batch in batches for row in _run_batch(job, batch)]


# ---------------------------------------------------------------------------- backends


class _Progress:
    """tqdm when installed, else a line per finished batch (at most ~20 lines); both on
    stderr, so stdout keeps the tables. ``desc`` names the run (the CLI: which
    controller, k/n), since one command may start several bars."""

    def __init__(self, total: int, enabled: bool, desc: str | None = "sweep") -> None:
        if desc is None:
            desc = "sweep"
        if not isinstance(desc, str):
            raise ValueError(f"progress_label must be a string or None, got {desc!r}")
        self.total, self.done, self.enabled, self.desc = total, 0, enabled, desc
        self._bar = None
        self._next_print = 0.0
        if enabled:
            try:
                from tqdm import tqdm
            except ImportError:
                pass
            else:
                self._bar = tqdm(total=total, desc=desc, unit="episode")

    def update(self, n: int) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
        elif self.done >= self._next_print or self.done == self.total:
            import sys  # here: the rest of the module has no use for it

            print(f"[{self.desc}] {self.done}/{self.total} episodes", file=sys.stderr,
                  flush=True)
            self._next_print = self.done + max(1, self.total // 20)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ImportError(RAY_MISSING) from exc
    return ray


def _run_local(job: _Job, batches: list[list[tuple[int, int]]], progress: _Progress
               ) -> Iterator[list[SweepRow]]:
    for batch in batches:
        rows = _run_batch(job, batch)
        progress.update(len(rows))
        yield rows


def _run_ray(job: _Job, batches: list[list[tuple[int, int]]], progress: _Progress,
             address: str | None, batches_per_task: int) -> Iterator[list[SweepRow]]:
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(_run_chunk)
        job_ref = ray.put(job)
        chunks = [batches[i:i + batches_per_task]
                  for i in range(0, len(batches), batches_per_task)]
        pending = [remote.remote(job_ref, chunk) for chunk in chunks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            rows = ray.get(ready[0])
            progress.update(len(rows))
            yield rows
    finally:
        if started:  # never shut down a Ray the caller started
            ray.shutdown()


# ---------------------------------------------------------------------------- the API


def sweep(
    policy: Any,
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
            ``vdsim_gym.controllers.stanley_pi``), called with an env of the scenario
            (shared kwargs + scenario kwargs, no latency) once per batch and scenario.
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
        raise ValueError(f"num_envs must be an integer >= 1, got {num_envs!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
        raise ValueError(f"threads must be an integer >= 0 (0: default), got {threads!r}")
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if isinstance(batches_per_task, bool) or not isinstance(batches_per_task, int) \
            or batches_per_task < 1:
        raise ValueError(f"batches_per_task must be an integer >= 1, got {batches_per_task!r}")
    if not hasattr(policy, "predict") and not callable(policy):
        raise TypeError(f"policy must have predict() or be a factory make_policy(env), "
                        f"got {policy!r}")
    bad = {"latency", "overrun"} & set(env_kwargs)
    if bad:
        raise ValueError(f"{sorted(bad)} are sweep arguments (latencies=, overrun=), not "
                         "shared env kwargs")
    if predict not in PREDICT_MODES:
        raise ValueError(f"predict must be one of {PREDICT_MODES}, got {predict!r}")
    if backend == "ray":
        _import_ray()  # fail before any work

    shared = {**env_kwargs, "overrun": overrun}
    max_steps = shared.get("max_episode_steps", gym.spec(env_id).max_episode_steps)
    for sc in scens:  # argument errors now, in this process, with the env's own message
        gym.make(env_id, **{**shared, **sc}).close()
    cells = tuple(_Cell(lat, sc, scenario_key(sc), latency_label(lat), mean_delay_ms(lat))
                  for sc in scens for lat in lats)
    job = _Job(env_id, shared, cells, policy, threads, max_steps, predict)
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
        "vdsim_gym_version": _version(),
    }
    return SweepResult(rows, summarize(rows), meta)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vdsim-gym")
    except PackageNotFoundError:
        return "unknown"


__all__ = [
    "BACKENDS", "METRICS", "PREDICT_MODES", "RAY_MISSING", "CellSummary", "SweepResult", "SweepRow",
    "latency_label", "mean_delay_ms", "summarize", "sweep",
]
