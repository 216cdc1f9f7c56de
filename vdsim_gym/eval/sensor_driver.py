"""The sensor delay on ClosedLoopEval's callback form (``obs_delay=``): a driver around
the Plant's driver whose observation at the grid sample j is the Plant's observation at
that sample's capture tick, by the env core's rule and schedule (``_core.SensorSchedule``,
docs/ENVS.md "Sensor delay"): c_j = max(j P - ceil(d_j / dt), c_{j-1}), ages drawn per
grid sample. Modes A and B stop the plant at each capture (as the env core does); mode C
takes them on the real-time runner's thread (``_core.SessionSensor``, a hook after every
substep) and reads the newest grid sample's. The trace's state rows stay the true state,
and the observation dict gains ``obs_age`` [s] (its ``t`` is the capture's time)."""

from __future__ import annotations

from typing import Any

from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.eval.driver import _Driver
from vdsim_gym.sim.realtime import observe_capture, session_sensor
from vdsim_gym.sim.timeline import sensor_schedule


class SensorDriver:
    """``inner`` (a driver) seen through a sensor delay drawn from ``model``."""

    def __init__(self, inner: _Driver, model: LatencyModel, seed: int = 0) -> None:
        self._inner = inner
        self._seed = seed
        self._model = model
        self._rt: Any = None  # mode C: the runner thread's captures (_core.SessionSensor)
        self.last_obs_age: float | None = None
        self.substep_dt = inner.substep_dt
        self.ticks_per_period = inner.ticks_per_period
        self.lon_column = inner.lon_column
        self.command_columns = inner.command_columns
        self.trace_columns = inner.trace_columns
        self._schedule = sensor_schedule(model, inner.substep_dt, inner.ticks_per_period)
        self._tick = 0
        self._captured: dict[int, tuple[int, Any]] = {}  # grid index -> (tick, observation)
        self._now: Any = None  # the true observation at the tick of the last observe()

    def __getattr__(self, name: str) -> Any:  # session, plant, ... of the inner driver
        return getattr(self._inner, name)

    def reset(self) -> None:
        self._inner.reset()
        self._schedule.reset(self._seed)
        self._tick = 0
        self._captured = {}
        self._rt = None

    def attach_runner(self, runner: Any) -> None:
        """Mode C: captures on the runner's thread after every substep (and now)."""
        inner: Any = self._inner
        self._rt = session_sensor(inner.session, self._model, self.ticks_per_period)
        self._rt.reset(self._seed)
        runner.set_hook(self._rt)

    def _observe_runner(self) -> Any:
        """Mode C: the newest grid sample's capture as the Plant's observation dict."""
        self._now = self._inner.observe()
        c, state, aux, steer = self._rt.read()
        inner: Any = self._inner  # the Plant's driver: its plant and session
        plant, session = inner.plant, inner.session
        obs = observe_capture(c * self.substep_dt, state, aux, steer, plant.vehicle,
                              plant.level, plant.ref_point)
        self.last_obs_age = obs["obs_age"] = (session.tick - c) * self.substep_dt
        return obs

    def _capture(self, until: int, at_end: bool) -> None:
        """Takes the planned captures before ``until`` (and at it when ``at_end``), the
        plant stopping at each."""
        self._schedule.plan(until)
        for j, c in self._schedule.captures():
            if j in self._captured:
                continue
            if c > until or (c == until and not at_end):
                break
            if c > self._tick:
                self._inner.advance(c - self._tick)
                self._tick = c
            self._captured[j] = (c, self._inner.observe())

    def observe(self) -> Any:
        """At a grid tick j P: the observation captured for sample j (with ``obs_age``);
        elsewhere (the run's end row) the true observation."""
        if self._rt is not None:
            return self._observe_runner()
        self._capture(self._tick, True)
        self._now = truth = self._inner.observe()
        P = self.ticks_per_period
        if self._tick % P:
            return truth
        j = self._tick // P
        self._schedule.release_before(j)
        for k in [k for k in self._captured if k < j]:
            del self._captured[k]
        c, obs = self._captured.get(j, (0, truth))
        out = dict(obs)
        out["obs_age"] = self.last_obs_age = (self._tick - c) * self.substep_dt
        return out

    def state_row(self, obs: Any) -> tuple[float, ...]:
        """The true state now (the trace records the plant, not what the sensor saw)."""
        return self._inner.state_row(self._now if self._now is not None else obs)

    def advance(self, n: int) -> None:
        end = self._tick + n
        self._capture(end, False)
        self._inner.advance(end - self._tick)
        self._tick = end

    def call(self, obs: Any, t: float) -> Any:
        return self._inner.call(obs, t)

    def check(self, raw: Any) -> Any:
        return self._inner.check(raw)

    def command_now(self, command: Any) -> None:
        self._inner.command_now(command)

    def schedule(self, apply_tick: int, command: Any, sample_tick: int = -1) -> None:
        self._inner.schedule(apply_tick, command, sample_tick)

    def command_in_force(self, tick: int) -> tuple:
        return self._inner.command_in_force(tick)

    def drop_pending(self) -> None:
        self._inner.drop_pending()

    def discard_after(self, tick: int) -> int:
        return self._inner.discard_after(tick)

    def meta(self) -> dict[str, Any]:
        return self._inner.meta()


__all__ = ["SensorDriver"]
