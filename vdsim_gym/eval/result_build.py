"""Building a ClosedLoopEval run's ``EvalResult`` from what the event loops collected:
the trace columns, the sample table, the stats (counts, tracking, mode C's timing) and the
meta (settings and provenance)."""

from __future__ import annotations

from typing import Any

import numpy as np

from vdsim_gym.eval.metrics import lateral_error, tracking_stats
from vdsim_gym.eval.result import EvalResult, _Samples
from vdsim_gym.traces.provenance import build_info


def build_result(ev: Any, rows: list[tuple], samples: _Samples, end: int, stopped: bool,
                 episode: dict[str, Any] | None = None,
                 extra_stats: dict[str, Any] | None = None) -> EvalResult:
    """The EvalResult of a ClosedLoopEval run (``ev``): trace, samples, stats, meta."""
    d = ev._driver
    dt, P = d.substep_dt, d.ticks_per_period
    nan = float("nan")

    trace: dict[str, np.ndarray] = {"t": np.array([r[0] for r in rows])}
    states = np.array([r[1] for r in rows], dtype=float).reshape(len(rows), -1)
    for j, name in enumerate(d.trace_columns):
        trace[name] = states[:, j]
    for j, name in enumerate(d.command_columns):
        trace[name] = np.array([nan if r[2] is None else r[2][j] for r in rows])
    src = [r[3] for r in rows]
    trace["t_sample"] = np.array([nan if s is None else s["t_sample"] for s in src])
    trace["t_apply"] = np.array([nan if s is None or s["apply_tick"] < 0 else s["apply_tick"] * dt
                                 for s in src])
    trace["c_k"] = np.array([nan if s is None else s["c_k"] for s in src])
    trace["overrun"] = np.array([0 if s is None else int(s["overrun"]) for s in src],
                                dtype=np.int8)

    srows = samples.rows
    # lost (a network's drop: apply tick -1) and discarded (overtaken) commands never act
    applied = [not r.get("stopping", False) and 0 <= r["apply_tick"] < end
               and not r.get("discarded", False) for r in srows]
    cols: dict[str, np.ndarray] = {
        "k": np.array([r["k"] for r in srows], dtype=np.int64),
        "t_sample": np.array([r["t_sample"] for r in srows], dtype=float),
        "t_start": np.array([r["t_start"] for r in srows], dtype=float),
        "t_call": np.array([r["t_call"] for r in srows], dtype=float),
        "c_k": np.array([r["c_k"] for r in srows], dtype=float),
        "t_apply": np.array([r["apply_tick"] * dt if r["apply_tick"] >= 0 else nan
                             for r in srows], dtype=float),
        "overrun": np.array([r["overrun"] for r in srows], dtype=bool),
        "applied": np.array(applied, dtype=bool),
        **{name: np.array([r["command"][j] for r in srows], dtype=float)
           for j, name in enumerate(d.command_columns)},
        "t_compute_s": np.array([r["t_compute_s"] for r in srows], dtype=float),
    }
    obs_delay = ev.obs_delay or getattr(ev._env_run, "used_obs_delay", None) \
        or getattr(d, "used_obs_delay", None)
    if obs_delay is not None:  # the sensor delay's age of each sample's observation
        cols["obs_age"] = np.array([r.get("obs_age", nan) for r in srows], dtype=float)

    n_rows_ran = len(rows) - 1  # grid rows before the end
    taken = set(cols["k"].tolist())
    stats: dict[str, Any] = {
        "n_samples": len(srows),
        "n_grid": n_rows_ran,
        "n_overrun": int(np.count_nonzero(cols["overrun"])),
        # Grid points before the end (the env form's last step can span past it).
        "n_skipped": (sum(1 for k in range(-(-min(end, ev._end_tick) // P))
                          if k not in taken)
                      if ev.overrun == "skip" else 0),
        "n_unapplied": int(len(srows) - sum(applied)),
        # a network's losses and discards (the env form on an env with network=)
        "n_lost": int(sum(1 for r in srows if r.get("lost", False))),
        "n_discarded": int(sum(1 for r in srows if r.get("discarded", False))),
        # commands held at the vehicle's limits (the callback form; an env's actions are
        # within [-1, 1] by construction)
        "n_saturated": int(getattr(getattr(d, "plant", None), "n_saturated", 0)),
        "stopped_early": stopped,
        "t_stop": end * dt if stopped else None,
        "t_compute_max_s": float(cols["t_compute_s"].max()) if srows else nan,
    }
    if ev.reference_path is not None:
        e_y = lateral_error(np.column_stack((trace["X"], trace["Y"])), ev.reference_path)
        trace["e_y"] = e_y
    if "e_y" in trace:  # the callback form's reference path, or a path env's core
        stats.update(tracking_stats(trace["e_y"][:n_rows_ran]))
    if "obs_age" in cols and srows:
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


__all__ = ["build_result"]
