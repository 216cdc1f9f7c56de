"""Sweeps: one controller over a grid of latency models x scenarios x seeds, batched.

``sweep(policy, env_id, latencies=[...], seeds=64)`` runs one episode per (cell, seed),
where a cell is a (latency model, scenario) pair, on vector envs of ``num_envs``
episodes. Each batch step makes one batched ``policy.predict`` call (baselines and SB3
policies both predict on a batch); the result is a tidy table (one row per episode) and
a summary per cell (mean and 95 % interval). ``backend="ray"`` runs the batches as Ray
tasks. docs/SWEEPS.md is the manual.

Determinism: a row depends only on its (cell, seed): env i of a batch is reset with the
episode's own seed and every batch step is row-wise, so batch packing, ``num_envs``,
``threads`` and the backend do not change it (tested).
"""

from __future__ import annotations

import csv
import functools
import importlib
import math
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym import _table
from vdsim_gym.envs.vector import VDSimVectorEnv
from vdsim_gym.latency import LatencyModel, check_overrun

BACKENDS = ("local", "ray")
RAY_MISSING = "backend='ray' needs Ray: pip install 'vdsim-gym[ray]'"
# Per-episode metrics summarized per cell (mean and 95 % interval).
METRICS = ("ey_rmse_m", "ey_max_m", "episode_return", "cone_hits", "n_overrun")
# predict() sees batches padded to a multiple of this many rows (copies of the last row,
# their actions dropped): BLAS kernels (torch, for SB3 policies) round a row differently
# in a tail block than in a full one, padding keeps every row in full blocks whatever
# the packing. Row-wise policies (the baselines) do not need it and are not affected.
PREDICT_BLOCK = 8


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


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class SweepRow:
    """One episode. Units: [m] for e_y, [ms] for delays; return is the sum of rewards."""

    cell: int  # index of the (latency, scenario) cell in SweepResult.summary
    env_id: str
    scenario: str  # the scenario's env kwargs as "key=value,..." ("default": none)
    latency: str  # e.g. "fixed 10 ms", "uniform 0-20 ms (seed 0)", "none"
    mean_delay_ms: float  # mean of the latency model (normal: of the clipped delay)
    overrun: str  # "skip" | "queue" ("-" without latency)
    seed: int  # reset seed of the episode
    steps: int  # env steps of the episode
    ey_rmse_m: float  # RMS of e_y over the episode's steps
    ey_max_m: float  # max |e_y| over the episode's steps
    cone_hits: int
    episode_return: float
    n_overrun: int
    n_skipped: int
    outcome: str  # "terminated" | "truncated"
    end: str  # course_end | cone_hit | off_corridor | spin_out | non_finite | time_limit
    completed: bool  # reached the course end


@dataclass(frozen=True)
class CellSummary:
    """Per cell: n episodes, completion, and mean with 95 % interval bounds (lo, hi) of
    each metric (mean +- t_{0.975, n-1} s / sqrt(n); NaN bounds for n = 1)."""

    cell: int
    env_id: str
    scenario: str
    latency: str
    mean_delay_ms: float
    overrun: str
    n: int
    n_completed: int
    ey_rmse_m_mean: float
    ey_rmse_m_lo: float
    ey_rmse_m_hi: float
    ey_max_m_mean: float
    ey_max_m_lo: float
    ey_max_m_hi: float
    episode_return_mean: float
    episode_return_lo: float
    episode_return_hi: float
    cone_hits_mean: float
    cone_hits_lo: float
    cone_hits_hi: float
    n_overrun_mean: float
    n_overrun_lo: float
    n_overrun_hi: float

    def interval(self, metric: str) -> tuple[float, float, float]:
        """(mean, lo, hi) of a metric in METRICS."""
        return tuple(getattr(self, f"{metric}_{k}") for k in ("mean", "lo", "hi"))  # type: ignore[return-value]


