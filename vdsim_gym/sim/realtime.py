"""Mode C (wall clock, docs/EVAL_MODES.md) on a plant session: the C++ real-time runner
(``realtime_runner``); the sensor delay's captures are the env core's (a hook of the
runner).
"""

from __future__ import annotations

from typing import Any

from vdsim_gym import _core


def realtime_runner(session: Any, substep_dt: float, end_tick: int) -> Any:
    """Mode C's C++ runner (``RealTimeRunner``) for a plant session, the vehicle
    ``Session`` or the dyno's ``DynoSession``: it ticks the session every ``substep_dt``
    of wall clock on its own thread until ``end_tick`` (docs/EVAL_MODES.md)."""
    cls = _core.DynoRealTimeRunner if isinstance(session, _core.DynoSession) \
        else _core.RealTimeRunner
    return cls(session, substep_dt, end_tick)
