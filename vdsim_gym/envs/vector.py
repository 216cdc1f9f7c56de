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
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator
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
from vdsim_gym.envs.core_env import (
    _LATENCY_STREAM,
    TERMINATED,
    TIMING_KEYS,
    TRUNCATED,
    CoreEnv,
    refuse_copy,
)
from vdsim_gym.errors import ConcurrentUseError, ConfigError, UnsupportedEnvError

# Batched dtype of each Python type of a single env's info value, as gymnasium's
# SyncVectorEnv batches them (None: the float64 column as is).
_DTYPE = {float: None, int: np.int64, bool: bool}
_MODES = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}

_UNSET = object()
Seeds = int | Sequence[int | None] | None


class VDSimVectorEnv(VectorEnv):
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

    def _reset_mask(self, mask: Any) -> np.ndarray:
        n = self.num_envs
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (n,):
            raise ConfigError(f"options['reset_mask'] must be a numpy bool array of shape ({n},)"
                             f", got {mask!r}")
        if not mask.any():
            raise ConfigError("options['reset_mask'] resets no env; set at least one True")
        return mask.copy()

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

    def episode_summary(self, i: int) -> dict[str, Any]:
        """Row i's episode so far (``CoreEnv.episode_summary``), read from its core: after
        the step that ended it, the ended episode (NEXT_STEP resets the row at the next
        step)."""
        return self._env0.summary_of(self._session.row_summary(i))

    def _end_info(self, i: int, flags: int) -> dict[str, Any]:
        """What row i's episode end adds to its info (``CoreEnv.episode_end_info``), from
        its core (no row env needed)."""
        return self._env0.episode_end_info(flags, self._session.row_summary(i))

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

    def _seed_list(self, seed: Seeds) -> list[int | None]:
        n = self.num_envs
        if seed is None:
            return [None] * n
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return [int(seed) + i for i in range(n)]
        if isinstance(seed, Sequence) and len(seed) == n:
            return list(seed)
        raise ConfigError(f"seed must be None, an int or a list of {n} seeds, got {seed!r}")

    def _reset_row(self, i: int, seed: int | None, options: dict[str, Any] | None
                   ) -> dict[str, Any]:
        """Resets row i (its env's reset) into the batch buffers; returns its reset info.
        A row that resets in C++ then draws from its env's generators (the env's reset
        gives them to the session: new ones after a seeded reset)."""
        env = self.envs[i]
        _, info = env.reset(seed=seed, options=options)
        obs, _, row = env.rows  # what the env's core wrote at its reset
        self._obs[i] = obs
        self._info[i] = row
        self._terms[i] = 0.0
        self._elapsed[i] = 0
        self._has_rng[i] = True
        return info

    def _reset_in_core(self, mask: np.ndarray, seeds: list[int | None],
                       options: dict[str, Any] | None) -> list[int]:
        """reset()'s resets of the masked rows that need no Python: rows that reset in C++
        seeded there (a seed: Gymnasium's generator, numpy's SeedSequence and PCG64, made
        in the core; a row never seeded without one: fresh OS entropy, as Gymnasium seeds
        an env's first reset) or continuing their generators (no seed), in one call each.
        Returns the rows left for their envs' resets (options, which the envs refuse; rows
        of a task that draws in Python, none of the registered ones)."""
        if options:
            return np.flatnonzero(mask).tolist()
        core = mask & self._core_resets
        left = np.flatnonzero(mask & ~self._core_resets).tolist()
        given = np.fromiter((s is not None for s in seeds), bool, len(seeds))
        fresh = np.flatnonzero(core & ~given & ~self._has_rng)
        if len(fresh):  # SeedSequence(None)'s entropy: 128 bits from the OS
            for i, word in zip(fresh.tolist(), _entropy_ints(len(fresh)), strict=True):
                seeds[i] = word
            given[fresh] = True
        seeded = core & given
        going_on = core & ~given
        if seeded.any():
            rows = np.flatnonzero(seeded).tolist()
            values = [seeds[i] for i in rows]
            task_words, counts = _entropy_word_rows(values)
            task_off = np.zeros(self.num_envs + 1, np.int64)
            task_off[1:][seeded] = counts
            np.cumsum(task_off, out=task_off)
            models = self._latency_models(rows)
            with_model = np.array([m is not None for m in models], bool)
            # each row's latency stream: SeedSequence([seed, _LATENCY_STREAM])'s words
            stream = np.array(_entropy_words(_LATENCY_STREAM), np.uint32)
            if not with_model.any():  # no latency stream to seed
                latency_words = np.zeros(0, np.uint32)
            elif with_model.all() and len(task_words) == len(rows):  # one word per seed
                latency_words = np.column_stack(
                    [task_words, np.broadcast_to(stream, (len(rows), len(stream)))]).ravel()
            else:
                per_row = np.split(task_words, np.cumsum(counts)[:-1])
                latency_words = np.concatenate(
                    [np.zeros(0, np.uint32)]
                    + [np.concatenate([w, stream]) for w, has in
                       zip(per_row, with_model, strict=True) if has])
            latency_off = np.zeros(self.num_envs + 1, np.int64)
            latency_off[1:][seeded] = np.where(with_model, counts + len(stream), 0)
            np.cumsum(latency_off, out=latency_off)
            model_seeds = np.zeros(self.num_envs, np.uint64)
            model_seeds[seeded] = [0 if m is None else m.seed for m in models]
            self._session.seed_rows(seeded, task_words, task_off, latency_words, latency_off,
                                    model_seeds)
            for i in rows:
                self._row_seeds[i] = seeds[i]
            for i, env in self.envs.built_items():
                if seeded[i]:
                    env._reset_in_vector(seeds[i])
        if going_on.any():
            self._session.reset_rows(going_on)
        self._has_rng |= seeded | going_on
        return left

    def _latency_models(self, rows: list[int]) -> list[Any]:
        """The latency model whose seed each row's delays start from (CoreEnv.
        _latency_model): its env's, or its group's for a row whose env is not built (a
        copy of that group's core)."""
        models = [e._latency_model() for e in self._reps]
        if self.envs.n_built() == len(self._reps):  # the groups' envs alone
            return [models[g] for g in self._group[rows].tolist()]
        return [env._latency_model() if (env := self.envs.built_at(i)) is not None
                else models[self._group[i]] for i in rows]

    def _reset_rows(self, mask: np.ndarray) -> dict[int, dict[str, Any]]:
        """The autoresets of the masked rows (no seed, no options): in one C++ call for the
        rows that reset in C++, by their envs' resets for the others (whose reset infos
        this returns by row)."""
        core = mask & self._core_resets
        if core.any():
            self._session.reset_rows(core)
        if self._all_core_resets:
            return {}
        return {i: self._reset_row(i, None, None)
                for i in np.flatnonzero(mask & ~self._core_resets).tolist()}

    def _reset_info(self, i: int) -> dict[str, Any]:
        """Row i's reset info from its info row (the task's keys; what its env's reset
        returns without randomization)."""
        row = self._info[i]
        return {**{k: tp(row[j]) for k, j, tp in self._reset_keys}, **self._reset_extra(i)}

    def _add_reset_extra(self, infos: dict[str, Any], rows: list[int]) -> dict[str, Any]:
        """What the reset rows' reset infos have beyond the task's columns (the
        randomization draws), batched by Gymnasium's rule as SyncVectorEnv does."""
        if not self._randomized.any():
            return infos
        for i in rows:
            extra = self._reset_extra(i)
            if extra:
                infos = self._add_info(infos, {k: dict(v) for k, v in extra.items()}, i)
        return infos

    def _reset_extra(self, i: int) -> dict[str, Any]:
        """What row i's last reset info had beyond the task's keys: its randomization's
        draws, from its core (``{}`` without randomization)."""
        if not self._randomized[i]:
            return {}
        env = self.envs.built_at(i) or self._reps[self._group[i]]
        assert env.randomize is not None
        return {"randomization": env.randomize.values_of(self._session.row_draws(i))}

    def _columns(self, info: np.ndarray, mask: np.ndarray, keys: tuple) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, j, dtype in keys:
            col = info[j]
            out[key] = col if dtype is None else (col != 0 if dtype is bool else col.astype(dtype))
            out[f"_{key}"] = mask
        return out

    def _reset_infos(self, rows: np.ndarray | None = None) -> dict[str, Any]:
        rows = np.ones(self.num_envs, bool) if rows is None else rows
        return self._columns(self._info.T.copy(), rows, self._base_keys)

    def _step_infos(self, stepped: np.ndarray | None, base: np.ndarray | None = None
                    ) -> dict[str, Any]:
        """Batched infos as SyncVectorEnv builds them: arrays plus ``_key`` masks, a key
        only when some row has it. ``stepped``: rows whose info is a step's (the others
        were reset and carry their reset info); None: all. ``base``: mask of the keys
        every row has (default all)."""
        info = self._info.T.copy()
        full = np.ones(self.num_envs, bool)
        mask = full if stepped is None else stepped
        infos = self._columns(info, full if base is None else base, self._base_keys)
        if stepped is not None and not stepped.any():
            return infos
        terms = self._terms.T.copy()
        reward_terms: dict[str, Any] = {}
        for j, name in enumerate(self.reward_term_names):
            reward_terms[name], reward_terms[f"_{name}"] = terms[j], mask
        infos["reward_terms"], infos["_reward_terms"] = reward_terms, mask
        if self._has_latency:
            lat = mask & self._latency_rows
            if lat.any():
                infos.update(self._columns(info, lat, self._latency_keys))
        ended = mask & ((self._flags & (TERMINATED | TRUNCATED)) != 0)
        if ended.any():
            # What the single env adds at an episode end (outcome, the task's extras,
            # episode_summary from the row's core), batched by Gymnasium's own rule.
            for i in np.flatnonzero(ended).tolist():
                infos = self._add_info(infos, self._end_info(i, int(self._flags[i])), i)
        return infos

    def _same_step_reset(self, ended: np.ndarray) -> dict[str, Any]:
        """SAME_STEP: the ended rows' final obs and info go to final_obs / final_info,
        then those rows are reset and report their reset obs and info."""
        final_info = self._step_infos(ended, base=ended)
        final_obs = np.full(self.num_envs, None, dtype=object)
        rows = np.flatnonzero(ended).tolist()
        for i in rows:
            final_obs[i] = self._obs[i].copy()
        self._reset_rows(ended)
        infos = self._add_reset_extra(self._step_infos(~ended), rows)
        infos["final_obs"], infos["_final_obs"] = final_obs, ended
        infos["final_info"], infos["_final_info"] = final_info, ended
        return infos