@dataclass(frozen=True)
class SweepResult:
    table: list[SweepRow]  # grid order: cell by cell, seeds in the order given
    summary: list[CellSummary]  # one per cell
    meta: dict[str, Any] = field(default_factory=dict)

    def columns(self) -> dict[str, list[Any]]:
        """The table as a dict of columns (e.g. for ``pandas.DataFrame(result.columns())``)."""
        return {f.name: [getattr(r, f.name) for r in self.table] for f in fields(SweepRow)}

    def write_csv(self, path: str | Path, *, extra: dict[str, Any] | None = None) -> Path:
        """The table as CSV; ``extra`` columns (e.g. {"controller": "stanley"}) go first."""
        return _write_csv(path, [{**(extra or {}), **asdict(r)} for r in self.table])

    def write_summary_csv(self, path: str | Path, *, extra: dict[str, Any] | None = None
                          ) -> Path:
        return _write_csv(path, [{**(extra or {}), **asdict(s)} for s in self.summary])


def _write_csv(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    path = Path(path)
    with path.open("w", newline="") as fh:
        if rows:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return path


# ---------------------------------------------------------------------------- statistics

# t_{0.975, df} for df = 1..30 (two-sided 95 %); beyond 30 the Cornish-Fisher expansion
# below is within 1e-6 of the exact quantile (tests check both against the t density).
_T975 = (12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836, 2.446911851,
         2.364624252, 2.306004135, 2.262157163, 2.228138852, 2.200985160, 2.178812830,
         2.160368656, 2.144786688, 2.131449546, 2.119905299, 2.109815578, 2.100922040,
         2.093024054, 2.085963447, 2.079613845, 2.073873068, 2.068657610, 2.063898562,
         2.059538553, 2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456)
_Z975 = 1.959963984540054


def t_quantile_975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (no scipy)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    g1 = (z**3 + z) / 4.0
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96.0
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384.0
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160.0
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, lo, hi): mean +- t_{0.975, n-1} s / sqrt(n), s the sample standard
    deviation. n = 1 gives NaN bounds, n = 0 NaN everywhere."""
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = float(np.mean(x))
    if n == 1:
        return mean, math.nan, math.nan
    half = t_quantile_975(n - 1) * float(np.std(x, ddof=1)) / math.sqrt(n)
    return mean, mean - half, mean + half


def ey_stats(e_y: Sequence[float]) -> tuple[float, float]:
    """(RMS, max |.|) of an episode's per-step e_y [m], as the env's episode summary."""
    e = np.ascontiguousarray(e_y, dtype=float)
    if e.size == 0:
        return math.nan, math.nan
    return float(np.sqrt(np.mean(e * e))), float(np.max(np.abs(e)))


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
    """Mean computation delay of the model [ms]; normal: of max(0, N(mu, sd^2))."""
    if latency is None:
        return 0.0
    if latency.kind == "fixed":
        return 1e3 * latency.a
    if latency.kind == "uniform":
        return 1e3 * (latency.a + latency.b) / 2.0
    if latency.kind == "normal":
        mu, sd = latency.a, latency.b
        if sd == 0.0:
            return 1e3 * max(mu, 0.0)
        z = mu / sd
        cdf = 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))
        pdf = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
        return 1e3 * (mu * cdf + sd * pdf)
    return math.nan


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


def _check_env_id(env_id: Any) -> str:
    if not isinstance(env_id, str) or not env_id:
        raise ValueError(f"env_id must be a registered env id string, got {env_id!r}")
    if ":" in env_id:  # "module:Id", as gym.make accepts
        module, env_id = env_id.split(":", 1)
        importlib.import_module(module)
    if env_id not in gym.registry:
        ids = ", ".join(sorted(i for i in gym.registry if i.startswith("VDSim")))
        raise ValueError(f"unknown env id {env_id!r}; registered VDSim ids: {ids}")
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


def _predict(policy: Any, obs: np.ndarray, first: bool) -> np.ndarray:
    n = len(obs)
    m = -(-n // PREDICT_BLOCK) * PREDICT_BLOCK
    if m != n:
        obs = np.concatenate([obs, np.repeat(obs[-1:], m - n, axis=0)])
    action, _ = policy.predict(obs, episode_start=np.full(m, first), deterministic=True)
    action = np.asarray(action)
    if action.shape != (m, 2):
        raise ValueError(f"policy.predict on a ({m}, {obs.shape[1]}) batch returned shape "
                         f"{action.shape}; a sweep needs ({m}, 2) actions")
    return action[:n]


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
                actions[rows] = _predict(pol, obs[rows], first)
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
    """tqdm when installed, else a line per finished batch (at most ~20 lines)."""

    def __init__(self, total: int, enabled: bool, desc: str = "sweep") -> None:
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
            print(f"[{self.desc}] {self.done}/{self.total} episodes", flush=True)
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


def summarize(table: Sequence[SweepRow]) -> list[CellSummary]:
    """Per cell (in cell order): n, completions, mean and 95 % interval of METRICS."""
    by_cell: dict[int, list[SweepRow]] = {}
    for r in table:
        by_cell.setdefault(r.cell, []).append(r)
    out = []
    for c in sorted(by_cell):
        rows = by_cell[c]
        r0 = rows[0]
        stats: dict[str, float] = {}
        for m in METRICS:
            mean, lo, hi = mean_interval([getattr(r, m) for r in rows])
            stats.update({f"{m}_mean": mean, f"{m}_lo": lo, f"{m}_hi": hi})
        out.append(CellSummary(
            cell=c, env_id=r0.env_id, scenario=r0.scenario, latency=r0.latency,
            mean_delay_ms=r0.mean_delay_ms, overrun=r0.overrun, n=len(rows),
            n_completed=sum(r.completed for r in rows), **stats))
    return out


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
    batches_per_task: int = 1,
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
        progress: a progress bar (tqdm when installed, else printed lines).
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
    if backend == "ray":
        _import_ray()  # fail before any work

    shared = {**env_kwargs, "overrun": overrun}
    max_steps = shared.get("max_episode_steps", gym.spec(env_id).max_episode_steps)
    for sc in scens:  # argument errors now, in this process, with the env's own message
        gym.make(env_id, **{**shared, **sc}).close()
    cells = tuple(_Cell(lat, sc, scenario_key(sc), latency_label(lat), mean_delay_ms(lat))
                  for sc in scens for lat in lats)
    job = _Job(env_id, shared, cells, policy, threads, max_steps)
    episodes = _grid(cells, seed_list)
    batches = _batches(episodes, num_envs)

    t0 = time.perf_counter()
    bar = _Progress(len(episodes), progress)
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
        "wall_time_s": time.perf_counter() - t0, "predict_block": PREDICT_BLOCK,
        "vdsim_gym_version": _version(),
    }
    return SweepResult(rows, summarize(rows), meta)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vdsim-gym")
    except PackageNotFoundError:
        return "unknown"


# ---------------------------------------------------------------------------- reports

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


__all__ = [
    "BACKENDS", "METRICS", "CellSummary", "SweepResult", "SweepRow", "latency_label",
    "mean_delay_ms", "mean_interval", "plot", "summarize", "summary_table", "sweep",
    "t_quantile_975", "parse_delays", "load_controller", "main",
]


# ---------------------------------------------------------------------------- command line

_UNITS = {"ms": 1e-3, "s": 1.0}
_SB3_ALGOS = ("PPO", "SAC", "TD3", "A2C", "DDPG")


def _split_unit(token: str) -> tuple[str, str | None]:
    for unit in ("ms", "s"):  # "ms" first: "10ms" ends in "s" too
        if token.endswith(unit):
            return token[: -len(unit)].strip(), unit
    return token, None


def _number(text: str, item: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"delay item {item!r}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"delay item {item!r}: {text!r} is not finite")
    if value < 0:
        raise ValueError(f"delay item {item!r}: a delay cannot be negative")
    return value


def parse_delays(text: str) -> list[LatencyModel | None]:
    """Latency models from a list like "0,5,10,20,40ms".

    Items: a number (fixed delay), "uniform:LO-HI", "normal:MU,SD" (or "normal:MU+-SD"),
    "none" (no latency); random models take an optional "@SEED" (default 0). Units ms or
    s; an item without one takes the unit of the next item that has one, else of the
    last ("0,5,10ms" is 0, 5 and 10 ms).
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("--delays is empty; e.g. --delays 0,5,10,20,40ms")
    raw = [t.strip() for t in text.split(",")]
    tokens: list[str] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        if tok.startswith("normal:") and "+-" not in tok and i + 1 < len(raw):
            tok, i = f"{tok},{raw[i + 1]}", i + 1  # normal:MU,SD spans a comma
        tokens.append(tok)
        i += 1
    parsed: list[tuple[str, str, str | None, int]] = []  # (kind, body, unit, seed)
    for tok in tokens:
        if not tok:
            raise ValueError(f"--delays {text!r} has an empty item")
        body, seed = tok, 0
        if "@" in body:
            body, seed_text = body.rsplit("@", 1)
            try:
                seed = int(seed_text)
            except ValueError:
                raise ValueError(f"delay item {tok!r}: seed {seed_text!r} is not an "
                                 "integer") from None
        kind, _, rest = body.partition(":") if ":" in body else ("fixed", "", body)
        rest, unit = _split_unit(rest.strip())
        if kind not in ("fixed", "uniform", "normal") and body != "none":
            raise ValueError(f"delay item {tok!r}: unknown kind {kind!r} (fixed numbers, "
                             "uniform:LO-HI, normal:MU,SD, none)")
        parsed.append(("none" if body == "none" else kind, rest, unit, seed))
    units = [u for _, _, u, _ in parsed]
    if not any(u for k, _, u, _ in parsed if k != "none") and \
            any(k != "none" for k, *_ in parsed):
        raise ValueError(f"--delays {text!r} has no unit: end it with ms or s "
                         "(e.g. 0,5,10ms)")
    out: list[LatencyModel | None] = []
    for j, (kind, body, unit, seed) in enumerate(parsed):
        if kind == "none":
            out.append(None)
            continue
        unit = unit or next((u for u in units[j:] if u), None) or \
            next(u for u in reversed(units) if u)
        scale, item = _UNITS[unit], tokens[j]
        try:
            if kind == "fixed":
                out.append(LatencyModel.fixed(_number(body, item) * scale))
            elif kind == "uniform":
                lo, sep, hi = body.partition("-")
                if not sep:
                    raise ValueError(f"delay item {item!r}: write uniform:LO-HI")
                out.append(LatencyModel.uniform(_number(lo, item) * scale,
                                                _number(hi, item) * scale, seed=seed))
            else:
                mu, sep, sd = body.partition("+-") if "+-" in body else body.partition(",")
                if not sep:
                    raise ValueError(f"delay item {item!r}: write normal:MU,SD")
                out.append(LatencyModel.normal(_number(mu, item) * scale,
                                               _number(sd, item) * scale, seed=seed))
        except ValueError as exc:
            msg = str(exc)
            raise ValueError(msg if msg.startswith("delay item") else
                             f"delay item {item!r}: {msg}") from None
    return out


