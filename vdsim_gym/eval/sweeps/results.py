"""Sweep results: ``SweepRow`` (one episode), ``CellSummary`` (one latency x scenario
cell), ``SweepResult`` (table, summary, meta) with CSV writers, and ``summarize`` (the
cell summaries of a table).

The metrics of a row are the sweep's own (``METRICS``: episode_return, n_overrun) and the
task's episode-summary fields (``env.summary_names`` without steps and return, e.g. the
path task's distance, cone_hits, rms_e_y, max_abs_e_y, pass_speed): a new task's sweep
tabulates whatever its core summarizes, with no edit here.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from vdsim_gym._files import atomic_open
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval.stats import mean_interval

# The sweep's own per-episode metrics; the task's summary fields follow them.
METRICS = ("episode_return", "n_overrun")
BASE_LABELS = {"episode_return": "episode return", "n_overrun": "overruns per episode"}
# Episode-summary fields that are row columns of their own, not task metrics.
SUMMARY_BASE = ("outcome", "steps", "return")


def _metric_attr(obj: Any, name: str, table: str) -> Any:
    # Called only for names that are not fields. Dunders and the table itself raise
    # AttributeError at once (copy and pickle probe them before __init__ has run).
    if name.startswith("__") or name == table:
        raise AttributeError(name)
    values = object.__getattribute__(obj, table)
    if name in values:
        return values[name]
    raise AttributeError(f"{type(obj).__name__} has no field or metric {name!r} "
                         f"(metrics: {', '.join(values)})")


def _same(a: Any, b: Any) -> bool:
    """Equal field by field and metric by metric, NaN equal to NaN (undefined in both)."""
    if type(a) is not type(b):
        return NotImplemented
    da, db = a.as_dict(), b.as_dict()
    return da.keys() == db.keys() and all(
        x == y or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
        for x, y in zip(da.values(), db.values(), strict=True))


@dataclass(frozen=True, eq=False)
class SweepRow:
    """One episode. ``metrics`` maps each metric (the task's summary fields, e.g. the
    path task's rms_e_y [m]) to its value; ``row.rms_e_y`` reads it too."""

    cell: int  # index of the (latency, scenario) cell in SweepResult.summary
    env_id: str
    scenario: str  # the scenario's env kwargs as "key=value,..." ("default": none)
    latency: str  # e.g. "fixed 10 ms", "uniform 0-20 ms (seed 0)", "none"
    mean_delay_ms: float  # mean of the latency model (normal: of the clipped delay)
    overrun: str  # "skip" | "queue" ("-" without latency)
    seed: int  # reset seed of the episode
    steps: int  # env steps of the episode
    episode_return: float  # sum of the episode's rewards
    n_overrun: int
    n_skipped: int
    outcome: str  # "terminated" | "truncated"
    end: str  # the env's info["outcome"], e.g. course_end | cone_hit | time_limit
    completed: bool  # ended by the task's own end: not terminated, not the time limit
    metrics: Mapping[str, float] = field(default_factory=dict)  # the task's summary

    __hash__ = None  # type: ignore[assignment]  # metrics is a dict

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    def __getattr__(self, name: str) -> Any:
        return _metric_attr(self, name, "metrics")

    def as_dict(self) -> dict[str, Any]:
        """Flat: the fields in order, the task's metrics in place of ``metrics``."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "metrics"}
        return {**out, **self.metrics}

    def value(self, metric: str) -> float:
        """A metric of METRICS or of the task's summary."""
        return float(getattr(self, metric))


@dataclass(frozen=True, eq=False)
class CellSummary:
    """Per cell: n episodes, completion, and per metric the mean with 95 % interval
    bounds (mean +- t_{0.975, n-1} s / sqrt(n); NaN bounds for n = 1) over the episodes
    where it is defined (NaN values, e.g. the pass_speed of an episode that did not reach
    the course end, are left out; all NaN: NaN). ``s.rms_e_y_mean`` reads ``stats`` too.
    """

    cell: int
    env_id: str
    scenario: str
    latency: str
    mean_delay_ms: float
    overrun: str
    n: int
    n_completed: int
    stats: Mapping[str, float] = field(default_factory=dict)  # "<metric>_{mean,lo,hi}"

    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        return _same(self, other)

    def __getattr__(self, name: str) -> Any:
        return _metric_attr(self, name, "stats")

    def interval(self, metric: str) -> tuple[float, float, float]:
        """(mean, lo, hi) of a metric."""
        try:
            return tuple(self.stats[f"{metric}_{k}"] for k in ("mean", "lo", "hi"))  # type: ignore[return-value]
        except KeyError:
            raise ConfigError(f"no metric {metric!r} in this sweep; metrics: "
                              f"{', '.join(_metric_names(self.stats))}") from None

    def as_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "stats"}
        return {**out, **self.stats}


def _metric_names(stats: Mapping[str, float]) -> list[str]:
    return [k[:-5] for k in stats if k.endswith("_mean")]


