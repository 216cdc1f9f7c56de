"""Building a ClosedLoopEval run's ``EvalResult`` from what the event loops collected:
the trace columns, the sample table, the stats (counts, tracking, mode C's timing) and the
meta (settings and provenance)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym.eval.metrics import lateral_error, tracking_stats
from vdsim_gym.eval.result import EvalResult, _Samples
from vdsim_gym.traces.provenance import build_info


@dataclass
class RunColumns:
    """What a run collected, as columns: the trace's rows (one per sample and a closing
    row) and the sample table's raw columns. Mode C and an env under other wrappers
    collect rows and sample dicts (``from_rows``); the C++ recorder gives the columns
    directly (``EvalStepper.columns``, ``vdsim_gym.eval.env_run``)."""

    t: np.ndarray  # (R,) trace rows' times [s]
    states: np.ndarray  # (R, trace columns)
    commands: np.ndarray  # (R, command columns), NaN in a row without a command
    src_t_sample: np.ndarray  # (R,) the command in force's sample: its t_sample, NaN: none
    src_t_apply: np.ndarray  # (R,) its apply time [s], NaN: none or lost
    src_c_k: np.ndarray  # (R,)
    src_overrun: np.ndarray  # (R,) int8
    samples: dict[str, np.ndarray]  # k, t_sample, t_start, t_call, c_k, apply_tick,
    # overrun, the command columns, t_compute_s, stopping, discarded, lost, obs_age

    @classmethod
    def from_rows(cls, rows: list[tuple], samples: _Samples, command_columns: Sequence[str]
                  ) -> RunColumns:
        nan = float("nan")
        src = [r[3] for r in rows]
        srows = samples.rows
        cols: dict[str, np.ndarray] = {
            "k": np.array([r["k"] for r in srows], dtype=np.int64),
            "t_sample": np.array([r["t_sample"] for r in srows], dtype=float),
            "t_start": np.array([r["t_start"] for r in srows], dtype=float),
            "t_call": np.array([r["t_call"] for r in srows], dtype=float),
            "c_k": np.array([r["c_k"] for r in srows], dtype=float),
            "apply_tick": np.array([r["apply_tick"] for r in srows], dtype=np.int64),
            "overrun": np.array([r["overrun"] for r in srows], dtype=bool),
            **{name: np.array([r["command"][j] for r in srows], dtype=float)
               for j, name in enumerate(command_columns)},
            "t_compute_s": np.array([r["t_compute_s"] for r in srows], dtype=float),
            "stopping": np.array([r.get("stopping", False) for r in srows], dtype=bool),
            "discarded": np.array([r.get("discarded", False) for r in srows], dtype=bool),
            "lost": np.array([r.get("lost", False) for r in srows], dtype=bool),
            "obs_age": np.array([r.get("obs_age", nan) for r in srows], dtype=float),
        }
        return cls(
            t=np.array([r[0] for r in rows]),
            states=np.array([r[1] for r in rows], dtype=float).reshape(len(rows), -1),
            commands=np.array([[nan] * len(command_columns) if r[2] is None else
                               list(r[2]) for r in rows], dtype=float
                              ).reshape(len(rows), len(command_columns)),
            src_t_sample=np.array([nan if s is None else s["t_sample"] for s in src]),
            src_t_apply=np.array([nan if s is None or s["apply_tick"] < 0 else s["apply_tick"]
                                  for s in src], dtype=float),
            src_c_k=np.array([nan if s is None else s["c_k"] for s in src]),
            src_overrun=np.array([0 if s is None else int(s["overrun"]) for s in src],
                                 dtype=np.int8),
            samples=cols)


def _n_skipped(k: np.ndarray, n_grid: int) -> int:
    """Grid samples 0 .. n_grid - 1 that no call took (k increases from call to call:
    one call per sample taken)."""
    return n_grid - int(np.count_nonzero((k >= 0) & (k < n_grid)))


def build_result_columns(ev: Any, run: RunColumns, end: int, stopped: bool,
                         episode: dict[str, Any] | None = None,
                         extra_stats: dict[str, Any] | None = None) -> EvalResult:
    """The EvalResult of a ClosedLoopEval run (``ev``): trace, samples, stats, meta."""
    d = ev._driver
    dt, P = d.substep_dt, d.ticks_per_period
    nan = float("nan")

    trace: dict[str, np.ndarray] = {"t": run.t}
    for j, name in enumerate(d.trace_columns):
        trace[name] = run.states[:, j]
    for j, name in enumerate(d.command_columns):
        trace[name] = run.commands[:, j]
    trace["t_sample"] = run.src_t_sample
    trace["t_apply"] = run.src_t_apply * dt
    trace["c_k"] = run.src_c_k
    trace["overrun"] = run.src_overrun

    raw = run.samples
    apply_tick = raw["apply_tick"]
    n_samples = len(apply_tick)
    # lost (a network's drop: apply tick -1) and discarded (overtaken) commands never act
    applied = ~raw["stopping"] & (apply_tick >= 0) & (apply_tick < end) & ~raw["discarded"]
    cols: dict[str, np.ndarray] = {
        "k": raw["k"],
        "t_sample": raw["t_sample"],
        "t_start": raw["t_start"],
        "t_call": raw["t_call"],
        "c_k": raw["c_k"],
        "t_apply": np.where(apply_tick >= 0, apply_tick * dt, nan),
        "overrun": raw["overrun"],
        "applied": applied,
        **{name: raw[name] for name in d.command_columns},
        "t_compute_s": raw["t_compute_s"],
    }
    obs_delay = ev.obs_delay or getattr(ev._env_run, "used_obs_delay", None) \
        or getattr(d, "used_obs_delay", None)
    if obs_delay is not None:  # the sensor delay's age of each sample's observation
        cols["obs_age"] = raw["obs_age"]

    n_rows_ran = len(run.t) - 1  # grid rows before the end
    stats: dict[str, Any] = {
        "n_samples": n_samples,
        "n_grid": n_rows_ran,
        "n_overrun": int(np.count_nonzero(cols["overrun"])),
        # Grid points before the end (the env form's last step can span past it).
        "n_skipped": _n_skipped(cols["k"], -(-min(end, ev._end_tick) // P))
                     if ev.overrun == "skip" else 0,
        "n_unapplied": int(n_samples - np.count_nonzero(applied)),
        # a network's losses and discards (the env form on an env with network=)
        "n_lost": int(np.count_nonzero(raw["lost"])),
        "n_discarded": int(np.count_nonzero(raw["discarded"])),
        # commands held at the vehicle's limits (the callback form; an env's actions are
        # within [-1, 1] by construction)
        "n_saturated": int(getattr(d.policy, "n_saturated", 0)),
        "stopped_early": stopped,
        "t_stop": end * dt if stopped else None,
        "t_compute_max_s": float(cols["t_compute_s"].max()) if n_samples else nan,
    }
    if ev.reference_path is not None:
        e_y = lateral_error(np.column_stack((trace["X"], trace["Y"])), ev.reference_path)
        trace["e_y"] = e_y
    if "e_y" in trace:  # the callback form's reference path, or a path env's core
        stats.update(tracking_stats(trace["e_y"][:n_rows_ran]))
    if "obs_age" in cols and n_samples:
        stats["obs_age_mean_s"] = float(np.nanmean(cols["obs_age"]))
        stats["obs_age_max_s"] = float(np.nanmax(cols["obs_age"]))
    if extra_stats:  # mode C: timing, real-time factor, quality
        stats.update(extra_stats)
    if episode is not None:  # the env form: how the env's episode went
        stats["outcome"] = episode.get("outcome")
        stats["episode_summary"] = {k: v for k, v in episode.items() if k != "outcome"}

    meta = {
        "eval_mode": ev.mode,
        "control_period_s": P * dt,
        "duration_s": ev.duration,
        "latency_model": None if ev.latency is None else ev.latency.describe(),
        "overrun_policy": ev.overrun,
        "obs_delay_model": None if obs_delay is None else obs_delay.describe(),
        "network_model": None if ev.network is None else ev.network.describe(),
        **({} if ev._wallclock is None else ev._wallclock.describe()),
        **d.meta(),
        **ev._env_meta,
        **build_info(),
    }
    return EvalResult(trace=trace, samples=cols, stats=stats, meta=meta)


__all__ = ["RunColumns", "build_result_columns"]