def _parse_params(text: str) -> dict[str, float]:
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        if not sep:
            raise ValueError(f"controller parameter {part!r}: write key=value")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise ValueError(f"controller parameter {part!r}: {value!r} is not a "
                             "number") from None
    return out


def load_controller(spec: str, algo: str | None = None) -> tuple[str, Any]:
    """(name, policy) from "stanley", "stanley:gain=2,kp=0.3" (kp, ki go to the PI speed
    loop, the rest to Stanley) or the path of a saved SB3 model (``algo`` or each of
    PPO, SAC, TD3, A2C, DDPG is tried)."""
    from vdsim_gym.controllers import stanley_pi

    name, _, params = spec.partition(":")
    if name == "stanley":
        p = _parse_params(params)
        pi = {k: p.pop(k) for k in ("kp", "ki") if k in p}
        try:  # unknown parameters fail now, not in a worker
            import inspect

            from vdsim_gym.controllers import PISpeed, Stanley

            inspect.signature(Stanley.__init__).bind(None, None, wheelbase=1, cg_to_front=1,
                                                     max_steer=1, **p)
            inspect.signature(PISpeed.__init__).bind(None, None, dt=1, **pi)
        except TypeError as exc:
            raise ValueError(f"controller {spec!r}: {exc}") from None
        return spec, functools.partial(stanley_pi, stanley=p or None, pi=pi or None)
    path = Path(spec)
    if not path.exists() and path.with_suffix(".zip").exists():
        path = path.with_suffix(".zip")
    if not path.exists():
        raise ValueError(f"controller {spec!r}: not a baseline (stanley[:key=value,...]) "
                         "and no such SB3 model file")
    import stable_baselines3 as sb3

    names = [algo.upper()] if algo else list(_SB3_ALGOS)
    errors = []
    for n in names:
        cls = getattr(sb3, n, None)
        if cls is None:
            raise ValueError(f"--algo {algo!r}: not an SB3 algorithm ({', '.join(_SB3_ALGOS)})")
        try:
            return path.stem, cls.load(path, device="cpu")
        except Exception as exc:  # noqa: BLE001  (try the next algorithm)
            errors.append(f"{n}: {type(exc).__name__}: {exc}")
    raise ValueError(f"could not load {path} as an SB3 model ({'; '.join(errors)}); "
                     "pass --algo")


