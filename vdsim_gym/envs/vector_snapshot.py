"""Snapshot and restore of a vector env's rows (a part of ``VDSimVectorEnv``, split from
vector.py by job): ``snapshot(rows=None)`` returns a ``VectorSnapshot`` of the rows (each
row's C++ core copied, its batch buffers, its episode's step count and pending autoreset,
its generators wherever they live: the row's env's numpy ones, or the session's own seeded
in C++, as numpy state dicts; the Python state of the row's env when it was built), and
``restore(snapshot, rows=None)`` puts them back into the same rows or others of a vector
env built the same way. With every row, the vector env's own state (the first reset's
requirement, its ``np_random``) comes back too. See docs/VECTOR.md, "Snapshot and
restore"."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode

from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_snapshot import (
    EnvState,
    Fingerprint,
    bit_generator_of,
    generator_of,
    generator_state,
)
from vdsim_gym.envs.vector_rows import RowEnvs
from vdsim_gym.errors import ConcurrentUseError, ConfigError


@dataclass(frozen=True)
class RowRng:
    """A row's generators for its resets in C++ (``VectorEnvCore.row_rng``): the numpy
    states of the task's and the latency stream's (None: no latency seed drawn), the
    latency model's seed, and whether the session owned them (seeded in C++ or restored;
    else the row's env holds them)."""

    task: dict[str, Any]
    latency: dict[str, Any] | None
    model_seed: int
    owned: bool


@dataclass(frozen=True)
class VectorSnapshot:
    """Rows of a vector env (``venv.snapshot(rows)``), for ``venv.restore``: per row
    (``rows``, the source indices) a copy of its C++ core, its batch buffers (read-only
    arrays, one row each), its step count, pending autoreset, whether it had generators,
    its last seed, its generators (``RowRng``) and its env's Python state (``EnvState``;
    None: the env was not built); ``fingerprints`` how each row was built, ``fingerprint``
    the vector env's (id, autoreset mode, max_episode_steps); ``whole`` the vector env's
    own state (needs a reset, ``np_random``) when every row was taken. Immutable; pickles
    (the core copies with it: csrc/vdsim/archive.hpp)."""

    env_id: str
    fingerprint: Fingerprint
    num_envs: int
    rows: tuple[int, ...]
    fingerprints: tuple[Fingerprint, ...]
    cores: tuple[Any, ...]
    obs: np.ndarray
    rewards: np.ndarray
    flags: np.ndarray
    terms: np.ndarray
    info: np.ndarray
    elapsed: np.ndarray
    autoreset: np.ndarray
    has_rng: np.ndarray
    row_seeds: tuple[int | None, ...]
    rngs: tuple[RowRng | None, ...]
    envs: tuple[EnvState | None, ...]
    whole: tuple[bool, dict[str, Any] | None, int | None] | None

    def __repr__(self) -> str:
        return f"VectorSnapshot({self.env_id}, rows {list(self.rows)} of {self.num_envs})"


def _rows_of(a: np.ndarray, rows: list[int]) -> np.ndarray:
    out = a[rows]  # a copy (fancy indexing)
    out.flags.writeable = False
    return out


