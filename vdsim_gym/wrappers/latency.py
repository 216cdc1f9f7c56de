"""LatencyWrapper: computation latency (mode B) on a VDSim path env, with an optional
history of the last actions in the observation for delay-aware policies.

The latency itself runs in the C++ core (``CoreEnv.configure_latency``, the same
implementation as the ``latency=``/``overrun=`` kwargs of ``gym.make``); this wrapper only
configures it and, with ``action_history=k``, appends the last k actions to the
observation.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.latency import LatencyModel


class LatencyWrapper(
    gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray], gym.utils.RecordConstructorArgs
):
    """The action chosen from the observation at t_k takes effect at its apply tick.

    ``LatencyWrapper(env, latency=LatencyModel.fixed(0.03), overrun="skip",
    action_history=0)`` configures the computation delay of the wrapped VDSim env
    (``VDSim-DLC-v0``, ``VDSim-PathFollow-v0`` or any ``CoreEnv``) exactly as
    ``gym.make(id, latency=..., overrun=...)`` does (overriding any latency given there),
    so both give bit-identical rollouts. ``info`` carries ``t_sample``, ``t_apply``,
    ``c_k``, ``overrun``, ``skipped``, ``n_overrun`` and ``n_skipped``; see
    docs/ENVS.md, "Latency".

    ``action_history=k > 0`` appends the last k actions (clipped to [-1, 1]) to the
    observation, flattened and oldest first, zeros after reset: columns
    ``action_{i}_{name}`` for i = k .. 1 and each of the env's ``action_names`` (path envs:
    ``action_{i}_steer``, ``action_{i}_longitudinal``), where ``action_1`` is the
    action of the step that returned the observation (not yet applied when the delay
    exceeds the period). ``wrapper.obs_names`` names all columns.
    """

    def __init__(
        self,
        env: gym.Env,
        latency: LatencyModel,
        overrun: str = "skip",
        action_history: int = 0,
    ) -> None:
        if not isinstance(env.unwrapped, CoreEnv):
            raise TypeError(
                "LatencyWrapper supports the VDSim envs (VDSim-DLC-v0, "
                "VDSim-PathFollow-v0, ...: vdsim_gym.envs.core_env.CoreEnv and its "
                f"subclasses), got {type(env.unwrapped).__name__}"
            )
        if isinstance(action_history, bool) or not isinstance(action_history, (int, np.integer)) \
                or action_history < 0:
            raise ValueError(
                f"action_history must be an integer >= 0 (0: no history), got {action_history!r}"
            )
        if latency is None:
            raise ValueError(
                "latency must be a LatencyModel, e.g. LatencyModel.fixed(0.01); for no "
                "latency do not wrap the env"
            )
        gym.utils.RecordConstructorArgs.__init__(
            self, latency=latency, overrun=overrun, action_history=action_history
        )
        gym.Wrapper.__init__(self, env)
        core: CoreEnv = env.unwrapped
        core.configure_latency(latency, overrun)
        self.latency, self.overrun = core.latency, core.overrun
        self.action_history = int(action_history)
        k = self.action_history
        m = len(core.action_names)
        self._history = np.zeros((k, m), np.float32)
        names = tuple(
            f"action_{i}_{part}" for i in range(k, 0, -1) for part in core.action_names
        )
        self.obs_names: tuple[str, ...] = tuple(core.obs_names) + names
        if k:
            base = env.observation_space
            if not isinstance(base, gym.spaces.Box) or base.shape is None or len(base.shape) != 1:
                raise TypeError(
                    "action_history needs a flat Box observation space to append to, got "
                    f"{base}; apply LatencyWrapper before observation-changing wrappers"
                )
            self.observation_space = gym.spaces.Box(
                np.concatenate([base.low, -np.ones(m * k, np.float32)]),
                np.concatenate([base.high, np.ones(m * k, np.float32)]),
                dtype=np.float32,
            )

    def set_next_delay(self, c: float) -> None:
        """Forwards to ``env.unwrapped.set_next_delay`` (``LatencyModel.measured()``)."""
        self.env.unwrapped.set_next_delay(c)  # type: ignore[attr-defined]

    def _augment(self, obs: np.ndarray) -> np.ndarray:
        if not self.action_history:
            return obs
        return np.concatenate([obs, self._history.ravel()])

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._history[:] = 0.0
        return self._augment(obs), info

    def step(
        self, action: np.ndarray
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self.action_history:  # after the env accepted the action
            self._history[:-1] = self._history[1:]
            self._history[-1] = np.clip(np.asarray(action, np.float64).reshape(-1), -1.0, 1.0)
        return self._augment(obs), reward, terminated, truncated, info