def main(controllers: Sequence[str], env_id: str, delays: str, *, seeds: int = 64,
         overrun: str = "skip", num_envs: int = 64, backend: str = "local",
         address: str | None = None, out: str | Path = "sweep_out",
         env_kwargs: dict[str, Any] | None = None, algo: str | None = None,
         metric: str = "ey_rmse_m", make_plot: bool = True, progress: bool = True,
         echo: Any = print) -> dict[str, SweepResult]:
    """The ``vdsim-gym sweep`` command: sweeps each controller, writes sweep.csv,
    sweep_summary.csv and sweep.png into ``out``, prints the summary table."""
    latencies = parse_delays(delays)
    env_kwargs = dict(env_kwargs or {})
    loaded = [load_controller(c, algo) for c in controllers]
    names = [n for n, _ in loaded]
    if len(set(names)) != len(names):
        raise ValueError(f"controllers have the same name: {names}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for name, pol in loaded:
        results[name] = sweep(pol, env_id, latencies=latencies, seeds=seeds,
                              num_envs=num_envs, backend=backend, address=address,
                              overrun=overrun, progress=progress, **env_kwargs)
    _write_csv(out / "sweep.csv", [{"controller": n, **asdict(r)}
                                   for n, res in results.items() for r in res.table])
    _write_csv(out / "sweep_summary.csv", [{"controller": n, **asdict(s)}
                                           for n, res in results.items() for s in res.summary])
    kw = ", ".join(f"{k}={v}" for k, v in env_kwargs.items())
    title = (f"{env_id}{f' ({kw})' if kw else ''}, {len(_check_seeds(seeds))} seeds, "
             f"overrun {overrun}")
    echo(f"Sweep: {title}")
    echo(summary_table(results))
    written = [out / "sweep.csv", out / "sweep_summary.csv"]
    if make_plot:
        written.append(plot(results, out / "sweep.png", metric=metric, title=title))
    wall = sum(r.meta["wall_time_s"] for r in results.values())
    echo(f"\n{sum(len(r.table) for r in results.values())} episodes in {wall:.1f} s; "
         "wrote " + ", ".join(str(p) for p in written))
    return results
