"""A lateral and a longitudinal baseline driven together as one 2-D action."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import as_batch
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.stanley import Stanley


class LateralLongitudinal:
    """Action [steer, longitudinal] from a lateral and a longitudinal controller.

    Both parts follow SB3's ``predict`` signature, so the composite does too and runs
    through the same evaluation and vector code as a trained policy.
    """

    def __init__(self, lateral: Stanley, longitudinal: PISpeed) -> None:
        self.lateral = lateral
        self.longitudinal = longitudinal

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        obs, single = as_batch(observation, len(self.lateral.layout.names))
        steer, _ = self.lateral.predict(obs, episode_start=episode_start)
        lon, _ = self.longitudinal.predict(obs, episode_start=episode_start)
        action = np.concatenate([steer, lon], axis=1)
        return (action[0] if single else action), state

    def reset(self) -> None:
        self.longitudinal.reset()


def stanley_pi(env: gym.Env | Any, *, stanley: dict[str, Any] | None = None,
               pi: dict[str, Any] | None = None) -> LateralLongitudinal:
    """The Stanley + PI speed baseline, configured from the env it will drive."""
    return LateralLongitudinal(Stanley.from_env(env, **(stanley or {})),
                               PISpeed.from_env(env, **(pi or {})))
