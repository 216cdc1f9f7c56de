"""Residual learning: a learned correction on top of a classical controller.

The agent's action is a bounded, scaled correction: the env receives
``clip(base + scale * residual, -1, 1)``, where ``base`` is the classical controller's
command for the same observation, and the agent observes the env's observation with the
base command appended (columns ``base_<action name>``). With a zero residual the env is
driven by the base controller, bit for bit. Published practice (residual policy learning,
Silver et al. 2018, Johannink et al. 2019; on race cars Trumpp et al. 2023) starts the
agent at the classical controller's performance and lets it learn what the controller
misses.

Three forms, one rule (``vdsim_gym.controllers.residual.ResidualCore``):

- ``ResidualWrapper(env, base, scale)``: a single Gymnasium env;
- ``ResidualVectorWrapper(venv, base, scale)``: a Gymnasium vector env (``VDSimVectorEnv``,
  next-step or same-step autoreset);
- ``ResidualVecEnv(venv, base, scale)``: an SB3 ``VecEnv`` (``make_sb3_vec_env``, a
  ``DummyVecEnv``; SB3 resets in the ending step), which ``vdsim-gym train --residual``
  uses (the class is built at first use, so importing this module loads no SB3).

``base``: a controller spec (``"stanley"``, ``"stanley_dc:delay=0.04"``, ``"acc_pid"``,
``"cycle_follower"``; ``vdsim_gym.policies.load_controller``), a factory ``make(env)`` or
an object with SB3's ``predict``. Its state (the PI speed loop's integrator) restarts
with each episode (``episode_start``). ``scale``: one number or one per action.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym.controllers.residual import DEFAULT_SCALE, ResidualCore
from vdsim_gym.errors import ConfigError
from vdsim_gym.policies.loading import base_controller
from vdsim_gym.wrappers._common import vdsim_base


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


_SB3_CLASS: Any = None


def __getattr__(name: str) -> Any:
    if name == "ResidualVecEnv":
        return _residual_vec_env()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _residual_vec_env() -> Any:
    """SB3's form, a ``VecEnvWrapper`` subclass built at first use (SB3 and torch load
    then, not at import)."""
    global _SB3_CLASS
    if _SB3_CLASS is not None:
        return _SB3_CLASS
    from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper
    from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn

    from vdsim_gym.errors import UsageError

    class ResidualVecEnv(VecEnvWrapper):
        """SB3's form of ``ResidualWrapper``: the agent's actions are
        scaled corrections of ``base``'s commands, and its observations carry them
        (docs/TRAINING.md, "Residual learning"). SB3 resets in the ending step: the returned
        observation is the new episode's (its base state restarts) and
        ``infos[i]["terminal_observation"]`` gets the base command of the last observation,
        computed on a copy of the base so its state does not move."""

        def __init__(self, venv: VecEnv, base: Any = "stanley", scale: Any = 0.1) -> None:
            self._envs = row_envs(venv)
            template = self._envs[0]
            names = vdsim_base(template, "ResidualVecEnv").action_names
            self.rule = ResidualCore(base_controller(template, base), scale, names)
            space = venv.observation_space
            assert isinstance(space, gym.spaces.Box)
            super().__init__(venv, observation_space=self.rule.observation_space(space))
            self._base: np.ndarray | None = None

        def reset(self) -> VecEnvObs:
            obs = np.asarray(self.venv.reset())
            self.rule.follow_delays(self._envs)
            self._base = self.rule.base_actions(obs, np.ones(self.num_envs, bool))
            return self.rule.augment(obs, self._base)

        def step_async(self, actions: np.ndarray) -> None:
            if self._base is None:
                raise UsageError("reset() before step_async(actions)")
            self.venv.step_async(self.rule.combine(self._base, actions))

        def step_wait(self) -> VecEnvStepReturn:
            obs, rewards, dones, infos = self.venv.step_wait()
            obs = np.asarray(obs)
            dones = np.asarray(dones, dtype=bool)
            if dones.any():
                rows = np.flatnonzero(dones).tolist()
                last = np.array(obs, copy=True)
                for i in rows:
                    last[i] = infos[i]["terminal_observation"]
                b = self.rule.peek(last)
                for i in rows:
                    infos[i]["terminal_observation"] = self.rule.augment(last[i], b[i])
                self.rule.follow_delays(self._envs, rows)  # the new episodes' delays
            self._base = self.rule.base_actions(obs, dones)
            return self.rule.augment(obs, self._base), rewards, dones, infos

    _SB3_CLASS = ResidualVecEnv
    return ResidualVecEnv


def row_envs(venv: Any) -> list[Any]:
    """The single envs under SB3 VecEnv wrappers: a VDSimSB3VecEnv's rows or a
    DummyVecEnv's envs (a SubprocVecEnv's live in other processes: refused)."""
    from vdsim_gym._sb3_vec_env import VDSimSB3VecEnv

    v = venv
    while True:
        if isinstance(v, VDSimSB3VecEnv):
            return list(v.venv.envs)
        envs = getattr(v, "envs", None)
        if envs:
            return list(envs)
        if not hasattr(v, "venv"):
            raise ConfigError(f"a batched controller needs a VDSim VecEnv (make_sb3_vec_env) "
                              f"or a DummyVecEnv of VDSim envs, got {type(venv).__name__}")
        v = v.venv


__all__ = ["ResidualVecEnv", "ResidualVectorWrapper",  # noqa: F822  (module __getattr__)
           "ResidualWrapper", "row_envs"]