@dataclass(frozen=True)
class SweepResult:
    table: list[SweepRow]  # grid order: cell by cell, seeds in the order given
    summary: list[CellSummary]  # one per cell
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def metrics(self) -> tuple[str, ...]:
        """The summarized metrics: METRICS, then the task's summary fields."""
        return tuple(self.meta.get("metrics") or metric_names(self.table))

    def columns(self) -> dict[str, list[Any]]:
        """The table as a dict of columns (e.g. for ``pandas.DataFrame(result.columns())``)."""
        rows = [r.as_dict() for r in self.table]
        return {k: [r[k] for r in rows] for k in (rows[0] if rows else ())}

    def write_csv(self, path: str | Path, *, extra: dict[str, Any] | None = None) -> Path:
        """The table as CSV; ``extra`` columns (e.g. {"controller": "stanley"}) go first."""
        return write_csv(path, [{**(extra or {}), **r.as_dict()} for r in self.table])

    def write_summary_csv(self, path: str | Path, *, extra: dict[str, Any] | None = None
                          ) -> Path:
        return write_csv(path, [{**(extra or {}), **s.as_dict()} for s in self.summary])

    def phase_summary(self) -> list[dict[str, Any]]:
        """Per cell, cycle and phase (an env whose cycles have phases, the dyno's: its
        ``cycle_phases`` and ``PHASE_METRICS``, recorded in ``meta``), in grid order: the
        cell's scenario and latency, the cycle's name, the phase's slot and name, n, and
        per phase metric its mean and 95 % interval over the cell's episodes on that cycle
        (``mean_interval``, as ``summary``). Empty for an env without phases."""
        phases, fields_ = self.meta.get("cell_phases"), self.meta.get("phase_metrics")
        if not phases or not fields_:
            return []
        groups: dict[tuple[int, int], list[SweepRow]] = {}
        for r in self.table:
            if phases[r.cell] is not None and not math.isnan(r.metrics.get("cycle_index",
                                                                            math.nan)):
                groups.setdefault((r.cell, int(r.metrics["cycle_index"])), []).append(r)
        out = []
        for (cell, ci), rows in sorted(groups.items()):
            cycle, names = phases[cell][ci]
            for k, name in enumerate(names):
                row: dict[str, Any] = {"cell": cell, "scenario": rows[0].scenario,
                                       "latency": rows[0].latency, "cycle": cycle,
                                       "phase": k, "name": name, "n": len(rows)}
                for m, f in fields_.items():
                    values = [v for v in (r.metrics.get(f.format(k), math.nan) for r in rows)
                              if not math.isnan(v)]
                    mean, lo, hi = mean_interval(values)
                    row.update({f"{m}_mean": mean, f"{m}_lo": lo, f"{m}_hi": hi})
                out.append(row)
        return out


def write_csv(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    """Rows of flat dicts as CSV, columns in the first row's order, written atomically
    (``vdsim_gym._files.atomic_open``: an interrupt leaves the previous file whole, never
    a truncated one)."""
    path = Path(path)
    with atomic_open(path, "w") as fh:
        if rows:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return path


def sweep_metrics(summary_names: Sequence[str]) -> tuple[str, ...]:
    """The metrics of a sweep of an env with these ``summary_names``: METRICS, then the
    task's summary fields (steps and return are columns of their own)."""
    return (*METRICS, *(n for n in summary_names if n not in SUMMARY_BASE))


def metric_names(table: Sequence[SweepRow]) -> tuple[str, ...]:
    """METRICS, then the task's metrics of the table's rows (in first-seen order)."""
    names = dict.fromkeys(METRICS)
    for r in table:
        names.update(dict.fromkeys(r.metrics))
    return tuple(names)


def summarize(table: Sequence[SweepRow]) -> list[CellSummary]:
    """Per cell (in cell order): n, completions, mean and 95 % interval of each metric."""
    by_cell: dict[int, list[SweepRow]] = {}
    for r in table:
        by_cell.setdefault(r.cell, []).append(r)
    metrics = metric_names(table)
    out = []
    for c in sorted(by_cell):
        rows = by_cell[c]
        r0 = rows[0]
        stats: dict[str, float] = {}
        for m in metrics:
            values = [v for v in (r.value(m) for r in rows) if not math.isnan(v)]
            mean, lo, hi = mean_interval(values)
            stats.update({f"{m}_mean": mean, f"{m}_lo": lo, f"{m}_hi": hi})
        out.append(CellSummary(
            cell=c, env_id=r0.env_id, scenario=r0.scenario, latency=r0.latency,
            mean_delay_ms=r0.mean_delay_ms, overrun=r0.overrun, n=len(rows),
            n_completed=sum(r.completed for r in rows), stats=stats))
    return out


__all__ = ["BASE_LABELS", "METRICS", "CellSummary", "SweepResult", "SweepRow", "metric_names",
           "summarize", "sweep_metrics", "write_csv"]
