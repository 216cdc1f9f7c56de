"""VDSimVectorEnv: N envs of one VDSim env core stepped by one GIL-released C++ call.

``gym.make_vec("VDSim-DLC-v0", num_envs=N, ...)`` returns this (every registered id has a
``vector_entry_point`` here). The batch step runs in ``_core.VectorEnvCore``: a persistent
worker pool steps every env's core (``EnvCore<Task>``) by one env step (latency schedule included)
and writes observations, rewards, flags, reward terms and info scalars into numpy buffers
this class owns. No per-env Python runs on the hot path. Rows reset, autoreset and seed
in C++ (their episode draws, randomization included, are their cores'); rows built from
the same kwargs (all of them, or those with equal ``per_env_kwargs``) are copies of the
first such row's core made in C++ (``VectorEnvCore.replicate``), and their single env
objects (``envs[i]``) are built only when asked for. See docs/VECTOR.md.

Its parts, one module each: vector_rows (the rows' plan from the kwargs, ``RowEnvs``),
vector_infos (the batched infos), vector_resets (the rows' seeds and resets) and
vector_snapshot (``snapshot``, ``restore``): its bases.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from vdsim_gym import _core
from vdsim_gym._checks import (
    ACTION_TOL,
    check_actions,
    check_max_episode_steps,
    check_num_envs,
    check_threads,
)
from vdsim_gym.envs.core_env import TIMING_KEYS, CoreEnv, refuse_copy
from vdsim_gym.envs.env_outcome import TERMINATED, TRUNCATED
from vdsim_gym.envs.vector_resets import Seeds, VectorResets
from vdsim_gym.envs.vector_rows import RowEnvs, _build_envs, _per_row
from vdsim_gym.envs.vector_snapshot import VectorSnapshots
from vdsim_gym.errors import ConcurrentUseError, ConfigError

# Batched dtype of each Python type of a single env's info value, as gymnasium's
# SyncVectorEnv batches them (None: the float64 column as is).
_DTYPE = {float: None, int: np.int64, bool: bool}
_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}


# Its parts come after VectorEnv (they override none of its names): reset()'s super().reset
# finds Gymnasium's at once, as before the split.
class VDSimVectorEnv(VectorEnv, VectorResets, VectorSnapshots):
    """``num_envs`` copies of a registered VDSim env in one batch.

    Args:
        env_id: a registered id (``"VDSim-DLC-v0"``, ``"VDSim-PathFollow-v0"``).
        num_envs: batch size N.
        threads: worker threads of the C++ pool; 0 = all cores from 16 envs up (inline
            below: a worker's wake-up costs more than it saves), 1 = inline on the caller.
            Results do not depend on it.
        autoreset_mode: ``"next_step"`` (Gymnasium's default) or ``"same_step"`` (the
            final observation and info go to ``infos["final_obs"]`` / ``["final_info"]``).
        per_env_kwargs: optional N mappings of env kwargs overriding ``kwargs`` per env
            (e.g. a different ``latency`` per row for a latency grid in one batch).
        max_episode_steps: an extra limit in env steps (TimeLimit semantics; the envs'
            own ``time_limit`` [s] applies per row regardless); default the
            registration's, ``None`` when the id has none.
        **kwargs: env kwargs shared by all envs (``level``, ``latency``, ``speed``, ...).
    """

    def __init__(
        self,
        env_id: str,
        num_envs: int,
        *,
        threads: int = 0,
        autoreset_mode: str | AutoresetMode = "next_step",
        per_env_kwargs: Sequence[Mapping[str, Any]] | None = None,
        max_episode_steps: int | None | str = "registered",
        **kwargs: Any,
    ) -> None:
        spec = gym.spec(env_id)
        self.num_envs = n = check_num_envs(num_envs)
        threads = check_threads(threads)
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        if max_episode_steps == "registered":
            max_episode_steps = spec.max_episode_steps
        self.max_episode_steps = check_max_episode_steps(max_episode_steps)
        if kwargs.get("render_mode") is not None:
            raise ConfigError(
                "the vector env does not render; render a single env "
                f"(gym.make({env_id!r}, render_mode='rgb_array'))"
            )
        reps, group, makes = _build_envs(spec, n, kwargs, per_env_kwargs)
        env0 = reps[0]
        for g, env in enumerate(reps):
            if env.latency is not None and env.latency.kind == "measured":
                raise ConfigError(
                    f"env {group.index(g)}: LatencyModel.measured() needs a delay per step "
                    "from the caller; "
                    "the vector env draws delays from the model: use fixed/uniform/normal"
                )
        self.single_observation_space = env0.observation_space
        self.single_action_space = env0.action_space
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": [],
                         "render_fps": env0.metadata["render_fps"]}
        self.render_mode = None
        # Names and sizes from the env core's spec (via the row envs): any task fits.
        self.obs_names: tuple[str, ...] = env0.obs_names
        self.action_names: tuple[str, ...] = env0.action_names
        self.reward_term_names: tuple[str, ...] = env0.reward_term_names
        self.env_id = env_id
        col = {name: j for j, name in enumerate(env0.info_names)}
        self._base_keys = tuple((k, col[k], _DTYPE[tp]) for k, tp in type(env0).INFO_KEYS)
        self._reset_keys = tuple((k, col[k], tp) for k, tp in type(env0).INFO_KEYS)
        self._latency_keys = tuple((k, col[k], _DTYPE[tp]) for k, tp in TIMING_KEYS)

        # Caller-owned buffers the C++ session writes into; no allocation per step in C++.
        self._obs = np.zeros((n, len(self.obs_names)), np.float32)
        self._rewards = np.zeros(n)
        self._flags = np.zeros(n, np.int32)
        self._terms = np.zeros((n, len(self.reward_term_names)))
        self._info = np.zeros((n, len(env0.info_names)))
        self._step_all = np.ones(n, np.uint8)
        self._elapsed = np.zeros(n, np.int64)
        self._autoreset = np.zeros(n, bool)  # NEXT_STEP: ended last step, reset at this one
        # rows that report the timing keys: a latency model, a network or a sensor delay
        self._latency_rows = _per_row(reps, group, lambda e: e.reports_timing)
        self._has_latency = bool(self._latency_rows.any())
        self._needs_reset = True
        self._in_use = threading.Lock()  # held through reset() and step()
        # Rows alike: the first row of each group on its env's core, the others copies of
        # it made in C++ before any reset; their single envs are built on demand (RowEnvs).
        cores = [e.core for e in reps]
        self._session = _core.VectorEnvCore(cores, threads) if len(reps) == n \
            else _core.VectorEnvCore.replicate(cores, group, threads)
        self._group = np.asarray(group, np.int64)
        self._reps = reps
        self.envs: RowEnvs = RowEnvs(self, reps, group, makes)
        self._env0 = env0
        self.threads: int = self._session.threads
        kinds = {float: 0, int: 1, bool: 2}
        self._session.bind_buffers(
            self._obs, self._rewards, self._flags, self._terms, self._info, self._elapsed,
            list(self.reward_term_names),
            [(k, col[k], kinds[tp]) for k, tp in type(env0).INFO_KEYS],
            [(k, col[k], kinds[tp]) for k, tp in TIMING_KEYS])
        # The one-call step (C++ builds the return values) serves steps without rows to
        # reset (NEXT_STEP) when all rows or none have latency (the timing keys' masks are
        # then all-or-nothing); other steps take the general path below.
        self._fast = bool(self._latency_rows.all()) or not self._has_latency
        self._any_autoreset = False
        # Rows whose episode draw is their core's (CoreEnv.resets_in_core): their
        # autoresets run in C++, inside the batch step (NEXT_STEP) or in one call
        # (SAME_STEP), from their envs' generators (set_row_rng after each Python reset).
        self._core_resets = _per_row(reps, group, lambda e: e.resets_in_core)
        self._all_core_resets = bool(self._core_resets.all())
        # rows whose reset info reports randomization draws
        self._randomized = _per_row(reps, group, lambda e: e.randomize is not None)
        self._has_rng = np.zeros(n, bool)  # the row has generators (seeded or reset once)
        # The seed of each row's last seeded reset in C++ (what a row env built later
        # reports as np_random_seed; None where its env's own reset seeded it).
        self._row_seeds: list[int | None] = [None] * n
        for i, env in self.envs.built_items():
            if self._core_resets[i]:
                env._row_rng = (self._session, i)

    def __copy__(self) -> VDSimVectorEnv:
        raise refuse_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> VDSimVectorEnv:
        raise refuse_copy(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise refuse_copy(self)

    # ---------------------------------------------------------------- Gymnasium API

    def reset(
        self, *, seed: Seeds = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Resets every env; ``seed=s`` seeds env i with ``s + i`` (Gymnasium's convention),
        a list seeds env i with ``seed[i]``. ``options={"reset_mask": mask}`` (a bool
        array of shape (num_envs,), as SyncVectorEnv takes it) resets only the masked
        envs: the others keep their episode, observation and pending autoreset; infos
        carry the reset rows only (``_key`` masks). Other options go to every reset env."""
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of("this VDSimVectorEnv")
        try:
            return self._reset_impl(seed, options)
        finally:
            self._in_use.release()

    def _reset_impl(self, seed: Seeds, options: dict[str, Any] | None
                    ) -> tuple[np.ndarray, dict[str, Any]]:
        self._check_open()
        seeds = self._seed_list(seed)
        options = dict(options) if options else None
        mask = self._reset_mask(options.pop("reset_mask")) if options and \
            "reset_mask" in options else np.ones(self.num_envs, bool)
        for i in np.flatnonzero(mask).tolist():  # a bad seed is refused before any reset
            if seeds[i] is not None and not (isinstance(seeds[i], int) and seeds[i] >= 0):
                seeding.np_random(seeds[i])  # Gymnasium's own error, naming the seed
        if self._needs_reset and not mask.all():
            raise gym.error.ResetNeeded("the first reset() (and the one after an interrupted "
                                        "step) resets every env: call it without reset_mask")
        if isinstance(seed, (int, np.integer)):
            super().reset(seed=int(seed))
        rows = np.flatnonzero(mask).tolist()
        for i in self._reset_in_core(mask, seeds, options):
            self._reset_row(i, seeds[i], options or None)
        self._autoreset[mask] = False
        self._any_autoreset = bool(self._autoreset.any())
        self._needs_reset = False
        return self._obs.copy(), self._add_reset_extra(self._reset_infos(mask), rows)

    def step(
        self, actions: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of("this VDSimVectorEnv")
        try:
            # The common step inline (no row to reset, no episode ending): one C++ call and
            # its first five values, without the helpers' frames (_step_fast_core: each
            # Python level costs ~0.15 us, a dyno row 0.5 us).
            if self._fast and not self._any_autoreset and not self._needs_reset \
                    and not self.closed:
                try:
                    out = self._session.step_fast(actions, self.max_episode_steps or 0,
                                                  self._has_latency, ACTION_TOL, False)
                except BaseException:  # KeyboardInterrupt mid-step: rows partly advanced
                    self._needs_reset = True
                    raise
                if out is None:  # actions the Python checks convert, or refuse by row
                    out = self._step_fast_call(self._check_actions(actions), False)
                if not out[5]:
                    return out[:5]
                return self._step_fast(actions, out)
            if self._fast and self._all_core_resets and not self._needs_reset \
                    and not self.closed:
                # NEXT_STEP with rows to reset, all in C++: the same one call, resetting
                # those rows instead of stepping them.
                return self._step_fast(actions, None, self._autoreset)
            return self._step_impl(actions)
        finally:
            self._in_use.release()

    def _step_impl(self, actions: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        self._check_open()
        if self._fast and not self._any_autoreset and not self._needs_reset:
            return self._step_fast(actions)
        a = self._check_actions(actions)
        if self._needs_reset:
            raise gym.error.ResetNeeded("call reset() before step()")
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        resetting = next_step and bool(self._autoreset.any())
        stepped = ~self._autoreset if resetting else None
        mask = stepped.view(np.uint8) if stepped is not None else self._step_all
        try:
            self._session.step(a, mask, self._obs, self._rewards, self._flags, self._terms,
                               self._info)
        except BaseException:  # KeyboardInterrupt mid-step: rows are partly advanced
            self._needs_reset = True
            raise
        flags = self._flags
        terminated = (flags & TERMINATED) != 0
        truncated = (flags & TRUNCATED) != 0
        if stepped is None:
            self._elapsed += 1
        else:
            self._elapsed[self._autoreset] = 0  # these rows are reset below, not stepped
            self._elapsed += stepped
        if self.max_episode_steps is not None:
            truncated |= self._elapsed >= self.max_episode_steps  # as TimeLimit: even if done
        ended = terminated | truncated
        rewards = self._rewards.copy()
        if resetting:
            rows = np.flatnonzero(self._autoreset).tolist()
            self._reset_rows(self._autoreset)
            infos = self._add_reset_extra(self._step_infos(stepped), rows)
        elif not next_step and ended.any():
            infos = self._same_step_reset(ended)
        else:
            infos = self._step_infos(None)
        if next_step:
            self._autoreset = ended
            self._any_autoreset = bool(ended.any())
        return self._obs.copy(), rewards, terminated, truncated, infos

    def _step_fast(self, actions: Any, out: Any = None, resets: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Every row steps, or resets in C++ where ``resets`` (NEXT_STEP's autoreset rows,
        every one resets_in_core) says: one C++ call checks the actions, steps, resets and
        builds the return values; Python adds only what an episode end reports. ``out``:
        that call's values when the caller made it."""
        if out is None:
            out = self._step_fast_core(actions, False, resets)
        obs, rewards, terminated, truncated, infos, n_ended = out
        if resets is not None:  # the rows reset in C++: their draws, as their reset infos
            infos = self._add_reset_extra(infos, np.flatnonzero(resets).tolist())
        if resets is not None and not n_ended:
            self._autoreset = np.zeros(self.num_envs, bool)
            self._any_autoreset = False
        if n_ended and self.autoreset_mode == AutoresetMode.SAME_STEP:
            # The rows' buffers hold this step: the general path's same-step reset
            # reports final obs and info from them, then resets those rows.
            infos = self._same_step_reset(terminated | truncated)
            return self._obs.copy(), rewards, terminated, truncated, infos
        if n_ended:
            # The env's own ends report outcome and summary (a max_episode_steps cut does
            # not: TimeLimit adds nothing either).
            flags = self._flags
            for i in np.flatnonzero(flags & (TERMINATED | TRUNCATED)).tolist():
                infos = self._add_info(infos, self._end_info(i, int(flags[i])), i)
            self._autoreset = terminated | truncated
            self._any_autoreset = True
        return obs, rewards, terminated, truncated, infos

    def _step_fast_core(self, actions: Any, rows: bool = False,
                        resets: np.ndarray | None = None) -> Any:
        """The one-call C++ step; actions it does not take as they are (not a float
        (N, m) array in range) go through the Python checks, which convert them or raise
        the error naming the row (nothing stepped or reset)."""
        out = self._step_fast_call(actions, rows, resets)
        if out is None:
            out = self._step_fast_call(self._check_actions(actions), rows, resets)
        return out

    def _step_fast_call(self, actions: Any, rows: bool, resets: np.ndarray | None = None
                        ) -> Any:
        try:
            return self._session.step_fast(actions, self.max_episode_steps or 0,
                                           self._has_latency, ACTION_TOL, rows, resets)
        except BaseException:  # KeyboardInterrupt mid-step: rows are partly advanced
            self._needs_reset = True
            raise

    def _step_rows(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 list[dict[str, Any]], dict[int, Any]] | None:
        """stable-baselines3's step (``VDSimSB3VecEnv``, SAME_STEP) in DummyVecEnv's terms:
        obs, float32 rewards, dones, one info dict per env (Python scalars,
        ``TimeLimit.truncated``; at an episode end also ``terminal_observation`` and what
        the single env adds: outcome, episode_summary), and the reset infos of the rows
        that ended and were reset. The rows are built in C++; None where the one-call step
        does not apply (the caller then uses ``step``)."""
        if not (self._fast and not self._any_autoreset and not self._needs_reset):
            return None
        self._check_open()
        out = self._step_fast_core(actions, True)
        obs, rewards, dones, rows, n_ended = out
        reset_infos: dict[int, Any] = {}
        if n_ended:
            flags = self._flags
            ended = np.flatnonzero(dones).tolist()
            for i in ended:
                row = rows[i]
                if flags[i] & (TERMINATED | TRUNCATED):  # not a max_episode_steps cut
                    row.update(self._end_info(i, int(flags[i])))
                row["terminal_observation"] = obs[i].copy()
            python_rows = self._reset_rows(dones)
            for i in ended:
                reset_infos[i] = python_rows[i] if i in python_rows else self._reset_info(i)
                obs[i] = self._obs[i]
        return obs, rewards, dones, rows, reset_infos

    def step_core(self, actions: np.ndarray) -> None:
        """Benchmark reference: the C++ batch step alone (physics, latency, task,
        observation and reward terms into the buffers), without the Python side of
        ``step`` (action checks, infos, time limit, autoreset). Reset after."""
        self._check_open()
        self._session.step(np.ascontiguousarray(actions, dtype=np.float64), self._step_all,
                           self._obs, self._rewards, self._flags, self._terms, self._info)
        self._needs_reset = True

    def advance_physics(self, actions: np.ndarray) -> None:
        """Benchmark reference: every env's physics for one control period under
        ``actions`` ((N, 2) float64), without latency, task, observation, reward or
        autoreset, in one GIL-released call. Leaves the envs mid-episode: reset after."""
        self._check_open()
        self._session.advance_physics(np.ascontiguousarray(actions, dtype=np.float64))
        self._needs_reset = True

    def close_extras(self, **kwargs: Any) -> None:
        # A construction refused part-way (bad per-env kwargs) has no session, and maybe
        # no envs: Gymnasium's __del__ still closes it.
        session = getattr(self, "_session", None)
        if session is not None:
            session.close()
        envs = getattr(self, "envs", None)
        for env in envs.built() if envs is not None else ():
            env.close()

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of every single env (configuration such as ``obs_scale``,
        ``control_period``, ``latency``)."""
        return tuple(getattr(env, name) for env in self.envs)

    def _row_env(self, i: int, make: Callable[[], CoreEnv]) -> CoreEnv:
        """Row i's single env, built now on the row's core: an env from the vector's
        kwargs whose core is replaced by the row's, with the row's generators and seed
        (what a row env built with the vector would hold)."""
        env = make()
        env0 = self._env0
        env.observation_space, env.action_space = env0.observation_space, env0.action_space
        env._adopt_core(self._session.row_core(i))
        env._row_rng = (self._session, i)
        if self._has_rng[i]:
            env._reset_in_vector(self._row_seeds[i])
        return env

    # ---------------------------------------------------------------- internals

    def _check_open(self) -> None:
        if self.closed:
            raise gym.error.ClosedEnvironmentError(
                "this vector env is closed; create a new one (gym.make_vec(...))"
            )

    def _check_actions(self, actions: Any) -> np.ndarray:
        """The batch as a C-contiguous float (N, m) array in range, checked before anything
        is stepped, so a bad batch leaves every env as it was (_checks.check_actions)."""
        return check_actions(actions, self.num_envs, self.action_names)


def make_vector_env(env_id: str, num_envs: int, **kwargs: Any) -> VDSimVectorEnv:
    """``VDSimVectorEnv(env_id, num_envs, **kwargs)``; what ``gym.make_vec`` calls."""
    return VDSimVectorEnv(env_id, num_envs, **kwargs)


def _entry_point(env_id: str, name: str) -> Callable[..., VDSimVectorEnv]:
    """The ``vector_entry_point`` of ``env_id``: ``name(num_envs=1, **kwargs)`` is
    ``make_vector_env(env_id, num_envs, **kwargs)``. ``name`` is the module attribute it
    is bound to, so it prints and pickles by that name."""
    def make(num_envs: int = 1, **kwargs: Any) -> VDSimVectorEnv:
        return make_vector_env(env_id, num_envs, **kwargs)

    make.__name__ = make.__qualname__ = name
    make.__doc__ = f"Vector entry point of ``{env_id}``."
    return make


# The ids' vector entry points (vdsim_gym.envs.ENV_SPECS names them).
make_dlc_vec = _entry_point("VDSim-DLC-v0", "make_dlc_vec")
make_path_follow_vec = _entry_point("VDSim-PathFollow-v0", "make_path_follow_vec")
make_acc_vec = _entry_point("VDSim-ACC-v0", "make_acc_vec")
make_dyno_vec = _entry_point("VDSim-Dyno-v0", "make_dyno_vec")


def _autoreset_mode(mode: str | AutoresetMode) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        if mode not in _MODES.values():
            raise ConfigError(f"autoreset_mode must be one of {sorted(_MODES)}, got {mode!r}")
        return mode
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ConfigError(f"autoreset_mode must be one of {sorted(_MODES)}, got {mode!r}") from None

