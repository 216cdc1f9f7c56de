"""RobotDriverWrapper: a robot driver, with its transport delay and the application's own
actuator, between a reference action and the plant's pedal."""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_action, check_number
from vdsim_gym.dyno.driver import Actuator, RobotDriver
from vdsim_gym.envs.dyno import DynoEnv
from vdsim_gym.errors import ConfigError
from vdsim_gym.wrappers._common import vdsim_base

# The action column that carries the longitudinal command, per env.
_LONGITUDINAL_COLUMNS = ("longitudinal", "accel", "pedal", "reference")


class RobotDriverWrapper(
    gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray], gym.utils.RecordConstructorArgs
):
    """``RobotDriverWrapper(env, mode="speed"|"accel", delay_s=0.0, actuator=None, ...)``.

    The wrapped env's longitudinal action becomes a reference for a robot driver
    (``vdsim_gym.dyno.RobotDriver``, stepped once per env step with dt = the control
    period); the driver's pedal, ``delay_s`` late and through ``actuator(throttle, brake,
    dt)`` (any Python callable, the last word; clipped to the env's pedal range
    [-1, 1]), is what the env gets. Works on VDSim-Dyno-v0 (its core is rebuilt without
    its own driver, ``driver=None``) and on the vehicle envs' longitudinal channel
    (VDSim-ACC-v0, DLC, PathFollow: rebuilt with ``longitudinal="pedal"``); steering
    passes through. Wrap before the first ``reset()``.

    Action: the longitudinal column a in [-1, 1] is v_ref = (a + 1) / 2 * ref_speed_max in
    speed mode, a_ref = a * ref_accel_max (a >= 0) or a * ref_decel_max in accel mode
    (defaults: 40 m/s; the vehicle's max_acceleration / max_deceleration, or 2 / 3 m/s^2
    on the dyno). ``info["driver"]``: the reference, the fresh pedal and the (throttle,
    brake) sent. The driver is per env (Python): for vector envs use the dyno's built-in
    driver (``gym.make_vec("VDSim-Dyno-v0", driver={...})``), whose actuator is
    ``pedal_actuator``.
    """

    def __init__(self, env: gym.Env, mode: str = "speed", *, delay_s: float = 0.0,
                 actuator: Actuator | None = None, ref_speed_max: float = 40.0,
                 ref_accel_max: float | None = None, ref_decel_max: float | None = None,
                 **driver: Any) -> None:
        base = vdsim_base(env, "RobotDriverWrapper")
        self.driver = RobotDriver(mode, delay_s=delay_s, actuator=actuator, **driver)
        cols = [j for j, n in enumerate(base.action_names) if n in _LONGITUDINAL_COLUMNS]
        if len(cols) != 1:
            raise ConfigError(f"{type(base).__name__} has no single longitudinal action column "
                             f"(actions {base.action_names})")
        self._col = cols[0]
        self._action_names = base.action_names
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        dyno = base.physics.level == "dyno"
        if dyno:
            assert isinstance(base, DynoEnv)  # the dyno physics are the dyno env's
            base.set_driver(None)
        elif base.longitudinal != "pedal":
            base.set_longitudinal("pedal")
        vehicle = base.vehicle
        self.ref_speed_max = check_number(ref_speed_max, "ref_speed_max", 0, 100,
                                          open_low=True, what="a speed [m/s]")
        self.ref_accel_max = check_number(
            ref_accel_max if ref_accel_max is not None else
            2.0 if dyno else vehicle.max_acceleration, "ref_accel_max", 0, 100,
            open_low=True, what="an acceleration [m/s^2]")
        self.ref_decel_max = check_number(
            ref_decel_max if ref_decel_max is not None else
            3.0 if dyno else vehicle.max_deceleration, "ref_decel_max", 0, 100,
            open_low=True, what="a deceleration [m/s^2]")
        self._speed = (lambda: base.core.speed) if dyno else (lambda: float(base.state[3]))
        self._dt = base.control_period

    def reference(self, a: float) -> float:
        if self.driver.mode == "speed":
            return 0.5 * (a + 1.0) * self.ref_speed_max
        return a * (self.ref_accel_max if a >= 0 else self.ref_decel_max)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.driver.reset()
        return obs, info

    def step(self, action: np.ndarray
             ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        # The env's own check (the same types, shape, tolerance and errors), before the
        # driver steps.
        a = np.array(check_action(action, self._action_names))
        ref = self.reference(float(np.clip(a[self._col], -1.0, 1.0)))
        v = self._speed()
        if self.driver.mode == "speed":
            throttle, brake = self.driver.step(ref, v, self._dt)
        else:
            throttle, brake = self.driver.step(0.0, v, self._dt, a_ref=ref)
        a[self._col] = min(max(throttle - brake, -1.0), 1.0)
        obs, reward, terminated, truncated, info = self.env.step(a)
        info["driver"] = {"reference": ref, "pedal_fresh": self.driver.pedal,
                          "throttle": throttle, "brake": brake}
        return obs, reward, terminated, truncated, info


__all__ = ["RobotDriverWrapper"]
