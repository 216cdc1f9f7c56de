"""Stanley lateral controller (Hoffmann et al., 2007) on the path-env observation."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import ObsLayout, as_batch


class Stanley:
    """Steer = feed-forward - heading error - atan(k e_front / (v + v_soft)).

    ``e_front`` is the lateral error carried to the front axle (e_y + a sin e_psi), as in
    the original front-axle formulation. The feed-forward is the kinematic steer
    atan(L kappa_ref) of the path at the projection plus ``accel_gain`` times the path's
    lateral acceleration v^2 kappa_ref: the understeer a real car needs on top of the
    kinematic angle (the generic sedan's gradient is ~0.0039 rad per m/s^2), and, because
    the yaw response lags the steer, a lead over it. Returns the steer action in [-1, 1]
    (road-wheel angle / max_steer).

    Args:
        layout: observation columns and scales of the env it drives.
        wheelbase, cg_to_front: vehicle geometry [m].
        max_steer: road-wheel angle of action 1 [rad].
        gain: cross-track gain k [1/s].
        soft_speed: v_soft [m/s], keeps the law finite at standstill.
        yaw_damping: gain on the yaw-rate error r - v kappa_ref [s].
        accel_gain: feed-forward steer per path lateral acceleration [rad per m/s^2];
            the default 0.0099 was tuned with ``gain`` 8 on the three DLC presets under
            0-40 ms of delay (docs/CONTROLLERS.md).
    """

    def __init__(
        self,
        layout: ObsLayout,
        *,
        wheelbase: float,
        cg_to_front: float,
        max_steer: float,
        gain: float = 8.0,
        soft_speed: float = 1.0,
        yaw_damping: float = 0.0,
        accel_gain: float = 0.0099,
    ) -> None:
        self.layout = layout
        self.wheelbase = wheelbase
        self.cg_to_front = cg_to_front
        self.max_steer = max_steer
        self.gain = gain
        self.soft_speed = soft_speed
        self.yaw_damping = yaw_damping
        self.accel_gain = accel_gain

    @classmethod
    def from_env(cls, env: gym.Env | Any, **kwargs: Any) -> Stanley:
        base: Any = env.unwrapped  # a VDSim env: its own attributes
        v = base.vehicle
        return cls(ObsLayout.from_env(env), wheelbase=v.wheelbase, cg_to_front=v.cg_to_front,
                   max_steer=v.max_steer, **kwargs)

    def steer(self, obs: np.ndarray) -> np.ndarray:
        """Road-wheel steer [rad] for a (N, n_obs) batch."""
        col = self.layout.column
        e_y, e_psi, vx = col(obs, "e_y"), col(obs, "e_psi"), col(obs, "vx")
        kappa, r = col(obs, "kappa_ref"), col(obs, "r")
        e_front = e_y + self.cg_to_front * np.sin(e_psi)
        feed_forward = np.arctan(self.wheelbase * kappa) + self.accel_gain * vx * vx * kappa
        cross = np.arctan2(self.gain * e_front, np.abs(vx) + self.soft_speed)
        damping = self.yaw_damping * (r - vx * kappa)
        return feed_forward - e_psi - cross - damping

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        obs, single = as_batch(observation, len(self.layout.names))
        action = np.clip(self.steer(obs) / self.max_steer, -1.0, 1.0).astype(np.float32)[:, None]
        return (action[0] if single else action), state