def _per_row(reps: list[CoreEnv], group: list[int], flag: Callable[[CoreEnv], bool]
             ) -> np.ndarray:
    """``flag`` of every row: its group's env's (a group's other rows are copies of its
    core)."""
    return np.array([flag(e) for e in reps], bool)[np.asarray(group, np.int64)]


def _entropy_ints(n: int) -> list[int]:
    """n draws of what numpy's SeedSequence() takes as its entropy without a seed (128
    random bits from the OS, ``secrets.randbits(128)``), as ints."""
    raw = os.urandom(16 * n)
    return [int.from_bytes(raw[16 * k:16 * k + 16], "little") for k in range(n)]


def _entropy_word_rows(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The entropy words (``_entropy_words``) of each value, concatenated, and how many
    each has; values below 2**32 (one word each) without a Python loop."""
    if all(v < 0x1_0000_0000 for v in values):
        return np.array(values, np.uint32), np.ones(len(values), np.int64)
    rows = [_entropy_words(v) for v in values]
    return (np.array([w for r in rows for w in r], np.uint32),
            np.array([len(r) for r in rows], np.int64))


def _entropy_words(value: int) -> list[int]:
    """numpy SeedSequence's entropy words of a non-negative int: little-endian 32-bit."""
    if value == 0:
        return [0]
    words = []
    while value > 0:
        words.append(value & 0xFFFF_FFFF)
        value >>= 32
    return words


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


def _same_space(a: Any, b: Any) -> bool:
    """Whether two envs' spaces are the same: Boxes by shape, dtype and exact bounds (a
    batch needs them equal; Box.__eq__'s allclose costs ~50 us per row), else by ==."""
    if isinstance(a, gym.spaces.Box) and type(a) is type(b):
        return (a.shape == b.shape and a.dtype == b.dtype
                and np.array_equal(a.low, b.low) and np.array_equal(a.high, b.high))
    return bool(a == b)


class RowEnvs(Sequence[CoreEnv]):
    """A vector env's rows as single envs (``venv.envs``): ``envs[i]`` is row i's
    ``CoreEnv``, on the row's own core in the batch. The first row of each group of rows
    alike has the env built with the vector env; the group's other rows, copied in C++
    (``VectorEnvCore.replicate``), get theirs when first asked for (``_row_env``: the
    row's core, generators and seed)."""

    def __init__(self, venv: VDSimVectorEnv, reps: list[CoreEnv], group: list[int],
                 makes: list[Callable[[], CoreEnv] | None]) -> None:
        self._venv = venv
        self._group = group
        self._makes = makes
        self._envs: list[CoreEnv | None] = [None] * venv.num_envs
        placed = 0
        for i, g in enumerate(group):  # each group's env at its first row
            if g == placed:
                self._envs[i] = reps[g]
                placed += 1
        self._n_built = len(reps)

    def __len__(self) -> int:
        return len(self._envs)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(len(self._envs))[i]]
        env = self._envs[i]  # IndexError and negative indices as a list's
        if env is None:
            j = range(len(self._envs))[i]
            make = self._makes[self._group[j]]
            assert make is not None
            env = self._envs[j] = self._venv._row_env(j, make)
            self._n_built += 1
        return env

    def __iter__(self) -> Iterator[CoreEnv]:
        return (self[i] for i in range(len(self._envs)))

    def built_at(self, i: int) -> CoreEnv | None:
        """Row i's env if it was built, else None (without building it)."""
        return self._envs[i]

    def built_items(self) -> Iterator[tuple[int, CoreEnv]]:
        """(i, env) of the rows whose envs exist."""
        return ((i, e) for i, e in enumerate(self._envs) if e is not None)

    def built(self) -> Iterator[CoreEnv]:
        return (e for e in self._envs if e is not None)

    def n_built(self) -> int:
        return self._n_built


