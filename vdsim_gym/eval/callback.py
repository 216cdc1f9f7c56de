"""ClosedLoopEval's callback form as a policy: a ``controller(obs, t) -> (delta_rw,
longitudinal)`` on the command env (``vdsim_gym.envs.command``), whose core runs the
timing of every mode as it does for every env.

``CallbackPolicy`` turns the env's observation row into the Plant's observation dict
(``Plant.observe``'s keys, the state's float32 values; ``t`` the capture's time, and
``obs_age`` with a sensor delay), calls the controller, saturates its command at the
vehicle's limits (``Plant``'s rule, counted in ``n_saturated``) and gives the env its
action. The run (``vdsim_gym.eval.env_run``, mode C ``vdsim_gym.eval.wallclock``) calls
``call``, ``command`` and ``action`` around each sample; its trace has a row at every grid
point (the core's ``grid_rows``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from vdsim_gym.envs.command import CommandEnv
from vdsim_gym.errors import InvalidActionError
from vdsim_gym.sim.plant import (
    add_ref_point,
    command_within,
    resolve_ref_point,
    saturate_command,
)

# A checked command: (delta_rw [rad], longitudinal).
Command = tuple[float, ...]
Controller = Callable[[Any, float], Any]


class CallbackPolicy:
    """``controller(obs_dict, t)`` driving a ``CommandEnv`` (see the module doc)."""

    def __init__(self, controller: Controller, env: CommandEnv, ref_point: Any = None) -> None:
        self.controller = controller
        self.env = env
        self.names: tuple[str, ...] = env.obs_names
        self.vehicle = env.vehicle
        self.longitudinal = env.longitudinal
        self.ref_point_setting = ref_point
        self.ref_point = resolve_ref_point(ref_point, env.vehicle)
        self.dt = env.substep_dt
        self.n_saturated = 0

    def reset(self) -> None:
        """A run starts: the saturation count cleared, a stateful controller afresh."""
        self.n_saturated = 0
        reset = getattr(self.controller, "reset", None)
        if callable(reset):
            reset()

    def observation(self, obs: np.ndarray, t: float, age: float | None) -> dict[str, float]:
        """The Plant's observation dict of the env's row ``obs`` seen at ``t`` [s];
        ``age``: the sensor delay's age of the row (None without one)."""
        out = {"t": t}
        out.update(zip(self.names, obs.tolist(), strict=True))
        if age is not None:  # the capture's time, on the tick grid
            dt = self.dt
            out["t"] = (round(t / dt) - round(age / dt)) * dt
            out["obs_age"] = age
        ratio = self.vehicle.steering_ratio
        if ratio is not None:
            out["delta_sw"] = out["delta_rw"] * ratio
        if self.ref_point is not None:
            add_ref_point(out, self.ref_point)
        return out

    def call(self, obs: np.ndarray, t: float, age: float | None) -> Any:
        """The controller's raw output for the row ``obs`` at the sample time ``t``."""
        return self.controller(self.observation(obs, t, age), t)

    def command(self, raw: Any) -> Command:
        """The controller's output as a command at the vehicle's limits (InvalidActionError
        for NaN, a wrong shape or a unit slip)."""
        try:
            steer, lon, saturated = saturate_command(raw, self.vehicle, self.longitudinal,
                                                     self.env.longitudinal_range)
        except (TypeError, ValueError) as err:
            raise InvalidActionError(f"{err}; got {raw!r}") from None
        self.n_saturated += saturated
        return steer, lon

    def action(self, command: Command) -> np.ndarray:
        """The env's action of a checked command."""
        return self.env.command_to_action(*command)

    def check_command_within(self, raw: Any) -> Command:
        """A configured command (a watchdog's fail-safe): within the vehicle's range."""
        return command_within(raw, self.vehicle, self.longitudinal,
                              self.env.longitudinal_range)


__all__ = ["CallbackPolicy", "Command", "Controller"]
