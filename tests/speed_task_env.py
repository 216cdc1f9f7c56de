"""A second task on the env core, as a contributor adds one: the speed-tracking task
(``_core.SpeedEnvCore``, one longitudinal action) and this env module with its
registration. Nothing else in the package knows it; the tests in test_speed_task.py run it
through gym.make, gym.make_vec, make_sb3_vec_env, LatencyWrapper, ClosedLoopEval and
eval.sweep unchanged.
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

from vdsim_gym import _core
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_outcome import task_flags
from vdsim_gym.envs.vector import VDSimVectorEnv
from vdsim_gym.sim.plant import PhysicsSpec

ENV_ID = "VDSimTest-Speed-v0"
# The task's facts from its C++ spec (speed_task.hpp): flag bits, default weights.
_SPEC = _core.SpeedEnvCore.default_spec()
_WEIGHTS = dict(_SPEC.default_weights)


class SpeedEnv(CoreEnv):
    """Drive straight and hold a set speed drawn per episode from ``speed_range`` [m/s].

    Observation: vx / 30, v_set / 30, (vx - v_set) / 5, ax / 5, previous action. Action:
    the longitudinal command in [-1, 1] (pedal, or force with ``longitudinal="force"``).
    Reward: -w_speed ((vx - v_set) / 5)^2 - w_smoothness (a_k - a_{k-1})^2. The episode
    ends at ``time_limit`` (default 10 s) or on a non-finite state.
    """

    DEFAULT_TIME_LIMIT = 10.0
    INFO_KEYS = (("speed_error", float), ("vx", float), ("t", float))
    METRIC_LABELS = {"rms_speed_error": "speed error RMS [m/s]",
                     "max_abs_speed_error": "max |speed error| [m/s]"}
    TASK_FLAGS = task_flags(_SPEC)  # outcome "non_finite"; the rest is CoreEnv's

    def __init__(self, *, speed_range: tuple[float, float] = (10.0, 20.0),
                 **kwargs: Any) -> None:
        self.speed_range = (float(speed_range[0]), float(speed_range[1]))
        if not 0.0 <= self.speed_range[0] <= self.speed_range[1]:
            raise ValueError(f"speed_range must be (lo, hi) with 0 <= lo <= hi, got "
                             f"{speed_range!r}")
        super().__init__(**kwargs)

    def _make_core(self, physics: PhysicsSpec, *, w_speed: float = _WEIGHTS["speed"],
                   w_smoothness: float = _WEIGHTS["smoothness"]) -> Any:
        return _core.SpeedEnvCore(physics.make_session(), physics.ticks_per_period,
                                  w_speed, w_smoothness)

    def _reset_task(self, seed: int | None) -> tuple[float, float]:
        v_set = float(self.np_random.uniform(*self.speed_range))
        vx0 = float(self.np_random.uniform(0.5, 1.5)) * v_set
        return (vx0, v_set)


def make_speed_vec(num_envs: int = 1, **kwargs: Any) -> VDSimVectorEnv:
    return VDSimVectorEnv(ENV_ID, num_envs, **kwargs)


def register_speed_env() -> str:
    if ENV_ID not in registry:
        register(id=ENV_ID, entry_point="speed_task_env:SpeedEnv",
                 vector_entry_point="speed_task_env:make_speed_vec")
    return ENV_ID
