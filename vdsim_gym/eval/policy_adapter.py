"""Run an SB3-style policy written for a path env on the bare Plant.

The delay budget (``vdsim-gym delay-budget``, the reference's Plant + callback workflow)
runs a policy that reads the path env's observation vector (``env.unwrapped.obs_names``)
as a callback on the Plant; ``ClosedLoopEval(env=..., policy=...)`` runs on the env's own
core instead (``vdsim_gym.eval.env_run``) and is tested against this Python path.
``PathObservation`` turns the Plant's observation dict into that vector with the core's
own path projection (``_core.PathTracker``), the same computation ``PathEnvCore`` runs in
C++ (tests/cli/test_delay_budget.py checks the vectors bit for bit); ``PolicyController``
wraps the policy as a ``controller(obs, t)`` callback, so every evaluation mode drives
the Plant through the one event loop.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym import _core
from vdsim_gym.controllers import stanley_pi


class PathObservation:
    """Plant observation dict -> the path env's observation vector (normalized float32).

    Same columns, scales, clipping and projection (the core's ``PathTracker`` with the
    previous segment as search hint) as ``PathEnvCore::evaluate``; ``prev_action`` fills
    the prev_steer / prev_long columns.
    """

    def __init__(self, env: gym.Env) -> None:
        base = env.unwrapped
        if base.course is None:
            raise ValueError("reset the env first: its course is chosen at reset")
        self.course = base.course
        self.names: tuple[str, ...] = tuple(base.obs_names)
        self.scale = np.asarray(base.obs_scale, dtype=float)
        self.tracker = _core.PathTracker(self.course.path, self.course.speed)
        self.previews = tuple(_core.PATH_PREVIEW_DISTANCES)
        self._hint = -1

    def reset(self) -> None:
        self._hint = -1

    def __call__(self, obs: dict[str, float], prev_action: tuple[float, float]) -> np.ndarray:
        X, Y, psi = obs["X"], obs["Y"], obs["psi"]
        s, index, e_y, heading, kappa, v_ref = self.tracker.project(X, Y, self._hint)
        self._hint = index
        c, sn = math.cos(psi), math.sin(psi)
        raw = [e_y, math.remainder(psi - heading, 2.0 * math.pi), obs["vx"], obs["vy"],
               obs["r"], v_ref, obs["ax"], obs["ay"], obs["delta_rw"], prev_action[0],
               prev_action[1], kappa]
        for d in self.previews:
            px, py = self.tracker.point_at(s + d)
            raw.append(-sn * (px - X) + c * (py - Y))
        return np.clip(np.asarray(raw) / self.scale, -10.0, 10.0).astype(np.float32)


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
        return self.env.unwrapped.action_to_command(action)
