"""Snapshot and restore of an env's whole state (a part of ``CoreEnv``, split from
core_env.py by job): ``snapshot()`` returns a ``Snapshot``, an immutable record of the C++
core (a copy: plant, task, command schedule, delay lines, sensor ring, network chain,
latency generators, episode counters) and of the Python env's mutable state
(``EnvState``: the numpy generators as state dicts, the episode's randomized models, the
reset bookkeeping, the measured next delay, the row buffers, the step log, the course);
``restore(snapshot)`` puts both back into an env built the same way (``Fingerprint``: the
class, the checked constructor arguments and the configuration), so the same actions then
give the same results bit for bit. The vector env's part is vector_snapshot.py.

Not part of the state, deliberately: rendering (the render mode, window, notes), the
spaces' own sampling generators (``action_space.seed``) and the configuration, which a
snapshot does not carry over but requires to be equal.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import numpy as np

from vdsim_gym.config.latency import LatencyModel
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.envs.env_kwargs import constructor_keywords
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.randomization import Randomization

# CoreEnv.__init__'s own keywords: the fingerprint takes their checked values by hand
# (render_mode is no state; latency, network and obs_delay are the episode's under
# randomize=), so they are left out of the subclasses' constructor arguments.
_CORE_KEYWORDS = frozenset(("render_mode", "latency", "overrun", "network", "obs_delay",
                            "time_limit", "randomize", "action_history"))
# The fix every refusal names.
_FIX = ("restore a snapshot into an env built the same way (same class, constructor "
        "arguments and configure_latency / configure_obs_delay / configure_network / "
        "set_longitudinal / set_action_history), or take a snapshot of this env")


# ---------------------------------------------------------------- fingerprints


def _plain(value: Any) -> Any:
    """``value`` as plain, comparable, picklable data: numbers (NaN as the string "nan",
    so equal builds compare equal), strings, tuples; dataclasses and mappings as tuples
    of (name, value); arrays by dtype, shape and bytes."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value else "nan"
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, np.ascontiguousarray(value).tobytes())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, enum.Enum):
        return (type(value).__qualname__, value.name)
    if isinstance(value, PurePath):
        return ("path", str(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__, tuple(
            (f.name, _plain(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if isinstance(value, Mapping):
        return ("map", tuple(sorted((str(k), _plain(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple, frozenset, set)):
        items = tuple(_plain(v) for v in value)
        return tuple(sorted(items, key=repr)) if isinstance(value, (set, frozenset)) else items
    state = getattr(value, "__dict__", None)
    if state is not None:
        return (type(value).__qualname__, _plain(dict(state)))
    return (type(value).__qualname__, repr(value))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 100 else text[:97] + "..."


@dataclass(frozen=True)
class Fingerprint:
    """How an env was built: (name, plain value, short description) per item, the class
    first. Two envs built the same way have equal fingerprints; restore refuses a
    snapshot whose fingerprint differs from the env's, naming the first item that does."""

    items: tuple[tuple[str, Any, str], ...]

    def same(self, other: Fingerprint) -> bool:
        return self is other or \
            [i[:2] for i in self.items] == [i[:2] for i in other.items]

    def difference(self, other: Fingerprint) -> str | None:
        """What differs between this (a snapshot's) and ``other`` (the env's), worded for
        an error message; None when they are the same."""
        if self.same(other):
            return None
        mine, theirs = dict((n, (v, d)) for n, v, d in self.items), \
            dict((n, (v, d)) for n, v, d in other.items)
        if mine.get("class") != theirs.get("class"):
            return (f"the snapshot is of a {mine.get('class', ('?', '?'))[0]}, and this env "
                    f"is a {theirs.get('class', ('?', '?'))[0]}")
        for name in [n for n, _, _ in self.items] + [n for n, _, _ in other.items]:
            a, b = mine.get(name), theirs.get(name)
            if a is None or b is None or a[0] != b[0]:
                return (f"the snapshot's env was built with {name}="
                        f"{'(none)' if a is None else a[1]}, and this env has {name}="
                        f"{'(none)' if b is None else b[1]}")
        return "the snapshot's env was built differently"  # pragma: no cover


@functools.lru_cache(maxsize=64)
def _task_params(make_core: Any) -> tuple[tuple[str, Any], ...]:
    """The task core's keyword-only parameters (``_make_core``'s) and their defaults."""
    return tuple((n, q.default) for n, q in inspect.signature(make_core).parameters.items()
                 if q.kind == q.KEYWORD_ONLY)


# ---------------------------------------------------------------- generators


def generator_state(rng: np.random.Generator | None) -> dict[str, Any] | None:
    """A numpy Generator's bit generator state (a plain dict), or None."""
    return None if rng is None else dict(rng.bit_generator.state)


def bit_generator_of(state: dict[str, Any], reuse: Any = None) -> np.random.BitGenerator:
    """A numpy bit generator of ``state``'s kind in that state: ``reuse`` set to it when
    it is one of that kind (a new one costs ~10 us: numpy seeds it first), else new."""
    if type(reuse).__name__ == state["bit_generator"]:
        reuse.state = state
        return reuse
    bit_generator = getattr(np.random, state["bit_generator"])(0)
    bit_generator.state = state
    return bit_generator


def generator_of(current: np.random.Generator | None, state: dict[str, Any] | None
                 ) -> np.random.Generator | None:
    """A Generator in ``state`` (None: none): ``current`` set to it in place when it is
    one of the same kind (whoever holds it, a vector session included, then draws from
    the restored state), else a new one."""
    if state is None:
        return None
    if current is not None and type(current.bit_generator).__name__ == state["bit_generator"]:
        current.bit_generator.state = state
        return current
    return np.random.Generator(bit_generator_of(state))


def _read_only(a: np.ndarray) -> np.ndarray:
    out = np.array(a, copy=True)
    out.flags.writeable = False
    return out


# ---------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class EnvState:
    """The Python env's mutable state (what ``CoreEnv`` and its tasks change after
    construction), as plain data: generators as numpy state dicts, the randomized models
    of the episode, the reset bookkeeping, the measured next delay, the row buffers
    (read-only copies), the step log and the course (None; "own": the env's own course
    object, ``_course``; else a Course)."""

    np_random: dict[str, Any] | None
    np_random_seed: int | None
    latency_rng: dict[str, Any] | None
    next_delay: float | None
    needs_reset: bool
    reset_reason: str
    episode_drawn: bool
    latency: LatencyModel | None
    network: NetworkModel | None
    obs_delay: LatencyModel | None
    measured: bool
    reset_extra: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...]
    step_log: tuple[tuple[float, ...], ...]
    obs: np.ndarray
    terms: np.ndarray
    info: np.ndarray
    course: Any


@dataclass(frozen=True)
class Snapshot:
    """An env's whole state (``env.unwrapped.snapshot()``), for ``restore``: ``core``, a
    copy of its C++ env core (its own object, never stepped), ``state`` the Python env's
    (``EnvState``) and ``fingerprint`` how the env was built. Immutable (a frozen
    dataclass; the arrays are read-only, the core is only read by restore). Pickles: the
    core's copy through csrc/vdsim/archive.hpp, everything else is plain data."""

    env: str  # the env's class name, for messages
    fingerprint: Fingerprint
    core: Any
    state: EnvState

    def __repr__(self) -> str:
        return f"Snapshot({self.env}, t = {getattr(self.core, 'time', math.nan):.3f} s)"


class EnvSnapshot:
    """The snapshot part of ``CoreEnv`` (its base): ``snapshot`` and ``restore``. The
    attributes below are the env's, set by ``CoreEnv.__init__``; a task lists in
    ``SNAPSHOT_CONFIG`` the attributes that hold checked constructor arguments under
    another name than the keyword's (e.g. ACC's ``families`` for ``scenario``)."""

    SNAPSHOT_CONFIG: tuple[str, ...] = ()
    _core: Any
    _stepper: Any
    _task_kwargs: dict[str, Any]
    _make_core: Any
    _row_rng: tuple[Any, int] | None
    _np_random: np.random.Generator | None
    _np_random_seed: int | None
    _latency_rng: np.random.Generator | None
    _next_delay: float | None
    _needs_reset: bool
    _reset_reason: str
    _episode_drawn: bool
    _measured: bool
    _reset_extra: dict[str, Any]
    _step_log: list[tuple[float, ...]]
    _obs: np.ndarray
    _terms: np.ndarray
    _info: np.ndarray
    _nominal_network: NetworkModel | None
    physics: Any
    time_limit: float | None
    action_history: int
    overrun: str
    randomize: Randomization | None
    latency: LatencyModel | None
    network: NetworkModel | None
    obs_delay: LatencyModel | None

    if TYPE_CHECKING:  # CoreEnv's, EnvLatency's, EnvRandomization's and EnvSeeding's
        def held(self) -> Any: ...
        @property
        def reports_timing(self) -> bool: ...
        def _episode_from_core(self) -> dict[str, float]: ...
        def _reset_in_vector(self, seed: int | None) -> None: ...

    def snapshot(self) -> Snapshot:
        """This env's whole state, for ``restore``: a copy of its C++ core (plant, task,
        command schedule, delay lines, sensor ring, network chain, latency generators,
        episode counters) and the Python env's state (``np_random`` and the latency
        stream's generator, the episode's randomized parameters, whether a reset is
        needed and why, the measured next delay, the last step's rows, the step log, the
        course). The env is not changed. See docs/ENVS.md, "Snapshot and restore"."""
        self._check_not_row("snapshot")
        with self.held():
            return Snapshot(type(self).__name__, self._fingerprint(), self._core.snapshot(),
                            self._env_state())

    def restore(self, snapshot: Snapshot) -> None:
        """Puts back the state ``snapshot`` (this env's or another's ``snapshot()``)
        holds: the same actions then give the same observations, rewards, flags and infos
        bit for bit as after the snapshot was taken, across resets too. The env must be
        built the same way as the snapshot's (same class, constructor arguments and
        configuration): otherwise, or for another object, a ConfigError naming the
        difference, and the env is left as it was."""
        self._check_not_row("restore")
        if not isinstance(snapshot, Snapshot):
            what = "a vector env's snapshot (restore it into the vector env: venv.restore)" \
                if type(snapshot).__name__ == "VectorSnapshot" else \
                f"{type(snapshot).__name__} {_short(snapshot)}"
            raise ConfigError(f"restore() takes a Snapshot from env.unwrapped.snapshot(), got "
                              f"{what}")
        self._check_fingerprint(snapshot.fingerprint)
        with self.held():
            self._core.restore(snapshot.core)  # the live core keeps its address
            self._set_env_state(snapshot.state)

    # ------------------------------------------------------------ the parts

    def _check_not_row(self, what: str) -> None:
        if self._row_rng is not None:
            _, i = self._row_rng
            raise ConfigError(
                f"this env is row {i} of a vector env, whose session holds its generators "
                f"and rows: {what} the vector env's rows instead (venv.snapshot(rows=[{i}]), "
                f"venv.restore(snapshot, rows=[{i}]))")

    def _check_fingerprint(self, fingerprint: Fingerprint) -> None:
        diff = fingerprint.difference(self._fingerprint())
        if diff is not None:
            raise ConfigError(f"cannot restore this snapshot: {diff}; {_FIX}")

    def _config_values(self) -> list[tuple[str, Any]]:
        """(name, value) of what the fingerprint covers, its values as the env holds them:
        the task's arguments first (what a refusal names first: a DLC's speed, not the
        time limit derived from it), then the physics and the configuration."""
        items: list[tuple[str, Any]] = []
        names: set[str] = set()

        def add(name: str, value: Any) -> None:
            if name not in names:
                items.append((name, value))
                names.add(name)

        # the subclasses' own arguments, checked, where the env keeps them under their
        # names (in its __dict__: a property of that name is the episode's, e.g. ACC's
        # scenario), and the attributes the task names (SNAPSHOT_CONFIG)
        cls: Any = type(self)
        for name in tuple(n for n in constructor_keywords(cls) if n not in _CORE_KEYWORDS) \
                + self.SNAPSHOT_CONFIG:
            if name in self.__dict__ or name in self.SNAPSHOT_CONFIG:
                add(name, getattr(self, name))
        for name, default in _task_params(cls._make_core):
            # the checked value where the env keeps one (reward_weights resolved), else
            # the argument as given or the default
            add(name, self.__dict__[name] if name in self.__dict__ else
                self._task_kwargs.get(name, default))
        r = self.randomize
        add("physics", self.physics)
        add("time_limit", self.time_limit)
        add("action_history", self.action_history)
        add("randomize", r)
        add("latency", None if r is not None and r.changes_latency else self.latency)
        add("overrun", self.overrun)
        add("network", self._nominal_network if r is not None and r.changes_network
            else self.network)
        add("obs_delay", None if r is not None and r.changes_obs_delay else self.obs_delay)
        return items

    def _fingerprint(self) -> Fingerprint:
        """How this env was built (cached while the objects it is made of stay the same:
        a configure_* call or a rebuilt core makes it anew)."""
        values = self._config_values()
        cached = self.__dict__.get("_snapshot_fingerprint")
        if cached is not None and len(cached[0]) == len(values) and all(
                a is b for a, (_, b) in zip(cached[0], values, strict=True)):
            return cached[1]
        cls = type(self)
        name = f"{cls.__module__}.{cls.__qualname__}"
        fp = Fingerprint((("class", name, cls.__name__),) + tuple(
            (n, _plain(v), _short(v)) for n, v in values))
        self.__dict__["_snapshot_fingerprint"] = (tuple(v for _, v in values), fp)
        return fp

    def _env_state(self) -> EnvState:
        course = self.__dict__.get("course")
        if course is not None and course is self.__dict__.get("_course"):
            course = "own"
        return EnvState(
            generator_state(self._np_random), self._np_random_seed,
            generator_state(self._latency_rng), self._next_delay, self._needs_reset,
            self._reset_reason, self._episode_drawn, self.latency, self.network,
            self.obs_delay, self._measured,
            tuple((k, tuple(dict(v).items())) for k, v in self._reset_extra.items()),
            tuple(self._step_log), _read_only(self._obs), _read_only(self._terms),
            _read_only(self._info), course)

    def _set_env_state(self, s: EnvState) -> None:
        self._np_random = generator_of(self._np_random, s.np_random)
        self._np_random_seed = s.np_random_seed
        self._latency_rng = generator_of(self._latency_rng, s.latency_rng)
        self._next_delay = s.next_delay
        self._needs_reset, self._reset_reason = s.needs_reset, s.reset_reason
        self._episode_drawn = s.episode_drawn
        self.latency, self.network, self.obs_delay = s.latency, s.network, s.obs_delay
        self._measured = s.measured
        self._stepper.timing = self.reports_timing
        self._reset_extra = {k: dict(v) for k, v in s.reset_extra}
        self._step_log[:] = s.step_log  # in place: an EvalStepper may hold the list
        np.copyto(self._obs, s.obs)
        np.copyto(self._terms, s.terms)
        np.copyto(self._info, s.info)
        if "course" in self.__dict__:
            self.__dict__["course"] = self.__dict__.get("_course") if s.course == "own" \
                else s.course
        self.__dict__.pop("_course_view", None)  # PathFollow's view of the core's course

    def _fresh_row_state(self, has_rng: bool, seed: int | None) -> None:
        """The Python state of a vector env's row env built now on its (restored) row
        (what ``VDSimVectorEnv._row_env`` gives a new env): the row's episode from its
        core, its seed, its generators left in the session."""
        self._np_random, self._np_random_seed, self._latency_rng = None, None, None
        self._next_delay = None
        self._needs_reset, self._reset_reason = True, "call reset() before step()"
        self._episode_drawn = False
        self._reset_extra = {}
        self._step_log[:] = []
        r = self.randomize
        if r is not None:
            if not np.isnan(self._core.episode_draws).all():
                self._episode_from_core()
            else:  # the models until the first reset: the middle of the ranges
                mid = r.midpoint()
                if r.changes_latency:
                    self.latency = Randomization.latency(mid)
                if r.changes_network:
                    self.network = Randomization.network(self._nominal_network, mid)
                if r.changes_obs_delay:
                    self.obs_delay = Randomization.obs_delay(mid)
        if has_rng:
            self._reset_in_vector(seed)
        self.__dict__.pop("_course_view", None)


__all__ = ["EnvSnapshot", "EnvState", "Fingerprint", "Snapshot", "bit_generator_of",
           "generator_of", "generator_state"]
