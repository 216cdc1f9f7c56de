"""CoreEnv: the one base of every env backed by a C++ env core (``EnvCore<Task>``).

Written once here: physics options (one ``PhysicsSpec``), render mode, the time limit in
seconds, latency and overrun (``configure_latency``, ``set_next_delay``, the per-episode
delay seed), spaces and caller-owned buffers sized from the core's spec, the reset and
step scaffolding (action checks, reset-needed bookkeeping, interrupt safety, info built by
name, the timing keys), and the refusal to copy or pickle. A task's env supplies its core
(``_make_core``), its reset (``_reset_task``: returns the plant's start state), its info
keys (``INFO_KEYS``), and what an episode end adds (``_episode_end``); the episode
summary comes from the core (``episode_summary``: steps, return, time, the task's fields).

Also written once here for every task: domain randomization (``randomize=``, drawn per
episode from ``np_random``: vehicle, steering actuator and latency; vdsim_gym.sim.randomization)
and the action history in the observation (``action_history=k``, appended by the core).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import math
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import (
    ACTION_TOL,
    check_action,
    check_action_history,
    is_real,
)
from vdsim_gym.config.latency import LatencyModel, check_obs_delay
from vdsim_gym.config.network import NetworkModel, check_network
from vdsim_gym.envs.env_latency import EnvLatency
from vdsim_gym.errors import (
    ArgumentTypeError,
    ConcurrentUseError,
    ConfigError,
    UnknownKeywordError,
    UnsupportedRenderModeError,
    UsageError,
)
from vdsim_gym.sim.plant import PhysicsSpec, observe_session
from vdsim_gym.sim.randomization import EpisodeParams, Randomization
from vdsim_gym.timing import ceil_ticks

FLAGS: dict[str, int] = dict(_core.ENV_FLAGS)  # the bits every env core shares
TERMINATED, TRUNCATED, TIME_LIMIT = FLAGS["terminated"], FLAGS["truncated"], FLAGS["time_limit"]
MAX_TIME_LIMIT_S = 3600.0


def task_flags(spec: Any) -> tuple[tuple[str, int], ...]:
    """A core spec's own flag bits (name, bit), in the spec's order: all but the ones
    every env core shares (terminated, truncated, time_limit)."""
    return tuple((str(n), int(b)) for n, b in dict(spec.flags).items() if n not in FLAGS)
  # [s]: longer episodes are a mistake (seconds, not steps)
# Timing keys every env core appends (with latency), with the Python type of each value.
TIMING_KEYS: tuple[tuple[str, type], ...] = (
    ("t_sample", float), ("t_apply", float), ("c_k", float), ("overrun", bool),
    ("skipped", int), ("n_overrun", int), ("n_skipped", int), ("sample_tick", int),
    ("apply_tick", int), ("lost", bool), ("n_lost", int), ("n_discarded", int),
    ("obs_age", float), ("obs_tick", int))
# Tag of the latency seed stream derived from the reset seed (independent of np_random).
_LATENCY_STREAM = 0x1A7E_5EED
PHYSICS_KEYS: tuple[str, ...] = tuple(
    name for name in inspect.signature(PhysicsSpec.build).parameters if name != "cls")


@functools.lru_cache(maxsize=256)
def _keyword_only(fn: Any) -> tuple[str, ...]:
    return tuple(n for n, q in inspect.signature(fn).parameters.items()
                 if q.kind == q.KEYWORD_ONLY)


# Gymnasium's np_random property, which CoreEnv's extends for vector rows seeded in C++.
_GYM_NP_RANDOM: Any = gym.Env.__dict__["np_random"]


def _numpy_pcg64(state: dict[str, Any]) -> np.random.Generator:
    """A numpy Generator on a PCG64 in ``state`` (numpy's PCG64.state)."""
    bit_generator = np.random.PCG64()
    bit_generator.state = state  # type: ignore[assignment]
    return np.random.Generator(bit_generator)


def refuse_copy(obj: Any) -> ArgumentTypeError:
    """The error for copying or pickling an object that holds C++ env cores."""
    return ArgumentTypeError(
        f"{type(obj).__name__} holds C++ env cores (simulation state, schedules, buffers) "
        "that are neither copied nor pickled, and a shallow copy would step the same core "
        "twice. Make another env instead, or pickle a factory: functools.partial(gym.make, "
        "'VDSim-DLC-v0', **kwargs) (what SubprocVecEnv and AsyncVectorEnv take); the same "
        "seed reproduces an episode bit for bit.")


def merge_reward_weights(defaults: Mapping[str, float],
                         given: Mapping[str, float] | None) -> dict[str, float]:
    """``defaults`` with the weights ``given`` replaced; unknown names and non-finite
    values are refused naming the valid terms."""
    weights = dict(defaults)
    for k, v in (given or {}).items():
        if k not in weights:
            raise ConfigError(f"unknown reward weight {k!r}; valid: {', '.join(weights)}")
        if not is_real(v) or not math.isfinite(v):
            raise ConfigError(f"reward weight {k!r} must be a finite number, got {v!r}")
        weights[k] = float(v)
    return weights


_BOXES: dict[tuple[float, float, int, int], gym.spaces.Box] = {}
_NAMES: dict[tuple[str, ...], tuple[str, ...]] = {}


def _shared(names: tuple[str, ...]) -> tuple[str, ...]:
    """One tuple (and one str per name) for every env with these column names: 10,000
    envs kept ~3 KiB each of identical names otherwise."""
    return _NAMES.setdefault(names, names)



def _box(low: float, high: float, n: int, n_first: int | None = None) -> gym.spaces.Box:
    """A float32 Box of n columns in [low, high], the columns from ``n_first`` on in
    [-1, 1] (the action history's). A copy of one built per shape: gymnasium's Box
    construction checks its bounds for ~30 us, two per env (a third of building 10,000
    envs). Each env gets its own Box object (its own sampling RNG, its own seed); the
    bound arrays, which nothing writes, are shared."""
    first = n if n_first is None else n_first
    key = (low, high, n, first)
    template = _BOXES.get(key)
    if template is None:
        lo = np.full(n, low, np.float32)
        hi = np.full(n, high, np.float32)
        lo[first:], hi[first:] = -1.0, 1.0
        template = gym.spaces.Box(lo, hi, dtype=np.float32) if first < n else \
            gym.spaces.Box(low, high, (n,), np.float32)
        for array in (template.low, template.high):
            array.flags.writeable = False
        _BOXES[key] = template
    # copy.copy's shallow copy without its reduce / setstate round trip (a fifth of an
    # env's build): the template's state is complete, and it is never sampled.
    box = object.__new__(gym.spaces.Box)
    box.__dict__.update(template.__dict__)
    return box


class CoreEnv(EnvLatency, gym.Env[np.ndarray, np.ndarray]):
    """A Gymnasium env over one C++ env core; subclasses are tasks (see the module doc)."""

    # A task that renders lists its modes (RENDER_MODES) and defines _frame().
    metadata: dict[str, Any] = {"render_modes": [], "render_fps": 50}
    DEFAULT_TIME_LIMIT: float | None = None  # [s]; subclasses set theirs
    # (name, Python type) of the task's info columns reported in every step's info.
    INFO_KEYS: tuple[tuple[str, type], ...] = ()
    # Info-row columns appended, as a tuple, to ``_step_log`` after every step (the
    # path envs: X, Y for ``trajectory()``); ``_after_reset`` starts the log.
    STEP_LOG: tuple[str, ...] = ()
    # Episode-summary fields (the core's summary_names) that are counts (reported as int).
    SUMMARY_INT_KEYS: tuple[str, ...] = ("steps",)
    # Summary fields a sweep's text table shows, in order, with their labels (units); the
    # first is its headline metric (interval shown, plotted by default). Every summary
    # field is tabulated in the sweep's CSV whether labelled or not.
    METRIC_LABELS: dict[str, str] = {}
    # The task's own flag bits, (name, bit) in the order an outcome names them when
    # several are set: its core's spec (task_flags(XEnvCore.default_spec())).
    TASK_FLAGS: tuple[tuple[str, int], ...] = ()
    # What a truncation is called: by the env's time limit, and by the task itself (its
    # course, scenario or cycle ended).
    TIME_LIMIT_OUTCOME: str = "time_limit"
    # Whether the task's whole episode draw is its core's draw_start (the start drawn in
    # C++ from np_random; nothing drawn in Python): the vector env then resets its rows
    # in C++ (resets_in_core).
    RESETS_IN_CORE: bool = False
    # The gym.make keywords the observation's columns depend on: a policy trained with
    # them requires them of the env it runs on (policies.load_policy's
    # required_env_kwargs).
    OBSERVATION_KWARGS: tuple[str, ...] = ("action_history",)
    # A vector env's row whose generators may live in its C++ session (seeded there:
    # VectorEnvCore.seed_rows): (session, row). np_random takes them over at first use.
    _row_rng: tuple[Any, int] | None = None
    # Whether an episode was drawn since the core was built (a reset, here or in the core).
    _episode_drawn: bool = False
    TRUNCATED_OUTCOME: str = "truncated"
    # The plant's validated physics options: PhysicsSpec (the vehicle Session) or another
    # plant's spec with the same attributes (substep_dt, ticks_per_period, control_period,
    # vehicle, actuator, level, longitudinal, integrator) and a keyword-only build().
    PHYSICS: Any = PhysicsSpec

    def __init__(
        self,
        *,
        render_mode: str | None = None,
        latency: LatencyModel | None = None,
        overrun: str = "skip",
        network: NetworkModel | None = None,
        obs_delay: LatencyModel | None = None,
        time_limit: float | None | str = "default",
        randomize: Mapping[str, Any] | Randomization | None = None,
        action_history: int = 0,
        **kwargs: Any,
    ) -> None:
        # Physics keywords are the plant's PHYSICS.build's (defined once there; for the
        # vehicle: level, vehicle, substep_dt, control_period, longitudinal, actuator,
        # integrator); the rest are the task's.
        physics = {k: kwargs.pop(k) for k in self.physics_keys() if k in kwargs}
        self.physics = p = self.PHYSICS.build(**physics)
        task_kwargs = kwargs
        unknown = sorted(set(task_kwargs) - set(_keyword_only(type(self)._make_core)))
        if unknown:
            raise UnknownKeywordError.of(f"{type(self).__name__}.__init__", unknown,
                                         self.kwarg_names())
        self.substep_dt, self.ticks_per_period = p.substep_dt, p.ticks_per_period
        self.control_period = p.control_period
        self.vehicle, self.actuator = p.vehicle, p.actuator
        self.level, self.longitudinal, self.integrator = p.level, p.longitudinal, p.integrator
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise UnsupportedRenderModeError(
                f"{type(self).__name__}: render_mode must be None or one of "
                f"{self.metadata['render_modes']}, got {render_mode!r} (a TypeError, so "
                "that stable-baselines3's make_vec_env retries without it)")
        self.render_mode = render_mode
        # Short labelled notes a frame shows (e.g. {"mode": "follow"}: acc_pid sets its
        # mode on the env it was built for); anyone may set or clear them.
        self.render_notes: dict[str, Any] = {}
        # The human window (the frames read the command in force and the pending ones
        # from the core's schedule).
        self._window: Any = None
        # render_mode="human": wait between frames to show the episode at real time.
        self.render_real_time = True
        # Held through reset() and step(): a second thread is refused, not interleaved.
        self._in_use = threading.Lock()
        self._task_kwargs = dict(task_kwargs)
        self.action_history: int = check_action_history(action_history)
        # The ranges drawn per episode (None: the nominal parameters every episode).
        self.randomize: Randomization | None = Randomization.parse(randomize)
        self._core = self._new_core(p)
        self.time_limit = self._check_time_limit(
            self.DEFAULT_TIME_LIMIT if time_limit == "default" else time_limit)
        self._set_time_limit_ticks()

        core = self._core
        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.control_period)}
        self.action_names: tuple[str, ...] = _shared(tuple(core.action_names))
        self.reward_term_names: tuple[str, ...] = _shared(tuple(core.term_names))
        self.info_names: tuple[str, ...] = _shared(tuple(core.info_names))
        self.summary_names: tuple[str, ...] = _shared(tuple(core.summary_names))
        self._n_actions = len(self.action_names)
        self.action_space = _box(-1.0, 1.0, self._n_actions)
        self._set_obs_layout()  # obs_names, observation_space and the obs buffer
        # Caller-owned buffers the core writes into; no allocation per step.
        self._terms = np.zeros(len(self.reward_term_names))
        self._info = np.zeros(len(self.info_names))
        self._step_log: list[tuple[float, ...]] = []
        self._bind_core()
        self.latency: LatencyModel | None = None
        self.overrun: str = "skip"
        self._measured = False
        self._next_delay: float | None = None
        self._latency_rng: np.random.Generator | None = None
        # What this episode's reset info adds to the task's keys (the randomization
        # draws); the vector env reports the same for its reset rows.
        self._reset_extra: dict[str, Any] = {}
        if self.randomize is not None:
            self._check_randomization(latency)
            if self.randomize.changes_latency:  # until the first reset: the midpoint's
                latency = Randomization.latency(self.randomize.midpoint())
        self.network: NetworkModel | None = None
        self._nominal_network = check_network(network)  # randomize['loss'] replaces its drop
        self._configure_latency(latency, overrun)
        if self.randomize is not None and self.randomize.changes_network:
            network = Randomization.network(self._nominal_network, self.randomize.midpoint())
        self.configure_network(network)
        self.obs_delay: LatencyModel | None = None
        obs_delay = check_obs_delay(obs_delay)
        if self.randomize is not None and self.randomize.changes_obs_delay:
            if obs_delay is not None:
                raise ConfigError(
                    "randomize['obs_delay'] draws the sensor delay per episode; drop "
                    f"obs_delay={obs_delay!r} (or drop the range to keep a fixed model)")
            obs_delay = Randomization.obs_delay(self.randomize.midpoint())
        self._configure_obs_delay(obs_delay)
        self._needs_reset = True
        self._reset_reason = "call reset() before step()"

    def _new_core(self, physics: Any) -> Any:
        """The task's core for ``physics`` with this env's action history."""
        core = self._make_core(physics, **self._task_kwargs)
        if self.action_history:
            core.set_action_history(self.action_history)
        return core

    @property
    def core(self) -> Any:
        """The env's C++ env core (a ``vdsim_gym._core`` ``*EnvCore``): the surface the
        layers above the envs (evaluations, wrappers, baselines, benchmarks) use instead
        of the private module. It holds the spec (``obs_names``, ``action_names``,
        ``info_names``, ``term_names``, ``summary_names``), the plant (``session``: the
        vehicle ``Session`` or the ``DynoSession``), the clock (``tick``, ``time``,
        ``next_sample``), the command schedule (``command_in_force()``,
        ``pending_commands``), mode C's ``peek`` / ``latch`` and one ``step`` that writes
        into :attr:`rows`. ``set_longitudinal`` and ``RobotDriverWrapper`` replace it: read
        it again after them rather than keeping it."""
        return self._core

    @property
    def rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The row buffers the core writes an env step into: (obs float32, reward terms
        float64, info float64), sized by its spec; ``info[0]`` is the reward and the info
        columns are ``core.info_names``. What the vector env copies an env's reset from,
        and what a benchmark steps the core into; valid until the next step or reset."""
        return self._obs, self._terms, self._info

    def _set_obs_layout(self) -> None:
        """Observation names, space, scales and buffer from the core's spec: the task's
        columns in [-OBS_CLIP, OBS_CLIP] (the core's clip), then the action history's in
        [-1, 1]."""
        self.obs_names: tuple[str, ...] = _shared(tuple(self._core.obs_names))
        n = len(self.obs_names)
        n_task = n - self.action_history * self._n_actions
        clip = _core.OBS_CLIP
        self.observation_space = _box(-clip, clip, n, n_task)
        self._obs = np.zeros(n, np.float32)
        self.obs_scale = self._core.obs_scale()  # the task's, then 1 for the history

    @property
    def obs_scale(self) -> np.ndarray:
        """Physical value of each observation column = obs * scale (float64): the task's
        scales, then 1 for the action history's columns."""
        try:
            return self._obs_scale
        except AttributeError:
            raise AttributeError(f"{type(self).__name__} has no obs_scale") from None

    @obs_scale.setter
    def obs_scale(self, value: Any) -> None:
        task = np.asarray(value, dtype=float)
        self._obs_scale_task = task
        pad = len(self.obs_names) - len(task)
        self._obs_scale = np.concatenate([task, np.ones(pad)]) if pad > 0 else task

    def set_action_history(self, k: int) -> None:
        """Appends the last ``k`` actions to the observation (0: none; what
        ``action_history=k`` and ``LatencyWrapper(action_history=k)`` set): columns
        ``action_{i}_{name}`` for i = k .. 1, oldest first, clipped to [-1, 1], zeros after
        reset; ``action_1`` is the action of the step that returned the observation.
        Changes ``obs_names`` and ``observation_space``; ``reset()`` is required before
        ``step()``. Not for an env inside a vector env (its spaces are the batch's)."""
        self.action_history = check_action_history(k)
        self._core.set_action_history(self.action_history)
        self._set_obs_layout()
        self._bind_core()
        self._needs_reset = True
        self._reset_reason = "the action history changed; call reset() before step()"

    @property
    def episode_params(self) -> EpisodeParams:
        """This episode's parameters (``vdsim_gym.sim.randomization.EpisodeParams``): the
        randomization draws (``values``, empty without ``randomize``), the vehicle, the
        steering actuator and the latency model in use. Before the first reset, or
        without randomization: the nominal ones. ``self.vehicle`` and ``self.physics``
        stay the nominal (construction) parameters."""
        channels = getattr(self.physics, "channel_delays", (0.0, 0.0))
        driver_delay = getattr(self.physics, "delay_s", None)
        r = self.randomize
        if r is None or not self._episode_drawn:
            return EpisodeParams({}, self.vehicle, self.actuator, self.latency, channels,
                                 self.network, self.obs_delay, driver_delay)
        # from the core's draws (a vector env may have drawn this episode in C++)
        values = self._episode_from_core()
        if r.changes_channels:  # the drawn ones snapped to their ticks, the other nominal
            ticks = r.channel_delays(channels, dict(values), self.substep_dt)
            channels = (ticks[0] * self.substep_dt, ticks[1] * self.substep_dt)
        return EpisodeParams(
            values, r.vehicle(self.vehicle, values) if r.changes_vehicle else self.vehicle,
            r.actuator(self.actuator, values), self.latency, channels, self.network,
            self.obs_delay, values["driver_delay"] if r.changes_driver else driver_delay)

    def _check_randomization(self, latency: Any) -> None:
        """What ``randomize`` asks of this env, before any episode: a vehicle Session for
        the vehicle names, a steering actuator for actuator_lag, no latency= with a
        latency range, a valid vehicle at every corner of the ranges."""
        r = self.randomize
        assert r is not None
        name = type(self).__name__
        if (r.changes_vehicle or r.changes_actuator or r.changes_channels) \
                and self.PHYSICS is not PhysicsSpec:
            which = [k for k in r.keys if not k.startswith("latency")]
            raise ConfigError(f"randomize {which}: {name} does not run on the vehicle Session "
                              "(its plant has no such parameters); only 'latency' applies")
        if r.changes_driver and getattr(self.physics, "driver", None) is None:
            raise ConfigError(
                f"randomize['driver_delay'] draws the robot driver's transport delay; {name} "
                + ("has no robot driver (driver=None: the action is the pedal); pass driver="
                   "'speed' or {'mode': 'pedal', 'delay_s': 0.3}"
                   if hasattr(self._core, "set_driver_delay_steps")
                   else "has none (only VDSim-Dyno-v0 has a robot driver)"))
        if r.changes_actuator:
            if "steer" not in self.action_names:
                raise ConfigError(f"randomize['actuator_lag'] draws the steering actuator's lag; "
                                  f"{name} does not steer (actions: {self.action_names})")
            if self.actuator is None:
                raise ConfigError(
                    "randomize['actuator_lag'] draws the time constant of the steering "
                    "actuator, and this env has none: pass actuator={'time_constant': 0.05} "
                    "(the nominal chain; dead time, rate limit and saturation stay as given)")
        if r.changes_latency and latency is not None:
            raise ConfigError(
                "randomize['latency'] draws the latency model per episode; drop latency="
                f"{latency!r} (or drop the latency range to keep a fixed model)")
        r.check_vehicle(self.vehicle)

    def _randomize_episode(self) -> None:
        """This episode's draws from ``np_random`` (after the task's), drawn and applied by
        the core before its reset (``randomize_episode``, vdsim/randomization.hpp: the
        vehicle, steering actuator, latency, channels, network, sensor and driver delays),
        the same a vector env's reset in C++ makes."""
        self._core.randomize_episode(self.np_random.bit_generator)
        self._episode_from_core()

    def _set_randomization(self) -> None:
        """The core's ranges and nominal parameters (its per-episode draws); again after
        the overrun policy or the core changes."""
        if self.randomize is not None:
            self._core.set_randomization(self.randomize.core_spec(self))

    def _episode_from_core(self) -> dict[str, float]:
        """The core's last draws by name; the models in use from them (``latency``,
        ``network``, ``obs_delay``) and the reset info's ``randomization``."""
        r = self.randomize
        assert r is not None
        values = r.values_of(self._core.episode_draws)
        if r.changes_latency:
            self.latency = r.latency(values)
        if r.changes_network:
            self.network = r.network(self._nominal_network, values)
        if r.changes_obs_delay:
            self.obs_delay = r.obs_delay(values)
        self._reset_extra = {"randomization": dict(values)}
        return values

    def _bind_core(self) -> None:
        """The step of the current core: one C++ call (``_core.GymStepper``) that checks
        the action, steps and builds obs, reward, flags and info (by INFO_KEYS, the timing
        keys with latency, STEP_LOG appended to ``_step_log``)."""
        col = {name: j for j, name in enumerate(self._core.info_names)}
        kinds = {float: 0, int: 1, bool: 2}
        self._stepper = _core.GymStepper(
            self._core, self._obs, self._terms, self._info, self.reward_term_names,
            [(k, col[k], kinds[tp]) for k, tp in self.INFO_KEYS],
            [(k, col[k], kinds[tp]) for k, tp in TIMING_KEYS],
            [col[k] for k in self.STEP_LOG], ACTION_TOL)
        self._stepper.timing = self.reports_timing

    def _set_time_limit_ticks(self) -> None:
        self._core.time_limit_ticks = 0 if self.time_limit is None else ceil_ticks(
            self.time_limit, self.substep_dt)

    def set_longitudinal(self, mode: str) -> None:
        """Rebuilds the env's core with another longitudinal mode ("force", "pedal" or
        "accel"; what ``AccelCommandWrapper`` does): same task, physics, latency and time
        limit; the action's longitudinal column then means the new mode's command (for
        "accel": a target acceleration scaled to the vehicle's limits). ``reset()`` is
        required before ``step()``. Not for an env inside a vector env (its row core is
        shared with the batch)."""
        physics = dataclasses.replace(self.physics, longitudinal=mode)
        physics.make_session()  # validates the mode with the usual message
        self.physics, self.longitudinal = physics, mode
        self._core = self._new_core(physics)
        self._bind_core()
        self._set_time_limit_ticks()
        self._after_core_rebuild()
        self._configure_latency(self.latency, self.overrun)  # also requires a reset
        self.configure_network(self.network)
        self._configure_obs_delay(self.obs_delay)

    def _after_core_rebuild(self) -> None:
        """Re-applies what the task had set on its core (the path envs: the course)."""

    @classmethod
    def kwarg_names(cls) -> set[str]:
        """Every keyword argument the env takes (its class's and its bases' __init__
        while they pass **kwargs on, the physics keywords, the task core's)."""
        names = set(cls.physics_keys()) | set(_keyword_only(cls._make_core))
        for klass in cls.__mro__:
            if "__init__" not in vars(klass):
                continue
            params = inspect.signature(vars(klass)["__init__"]).parameters.values()
            names |= {q.name for q in params if q.kind == q.KEYWORD_ONLY}
            if not any(q.kind == q.VAR_KEYWORD for q in params):
                break
        return names

    @classmethod
    def physics_keys(cls) -> tuple[str, ...]:
        """The physics keywords: the parameters of ``PHYSICS.build``."""
        if cls.PHYSICS is PhysicsSpec:
            return PHYSICS_KEYS
        return tuple(n for n in inspect.signature(cls.PHYSICS.build).parameters if n != "cls")

    # ---------------------------------------------------------------- task hooks

    def _make_core(self, physics: PhysicsSpec, **task_kwargs: Any) -> Any:
        """The task's C++ env core for these physics (its own kwargs are the task's)."""
        raise NotImplementedError

    def _reset_task(self, seed: int | None) -> Any:
        """Scenario for this episode (from ``self.np_random``); returns the start state."""
        raise NotImplementedError

    def _after_reset(self, row: list[float]) -> dict[str, Any]:
        """The reset info: the task's ``INFO_KEYS`` read from the info row by name (as
        ``_bind_core`` reads the step's), and the step log started with the row's
        ``STEP_LOG`` columns."""
        col = self.info_names.index
        if self.STEP_LOG:
            self._step_log = [tuple(row[col(k)] for k in self.STEP_LOG)]
        return {k: tp(row[col(k)]) for k, tp in self.INFO_KEYS}

    def render(self) -> Any:
        """``render_mode="rgb_array"``: this moment's frame, an (H, W, 3) uint8 array
        (the task's ``_frame``, vdsim_gym.render.frames); ``"human"``: the frame
        shown in a pygame window at ``metadata["render_fps"]`` (real time;
        ``render_real_time = False``: as fast as the loop runs), drawn after every reset
        and step, returns None; no render mode: None."""
        if self.render_mode is None:
            return None
        frame = self._frame()
        if self.render_mode == "rgb_array":
            return frame
        if self._window is None:
            from vdsim_gym.render.frames import Window  # pygame only for "human"

            self._window = Window(f"{type(self).__name__} (vdsim_gym)")
        self._window.show(frame, self.metadata["render_fps"] if self.render_real_time else None)
        return None

    def _frame(self) -> np.ndarray:
        """The task's frame now (a task that lists render modes defines it)."""
        raise NotImplementedError(f"{type(self).__name__} does not render")

    def close(self) -> None:
        """Closes the human window if one is open; the env stays usable."""
        if self._window is not None:
            self._window.close()
            self._window = None
        super().close()

    # ---------------------------------------------------------------- the plant
    # The vehicle Session (the core's ``session``) is the default plant; an env on
    # another plant (the chassis dyno) overrides these two.

    @property
    def state(self) -> np.ndarray:
        """The plant state (X, Y, psi, vx, vy, r, wheel spins, lagged accelerations, lagged
        lateral slips; ``_core.STATE_SIZE`` values)."""
        out = np.zeros(_core.STATE_SIZE)
        self._core.session.get_state(out)
        return out

    def plant_observation(self) -> dict[str, float]:
        """The vehicle's observation dict now, as ``Plant.observe`` gives it (evaluation
        traces: X, Y, psi, vx, vy, r, ax, ay, beta, delta_rw, wheel quantities)."""
        return observe_session(self._core.session, self.vehicle, self.level,
                               np.zeros(_core.STATE_SIZE), np.zeros(_core.AUX_SIZE))

    def _episode_end(self, outcome: str | None, summary: dict[str, Any]) -> dict[str, Any]:
        """What an episode end adds to info besides ``outcome`` and ``episode_summary``
        (e.g. the path env's ``pass_speed``); values are Python scalars, the same type
        in every episode (Gymnasium's vector envs batch them by the first one seen)."""
        return {}

    def episode_summary(self) -> dict[str, Any]:
        """The episode so far, by name (``summary_names``): ``steps``, ``return`` (sum of
        rewards), ``time`` [s], then the task's fields; NaN where undefined."""
        return self.summary_of(self._core.summary())

    def summary_of(self, values: np.ndarray) -> dict[str, Any]:
        """A core's summary row (``summary()``: ``summary_names``) by name, counts as
        ints."""
        ints = self.SUMMARY_INT_KEYS
        return {name: int(v) if name in ints else v
                for name, v in zip(self.summary_names, values.tolist(), strict=True)}

    def episode_end_info(self, flags: int, summary: np.ndarray | None = None
                         ) -> dict[str, Any]:
        """What an episode end adds to ``info``: ``outcome``, the task's extras and
        ``episode_summary`` (``outcome`` first, then ``episode_summary()``). ``summary``:
        another core's summary row instead of this env's (the vector env reports the same
        for its ended rows, from their cores)."""
        outcome = self.outcome(flags)
        fields = self.episode_summary() if summary is None else self.summary_of(summary)
        return {"outcome": outcome, **self._episode_end(outcome, fields),
                "episode_summary": {"outcome": outcome, **fields}}

    @classmethod
    def outcome(cls, flags: int) -> str | None:
        """Why the env ended an episode, from the core's flag bits (None: it goes on): the
        first of the task's flags (``TASK_FLAGS``, the spec's order) set in a termination,
        else "terminated"; ``TIME_LIMIT_OUTCOME`` for the env's time limit,
        ``TRUNCATED_OUTCOME`` for the task's own truncation."""
        if flags & TERMINATED:
            return next((name for name, bit in cls.TASK_FLAGS if flags & bit), "terminated")
        if flags & TIME_LIMIT:
            return cls.TIME_LIMIT_OUTCOME
        if flags & TRUNCATED:
            return cls.TRUNCATED_OUTCOME
        return None

    # ---------------------------------------------------------------- copies

    def __copy__(self) -> CoreEnv:
        raise refuse_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> CoreEnv:
        raise refuse_copy(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise refuse_copy(self)

    @staticmethod
    def _check_time_limit(value: Any) -> float | None:
        if value is None:
            return None
        if not is_real(value) \
                or not math.isfinite(value) or not 0 < value <= MAX_TIME_LIMIT_S:
            raise ConfigError(f"time_limit must be None or seconds in (0, {MAX_TIME_LIMIT_S:g}]"
                              f", got {value!r} (it is simulated time, not a step count)")
        return float(value)

    # ---------------------------------------------------------------- latency
    # configure_latency, set_next_delay: EnvLatency (envs/env_latency.py)

    @property
    def np_random(self) -> np.random.Generator:
        """Gymnasium's ``np_random``; for a vector env's row seeded in C++, the generator
        the row drew from there, as a numpy Generator in the same state (it then draws
        from this one)."""
        if self._row_rng is not None:
            self._take_row_rng()
        return _GYM_NP_RANDOM.fget(self)

    @np_random.setter
    def np_random(self, value: np.random.Generator) -> None:
        _GYM_NP_RANDOM.fset(self, value)
        if self._row_rng is not None:  # the row's resets in C++ draw from it too
            session, i = self._row_rng
            session.set_row_rng(i, *self.episode_rng())

    def _take_row_rng(self) -> None:
        """The row's generators from the C++ session (seed_rows), as numpy ones."""
        assert self._row_rng is not None
        session, i = self._row_rng
        states = session.row_rng_state(i)
        if states is None:
            return
        task, latency = states
        self._np_random = rng = _numpy_pcg64(task)
        self._latency_rng = lat = None if latency is None else _numpy_pcg64(latency)
        model = self._latency_model()
        session.set_row_rng(i, rng.bit_generator, None if lat is None else lat.bit_generator,
                            0 if model is None or lat is None else model.seed)

    def _adopt_core(self, core: Any) -> None:
        """This env on ``core`` instead of its own: a vector env's row core, a copy of one
        built from the same kwargs (so configured as this env's), in whatever episode it
        is."""
        self._core = core
        self._bind_core()
        if self.randomize is not None and not np.isnan(core.episode_draws).all():
            self._episode_from_core()  # the row's episode so far, drawn in C++

    def _reset_in_vector(self, seed: int | None) -> None:
        """What reset(seed=seed) leaves in this env when its vector env seeded and reset it
        in C++ (VectorEnvCore.seed_rows): the seed, the generators left in the session
        (np_random takes them over), the episode started."""
        self._np_random = None
        self._np_random_seed = seed
        self._latency_rng = None
        self._next_delay = None
        self._needs_reset = False
        self._episode_drawn = True

    def _latency_model(self) -> LatencyModel | None:
        """The model whose seed an episode's delays start from (None: no timing reported,
        no latency seed drawn)."""
        if self.latency is not None:
            return self.latency
        return LatencyModel.fixed(0.0) if self.reports_timing else None

    def _latency_seed(self, model: LatencyModel, seed: int | None) -> int:
        """Seed of this episode's delays: a stream derived from the reset seed, so the
        env's own ``np_random`` (scenarios, start noise) draws the same with or without
        latency. The draw is the C++ one a reset in C++ makes (``_core.draw_latency_seed``:
        ``model.seed ^ integers(2**63)``)."""
        if seed is not None or self._latency_rng is None:
            base = self.np_random_seed
            self._latency_rng = np.random.default_rng(
                [base, _LATENCY_STREAM] if base >= 0 else None)
        return _core.draw_latency_seed(self._latency_rng.bit_generator, model.seed)

    @property
    def resets_in_core(self) -> bool:
        """Whether this env's whole episode draw is its core's (``draw_start``, the
        randomization's draws, the latency seed): true for tasks with ``RESETS_IN_CORE``.
        The vector env resets such rows inside its C++ batch step."""
        return self.RESETS_IN_CORE

    def episode_rng(self) -> tuple[Any, Any, int]:
        """What a reset in C++ draws from, after this env's last reset: ``np_random``'s bit
        generator, the latency stream's (None: no latency seed drawn) and the latency
        model's seed (``VectorEnvCore.set_row_rng``)."""
        model = self._latency_model()
        if model is None or self._latency_rng is None:
            return self.np_random.bit_generator, None, 0
        return self.np_random.bit_generator, self._latency_rng.bit_generator, model.seed

    # ---------------------------------------------------------------- Gymnasium API

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """This env for one caller: reset() and step() from elsewhere meanwhile raise a
        ConcurrentUseError (as a second thread's do during a step)."""
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of(f"this {type(self).__name__}")
        try:
            yield
        finally:
            self._in_use.release()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of(f"this {type(self).__name__}")
        try:
            out = self._reset(seed, options)
        finally:
            self._in_use.release()
        if self.render_mode == "human":
            self.render()
        return out

    def step(
        self, action: np.ndarray
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if not self._in_use.acquire(False):
            raise ConcurrentUseError.of(f"this {type(self).__name__}")
        try:
            out = self._step(action)
        finally:
            self._in_use.release()
        if self.render_mode == "human":
            self.render()
        return out

    def _reset(self, seed: int | None, options: dict[str, Any] | None
               ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:  # None and {} (what vector wrappers pass) are fine
            raise ConfigError(
                f"unknown reset options {sorted(options)}: {type(self).__name__}.reset takes "
                "none; scenario settings are gym.make kwargs, the seed is reset(seed=...)")
        if seed is not None and self._row_rng is not None:  # new generators replace its own
            session, i = self._row_rng
            session.release_row_rng(i)
        super().reset(seed=seed)
        state = self._reset_task(seed)
        self._episode_drawn = True
        if self.randomize is not None:
            self._randomize_episode()
        model = self._latency_model()
        latency_seed = 0 if model is None else self._latency_seed(model, seed)
        self._core.reset(state, self._obs, self._info, latency_seed)
        if self._row_rng is not None:  # a vector env's row: its resets in C++ draw from these
            session, i = self._row_rng
            session.set_row_rng(i, *self.episode_rng())
        self._next_delay = None
        self._needs_reset = False
        info = self._after_reset(self._info.tolist())
        if self._reset_extra:
            info.update({k: dict(v) for k, v in self._reset_extra.items()})
        return self._obs.copy(), info

    def _step(self, action: np.ndarray
              ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            self._check_action(action)  # a bad action is named before the missing reset
            raise gym.error.ResetNeeded(self._reset_reason)
        delay = math.nan
        if self._measured:
            if self._next_delay is None:
                raise UsageError(
                    "latency=LatencyModel.measured(): the env cannot time the agent; call "
                    "env.unwrapped.set_next_delay(c_seconds) with this step's compute time "
                    "before every step()")
            delay = self._next_delay
        out = self._step_core(action, delay)
        if out is None:  # not a float array in range: coerce it, or name the problem
            out = self._step_core(np.array(self._check_action(action)), delay)
        self._next_delay = None
        obs, reward, flags, info = out
        if not flags & (TERMINATED | TRUNCATED):
            return obs, reward, False, False, info
        info.update(self._episode_ended(flags))
        return obs, reward, (flags & TERMINATED) != 0, (flags & TRUNCATED) != 0, info

    # Whether eval_stepper's rows hold this env's trace state columns (the C++ core gives
    # them for the vehicle and the dyno: EnvCore::state_columns).
    EVAL_STEPPER = True

    def eval_stepper(self, info_columns: Sequence[str], timed: bool) -> Any:
        """ClosedLoopEval's env form on this env's core, a sample per call
        (``_core.EvalStepper``, bind_gym_step.cpp): the step, with the sample's delay when
        ``timed`` (measured latency), and the sample's row recorded in C++ (its timing,
        the state and ``info_columns`` before the step, the command) instead of an info
        dict. For this env as it is, after its reset; ``refresh()`` after another."""
        col = self.info_names.index
        timing = self.reports_timing
        return _core.EvalStepper(
            self._core, self._obs, self._terms, self._info, [col(c) for c in info_columns],
            col("apply_tick") if timing else -1, col("lost") if timing else -1,
            col("overrun") if timing else -1,
            col("obs_age") if getattr(self, "obs_delay", None) is not None else -1,
            timed, hasattr(self, "action_to_command"),
            self._step_log if self.STEP_LOG else None, [col(k) for k in self.STEP_LOG])

    def _episode_ended(self, flags: int) -> dict[str, Any]:
        """What a step that ended the episode adds to its info (``episode_end_info``); a
        further step is refused until a reset."""
        end = self.episode_end_info(flags)
        # Gymnasium leaves a step after the episode's end undefined; here it is an error
        # rather than a silent extra step past the end.
        self._needs_reset, self._reset_reason = True, (
            f"the episode ended ({end['outcome']}) at t = {self._core.time:.3f}"
            " s; call reset() before step() (vector envs and SB3 VecEnvs reset "
            "automatically)")
        return end

    def _step_core(self, action: Any, delay: float) -> Any:
        try:
            return self._stepper(action, delay, self._step_log)
        except BaseException:  # KeyboardInterrupt mid-step: the state is partly advanced
            self._interrupted()
            raise

    def _interrupted(self) -> None:
        """A step of the core was interrupted: its state is partly advanced, so the next
        step() is refused until a reset()."""
        self._needs_reset, self._reset_reason = True, (
            "the last step() was interrupted; call reset() before step()")

    def _check_action(self, action: Any) -> list[float]:
        """The action as floats within [-1, 1] (+ ACTION_TOL); InvalidActionError
        otherwise (vdsim_gym._checks.check_action)."""
        return check_action(action, self.action_names)
