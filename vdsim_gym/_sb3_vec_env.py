"""stable-baselines3's VecEnv protocol directly on the C++ vector session (implementation
of ``vdsim_gym.sb3_vec_env``; imports SB3 and torch, so it loads only when used).

``make_sb3_vec_env("VDSim-DLC-v0", 16)`` replaces ``DummyVecEnv([lambda: gym.make(...)]
* 16)``: the batch runs in one GIL-released call (``VDSimVectorEnv`` in SAME_STEP
autoreset mode) instead of 16 Python env steps. Semantics follow SB3's DummyVecEnv:
``infos[i]["terminal_observation"]`` on episode end (the returned observation is already
the reset one), ``infos[i]["TimeLimit.truncated"] = truncated and not terminated``,
``reset_infos``, ``seed()`` applied at the next ``reset()``. See docs/VECTOR.md.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from vdsim_gym.envs.vector import VDSimVectorEnv
from vdsim_gym.errors import ConcurrentUseError, ConfigError, UsageError

# Methods that would desynchronize a row from the batch (its core is stepped by the
# vector session, its episode state lives in the vector env).
_BATCH_OWNED = frozenset({"step", "reset", "render", "close", "configure_latency",
                          "set_next_delay"})


class VDSimSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a ``VDSimVectorEnv`` (autoreset in the same step)."""

    def __init__(self, venv: VDSimVectorEnv) -> None:
        if venv.autoreset_mode != gym.vector.AutoresetMode.SAME_STEP:
            raise ConfigError("VDSimSB3VecEnv needs a VDSimVectorEnv with autoreset_mode="
                              "'same_step' (SB3 resets in the step that ends an episode)")
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space,
                         venv.single_action_space)
        self._actions: np.ndarray | None = None
        # One caller at a time, as the env and the vector env: held from step_async to
        # the end of step_wait (a second thread's step_async would replace the actions
        # this step applies) and during reset(); _owner: the thread holding it.
        self._in_use = threading.Lock()
        self._owner: int | None = None
        # What a single env's reset() info has: its task's per-step info keys.
        self._reset_keys = tuple(k for k, _ in type(venv.envs[0]).INFO_KEYS)

    # ---------------------------------------------------------------- VecEnv protocol

    def _acquire(self) -> None:
        """Takes the guard for this thread; a ConcurrentUseError when another holds it."""
        if self._owner == threading.get_ident():
            return  # step_async again before step_wait (its actions replace the last)
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of("this VDSimSB3VecEnv")
        self._owner = threading.get_ident()

    def _release(self) -> None:
        self._actions, self._owner = None, None
        self._in_use.release()

    def reset(self) -> VecEnvObs:
        self._acquire()
        try:
            seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
            options = self._options[0] if self._options and self._options[0] else None
            obs, infos = self.venv.reset(seed=seeds, options=options)
            self.reset_infos = _rows(infos, self.num_envs)
            self._reset_seeds()
            self._reset_options()
            return obs
        finally:
            self._release()

    def step_async(self, actions: np.ndarray) -> None:
        """Holds the env for this thread until ``step_wait`` returns: another thread's
        step or reset meanwhile raises ConcurrentUseError (its actions would otherwise
        replace these, and rows would come back with the other thread's action)."""
        self._acquire()
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        if self._owner != threading.get_ident():
            if self._owner is not None:
                raise ConcurrentUseError.of("this VDSimSB3VecEnv")
            raise UsageError("step_wait() without step_async(actions)")
        try:
            return self._step(self._actions)
        finally:
            self._release()

    def _step(self, actions: Any) -> VecEnvStepReturn:
        venv = self.venv
        if not venv._in_use.acquire(False):  # the vector env used directly meanwhile
            raise ConcurrentUseError.of("this VDSimSB3VecEnv's vector env")
        try:
            fast = venv._step_rows(actions)
        finally:
            venv._in_use.release()
        if fast is not None:  # the rows built by the C++ step; ended rows already reset
            obs, rewards, dones, out, reset_infos = fast
            for i, info in reset_infos.items():
                self.reset_infos[i] = info
            return obs, rewards, dones, out
        obs, rewards, terminated, truncated, infos = venv.step(actions)
        dones = terminated | truncated
        out = _rows(infos, self.num_envs)
        for row, limit in zip(out, (truncated & ~terminated).tolist(), strict=True):
            row["TimeLimit.truncated"] = limit
        if dones.any():
            final = _rows(infos["final_info"], self.num_envs)
            for i in np.flatnonzero(dones).tolist():
                self.reset_infos[i] = {k: out[i][k] for k in
                                       (*self._reset_keys, *venv._reset_extra(i))}
                out[i] = {**final[i], "TimeLimit.truncated": out[i]["TimeLimit.truncated"],
                          "terminal_observation": infos["final_obs"][i]}
        return obs, rewards.astype(np.float32), dones, out

    def close(self) -> None:
        self.venv.close()

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Env i gets ``seed + i`` at the next ``reset()`` (SB3's convention)."""
        return super().seed(seed)

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """Configuration of the single envs (e.g. ``obs_names``, ``control_period``,
        ``latency``, ``render_mode``). ``render_mode`` is the vector env's (None: it
        renders no row), so SB3's constructor, which asks for it, builds no row env."""
        rows = self._get_indices(indices)
        if attr_name == "render_mode":
            return [self.venv.render_mode for _ in rows]
        return [getattr(self.venv.envs[i], attr_name) for i in rows]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise NotImplementedError(
            f"set_attr({attr_name!r}): a VDSim vector env's parameters are fixed when it is "
            "built (setting them on the rows would not reach the C++ session); build a new "
            "one with make_sb3_vec_env(env_id, n, **kwargs) or per_env_kwargs=[...]"
        )

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None,
                   **method_kwargs: Any) -> list[Any]:
        """Calls a method of the single envs; those that step, reset, render or
        reconfigure a row are refused (the batch owns them)."""
        if method_name in _BATCH_OWNED:
            raise NotImplementedError(
                f"env_method({method_name!r}) would desynchronize a row from the batch; "
                "use the VecEnv's own step/reset, or build a new vec env to reconfigure"
            )
        return [getattr(self.venv.envs[i], method_name)(*method_args, **method_kwargs)
                for i in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper],
                       indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]  # rows are bare envs

    def get_images(self) -> Sequence[np.ndarray | None]:
        raise NotImplementedError(
            "the VDSim vector env does not render; render a single "
            "gym.make(env_id, render_mode='rgb_array') (e.g. with the trained policy)"
        )


