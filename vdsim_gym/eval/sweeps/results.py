"""Sweep results: ``SweepRow`` (one episode), ``CellSummary`` (one latency x scenario
cell), ``SweepResult`` (table, summary, meta) with CSV writers, and ``summarize`` (the
cell summaries of a table; METRICS are the summarized metrics).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from vdsim_gym.eval.stats import mean_interval

# Per-episode metrics summarized per cell (mean and 95 % interval).
METRICS = ("ey_rmse_m", "ey_max_m", "episode_return", "cone_hits", "n_overrun")


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


__all__ = ["METRICS", "CellSummary", "SweepResult", "SweepRow", "summarize"]
