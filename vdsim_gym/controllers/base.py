"""Shared pieces of the classical baselines: SB3's predict signature over a batch.

A baseline reads named observation columns (``env.unwrapped.obs_names``) and undoes
their normalization (``env.unwrapped.obs_scale``), so it works on single observations
and on batches from a vector env alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from vdsim_gym.errors import ConfigError

PredictResult = tuple[np.ndarray, Any]


@runtime_checkable
class PolicyPredictor(Protocol):
    """What every evaluation, sweep and trainer drives: Stable-Baselines3's ``predict``.
    An observation (one row, or a batch of rows) in, ``(actions, state)`` out; the
    baselines here, a loaded SB3 model, ``load_policy``'s policies and any user object
    with this method qualify."""

    def predict(self, observation: Any, state: Any = None, episode_start: Any = None,
                deterministic: bool = False) -> PredictResult: ...


@dataclass(frozen=True)
class ObsLayout:
    """Where each named column is and how to turn it back into physical units."""

    names: tuple[str, ...]
    scale: np.ndarray

    @classmethod
    def from_env(cls, env: gym.Env | Any) -> ObsLayout:
        base: Any = getattr(env, "unwrapped", env)  # a VDSim env: its own attributes
        return cls(tuple(base.obs_names), np.asarray(base.obs_scale, dtype=float))

    def index(self, name: str) -> int:
        """Where column ``name`` is; a KeyError naming the columns there are."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(
                f"observation has no column {name!r}; it has {self.names}. "
                "Build the controller from the env it will drive (from_env(env))."
            ) from None

    def columns(self, *names: str) -> list[tuple[int, float]]:
        """(index, scale) of each named column, as the C++ kernels take them."""
        return [(i, float(self.scale[i])) for i in map(self.index, names)]

    def column(self, obs: np.ndarray, name: str) -> np.ndarray:
        """Physical values of column ``name`` for a (N, n_obs) batch, shape (N,)."""
        i = self.index(name)
        return obs[:, i] * self.scale[i]


def as_batch(observation: np.ndarray, n_obs: int) -> tuple[np.ndarray, bool]:
    """(N, n_obs) float64 view of one observation or a batch, and whether it was single."""
    obs = np.asarray(observation, dtype=float)
    single = obs.ndim == 1
    obs = obs.reshape(1, -1) if single else obs
    if obs.ndim != 2 or obs.shape[1] != n_obs:
        raise ConfigError(
            f"observation must have shape ({n_obs},) or (N, {n_obs}), got {np.shape(observation)}"
        )
    return obs, single


class KernelController:
    """A baseline whose law is a C++ kernel over named columns: ``KERNEL`` (the class in
    ``vdsim_gym.sim.baselines``) built on first use from ``COLUMNS`` of the layout and the
    parameters (a missing column is a KeyError then, naming the columns there are)."""

    KERNEL: Any = None
    COLUMNS: tuple[str, ...] = ()

    def __init__(self, layout: ObsLayout, params: dict[str, Any]) -> None:
        self._layout = layout
        self._n_obs = len(layout.names)
        self._k: Any = None
        self._params = params

    @property
    def layout(self) -> ObsLayout:
        return self._layout

    @property
    def kernel(self) -> Any:
        """The C++ kernel (with the rows' state, if the law has any)."""
        if self._k is None:
            self._k = type(self).KERNEL(self._layout.columns(*self.COLUMNS), self._n_obs,
                                        **{k: float(v) for k, v in self._params.items()})
        return self._k

    # Pickles and copies (deepcopy, copy.copy) carry the rows' state as numbers and build
    # their own kernel from it: a kernel is a C++ object.
    def __getstate__(self) -> dict[str, Any]:
        return kernel_state(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        set_kernel_state(self, state, lambda obj: obj.kernel)


def kernel_state(d: dict[str, Any]) -> dict[str, Any]:
    """An object's __dict__ for pickling with its C++ kernel ``_k`` as its rows' state."""
    state = dict(d)
    k = state.get("_k")
    state["_k"] = None
    state["_kernel_rows"] = None if k is None or k is False else k.save_rows()
    return state


def set_kernel_state(obj: Any, state: dict[str, Any], build: Any) -> None:
    """The inverse of kernel_state: ``build(obj)`` makes the kernel, which takes the rows'
    state back."""
    state = dict(state)
    rows = state.pop("_kernel_rows", None)
    obj.__dict__.update(state)
    if rows is not None:
        build(obj).load_rows(*rows)


def kernel_param(name: str) -> Any:
    """A controller parameter that its C++ kernel holds once built: reading gives the
    value set, setting it also sets the kernel's (the next call uses it)."""

    def get(self: Any) -> Any:
        return self._params[name]

    def set_(self: Any, value: Any) -> None:
        self._params[name] = value
        if self._k is not None:
            setattr(self._k, name, float(value))

    return property(get, set_, doc=f"The law's {name} (see the class docstring).")


def kernel_predict(kernel: Any, observation: Any, episode_start: Any, n_obs: int
                   ) -> np.ndarray:
    """A C++ baseline kernel's actions (``sim.baselines.BaselineKernel``): one call for a float
    ndarray observation and None or a bool ndarray ``episode_start``; anything else is
    converted first (``as_batch``, ``episode_mask``: their errors name the cause). A row the
    controller refuses raises a ConfigError, and the call keeps none of its state."""
    try:
        out = kernel(observation, episode_start)
        if out is None:
            obs, single = as_batch(observation, n_obs)
            mask = None if episode_start is None else episode_mask(episode_start, len(obs))
            out = kernel(obs[0] if single else obs, mask)
    except ValueError as e:
        if isinstance(e, ConfigError):
            raise
        raise ConfigError(str(e)) from None
    return out


def episode_mask(episode_start: Any, n: int) -> np.ndarray:
    if episode_start is None:
        return np.zeros(n, dtype=bool)
    mask = np.asarray(episode_start, dtype=bool).reshape(-1)
    if mask.size == 1 and n > 1:
        mask = np.full(n, bool(mask[0]))
    if mask.shape != (n,):
        raise ConfigError(
            f"episode_start must have {n} entries, got shape {np.shape(episode_start)}"
        )
    return mask
