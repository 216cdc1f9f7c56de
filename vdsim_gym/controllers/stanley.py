"""Stanley lateral controller (Hoffmann et al., 2007) on the path-env observation."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import (
    KernelController,
    ObsLayout,
    kernel_param,
    kernel_predict,
)
from vdsim_gym.sim import baselines as kernels

# The law's parameters, held by the C++ kernel once it exists.
STANLEY_PARAMS = ("wheelbase", "cg_to_front", "max_steer", "gain", "soft_speed",
                  "yaw_damping", "accel_gain")


class Stanley(KernelController):
    """Steer = feed-forward - heading error - atan(k e_front / (v + v_soft)).

    ``e_front`` is the lateral error carried to the front axle (e_y + a sin e_psi), as in
    the original front-axle formulation. The feed-forward is the kinematic steer
    atan(L kappa_ref) of the path at the projection plus ``accel_gain`` times the path's
    lateral acceleration v^2 kappa_ref: the understeer a real car needs on top of the
    kinematic angle (the generic sedan's gradient is ~0.0039 rad per m/s^2), and, because
    the yaw response lags the steer, a lead over it. Returns the steer action in [-1, 1]
    (road-wheel angle / max_steer).

    The law runs in C++ (``sim.baselines.StanleyKernel``, csrc/vdsim/baselines.hpp) on
    one observation or a batch, bit for bit the arithmetic written here
    (tests/test_baselines_kernel.py holds the Python reference). The parameters can be
    changed between calls; the layout is fixed at construction.

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

    KERNEL = kernels.StanleyKernel
    COLUMNS = ("e_y", "e_psi", "vx", "kappa_ref", "r")
    wheelbase = kernel_param("wheelbase")
    cg_to_front = kernel_param("cg_to_front")
    max_steer = kernel_param("max_steer")
    gain = kernel_param("gain")
    soft_speed = kernel_param("soft_speed")
    yaw_damping = kernel_param("yaw_damping")
    accel_gain = kernel_param("accel_gain")

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
        super().__init__(layout, {
            "wheelbase": wheelbase, "cg_to_front": cg_to_front, "max_steer": max_steer,
            "gain": gain, "soft_speed": soft_speed, "yaw_damping": yaw_damping,
            "accel_gain": accel_gain})

    @classmethod
    def from_env(cls, env: gym.Env | Any, **kwargs: Any) -> Stanley:
        base: Any = env.unwrapped  # a VDSim env: its own attributes
        v = base.vehicle
        return cls(ObsLayout.from_env(env), wheelbase=v.wheelbase, cg_to_front=v.cg_to_front,
                   max_steer=v.max_steer, **kwargs)

    def steer(self, obs: np.ndarray) -> np.ndarray:
        """Road-wheel steer [rad] for a (N, n_obs) batch."""
        return self.kernel.steer(np.asarray(obs, dtype=float))

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        k = self._k or self.kernel
        out = k(observation)  # stateless: episode_start changes nothing
        return (kernel_predict(k, observation, None, self._n_obs) if out is None else out), state
