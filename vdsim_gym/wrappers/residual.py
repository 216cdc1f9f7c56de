"""Residual learning: a learned correction on top of a classical controller.

The agent's action is a bounded, scaled correction: the env receives
``clip(base + scale * residual, -1, 1)``, where ``base`` is the classical controller's
command for the same observation, and the agent observes the env's observation with the
base command appended (columns ``base_<action name>``). With a zero residual the env is
driven by the base controller, bit for bit. Published practice (residual policy learning,
Silver et al. 2018, Johannink et al. 2019; on race cars Trumpp et al. 2023) starts the
agent at the classical controller's performance and lets it learn what the controller
misses.

Three forms, one rule (``ResidualCore``):

- ``ResidualWrapper(env, base, scale)``: a single Gymnasium env;
- ``ResidualVectorWrapper(venv, base, scale)``: a Gymnasium vector env (``VDSimVectorEnv``,
  next-step or same-step autoreset);
- ``vdsim_gym.sb3_vec_env.ResidualVecEnv(venv, base, scale)``: an SB3 ``VecEnv``
  (``make_sb3_vec_env``; SB3 resets in the ending step), which ``vdsim-gym train
  --residual`` uses.

``base``: a controller spec (``"stanley"``, ``"stanley_dc:delay=0.04"``, ``"acc_pid"``,
``"cycle_follower"``; ``vdsim_gym.policies.load_controller``), a factory ``make(env)`` or
an object with SB3's ``predict``. Its state (the PI speed loop's integrator) restarts
with each episode (``episode_start``). ``scale``: one number or one per action.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_actions
from vdsim_gym.errors import ConfigError
from vdsim_gym.wrappers._common import vdsim_base

DEFAULT_SCALE = 0.1


def base_controller(env: Any, base: Any) -> Any:
    """The base controller for ``env``: a spec string through ``load_controller``, a
    factory called with ``env``, or an object with ``predict`` as it is."""
    if isinstance(base, str):
        from vdsim_gym.policies import load_controller

        base = load_controller(base)[1]
    if not hasattr(base, "predict"):
        if not callable(base):
            raise ConfigError(f"base must be a controller spec (e.g. 'stanley'), a factory "
                              f"make(env) or an object with predict(), got {base!r}")
        base = base(env)
        if not hasattr(base, "predict"):
            raise ConfigError(f"the base factory returned {base!r}, which has no predict()")
    return base


def check_scale(scale: Any, m: int) -> np.ndarray:
    """``scale`` as ``m`` float64 values in (0, 2]: one number for every action or one each."""
    try:
        s = np.array(scale, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise ConfigError(f"scale must be a number or {m} numbers, got {scale!r}") from None
    if s.size == 1:
        s = np.full(m, s[0])
    if s.shape != (m,) or not all(math.isfinite(v) and 0.0 < v <= 2.0 for v in s.tolist()):
        raise ConfigError(f"scale must be a number or {m} numbers in (0, 2] (the residual's "
                          f"reach in action units), got {scale!r}")
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


def _obs_names(env: Any, names: Sequence[str]) -> tuple[str, ...]:
    inner = tuple(getattr(env, "obs_names", None) or vdsim_base(env, "residual").obs_names)
    return (*inner, *(f"base_{n}" for n in names))


class ResidualWrapper(gym.Wrapper[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                      gym.utils.RecordConstructorArgs):
    """A VDSim env driven by ``base`` plus the agent's scaled residual (module docstring).

    ``obs_names``: the env's columns, then ``base_<action>``. ``info["base_action"]``: the
    base command of the step's observation (the one the residual corrected).
    """

    def __init__(self, env: gym.Env, base: Any = "stanley", scale: Any = DEFAULT_SCALE) -> None:
        core = vdsim_base(env, "ResidualWrapper")
        gym.utils.RecordConstructorArgs.__init__(self, base=base, scale=scale)
        gym.Wrapper.__init__(self, env)
        self.rule = ResidualCore(base_controller(env, base), scale, core.action_names)
        space = env.observation_space
        assert isinstance(space, gym.spaces.Box)
        self.observation_space = self.rule.observation_space(space)
        self.obs_names = _obs_names(env, core.action_names)
        self._base: np.ndarray | None = None

    @property
    def base(self) -> Any:
        return self.rule.base

    @property
    def scale(self) -> np.ndarray:
        return self.rule.scale.copy()

    def _observe(self, obs: np.ndarray, start: bool) -> np.ndarray:
        self._base = self.rule.base_actions(obs[None], np.array([start]))
        return self.rule.augment(obs, self._base[0])

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None
              ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.rule.follow_delays([self.env])
        return self._observe(obs, True), info

    def step(self, action: np.ndarray
             ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._base is None:
            raise gym.error.ResetNeeded("call reset() before step() (the base controller "
                                        "needs the first observation)")
        base = self._base
        combined = self.rule.combine(base, np.asarray(action)[None])[0]
        obs, reward, terminated, truncated, info = self.env.step(combined)
        info["base_action"] = base[0].copy()
        return self._observe(obs, False), reward, terminated, truncated, info


class ResidualVectorWrapper(gym.vector.VectorWrapper):
    """A Gymnasium vector env of VDSim envs driven by ``base`` plus the agent's residual,
    one batched base call per step. Next-step autoreset: a row's first observation of a
    new episode restarts its base state; same-step: so does the ending step's, and
    ``infos["final_obs"]`` gets each ended row's base command appended too."""

    def __init__(self, env: gym.vector.VectorEnv, base: Any = "stanley",
                 scale: Any = DEFAULT_SCALE) -> None:
        super().__init__(env)
        first = getattr(env, "envs", None)
        template = first[0] if first else None
        if template is None:
            raise ConfigError("ResidualVectorWrapper needs a vector env of VDSim envs "
                              "(VDSimVectorEnv, make_vec, SyncVectorEnv)")
        core = vdsim_base(template, "ResidualVectorWrapper")
        self.rule = ResidualCore(base_controller(template, base), scale, core.action_names)
        space = env.single_observation_space
        assert isinstance(space, gym.spaces.Box)
        self.single_observation_space = self.rule.observation_space(space)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              env.num_envs)
        self.obs_names = _obs_names(template, core.action_names)
        self._mode = getattr(env, "autoreset_mode", None) or \
            env.metadata.get("autoreset_mode", gym.vector.AutoresetMode.NEXT_STEP)
        self._base: np.ndarray | None = None
        self._restart = np.zeros(env.num_envs, bool)  # NEXT_STEP: rows reset at this step

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if options and "reset_mask" in options and \
                not np.asarray(options["reset_mask"], dtype=bool).all():
            raise ConfigError("ResidualVectorWrapper resets every env at once: the base "
                              "controller's state (the PI integrators) is one batch; use "
                              "autoreset, or reset without reset_mask")
        obs, info = self.env.reset(seed=seed, options=options)
        self._envs = getattr(self.env, "envs", None) or []
        self.rule.follow_delays(self._envs)
        self._base = self.rule.base_actions(obs, np.ones(self.num_envs, bool))
        self._restart[:] = False
        return self.rule.augment(obs, self._base), info

    def step(self, actions: np.ndarray) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
        if self._base is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        combined = self.rule.combine(self._base, actions)
        combined[self._restart] = 0.0  # rows resetting now: their action is ignored
        obs, rewards, terminated, truncated, infos = self.env.step(combined)
        done = np.asarray(terminated) | np.asarray(truncated)
        same_step = self._mode == gym.vector.AutoresetMode.SAME_STEP
        if same_step and done.any() and "final_obs" in infos:
            final = infos["final_obs"]
            rows = np.flatnonzero(done).tolist()
            last = np.array(obs, copy=True)
            for i in rows:
                last[i] = final[i]
            b = self.rule.peek(last)  # the base at each ended row's last observation
            for i in rows:
                final[i] = self.rule.augment(np.asarray(final[i]), b[i])
        start = done if same_step else self._restart
        if start.any():
            self.rule.follow_delays(self._envs, np.flatnonzero(start).tolist())
        infos["base_action"], infos["_base_action"] = self._base, np.ones(self.num_envs, bool)
        self._base = self.rule.base_actions(obs, start.copy())
        self._restart = np.zeros(self.num_envs, bool) if same_step else done
        return self.rule.augment(obs, self._base), rewards, terminated, truncated, infos
