"""The core's timing objects driven from Python by ClosedLoopEval's callback form: the
sensor delay's capture schedule and mode B's asynchronous timeline."""

from __future__ import annotations

from typing import Any

from vdsim_gym import _core
from vdsim_gym.config.latency import LatencyModel, check_overrun


def sensor_schedule(model: LatencyModel, substep_dt: float, ticks_per_period: int) -> Any:
    """The sensor delay's capture schedule (the core's ``SensorSchedule``, the env
    cores' rule: docs/ENVS.md, "Sensor delay"); ClosedLoopEval's callback form drives it
    (``reset(seed)``, ``plan(until)``, ``captures()``, ``release_before(j)``)."""
    return _core.SensorSchedule(model.spec(), substep_dt, ticks_per_period)


def async_timeline(substep_dt: float, ticks_per_period: int, overrun: str) -> Any:
    """Mode B's timeline (the core's ``AsyncTimeline``): one worker computes the samples
    in turn; the command of sample k applies at ``ceil((t_start + c_k) / substep_dt)``;
    ``overrun`` ("skip" or "queue") decides what a late one does to the next sample. The
    env cores hold their own; ClosedLoopEval's Plant form drives this one."""
    timeline = _core.AsyncTimeline(substep_dt, ticks_per_period,
                                   getattr(_core.OverrunPolicy, check_overrun(overrun)))
    timeline.reset()
    return timeline
