"""Run an SB3-style policy written for a path env as a controller of the plant.

The delay budget (``vdsim-gym delay-budget``, the reference's Plant + callback workflow:
10 s from a start without noise, past the course's end) runs a policy that reads the path
env's observation vector (``env.unwrapped.obs_names``) as a callback on the plant's
observation dict; ``ClosedLoopEval(env=..., policy=...)`` runs it on the path env itself,
and tests/eval/test_env_policy.py runs both.
``PathObservation`` turns the Plant's observation dict into that vector with the core's
own path observation (``PathTrackingEnv.path_observer()``: the C++ function
``PathEnvCore`` writes the env's observation with; tests/cli/test_delay_budget.py checks
the vectors bit for bit); ``PolicyController`` wraps the policy as a ``controller(obs,
t)`` callback, which the callback form runs in every mode.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers import stanley_pi
from vdsim_gym.envs.path_env import OBS_NAMES


class PathObservation:
    """Plant observation dict -> the path env's observation vector (normalized float32).

    The core computes it (``env.unwrapped.path_observer()``: same columns, scales,
    clipping and projection, with the previous segment as search hint, as
    ``PathEnvCore``); ``prev_action`` fills the prev_steer / prev_long columns. The task's
    columns only: an env with an action history appends its actions after them.
    """

    def __init__(self, env: gym.Env) -> None:
        base: Any = env.unwrapped  # the path env: its own attributes
        self._observer = base.path_observer()  # refuses before the first reset
        self.course = base.course
        self.names: tuple[str, ...] = OBS_NAMES

    def reset(self) -> None:
        self._observer.reset()

    def __call__(self, obs: dict[str, float], prev_action: tuple[float, float]) -> np.ndarray:
        return self._observer.observe(obs["X"], obs["Y"], obs["psi"], obs["vx"], obs["vy"],
                                      obs["r"], obs["ax"], obs["ay"], obs["delta_rw"],
                                      float(prev_action[0]), float(prev_action[1]))


class PolicyController:
    """``controller(obs, t)`` for ClosedLoopEval: the env's observation vector from the
    Plant dict, the policy's ``predict``, the env's action-to-command mapping.

    ``reset()`` (called by ClosedLoopEval at the start of every run) clears the projection
    hint and the previous action, and flags the next ``predict`` as an episode start so a
    stateful policy (the PI integrator, a recurrent policy) starts afresh.
    """

    def __init__(self, env: gym.Env, policy: Any = None) -> None:
        self.env = env
        self.policy = stanley_pi(env) if policy is None else policy
        self.observation = PathObservation(env)
        self.reset()

    def reset(self) -> None:
        self.observation.reset()
        self.prev_action = (0.0, 0.0)
        self._first = True

    def __call__(self, obs: dict[str, float], t: float) -> tuple[float, float]:
        vec = self.observation(obs, self.prev_action)
        action, _ = self.policy.predict(vec, episode_start=np.array([self._first]))
        self._first = False
        a = np.clip(np.asarray(action, dtype=float).reshape(2), -1.0, 1.0)
        self.prev_action = (float(a[0]), float(a[1]))
        base: Any = self.env.unwrapped  # the path env: its own attributes
        return base.action_to_command(action)
