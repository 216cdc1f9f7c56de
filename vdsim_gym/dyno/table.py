"""The reference delay-table procedure (../shared/reference/dyno_bench.md, "Delay-table
procedure"): the robot driver on the bench at rest, v_ref 15 m/s for 30 s then 5 m/s for
30 s, dt 0.05 s, envelope 1.8 m/s^2 both ways, for several transport delays; docs/DYNO.md.

The bench steps v by the published rule (``speed_update="end"``: explicit Euler with the
end-of-substep torque) unless told otherwise: the reference's limit-cycle rows depend on
that detail. The package's default rule ("mean", second order) gives the same settled
rows; at 0.5 s its peak is 16.84 m/s (the published rule's 16.91).

Accel mode gets the acceleration reference the reference rig infers from the speed
reference, a_ref = (v_ref - v) / T with T = 0.1 s, clamped by the same envelope.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym.dyno.bench import DynoBench
from vdsim_gym.dyno.config import load_dyno
from vdsim_gym.dyno.driver import RobotDriver
from vdsim_gym.timing import nearest_ticks

# The reference's speed-mode figures: delay -> (peak toward 15, min after the drop to 5,
# speed 30 s after each step).
REFERENCE = {0.0: (15.98, 4.08, 15.000, 5.000), 0.3: (16.53, 3.56, 15.000, 5.000),
             0.5: (16.91, 3.48, 15.310, 5.269), 0.8: (18.59, 1.54, 14.255, 4.649)}
AREF_HORIZON_S = 0.1  # T of the inferred a_ref = (v_ref - v) / T
SETTLE_BAND = 0.05  # [m/s] settled: the last SETTLE_WINDOW of each phase within this
SETTLE_WINDOW = 5.0  # [s]


@dataclass(frozen=True)
class TableRow:
    mode: str
    delay_s: float
    peak: float  # [m/s] max speed in phase 1
    minimum: float  # [m/s] min speed in phase 2
    end_1: float  # [m/s] speed at the end of phase 1
    end_2: float  # [m/s] at the end of phase 2
    settled: bool  # both phases within SETTLE_BAND of v_ref over their last SETTLE_WINDOW
    t: np.ndarray  # [s] time after each step
    v: np.ndarray  # [m/s] speed after each step

    @property
    def reference(self) -> tuple[float, float, float, float] | None:
        return REFERENCE.get(self.delay_s) if self.mode == "speed" else None


def run_procedure(mode: str = "speed", delay_s: float = 0.0, *, dt: float = 0.05,
                  envelope: float = 1.8, phases: Sequence[tuple[float, float]] = (
                      (15.0, 30.0), (5.0, 30.0)), vehicle: str = "ev_dyno_bench",
                  speed_update: str = "end", **driver: Any) -> tuple[np.ndarray, np.ndarray]:
    """Speed after each step of the procedure: (t, v). ``speed_update``: the bench's rule
    (``DynoConfig.speed_update``; "end" is the published bench's). ``driver``: further
    RobotDriver options (gains such as ``kp_accel``, ``ki_accel``; the reference uses the
    defaults)."""
    bench = DynoBench(dataclasses.replace(load_dyno(vehicle), speed_update=speed_update))
    robot = RobotDriver(mode, delay_s=delay_s, max_accel_mps2=envelope,
                        max_decel_mps2=envelope, **driver)
    refs = np.concatenate([np.full(nearest_ticks(d, dt)[0], v) for v, d in phases])
    v, out = 0.0, np.empty(len(refs))
    for k, v_ref in enumerate(refs):
        a_ref = (v_ref - v) / AREF_HORIZON_S if mode == "accel" else None
        v = bench.step(*robot.step(float(v_ref), v, dt, a_ref=a_ref), dt)
        out[k] = v
    return (np.arange(1, len(refs) + 1) * dt, out)


def delay_table(delays: Sequence[float] = (0.0, 0.3, 0.5, 0.8),
                modes: Sequence[str] = ("speed", "accel"), *, dt: float = 0.05,
                envelope: float = 1.8, speed_update: str = "end",
                **driver: Any) -> list[TableRow]:
    """The procedure for each mode and delay; ``driver``: further RobotDriver options
    for every run (e.g. accel gains ``kp_accel=0.0425, ki_accel=0.025``, docs/DYNO.md)."""
    rows = []
    n1 = nearest_ticks(30.0, dt)[0]
    w = nearest_ticks(SETTLE_WINDOW, dt)[0]
    for mode in modes:
        for delay in delays:
            t, v = run_procedure(mode, delay, dt=dt, envelope=envelope,
                                 speed_update=speed_update, **driver)
            p1, p2 = v[:n1], v[n1:]
            settled = bool(np.max(np.abs(p1[-w:] - 15.0)) <= SETTLE_BAND
                           and np.max(np.abs(p2[-w:] - 5.0)) <= SETTLE_BAND)
            rows.append(TableRow(mode, float(delay), float(p1.max()), float(p2.min()),
                                 float(p1[-1]), float(p2[-1]), settled, t, v))
    return rows


__all__ = ["AREF_HORIZON_S", "REFERENCE", "TableRow", "delay_table", "run_procedure"]