class VectorSnapshots:
    """The snapshot part of ``VDSimVectorEnv`` (its base): the attributes below are the
    vector env's, set by ``VDSimVectorEnv.__init__``."""

    num_envs: int
    env_id: str
    autoreset_mode: AutoresetMode
    max_episode_steps: int | None
    envs: RowEnvs
    closed: bool
    _reps: list[CoreEnv]
    _group: np.ndarray
    _session: Any
    _in_use: Any
    _obs: np.ndarray
    _rewards: np.ndarray
    _flags: np.ndarray
    _terms: np.ndarray
    _info: np.ndarray
    _elapsed: np.ndarray
    _autoreset: np.ndarray
    _any_autoreset: bool
    _has_rng: np.ndarray
    _row_seeds: list[int | None]
    _needs_reset: bool
    _np_random: np.random.Generator | None
    _np_random_seed: int | None

    def snapshot(self, rows: Sequence[int] | None = None) -> VectorSnapshot:
        """The state of ``rows`` (row indices; None: every row), for ``restore``: each
        row's C++ core (copied), batch buffers, step count, pending autoreset, generators
        and its env's Python state (when built); with every row, the vector env's own
        state too. The vector env is not changed."""
        self._check_usable("snapshot")
        picked = self._row_list(rows, "rows")
        with self._held():
            session = self._session
            fps = self._row_fingerprints(picked)
            rngs = tuple(None if (r := session.row_rng(i)) is None else RowRng(*r)
                         for i in picked)
            envs = tuple(None if (e := self.envs.built_at(i)) is None else e._env_state()
                         for i in picked)
            whole = None
            if picked == list(range(self.num_envs)):
                whole = (self._needs_reset, generator_state(self._np_random),
                         self._np_random_seed)
            return VectorSnapshot(
                self.env_id, self._vector_fingerprint(), self.num_envs, tuple(picked), fps,
                tuple(session.snapshot_row(i) for i in picked),
                _rows_of(self._obs, picked), _rows_of(self._rewards, picked),
                _rows_of(self._flags, picked), _rows_of(self._terms, picked),
                _rows_of(self._info, picked), _rows_of(self._elapsed, picked),
                _rows_of(self._autoreset, picked), _rows_of(self._has_rng, picked),
                tuple(self._row_seeds[i] for i in picked), rngs, envs, whole)

    def restore(self, snapshot: VectorSnapshot, rows: Sequence[int] | None = None) -> None:
        """Puts the snapshot's rows back: into the rows they were taken from (None), or
        into ``rows`` (one index per snapshot row, in its order) of this vector env or of
        another built the same way (same id, kwargs, per_env_kwargs of those rows,
        autoreset mode and max_episode_steps). The same actions then give the same
        results bit for bit. A snapshot of every row restored into every row also puts
        back the vector env's own state. Refused (ConfigError naming the cause, nothing
        changed) for another object, rows out of range or repeated, or rows built
        differently."""
        self._check_usable("restore")
        if not isinstance(snapshot, VectorSnapshot):
            what = "a single env's Snapshot (restore it into that env: " \
                "env.unwrapped.restore)" if type(snapshot).__name__ == "Snapshot" else \
                f"{type(snapshot).__name__}"
            raise ConfigError("restore() takes a VectorSnapshot from venv.snapshot(), got "
                              f"{what}")
        diff = snapshot.fingerprint.difference(self._vector_fingerprint())
        if diff is not None:
            raise ConfigError(f"cannot restore this snapshot: {diff}; restore it into a "
                              "vector env built the same way, or take a snapshot of this one")
        if rows is None:
            if max(snapshot.rows) >= self.num_envs:
                raise ConfigError(
                    f"the snapshot's rows {list(snapshot.rows)} are not all rows of this "
                    f"vector env of {self.num_envs}: pass rows= (where to put them)")
            dest = list(snapshot.rows)
        else:
            dest = self._row_list(rows, "rows")
            if len(dest) != len(snapshot.rows):
                raise ConfigError(
                    f"rows names {len(dest)} rows for a snapshot of {len(snapshot.rows)} "
                    f"(rows {list(snapshot.rows)}): give one destination row per snapshot row")
        mine = self._row_fingerprints(dest)
        checked: set[tuple[int, int]] = set()  # (snapshot's, this env's): one per group pair
        for k, (j, fp) in enumerate(zip(dest, mine, strict=True)):
            theirs = snapshot.fingerprints[k]
            if (id(theirs), id(fp)) in checked:
                continue
            diff = theirs.difference(fp)
            checked.add((id(theirs), id(fp)))
            if diff is not None:
                raise ConfigError(
                    f"cannot restore the snapshot's row {snapshot.rows[k]} into row {j}: "
                    f"{diff}; restore it into a row built the same way (the same kwargs "
                    "and per_env_kwargs)")
        with self._held():
            for k, j in enumerate(dest):
                self._restore_row(snapshot, k, j)
            self._any_autoreset = bool(self._autoreset.any())
            if snapshot.whole is not None and len(dest) == self.num_envs \
                    and dest == list(range(self.num_envs)):
                self._needs_reset, rng_state, self._np_random_seed = snapshot.whole
                self._np_random = generator_of(self._np_random, rng_state)

    # ------------------------------------------------------------ the parts

    def _restore_row(self, s: VectorSnapshot, k: int, j: int) -> None:
        """Row j becomes the snapshot's row k."""
        session = self._session
        session.restore_row(j, s.cores[k])
        self._obs[j], self._rewards[j], self._flags[j] = s.obs[k], s.rewards[k], s.flags[k]
        self._terms[j], self._info[j], self._elapsed[j] = s.terms[k], s.info[k], s.elapsed[k]
        self._autoreset[j], self._has_rng[j] = s.autoreset[k], s.has_rng[k]
        self._row_seeds[j] = s.row_seeds[k]
        env, state, rng = self.envs.built_at(j), s.envs[k], s.rngs[k]
        if env is not None:  # its Python state: the snapshot's, or a new row env's
            if state is not None:
                env._set_env_state(state)
            else:
                env._fresh_row_state(bool(s.has_rng[k]), s.row_seeds[k])
        if rng is None:
            session.release_row_rng(j)
        elif env is not None and state is not None and not rng.owned \
                and env._np_random is not None:
            # the env's generators (restored above), which the session draws from
            lat = env._latency_rng
            session.set_row_rng(j, env._np_random.bit_generator,
                                None if rng.latency is None or lat is None
                                else lat.bit_generator, rng.model_seed)
        else:  # the session's own (the row's env takes them at its first use)
            if env is not None and env._row_rng is not None:
                env._np_random = env._latency_rng = None
            # numpy objects kept per row for these restores, set in place at the next
            # (the row's env takes copies, so nothing else holds them)
            pool = self.__dict__.setdefault("_restored_rngs", {})
            old = pool.get(j, (None, None))
            bgs = (bit_generator_of(rng.task, old[0]),
                   None if rng.latency is None else bit_generator_of(rng.latency, old[1]))
            pool[j] = (bgs[0], bgs[1] if bgs[1] is not None else old[1])
            session.set_row_rng(j, bgs[0], bgs[1], rng.model_seed, owned=True)

    def _vector_fingerprint(self) -> Fingerprint:
        return Fingerprint((("class", "VDSimVectorEnv", "VDSimVectorEnv"),
                            ("env_id", self.env_id, repr(self.env_id)),
                            ("autoreset_mode", self.autoreset_mode.name,
                             self.autoreset_mode.name),
                            ("max_episode_steps", self.max_episode_steps,
                             repr(self.max_episode_steps))))

    def _row_fingerprints(self, rows: list[int]) -> tuple[Fingerprint, ...]:
        """How each row was built: its group's env's fingerprint (a group's rows are built
        from the same kwargs), computed once per group."""
        by_group: dict[int, Fingerprint] = {}
        out = []
        for g in self._group[rows].tolist():
            fp = by_group.get(g)
            if fp is None:
                fp = by_group[g] = self._reps[g]._fingerprint()
            out.append(fp)
        return tuple(out)

    def _row_list(self, rows: Sequence[int] | None, name: str) -> list[int]:
        n = self.num_envs
        if rows is None:
            return list(range(n))
        if isinstance(rows, (str, bytes)) or not isinstance(rows, (Sequence, np.ndarray)):
            raise ConfigError(f"{name} must be None or a sequence of row indices, got "
                              f"{rows!r:.100}")
        out = []
        for i in rows:
            if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)) \
                    or not 0 <= i < n:
                raise ConfigError(f"{name} must hold row indices in [0, {n}), got {i!r}")
            out.append(int(i))
        if not out:
            raise ConfigError(f"{name} is empty: name at least one row (None: every row)")
        if len(set(out)) != len(out):
            raise ConfigError(f"{name} repeats a row: {out}")
        return out

    def _check_usable(self, what: str) -> None:
        if self.closed:
            raise ConfigError(f"cannot {what}: this vector env is closed; create a new one "
                              "(gym.make_vec(...))")

    @contextlib.contextmanager
    def _held(self) -> Iterator[None]:
        """The vector env for this call (another thread's meanwhile: ConcurrentUseError)."""
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of("this VDSimVectorEnv")
        try:
            yield
        finally:
            self._in_use.release()


__all__ = ["RowRng", "VectorSnapshot", "VectorSnapshots"]
