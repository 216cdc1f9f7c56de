"""The infos of a vector env (a part of ``VDSimVectorEnv``, split from vector.py by job):
batched as Gymnasium's SyncVectorEnv batches them (arrays and ``_key`` masks): the step's
(``_step_infos``), the reset's (``_reset_infos``, ``_reset_info``; the randomization draws
of the reset rows: ``_add_reset_extra``) and what an episode end adds, from the row's core
(``_end_info``, ``episode_summary``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_outcome import TERMINATED, TRUNCATED
from vdsim_gym.envs.vector_rows import RowEnvs


class VectorInfos:
    """The infos part of ``VDSimVectorEnv`` (its base): the attributes below are the
    vector env's, set by ``VDSimVectorEnv.__init__``."""

    num_envs: int
    reward_term_names: tuple[str, ...]
    envs: RowEnvs
    _env0: CoreEnv
    _reps: list[CoreEnv]
    _group: np.ndarray
    _session: Any
    _info: np.ndarray
    _terms: np.ndarray
    _flags: np.ndarray
    _base_keys: tuple[Any, ...]
    _reset_keys: tuple[Any, ...]
    _latency_keys: tuple[Any, ...]
    _has_latency: bool
    _latency_rows: np.ndarray
    _randomized: np.ndarray

    if TYPE_CHECKING:  # Gymnasium's VectorEnv's
        def _add_info(self, vector_infos: dict[str, Any], env_info: dict[str, Any],
                      env_num: int) -> dict[str, Any]: ...

    def episode_summary(self, i: int) -> dict[str, Any]:
        """Row i's episode so far (``CoreEnv.episode_summary``), read from its core: after
        the step that ended it, the ended episode (NEXT_STEP resets the row at the next
        step)."""
        return self._env0.summary_of(self._session.row_summary(i))

    def _end_info(self, i: int, flags: int) -> dict[str, Any]:
        """What row i's episode end adds to its info (``CoreEnv.episode_end_info``), from
        its core (no row env needed)."""
        return self._env0.episode_end_info(flags, self._session.row_summary(i))

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


__all__ = ["VectorInfos"]
