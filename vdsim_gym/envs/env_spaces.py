"""The spaces and buffers of an env, from its core's spec (a part of ``CoreEnv``, split
from core_env.py by job): the observation layout (names, space, scales and buffer, with
the action history's columns: ``set_action_history``), ``rows`` (the buffers the core
writes into), and the Boxes and name tuples shared between envs (``_box``, ``_shared``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import check_action_history

_BOXES: dict[tuple[float, float, int, int], gym.spaces.Box] = {}
_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}


def _shared(names: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple (and one str per name) for every env with these column names: 10,000
    envs kept ~3 KiB each of identical names otherwise."""
    return _NAMES.setdefault(names, names)


def _box(low: float, high: float, n: int, n_first: int | None = None) -> gym.spaces.Box:
    """A float32 Box of n columns in [low, high], the columns from ``n_first`` on in
    [-1, 1] (the action history's). A copy of one built per shape: gymnasium's Box
    construction checks its bounds for ~30 us, two per env (a third of building 10,000
    envs). Each env gets its own Box object (its own sampling RNG, its own seed); the
    bound arrays, which nothing writes, are shared."""
    first = n if n_first is None else n_first
    key = (low, high, n, first)
    template = _BOXES.get(key)
    if template is None:
        lo = np.full(n, low, np.float32)
        hi = np.full(n, high, np.float32)
        lo[first:], hi[first:] = -1.0, 1.0
        template = gym.spaces.Box(lo, hi, dtype=np.float32) if first < n else \
            gym.spaces.Box(low, high, (n,), np.float32)
        for array in (template.low, template.high):
            array.flags.writeable = False
        _BOXES[key] = template
    # copy.copy's shallow copy without its reduce / setstate round trip (a fifth of an
    # env's build): the template's state is complete, and it is never sampled.
    box = object.__new__(gym.spaces.Box)
    box.__dict__.update(template.__dict__)
    return box


class EnvSpaces:
    """The spaces-and-buffers part of ``CoreEnv`` (its base): the attributes below are the
    env's, set by ``CoreEnv.__init__``."""

    _core: Any
    action_space: gym.spaces.Space[np.ndarray]
    observation_space: gym.spaces.Space[np.ndarray]
    action_history: int
    _n_actions: int
    _obs: np.ndarray
    _terms: np.ndarray
    _info: np.ndarray
    _needs_reset: bool
    _reset_reason: str

    if TYPE_CHECKING:
        def _bind_core(self) -> None:
            """The step of the current core (CoreEnv's)."""

    def _init_spaces(self) -> None:
        """The names, spaces and buffers from the core's spec (what ``CoreEnv.__init__``
        sets once the core is built)."""
        core = self._core
        self.action_names: tuple[str, ...] = _shared(tuple(core.action_names))
        self.reward_term_names: tuple[str, ...] = _shared(tuple(core.term_names))
        self.info_names: tuple[str, ...] = _shared(tuple(core.info_names))
        self.summary_names: tuple[str, ...] = _shared(tuple(core.summary_names))
        self._n_actions = len(self.action_names)
        self.action_space = _box(-1.0, 1.0, self._n_actions)
        self._set_obs_layout()  # obs_names, observation_space and the obs buffer
        # Caller-owned buffers the core writes into; no allocation per step.
        self._terms = np.zeros(len(self.reward_term_names))
        self._info = np.zeros(len(self.info_names))
        self._step_log: list[tuple[float, ...]] = []

    @property
    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The row buffers the core writes an env step into: (obs float32, reward terms
        float64, info float64), sized by its spec; ``info[0]`` is the reward and the info
        columns are ``core.info_names``. What the vector env copies an env's reset from,
        and what a benchmark steps the core into; valid until the next step or reset."""
        return self._obs, self._terms, self._info

    def _set_obs_layout(self) -> None:
        """Observation names, space, scales and buffer from the core's spec: the task's
        columns in [-OBS_CLIP, OBS_CLIP] (the core's clip), then the action history's in
        [-1, 1]."""
        self.obs_names: tuple[str, ...] = _shared(tuple(self._core.obs_names))
        n = len(self.obs_names)
        n_task = n - self.action_history * self._n_actions
        clip = _core.OBS_CLIP
        self.observation_space = _box(-clip, clip, n, n_task)
        self._obs = np.zeros(n, np.float32)
        self.obs_scale = self._core.obs_scale()  # the task's, then 1 for the history

    @property
    def obs_scale(self) -> np.ndarray:
        """Physical value of each observation column = obs * scale (float64): the task's
        scales, then 1 for the action history's columns."""
        try:
            return self._obs_scale
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} has no obs_scale") from None

    @obs_scale.setter
    def obs_scale(self, value: Any) -> None:
        task = np.asarray(value, dtype=float)
        self._obs_scale_task = task
        pad = len(self.obs_names) - len(task)
        self._obs_scale = np.concatenate([task, np.ones(pad)]) if pad > 0 else task

    def set_action_history(self, k: int) -> None:
        """Appends the last ``k`` actions to the observation (0: none; what
        ``action_history=k`` and ``LatencyWrapper(action_history=k)`` set): columns
        ``action_{i}_{name}`` for i = k .. 1, oldest first, clipped to [-1, 1], zeros after
        reset; ``action_1`` is the action of the step that returned the observation.
        Changes ``obs_names`` and ``observation_space``; ``reset()`` is required before
        ``step()``. Not for an env inside a vector env (its spaces are the batch's)."""
        self.action_history = check_action_history(k)
        self._core.set_action_history(self.action_history)
        self._set_obs_layout()
        self._bind_core()
        self._needs_reset = True
        self._reset_reason = "the action history changed; call reset() before step()"


__all__ = ["EnvSpaces"]
