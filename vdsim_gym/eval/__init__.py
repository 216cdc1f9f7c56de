"""Closed-loop evaluation: one controller under timing models A (sync) and B
(virtual_async), tracking metrics and result provenance (docs/EVAL_MODES.md); sweeps over
latency x scenario x seed grids (docs/SWEEPS.md).

``vdsim_gym.eval.sweep`` is the function; its module is ``vdsim_gym.eval.sweeps``.

The jobs of the ``vdsim-gym`` commands that evaluate, callable from Python: ``demo``
(``run_demo``), ``accuracy`` (``run_accuracy``, ``run_closed_loop_gate``,
``run_noisy_gate``), ``delay_budget`` (``run_delay_budget``), ``sweeps.compare``
(``run_sweep``: sweep and compare), ``tolerance_report`` (``run_tolerance``) and
``acc_report`` (``run_acc``, ``run_acc_metrics``).
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
