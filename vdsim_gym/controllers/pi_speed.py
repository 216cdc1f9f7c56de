"""PI speed controller with conditional-integration anti-windup, one state per env."""

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


class PISpeed(KernelController):
    """Longitudinal action u = clip(kp e + ki I, -1, 1), e = v_ref - vx [m/s].

    The integral grows only while the output is unsaturated (conditional integration), so
    a long saturation does not wind it up. One integrator per batch row; rows flagged in
    ``episode_start`` are cleared before the step, as SB3 does for recurrent state, and a
    batch of another size starts every row afresh.

    Runs in C++ (``sim.baselines.PISpeedKernel``, csrc/vdsim/baselines.hpp), bit for bit
    the arithmetic of the Python reference in tests/test_baselines_kernel.py.

    Args:
        layout: observation columns of the env it drives.
        dt: control period [s].
        kp: proportional gain [action per m/s]; ki: integral gain [action per m].
    """

    KERNEL = kernels.PISpeedKernel
    COLUMNS = ("v_ref", "vx")
    dt = kernel_param("dt")
    kp = kernel_param("kp")
    ki = kernel_param("ki")

    def __init__(self, layout: ObsLayout, *, dt: float, kp: float = 0.5, ki: float = 0.1) -> None:
        super().__init__(layout, {"dt": dt, "kp": kp, "ki": ki})

    @property
    def _integral(self) -> np.ndarray:
        """Each row's integral [m] (a copy)."""
        return np.zeros(0) if self._k is None else self._k.integral

    @classmethod
    def from_env(cls, env: gym.Env | Any, **kwargs: Any) -> PISpeed:
        base: Any = env.unwrapped  # a VDSim env: its own attributes
        return cls(ObsLayout.from_env(env), dt=base.control_period, **kwargs)

    def reset(self) -> None:
        if self._k is not None:
            self._k.clear()

    def command(self, obs: np.ndarray, episode_start: Any = None) -> np.ndarray:
        """Longitudinal action in [-1, 1] (float32) for a (N, n_obs) batch; advances the
        integrators."""
        return kernel_predict(self.kernel, obs, episode_start, self._n_obs)[:, 0]

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        k = self._k or self.kernel
        out = k(observation, episode_start)
        if out is None:
            out = kernel_predict(k, observation, episode_start, self._n_obs)
        return out, state
