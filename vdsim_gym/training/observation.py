"""What a training run appends to the env's observation (docs/TRAINING.md), as SB3
``VecEnvWrapper``s over the run's VecEnv (imports SB3: loaded by ``train`` only).

- ``FeatureVecEnv``: the controller's features (``vdsim_gym.controllers.features``), the
  same columns ``load_policy`` computes from the plain observation.
- ``PrivilegedVecEnv``: the critic's privileged columns (``PrivilegedColumns``), last, so
  the actor's columns are the ones before them (``vdsim_gym.policies.asymmetric``).

Both follow SB3's reset-in-the-ending-step rule: an ended row's
``infos[i]["terminal_observation"]`` gets the columns of the episode that ended, the
returned observation those of the new one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn

from vdsim_gym.errors import ConfigError


def _extended(space: gym.Space, k: int) -> gym.spaces.Box:
    """``space`` (a flat Box) with ``k`` unbounded float32 columns appended."""
    if not isinstance(space, gym.spaces.Box) or space.shape is None or len(space.shape) != 1:
        raise ConfigError(f"observation columns can be appended to a flat Box only, got "
                          f"{space}")
    low = np.concatenate([space.low, np.full(k, -np.inf, np.float32)]).astype(np.float32)
    high = np.concatenate([space.high, np.full(k, np.inf, np.float32)]).astype(np.float32)
    return gym.spaces.Box(low, high, dtype=np.float32)


class FeatureVecEnv(VecEnvWrapper):
    """Appends ``features(obs)`` (an ``ObservationFeatures``) to every observation."""

    def __init__(self, venv: VecEnv, features: Any) -> None:
        self.features = features
        super().__init__(venv, observation_space=_extended(venv.observation_space,
                                                           len(features)))

    def reset(self) -> VecEnvObs:
        return self.features.append(np.asarray(self.venv.reset()))

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        for i in np.flatnonzero(dones).tolist():
            last = np.asarray(infos[i]["terminal_observation"])[None]
            infos[i]["terminal_observation"] = self.features.append(last)[0]
        return self.features.append(np.asarray(obs)), rewards, dones, infos


class PrivilegedColumns:
    """The critic's columns of a run: this episode's draws of each randomized name, each
    mapped to [-1, 1] over its range (``priv_<name>``: friction, mass, latency_mean,
    loss, ...), then what the step's command really met: its computation delay over the
    control period (``priv_c_k``), whether the network lost it (``priv_lost``) and the
    observation's age over the period (``priv_obs_age``; a sensor delay).

    Args:
        randomize: the run's ``Randomization`` (or None: no draw columns).
        control_period: the env's control period [s].
    """

    TIMING = ("c_k", "lost", "obs_age")

    def __init__(self, randomize: Any, control_period: float) -> None:
        self.ranges = tuple(randomize.ranges) if randomize is not None else ()
        self.period = float(control_period)
        self.names = tuple(f"priv_{k}" for k, _, _ in self.ranges) + \
            tuple(f"priv_{k}" for k in self.TIMING)

    def __len__(self) -> int:
        return len(self.names)

    def draws(self, values: dict[str, float] | None) -> np.ndarray:
        """The draw columns of an episode (``info["randomization"]``)."""
        out = np.zeros(len(self.ranges), np.float32)
        for j, (k, lo, hi) in enumerate(self.ranges):
            v = float((values or {}).get(k, 0.5 * (lo + hi)))
            out[j] = 0.0 if hi == lo else 2.0 * (v - lo) / (hi - lo) - 1.0
        return out

    def timing(self, info: dict[str, Any] | None) -> np.ndarray:
        """The step's timing columns (0 after a reset and without the keys)."""
        info = info or {}
        return np.array([float(info.get("c_k", 0.0)) / self.period,
                         float(bool(info.get("lost", False))),
                         float(info.get("obs_age", 0.0)) / self.period], np.float32)


class PrivilegedVecEnv(VecEnvWrapper):
    """Appends ``PrivilegedColumns`` to every observation; the draws are read from the
    innermost VecEnv's ``reset_infos`` (``info["randomization"]``: the VDSim envs' reset
    info), the timing from each step's info."""

    def __init__(self, venv: VecEnv, columns: PrivilegedColumns) -> None:
        self.columns = columns
        super().__init__(venv, observation_space=_extended(venv.observation_space,
                                                           len(columns)))
        self._draws = np.zeros((self.num_envs, len(columns.ranges)), np.float32)

    def _read_draws(self, rows: Sequence[int]) -> None:
        infos = self.venv.unwrapped.reset_infos
        for i in rows:
            self._draws[i] = self.columns.draws(infos[i].get("randomization"))

    def _with(self, obs: np.ndarray, timing: np.ndarray) -> np.ndarray:
        return np.concatenate([np.asarray(obs, np.float32), self._draws, timing], axis=1)

    def reset(self) -> VecEnvObs:
        obs = np.asarray(self.venv.reset())
        self._read_draws(range(self.num_envs))
        return self._with(obs, np.zeros((self.num_envs, len(self.columns.TIMING)),
                                        np.float32))

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        timing = np.stack([self.columns.timing(info) for info in infos])
        ended = np.flatnonzero(dones).tolist()
        for i in ended:  # the episode that ended: its own draws and last step's timing
            last = np.asarray(infos[i]["terminal_observation"], np.float32)
            infos[i]["terminal_observation"] = np.concatenate([last, self._draws[i],
                                                               timing[i]])
            timing[i] = 0.0  # the new episode starts from its reset
        self._read_draws(ended)
        return self._with(np.asarray(obs), timing), rewards, dones, infos


__all__ = ["FeatureVecEnv", "PrivilegedColumns", "PrivilegedVecEnv"]
