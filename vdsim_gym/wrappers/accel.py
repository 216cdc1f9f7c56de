"""AccelCommandWrapper: the longitudinal action becomes a target acceleration."""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from vdsim_gym.errors import ConfigError
from vdsim_gym.wrappers._common import vdsim_base


class AccelCommandWrapper(
    gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray], gym.utils.RecordConstructorArgs
):
    """``AccelCommandWrapper(env)``: the wrapped VDSim env's longitudinal action (force or
    pedal) becomes a target acceleration: a in [-1, 1] means a * max_acceleration (a >= 0)
    or a * max_deceleration [m/s^2], turned into a pedal every integration step by the core's
    cascade (docs/PHYSICS.md, "Acceleration command"). Exactly what
    ``gym.make(id, longitudinal="accel")`` builds: both give bit-identical rollouts. The
    env's core is rebuilt on wrapping (``CoreEnv.set_longitudinal``), so wrap before the
    first ``reset()``; ``unwrapped.longitudinal`` is "accel" afterwards.
    """

    def __init__(self, env: gym.Env) -> None:
        base = vdsim_base(env, "AccelCommandWrapper")
        if base.longitudinal == "accel":
            raise ConfigError("the env's longitudinal action is already an acceleration "
                             "target (longitudinal='accel'); do not wrap it again")
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        base.set_longitudinal("accel")


__all__ = ["AccelCommandWrapper"]
