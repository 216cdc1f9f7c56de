"""CommandEnv: the vehicle driven by its plant command, observed by its state.

The env ClosedLoopEval's callback form runs on (``controller=``, ``plant_kwargs=``): its
C++ core (``_core.CommandEnvCore``, command_task.hpp) is the env core of every other env,
so the callback form's timing (latency, overruns, network, sensor delay) is the env
core's, one engine for both evaluation forms.

Action: the plant command over the vehicle's range, as every env's action: road-wheel
steer / max_steer and the longitudinal command over its range (the pedal itself; a force
or an acceleration target over the most driving and the most braking); the core's clamp
to [-1, 1] is the actuator's saturation at the vehicle's limits. ``command_to_action`` and
``action_to_command`` convert. Observation: the plant's state as float32, unscaled
(``obs_names``: X, Y, psi, vx, vy, r, ax, ay, beta, delta_rw, then per wheel omega, Fx,
Fy, Fz, kappa, alpha). No reward and no time limit; a non-finite state terminates
(outcome ``non_finite``). Not registered with Gymnasium: an evaluation's plant, not a task
to learn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym import _core
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_outcome import task_flags
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.plant import STATE_KEYS, PhysicsSpec, longitudinal_range

_SPEC = _core.CommandEnvCore.default_spec()


def check_initial_state(state0: Mapping[str, float] | None) -> tuple[float, ...]:
    """(X, Y, psi, vx, vy, r) from a mapping of some of those keys (missing ones 0)."""
    state0 = dict(state0 or {})
    unknown = set(state0) - set(STATE_KEYS)
    if unknown:
        raise ConfigError(f"initial state: unknown keys {sorted(unknown)}; use {STATE_KEYS}")
    try:
        values = tuple(float(state0.get(k, 0.0)) for k in STATE_KEYS)
    except (TypeError, ValueError):
        raise ConfigError(f"initial state: values must be numbers, got {state0}") from None
    if not all(math.isfinite(v) for v in values):
        raise ConfigError(f"initial state must be finite, got {state0}")
    return values


class CommandEnv(CoreEnv):
    """The vehicle under its plant command (see the module doc).

    Args (keyword): the physics keywords of every env (level, vehicle, substep_dt,
    control_period, longitudinal, actuator, integrator, max_step, channel_delays,
    step_tol), CoreEnv's timing keywords (latency, overrun, network, obs_delay),
    ``initial_state`` (X, Y, psi, vx, vy, r; missing ones 0) where every reset places
    the vehicle, and ``time_limit`` (None by default).
    """

    DEFAULT_TIME_LIMIT = None
    INFO_KEYS = (("t", float),)
    TASK_FLAGS = task_flags(_SPEC)

    def __init__(self, *, initial_state: Mapping[str, float] | None = None,
                 **kwargs: Any) -> None:
        self.initial_state = check_initial_state(initial_state)
        super().__init__(**kwargs)
        self._lon_range = longitudinal_range(self.vehicle, self.longitudinal)

    def _make_core(self, physics: PhysicsSpec) -> Any:  # type: ignore[override]
        return _core.CommandEnvCore(physics.make_session(), physics.ticks_per_period)

    def _set_obs_layout(self) -> None:
        """The state columns are unscaled and unclipped: the space is unbounded."""
        super()._set_obs_layout()
        n = len(self.obs_names)
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (n,), np.float32)

    def _reset_task(self, seed: int | None) -> tuple[float, ...]:
        return self.initial_state

    @property
    def longitudinal_range(self) -> tuple[float, float]:
        """(most braking, most driving) longitudinal command (``Plant``'s)."""
        return self._lon_range

    def command_to_action(self, steer: float, longitudinal: float) -> np.ndarray:
        """The action of a plant command within the vehicle's range (values beyond it
        give an action beyond [-1, 1], which the core clamps: the saturation)."""
        lo, hi = self._lon_range
        a1 = longitudinal / hi if longitudinal >= 0.0 else longitudinal / -lo
        return np.array((steer / self.vehicle.max_steer, a1))

    def action_to_command(self, action: Any) -> tuple[float, float]:
        """(delta_rw [rad], longitudinal) of an action: the core's mapping (clamped)."""
        steer, lon = self._core.command_for(np.asarray(action, dtype=float).reshape(2))
        return float(steer), float(lon)


__all__ = ["CommandEnv", "check_initial_state"]
