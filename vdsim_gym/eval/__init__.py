"""Closed-loop evaluation: one controller under timing models A (sync) and B
(virtual_async), tracking metrics and result provenance (docs/EVAL_MODES.md); sweeps over
latency x scenario x seed grids (docs/SWEEPS.md).

``vdsim_gym.eval.sweep`` is the function; its module is ``vdsim_gym.eval.sweeps``.
"""

from __future__ import annotations

from vdsim_gym.eval.closed_loop import MODES, ClosedLoopEval, EvalResult
from vdsim_gym.eval.metrics import lateral_error, tracking_stats
from vdsim_gym.eval.sweeps import SweepResult, sweep

__all__ = [
    "MODES",
    "ClosedLoopEval",
    "EvalResult",
    "SweepResult",
    "lateral_error",
    "sweep",
    "tracking_stats",
]
