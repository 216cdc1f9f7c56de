"""The rows of a vector env (a part of ``VDSimVectorEnv``, split from vector.py by job):
the rows' plan from the env kwargs and ``per_env_kwargs`` (``_build_envs``: rows built
alike form a group, one env built per group, the others copies of its core), the checks
that rows fit one batch (``_same_space``), and ``RowEnvs``, the rows as single envs built
on demand (``venv.envs``)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.registration import load_env_creator

from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.errors import ConfigError, UnsupportedEnvError

_UNSET = object()


def _per_row(reps: list[CoreEnv], group: list[int], flag: Callable[[CoreEnv], bool]
             ) -> np.ndarray:
    """``flag`` of every row: its group's env's (a group's other rows are copies of its
    core)."""
    return np.array([flag(e) for e in reps], bool)[np.asarray(group, np.int64)]


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
    row's core, generators and seed). ``venv``: the VDSimVectorEnv (Any: vector.py
    imports this module)."""

    def __init__(self, venv: Any, reps: list[CoreEnv], group: list[int],
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


__all__ = ["RowEnvs"]
