"""What a ClosedLoopEval run returns (``EvalResult``) or raises (``ControllerError``), and
the per-call sample rows it collects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

TIMING_COLUMNS = ("t_sample", "t_apply", "c_k", "overrun")


@dataclass(frozen=True)
class EvalResult:
    """What a run produced (columns and units in docs/EVAL_MODES.md).

    trace: one row per control grid point t_k = k Tc before the end (a policy on an env:
        per sample), plus a closing row at the end (t_stop or the duration) whose command
        columns are NaN.
    samples: one row per controller call.
    stats: counts and tracking metrics; meta: settings and provenance.
    """

    trace: dict[str, np.ndarray]
    samples: dict[str, np.ndarray]
    stats: dict[str, Any]
    meta: dict[str, Any]


class _Samples:
    """Rows of ``samples``, one per controller call."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []

    def add(self, **row: Any) -> dict[str, Any]:
        self.rows.append(row)
        return row
