"""LatencyWrapper: computation latency (mode B) on a VDSim path env, with an optional
history of the last actions in the observation for delay-aware policies.

The latency itself runs in the C++ core (``CoreEnv.configure_latency``, the same
implementation as the ``latency=``/``overrun=`` kwargs of ``gym.make``), and so does the
action history (``CoreEnv.set_action_history``, the ``action_history=`` kwarg); this
wrapper only configures them.
"""

from __future__ import annotations

from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_action_history
from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.errors import ConfigError, UnsupportedEnvError
from vdsim_gym.wrappers._common import vdsim_base


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
    exceeds the period). ``wrapper.obs_names`` names all columns. It is the env's own
    ``action_history=k`` (``env.unwrapped.set_action_history(k)``), so the wrapper goes
    directly on the env, inside any wrapper that changes observations.
    """

    def __init__(
        self,
        env: gym.Env,
        latency: LatencyModel,
        overrun: str = "skip",
        action_history: int = 0,
    ) -> None:
        core: CoreEnv = vdsim_base(env, "LatencyWrapper")
        action_history = check_action_history(action_history)
        if latency is None:
            raise ConfigError(
                "latency must be a LatencyModel, e.g. LatencyModel.fixed(0.01); for no "
                "latency do not wrap the env"
            )
        gym.utils.RecordConstructorArgs.__init__(
            self, latency=latency, overrun=overrun, action_history=action_history
        )
        gym.Wrapper.__init__(self, env)
        if action_history:
            if core.action_history:
                raise ConfigError(
                    f"the env already appends an action history (action_history="
                    f"{core.action_history}); give it once, to gym.make or to LatencyWrapper")
            _check_transparent(env)
        core.configure_latency(latency, overrun)
        if action_history:
            core.set_action_history(action_history)
        self.latency, self.overrun = core.latency, core.overrun
        self.action_history = action_history
        self.obs_names: tuple[str, ...] = core.obs_names

    def set_next_delay(self, c: float) -> None:
        """Forwards to ``env.unwrapped.set_next_delay`` (``LatencyModel.measured()``)."""
        self.env.unwrapped.set_next_delay(c)  # type: ignore[attr-defined]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        return self.env.reset(seed=seed, options=options)

    def step(
        self, action: np.ndarray
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        return self.env.step(action)


def _check_transparent(env: gym.Env) -> None:
    """The action history is appended by the env itself: every wrapper between this one
    and the env must pass observations through unchanged (gym.make's checker and order
    enforcing, TimeLimit do)."""
    w = env
    while isinstance(w, gym.Wrapper):
        if isinstance(w, gym.ObservationWrapper) or w._observation_space is not None:
            raise UnsupportedEnvError(
                f"action_history: {type(w).__name__} changes the observations between "
                "LatencyWrapper and the env, and the history is appended by the env itself; "
                "apply LatencyWrapper directly on the env (before observation-changing "
                "wrappers), or pass action_history=k to gym.make")
        w = w.env
