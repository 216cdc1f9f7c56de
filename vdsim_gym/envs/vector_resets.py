"""The resets of a vector env's rows (a part of ``VDSimVectorEnv``, split from vector.py by
job): the seeds per row (``_seed_list``), the rows reset in C++ (``_reset_in_core``:
seeded there from numpy SeedSequence's entropy words, or continuing their generators;
``_reset_rows``: the autoresets), the rows reset by their envs (``_reset_row``) and
SAME_STEP's final observation and info (``_same_step_reset``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from vdsim_gym.envs.env_seeding import _LATENCY_STREAM
from vdsim_gym.envs.vector_infos import VectorInfos
from vdsim_gym.errors import ConfigError

Seeds = int | Sequence[int | None] | None


class VectorResets(VectorInfos):
    """The resets part of ``VDSimVectorEnv`` (its base; the resets report their infos):
    the attributes below are the vector env's, set by ``VDSimVectorEnv.__init__``."""

    _obs: np.ndarray
    _elapsed: np.ndarray
    _has_rng: np.ndarray
    _core_resets: np.ndarray
    _all_core_resets: bool
    _row_seeds: list[int | None]

    def _reset_mask(self, mask: Any) -> np.ndarray:
        n = self.num_envs
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (n,):
            raise ConfigError(f"options['reset_mask'] must be a numpy bool array of shape ({n},)"
                             f", got {mask!r}")
        if not mask.any():
            raise ConfigError("options['reset_mask'] resets no env; set at least one True")
        return mask.copy()

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


__all__ = ["VectorResets"]
