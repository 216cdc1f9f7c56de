"""Mode C (wall clock, docs/EVAL_MODES.md) on a plant session: the C++ real-time runner
(``realtime_runner``) and the sensor delay's capture hook (``session_sensor``), whose
captured rows ``observe_capture`` reads as the Plant's observation dict.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym.config.vehicle import VehicleConfig
from vdsim_gym.sim.plant import observe_session


def session_sensor(session: Any, model: Any, ticks_per_period: int) -> Any:
    """Mode C's sensor delay on a vehicle ``Session`` (the core's ``SessionSensor``, a
    hook of the real-time runner): the session's rows at the capture ticks, taken on the
    runner's thread; ``read()`` gives the newest grid sample's (``observe_capture``)."""
    return _core.SessionSensor(session, model.spec(), ticks_per_period)


class _Capture:
    """A captured session row, read as ``observe_session`` reads a session."""

    def __init__(self, time: float, state: np.ndarray, aux: np.ndarray, steer: float) -> None:
        self.time, self._state, self._aux, self.realized_steer = time, state, aux, steer

    def get_state(self, out: np.ndarray) -> None:
        out[: len(self._state)] = self._state

    def get_aux(self, out: np.ndarray) -> None:
        out[: len(self._aux)] = self._aux


def observe_capture(time: float, state: np.ndarray, aux: np.ndarray, steer: float,
                    vehicle: VehicleConfig, level: str,
                    ref_point: tuple[float, float] | None = None) -> dict[str, float]:
    """The Plant observation dict of a captured session row (state, aux, realized steer
    at ``time``): what ``observe_session`` gave then."""
    return observe_session(_Capture(time, state, aux, steer), vehicle, level,
                           np.zeros(_core.STATE_SIZE), np.zeros(_core.AUX_SIZE), ref_point)


def realtime_runner(session: Any, substep_dt: float, end_tick: int) -> Any:
    """Mode C's C++ runner (``RealTimeRunner``) for a plant session, the vehicle
    ``Session`` or the dyno's ``DynoSession``: it ticks the session every ``substep_dt``
    of wall clock on its own thread until ``end_tick`` (docs/EVAL_MODES.md)."""
    cls = _core.DynoRealTimeRunner if isinstance(session, _core.DynoSession) \
        else _core.RealTimeRunner
    return cls(session, substep_dt, end_tick)
