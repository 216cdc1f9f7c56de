"""The comparison table: each metric's band per level (``METRICS``), one ``Row`` per
metric and level (``comparison``: theirs, ours, difference, tolerance) and the Markdown
table of docs/PHYSICS.md (``markdown_table``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from vdsim_gym.analysis.validation.commonroad import MODELS
from vdsim_gym.analysis.validation.maneuvers import MANEUVERS, cached_run
from vdsim_gym.analysis.validation.metrics import maneuver_metrics


@dataclass(frozen=True)
class Metric:
    """One row of the comparison: its maneuver (the run), key, label, unit, number format
    and, per level, the band (low, high) that ours - theirs must lie in (``relative``:
    (ours - theirs) / |theirs|). A band is one-sided where the known cause of the
    difference has a sign (docs/PHYSICS.md gives each cause), so an error of the other
    sign does not hide inside it."""

    maneuver: str
    key: str
    label: str
    unit: str
    fmt: str
    relative: bool
    tolerance: dict[str, tuple[float, float]]


METRICS = (
    Metric("circular", "K", "understeer gradient K", "deg/g", ".3f", False,
           {"L1": (-0.05, 0.02), "L2": (-0.15, 0.02)}),
    Metric("circular", "ay_limit", "lateral limit (max steady ay)", "m/s^2", ".2f", True,
           {"L1": (-0.01, 0.04), "L2": (-0.01, 0.08)}),
    Metric("step", "r_steady", "step steer: steady yaw rate", "rad/s", ".4f", True,
           {"L1": (-0.005, 0.01), "L2": (-0.005, 0.03)}),
    Metric("step", "t90", "step steer: 90 % response time", "s", ".3f", False,
           {"L1": (-0.01, 0.01), "L2": (-0.01, 0.01)}),
    Metric("step", "overshoot", "step steer: yaw-rate overshoot", "%", ".2f", False,
           {"L1": (-0.5, 0.5), "L2": (-0.5, 0.5)}),
    Metric("sine", "ay_peak", "sine steer: peak ay", "m/s^2", ".3f", True,
           {"L1": (-0.005, 0.025), "L2": (-0.005, 0.04)}),
    Metric("sine", "phase_lag", "sine steer: yaw-rate phase lag", "deg", ".2f", False,
           {"L1": (-1.5, 0.5), "L2": (-1.5, 0.5)}),
    Metric("braking", "stop", "braking from 100 km/h: stopping distance", "m", ".2f", True,
           {"L1": (-0.003, 0.01), "L2": (-0.003, 0.01)}),
)


@dataclass(frozen=True)
class Row:
    """One metric at one level: CommonRoad's value, ours, ours - theirs, the band
    (low, high) for the difference (``relative``: as a fraction of |theirs|) and whether
    the difference is in it."""

    level: str
    model: str
    maneuver: str
    metric: str
    unit: str
    commonroad: float
    ours: float
    difference: float
    tolerance: tuple[float, float]
    relative: bool
    fmt: str

    @property
    def error(self) -> float:
        """The difference as the band measures it (relative: a fraction of |theirs|)."""
        return self.difference / abs(self.commonroad) if self.relative else self.difference

    @property
    def within(self) -> bool:
        lo, hi = self.tolerance
        return bool(lo <= self.error <= hi)

    def cells(self) -> list[str]:
        f, (lo, hi) = self.fmt, self.tolerance
        if self.relative:
            diff = f"{self.difference:+{f}} ({100 * self.error:+.2f} %)"
            tol = f"{100 * lo:+g} to {100 * hi:+g} %"
        else:
            unit = "points" if self.unit == "%" else self.unit
            diff, tol = f"{self.difference:+{f}}", f"{lo:+g} to {hi:+g} {unit}"
        return [f"{self.level} vs {self.model}", f"{self.metric} [{self.unit}]",
                f"{self.commonroad:{f}}", f"{self.ours:{f}}", diff, tol]


def comparison(levels: Sequence[str] = ("L1", "L2"), maneuvers: Sequence[str] | None = None,
               integrator: str | None = None) -> list[Row]:
    """The table: one Row per metric and level (runs cached per process)."""
    rows = []
    for level in levels:
        for name in maneuvers or MANEUVERS:
            theirs = maneuver_metrics(name, cached_run("commonroad", level, name))
            ours = maneuver_metrics(name, cached_run("ours", level, name, integrator))
            for m in METRICS:
                if m.maneuver != name:
                    continue
                rows.append(Row(level, MODELS[level], name, m.label, m.unit, theirs[m.key],
                                ours[m.key], ours[m.key] - theirs[m.key],
                                m.tolerance[level], m.relative, m.fmt))
    return rows


TABLE_HEADER = ("models", "metric", "CommonRoad", "ours", "difference", "tolerance")


def markdown_table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)
