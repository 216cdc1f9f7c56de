"""A lateral and a longitudinal baseline driven together as one 2-D action."""

from __future__ import annotations

from typing import Any, Protocol

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.base import ObsLayout, as_batch, kernel_predict
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.stanley import Stanley
from vdsim_gym.sim import baselines as kernels


class LateralLaw(Protocol):
    """A steering controller: SB3's predict, one (N, 1) steer column, on ``layout``."""

    @property
    def layout(self) -> ObsLayout: ...

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]: ...


class LateralLongitudinal:
    """Action [steer, longitudinal] from a lateral and a longitudinal controller.

    Both parts follow SB3's ``predict`` signature, so the composite does too and runs
    through the same evaluation and vector code as a trained policy. When both parts have
    a C++ kernel (Stanley, PISpeed), one C++ call evaluates the two; the parts keep their
    own state either way.
    """

    def __init__(self, lateral: LateralLaw, longitudinal: PISpeed) -> None:
        self._lateral = lateral
        self._longitudinal = longitudinal
        self._k: Any = None

    @property
    def lateral(self) -> Any:
        return self._lateral

    @lateral.setter
    def lateral(self, value: LateralLaw) -> None:
        self._lateral, self._k = value, None

    @property
    def longitudinal(self) -> PISpeed:
        return self._longitudinal

    @longitudinal.setter
    def longitudinal(self, value: PISpeed) -> None:
        self._longitudinal, self._k = value, None

    def _kernel(self) -> Any:
        lat, lon = getattr(self._lateral, "kernel", None), getattr(self._longitudinal,
                                                                     "kernel", None)
        if lat is None or lon is None:
            self._k = False  # a part without a kernel: the parts' own predict
        else:
            self._k = kernels.CompositeKernel(lat, lon)
        return self._k

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        k = self._k
        if k is None:
            k = self._kernel()
        if k is not False:
            out = k(observation, episode_start)
            if out is None:
                out = kernel_predict(k, observation, episode_start, k.n_obs)
            return out, state
        obs, single = as_batch(observation, len(self._lateral.layout.names))
        steer, _ = self._lateral.predict(obs, episode_start=episode_start)
        lon, _ = self._longitudinal.predict(obs, episode_start=episode_start)
        action = np.concatenate([steer, lon], axis=1)
        return (action[0] if single else action), state

    def reset(self) -> None:
        self._longitudinal.reset()

    @property
    def follows_env(self) -> bool:
        """Whether the lateral law compensates the env's own delay (set per row with
        ``set_delays``)."""
        return bool(getattr(self._lateral, "follows_env", False))

    def set_delays(self, delays: Any) -> None:
        self._lateral.set_delays(delays)  # type: ignore[attr-defined]

    def __getstate__(self) -> dict[str, Any]:  # the parts carry their state; rebuilt lazily
        return {**self.__dict__, "_k": None}


def stanley_pi(env: gym.Env | Any, *, stanley: dict[str, Any] | None = None,
               pi: dict[str, Any] | None = None) -> LateralLongitudinal:
    """The Stanley + PI speed baseline, configured from the env it will drive."""
    return LateralLongitudinal(Stanley.from_env(env, **(stanley or {})),
                               PISpeed.from_env(env, **(pi or {})))
