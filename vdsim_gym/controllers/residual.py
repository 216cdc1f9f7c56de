"""The residual rule (docs/TRAINING.md, "Residual learning"): the env's action is
``clip(base + scale * residual, -1, 1)`` and the agent's observation is the env's with the
base command appended. ``ResidualCore`` applies it to a batch; the wrappers and the
trained residual policy (``vdsim_gym.residual``, ``vdsim_gym.policies``) share it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_actions
from vdsim_gym.errors import ConfigError

DEFAULT_SCALE = 0.1


def check_scale(scale: Any, m: int) -> np.ndarray:
    """``scale`` as ``m`` float64 values in [0, 2], not all 0: one number for every action
    or one each (0: that action is the base's alone)."""
    items = np.asarray(scale, dtype=object).reshape(-1)
    if not all(isinstance(v, (int, float, np.integer, np.floating))
               and not isinstance(v, (bool, np.bool_)) for v in items.tolist()):
        raise ConfigError(f"scale must be a number or {m} numbers (the residual's reach in "
                          f"action units, e.g. 0.1 or [0.1, 0.0]), got {scale!r}")
    try:
        s = np.array(items.tolist(), dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ConfigError(f"scale must be a number or {m} numbers, got {scale!r}") from None
    if s.size == 1:
        s = np.full(m, s[0])
    if s.shape != (m,) or not all(math.isfinite(v) and 0.0 <= v <= 2.0 for v in s.tolist()) \
            or not s.any():
        raise ConfigError(f"scale must be a number or {m} numbers in [0, 2], not all 0 (the "
                          f"residual's reach in action units), got {scale!r}")
    return s


class ResidualCore:
    """The residual rule for a batch: base commands, the combined action, the observation
    with the base command appended. ``names``: the env's action names."""

    def __init__(self, base: Any, scale: Any, names: Sequence[str]) -> None:
        self.base = base
        self.names = tuple(names)
        self.m = len(self.names)
        self.scale = check_scale(scale, self.m)
        self._delays: np.ndarray | None = None

    def follow_delays(self, envs: Sequence[Any], rows: Any = None) -> None:
        """A base that compensates its env's delay (``stanley_dc`` without ``delay=``)
        gets each row's loop delay of the episode now running (a latency randomization
        draws one per episode): all rows, or ``rows`` after those reset."""
        if not getattr(self.base, "follows_env", False):
            return
        from vdsim_gym.controllers.prediction import loop_delay

        if self._delays is None or len(self._delays) != len(envs):
            self._delays, rows = np.zeros(len(envs)), None
        for i in range(len(envs)) if rows is None else rows:
            self._delays[i] = loop_delay(envs[i])
        self.base.set_delays(self._delays.copy())

    def observation_space(self, space: gym.spaces.Box) -> gym.spaces.Box:
        low = np.concatenate([space.low, -np.ones(self.m, space.dtype)]).astype(space.dtype)
        high = np.concatenate([space.high, np.ones(self.m, space.dtype)]).astype(space.dtype)
        return gym.spaces.Box(low, high, dtype=space.dtype)

    def base_actions(self, obs: np.ndarray, episode_start: np.ndarray) -> np.ndarray:
        """(N, m) float32 base commands for an (N, n_obs) batch."""
        a, _ = self.base.predict(obs, episode_start=episode_start, deterministic=True)
        a = np.asarray(a, dtype=np.float32)
        if a.shape != (len(obs), self.m):
            raise ConfigError(f"the base controller returned shape {a.shape} for a batch of "
                              f"{len(obs)}; it must drive this env ({self.m} actions)")
        return np.clip(a, -1.0, 1.0)

    def combine(self, base: np.ndarray, residual: Any) -> np.ndarray:
        """The env's action batch: clip(base + scale * residual, -1, 1), float32; the
        residual is checked as an action batch (finite, within [-1, 1])."""
        r = check_actions(residual, len(base), self.names)
        out = base + (self.scale * r).astype(np.float32)
        return np.clip(out, -1.0, 1.0).astype(np.float32)

    def peek(self, obs: np.ndarray) -> np.ndarray:
        """Base commands for ``obs`` without advancing the base's state (a copy of it is
        asked): for the last observation of an ended episode."""
        import copy

        return ResidualCore(copy.deepcopy(self.base), self.scale, self.names).base_actions(
            obs, np.zeros(len(obs), bool))

    @staticmethod
    def augment(obs: np.ndarray, base: np.ndarray) -> np.ndarray:
        return np.concatenate([obs, base.astype(obs.dtype)], axis=-1)
