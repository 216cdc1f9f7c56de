"""PI speed controller with conditional-integration anti-windup, one state per env."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import ObsLayout, as_batch, episode_mask


class PISpeed:
    """Longitudinal action u = clip(kp e + ki I, -1, 1), e = v_ref - vx [m/s].

    The integral grows only while the output is unsaturated (conditional integration), so
    a long saturation does not wind it up. One integrator per batch row; rows flagged in
    ``episode_start`` are cleared before the step, as SB3 does for recurrent state.

    Args:
        layout: observation columns of the env it drives.
        dt: control period [s].
        kp: proportional gain [action per m/s]; ki: integral gain [action per m].
    """

    def __init__(self, layout: ObsLayout, *, dt: float, kp: float = 0.5, ki: float = 0.1) -> None:
        self.layout = layout
        self.dt = dt
        self.kp = kp
        self.ki = ki
        self._integral = np.zeros(0)

    @classmethod
    def from_env(cls, env: gym.Env | Any, **kwargs: Any) -> PISpeed:
        base: Any = env.unwrapped  # a VDSim env: its own attributes
        return cls(ObsLayout.from_env(env), dt=base.control_period, **kwargs)

    def reset(self) -> None:
        self._integral = np.zeros(0)

    def command(self, obs: np.ndarray, episode_start: Any = None) -> np.ndarray:
        """Longitudinal action in [-1, 1] for a (N, n_obs) batch; advances the integrators."""
        n = obs.shape[0]
        if self._integral.shape != (n,):
            self._integral = np.zeros(n)
        self._integral[episode_mask(episode_start, n)] = 0.0
        err = self.layout.column(obs, "v_ref") - self.layout.column(obs, "vx")
        trial = self._integral + err * self.dt
        raw = self.kp * err + self.ki * trial
        unsaturated = np.abs(raw) < 1.0
        self._integral = np.where(unsaturated, trial, self._integral)
        return np.clip(self.kp * err + self.ki * self._integral, -1.0, 1.0)

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        obs, single = as_batch(observation, len(self.layout.names))
        action = self.command(obs, episode_start).astype(np.float32)[:, None]
        return (action[0] if single else action), state