_BATCH_ONLY = frozenset({"final_obs", "final_info"})


def _rows(infos: dict[str, Any], n: int, _all: dict[int, bool] | None = None
          ) -> list[dict[str, Any]]:
    """Gymnasium's batched infos (arrays with ``_key`` masks, nested for dicts such as
    reward_terms) as one dict per env with the keys that env's row has, as DummyVecEnv
    over single envs gives them (Python scalars; the outcome string on episode end)."""
    full_keys, full_cols, partial = [], [], []
    seen = {} if _all is None else _all  # mask id -> all True (the env shares mask arrays)
    for key, value in infos.items():
        if key.startswith("_") or key in _BATCH_ONLY:
            continue
        mask = infos.get(f"_{key}")
        col = _rows(value, n, seen) if isinstance(value, dict) else (
            value.tolist() if isinstance(value, np.ndarray) else list(value))
        if mask is not None and id(mask) not in seen:
            seen[id(mask)] = bool(mask.all())
        if mask is None or seen[id(mask)]:
            full_keys.append(key)
            full_cols.append(col)
        else:
            partial.append((key, col, mask.tolist()))
    # The common case (every row has every key) in one zip: this runs every step.
    rows = [dict(zip(full_keys, vals, strict=True)) for vals in zip(*full_cols, strict=True)] \
        if full_cols else [{} for _ in range(n)]
    for key, col, mask in partial:
        for i in range(n):
            if mask[i]:
                rows[i][key] = col[i]
    return rows