def _build_envs(spec: Any, n: int, kwargs: dict[str, Any],
                per_env_kwargs: Sequence[Mapping[str, Any]] | None
                ) -> tuple[list[CoreEnv], list[int], list[Callable[[], CoreEnv] | None]]:
    """The rows' plan: one single env built now per group of rows alike (``reps``), each
    row's group, and how to build another env of a group on demand (``makes``). Rows
    alike have the same kwargs (all rows without per_env_kwargs; with them, equal
    mappings) and a task that resets in C++: their group's other rows are copies of its
    env's core (``VectorEnvCore.replicate``). Every other row is a group of its own."""
    if per_env_kwargs is not None:
        if isinstance(per_env_kwargs, Mapping) or len(per_env_kwargs) != n:
            raise ConfigError(
                f"per_env_kwargs must be a sequence of {n} mappings (one per env), got "
                f"{per_env_kwargs!r:.200}"
            )
        for i, kw in enumerate(per_env_kwargs):
            if not isinstance(kw, Mapping):
                raise ConfigError(f"per_env_kwargs[{i}] must be a mapping, got {kw!r}")
    creator = load_env_creator(spec.entry_point)
    shared = {**spec.kwargs, **kwargs}
    reps: list[CoreEnv] = []
    makes: list[Callable[[], CoreEnv] | None] = []
    group: list[int] = []
    by_key: dict[Any, int] = {}  # a group's per-row kwargs, frozen -> the group
    unkeyed: list[tuple[Mapping[str, Any], int]] = []  # those that do not freeze
    kw0: dict[str, Any] = {}
    for i in range(n):
        mine = per_env_kwargs[i] if per_env_kwargs is not None else {}
        key = _frozen(mine)
        g = by_key.get(key) if key is not None else next(
            (g for theirs, g in unkeyed if _same_kwargs(mine, theirs)), None)
        if g is not None:
            group.append(g)
            continue
        kw = {**shared, **mine}
        # Load the vehicle file once, not per group (YAML parsing costs ~10 ms): groups that
        # name the same vehicle as row 0 get row 0's (frozen) VehicleConfig.
        if i == 0:
            kw0 = kw
        elif kw.get("vehicle", _UNSET) == kw0.get("vehicle", _UNSET):
            kw = {**kw, "vehicle": reps[0].vehicle}
        env = creator(**kw)
        if not isinstance(env, CoreEnv):
            raise UnsupportedEnvError(f"{spec.id}: the vector env runs envs on a VDSim env "
                                      f"core (CoreEnv) only, got {type(env).__name__}")
        # Rows built from the same kwargs have row 0's spaces; rows of their own may not.
        if reps and not (_same_space(env.observation_space, reps[0].observation_space)
                         and _same_space(env.action_space, reps[0].action_space)):
            raise ConfigError(f"per_env_kwargs[{i}] changes the observation or action space")
        if reps:  # equal spaces: the rows share row 0's objects (~3 KiB a row otherwise)
            env.observation_space = reps[0].observation_space
            env.action_space = reps[0].action_space
        group.append(len(reps))
        if env.resets_in_core:  # its rows alike can be copies of its core
            if key is not None:
                by_key[key] = len(reps)
            else:
                unkeyed.append((mine, len(reps)))
        reps.append(env)
        make: Callable[[], Any] = functools.partial(creator, **{**kw, "vehicle": env.vehicle})
        makes.append(make if env.resets_in_core else None)
    return reps, group, makes


def _frozen(value: Any) -> Any:
    """A hashable stand-in for a row's kwargs (mappings and sequences made tuples), equal
    where the kwargs are equal; None where a value does not hash (the rows are then
    compared one by one, ``_same_kwargs``)."""
    try:
        return _frozen_item(value)
    except TypeError:
        return None


def _frozen_item(value: Any) -> Any:
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((str(k), _frozen_item(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen_item(v) for v in value))
    hash(value)  # TypeError where it does not hash (an array)
    return value


def _same_kwargs(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two rows' own kwargs are equal (values that do not compare to one truth value,
    such as arrays, count as different: such rows are built apart)."""
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _autoreset_mode(mode: str | AutoresetMode) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        if mode not in _MODES.values():
            raise ConfigError(f"autoreset_mode must be one of {sorted(_MODES)}, got {mode!r}")
        return mode
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ConfigError(f"autoreset_mode must be one of {sorted(_MODES)}, got {mode!r}") from None

