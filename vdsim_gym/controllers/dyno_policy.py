"""The classical baseline of VDSim-Dyno-v0 with SB3's ``predict``: hand the robot driver the
cycle's own reference, as a dyno operator's automation does.

Speed mode: v_ref = the cycle's speed ``lookahead_s`` ahead (linear between the preview
columns); accel mode: a_ref = (v_cycle(t + T) - v) / T with T = ``horizon_s`` (the rig's
inferred acceleration). Stateless; a batch is evaluated in C++
(``sim.baselines.CycleFollowerKernel``, csrc/vdsim/baselines.hpp), bit for bit np.interp
and the arithmetic written here.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import kernel_predict
from vdsim_gym.envs.dyno import CYCLE_PREVIEW_S
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim import baselines as kernels


class CycleFollower:
    def __init__(self, env: gym.Env | Any, *, lookahead_s: float = 0.0,
                 horizon_s: float = 1.0) -> None:
        base: Any = getattr(env, "unwrapped", env)  # VDSim-Dyno-v0: its own attributes
        if not tuple(getattr(base, "obs_names", ()))[:1] == ("cycle_0s",):
            raise ConfigError("CycleFollower needs VDSim-Dyno-v0 (its cycle preview columns)")
        self.mode = base.longitudinal
        if self.mode not in ("speed", "accel"):
            raise ConfigError("CycleFollower commands a robot driver: build the env with "
                              "driver='speed' (default) or 'accel', not driver=None")
        preview = list(CYCLE_PREVIEW_S)
        for name, value in (("lookahead_s", lookahead_s), ("horizon_s", horizon_s)):
            if not 0 <= value <= preview[-1] or (name == "horizon_s" and value <= 0):
                raise ConfigError(f"{name} must be in (0, {preview[-1]:g}] s, got {value!r}")
        self.preview = np.asarray(preview)
        self.lookahead, self.horizon = float(lookahead_s), float(horizon_s)
        self.names = base.obs_names
        self.scale = base.obs_scale
        core = base.core
        # The driver's full-scale references: speed [m/s] in speed mode, acceleration and
        # deceleration [m/s^2] in accel mode.
        self.v_max: float | None = core.reference(1.0) if self.mode == "speed" else None
        self.a_max: float | None = core.reference(1.0) if self.mode == "accel" else None
        self.d_max: float | None = -core.reference(-1.0) if self.mode == "accel" else None
        self._n_obs = len(self.names)
        self._k = self._kernel()

    def _kernel(self) -> Any:
        n = len(self.preview)
        speed = (self.names.index("speed"), float(self.scale[self.names.index("speed")])) \
            if self.mode == "accel" else (0, 1.0)
        return kernels.CycleFollowerKernel(
            [float(t) for t in self.preview], [float(s) for s in self.scale[:n]],
            self._n_obs, speed_mode=self.mode == "speed", lookahead=self.lookahead,
            horizon=self.horizon, speed=speed, v_max=self.v_max or 0.0,
            a_max=self.a_max or 0.0, d_max=self.d_max or 0.0)

    # Stateless: pickles and copies build their own kernel (a C++ object).
    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_k": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._k = self._kernel()

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        out = self._k(observation)  # stateless: episode_start changes nothing
        if out is None:
            out = kernel_predict(self._k, observation, None, self._n_obs)
        return out, state


def cycle_follower(env: gym.Env | Any, **kwargs: Any) -> CycleFollower:
    """The baseline on ``env`` (``lookahead_s``, ``horizon_s``)."""
    return CycleFollower(env, **kwargs)


__all__ = ["CycleFollower", "cycle_follower"]
