"""What every VDSim wrapper checks first: that it wraps a VDSim env."""

from __future__ import annotations

from typing import Any

from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.errors import UnsupportedEnvError


def vdsim_base(env: Any, who: str) -> CoreEnv:
    """``env.unwrapped`` when it is a VDSim env (a ``CoreEnv``); else
    ``UnsupportedEnvError`` (a ``TypeError``) naming ``who`` and what it got."""
    base = getattr(env, "unwrapped", env)
    if not isinstance(base, CoreEnv):
        raise UnsupportedEnvError(
            f"{who} supports the VDSim envs (VDSim-DLC-v0, VDSim-PathFollow-v0, ...: "
            f"vdsim_gym.envs.core_env.CoreEnv and its subclasses), got {type(base).__name__}")
    return base
