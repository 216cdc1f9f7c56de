"""The simulated side of ClosedLoopEval's event loop on a Plant: the driver protocol and
its implementation (a Plant and a callback ``controller(obs, t)``). A policy on an env
runs through the env's own core instead (``vdsim_gym.eval.env_run``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from vdsim_gym.config.vehicle import COMMAND_COLUMNS
from vdsim_gym.errors import InvalidActionError
from vdsim_gym.sim.plant import STATE_COLUMNS, Plant
from vdsim_gym.traces.provenance import plant_meta

# A checked command: (delta_rw [rad], longitudinal) on a Plant; in mode C of the env form
# (vdsim_gym.eval.wallclock.EnvWallclockDriver) the action's values, which ClosedLoopEval's
# _call() checks alike.
Command = tuple[float, ...]
Controller = Callable[[Any, float], Any]


class _Driver(Protocol):
    """The simulated side of the event loop (a Plant + callback)."""

    substep_dt: float
    ticks_per_period: int
    lon_column: str  # the longitudinal command column: "u_fx", "u_pedal" or "u_ax"
    command_columns: tuple[str, ...]  # trace/sample columns of a command
    trace_columns: tuple[str, ...]  # trace columns of a state row

    def reset(self) -> None: ...
    def observe(self) -> Any: ...  # what the controller receives at the current tick
    def state_row(self, obs: Any) -> tuple[float, ...]: ...  # STATE_COLUMNS of an observation
    def call(self, obs: Any, t: float) -> Any: ...  # the controller's raw output
    def check(self, raw: Any) -> Command: ...  # validated command; ValueError otherwise
    def command_now(self, command: Command) -> None: ...
    def schedule(self, apply_tick: int, command: Command, sample_tick: int = -1) -> None: ...
    # (sample_tick, apply_tick, ...) of the command acting during substep `tick`
    def command_in_force(self, tick: int) -> tuple: ...
    def drop_pending(self) -> None: ...
    def discard_after(self, tick: int) -> int: ...  # pending commands due after tick dropped
    def advance(self, n: int) -> None: ...
    def meta(self) -> dict[str, Any]: ...


class _PlantDriver:
    """A Plant driven by a callback ``controller(obs_dict, t) -> (delta_rad, longitudinal)``."""

    def __init__(self, plant: Plant, controller: Controller,
                 initial_state: Mapping[str, float] | None, ref_point_setting: Any) -> None:
        self.plant = plant
        self.controller = controller
        self.initial_state = dict(initial_state or {})
        self.ref_point_setting = ref_point_setting
        self.substep_dt = plant.substep_dt
        self.ticks_per_period = plant.ticks_per_period
        self.lon_column = COMMAND_COLUMNS[plant.longitudinal]
        self.command_columns: tuple[str, ...] = ("u_steer", self.lon_column)
        self.trace_columns: tuple[str, ...] = STATE_COLUMNS
        self._session = self.session = plant.session  # mode C's runner ticks it

    def reset(self) -> None:
        self.plant.reset(self.initial_state)
        reset = getattr(self.controller, "reset", None)
        if callable(reset):  # a stateful controller starts afresh
            reset()

    def observe(self) -> dict[str, float]:
        return self.plant.observe()

    def state_row(self, obs: dict[str, float]) -> tuple[float, ...]:
        return tuple(obs[c] for c in STATE_COLUMNS)

    def call(self, obs: dict[str, float], t: float) -> Any:
        return self.controller(obs, t)

    def check(self, raw: Any) -> Command:
        try:
            return self.plant.check_command(raw)
        except (TypeError, ValueError) as err:
            raise InvalidActionError(f"{err}; got {raw!r}") from None

    def command_now(self, command: Command) -> None:
        self._session.command_now(*command)

    def schedule(self, apply_tick: int, command: Command, sample_tick: int = -1) -> None:
        self._session.schedule(apply_tick, command[0], command[1], sample_tick)

    def command_in_force(self, tick: int) -> tuple:
        return self._session.command_in_force(tick)

    def drop_pending(self) -> None:
        self._session.drop_pending()

    def discard_after(self, tick: int) -> int:
        return int(self._session.discard_after(tick))

    def advance(self, n: int) -> None:
        self._session.advance(n)

    def meta(self) -> dict[str, Any]:
        return plant_meta(self.plant.physics, self.plant.ref_point, self.ref_point_setting)
