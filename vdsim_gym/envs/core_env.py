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

CoreEnv's parts, one module each (its bases): env_latency (latency, network and sensor
delay), env_spaces (spaces and buffers from the core's spec, the action history),
env_randomization (``randomize=``), env_seeding (the episodes' generators, a vector row's
seeded in C++), env_outcome (flag bits, outcome, episode summary), env_kwargs (keyword
arguments, ``time_limit``, ``reward_weights``), env_render (``render``) and env_snapshot
(``snapshot``, ``restore``).
"""

from __future__ import annotations

import contextlib
import dataclasses
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
)
from vdsim_gym.config.latency import LatencyModel, check_obs_delay
from vdsim_gym.config.network import NetworkModel, check_network
from vdsim_gym.envs.env_kwargs import EnvKwargs, _keyword_only
from vdsim_gym.envs.env_latency import EnvLatency
from vdsim_gym.envs.env_outcome import TERMINATED, TRUNCATED, EnvOutcome
from vdsim_gym.envs.env_randomization import EnvRandomization
from vdsim_gym.envs.env_render import EnvRender
from vdsim_gym.envs.env_seeding import EnvSeeding
from vdsim_gym.envs.env_snapshot import EnvSnapshot
from vdsim_gym.envs.env_spaces import EnvSpaces
from vdsim_gym.errors import (
    ArgumentTypeError,
    ConcurrentUseError,
    ConfigError,
    UnknownKeywordError,
    UsageError,
)
from vdsim_gym.sim.plant import PhysicsSpec, observe_session
from vdsim_gym.sim.randomization import Randomization
from vdsim_gym.timing import ceil_ticks

# Timing keys every env core appends (with latency), with the Python type of each value.
TIMING_KEYS: tuple[tuple[str, type], ...] = (
    ("t_sample", float), ("t_apply", float), ("c_k", float), ("overrun", bool),
    ("skipped", int), ("n_overrun", int), ("n_skipped", int), ("sample_tick", int),
    ("apply_tick", int), ("lost", bool), ("n_lost", int), ("n_discarded", int),
    ("obs_age", float), ("obs_tick", int))


def refuse_copy(obj: Any) -> ArgumentTypeError:
    """The error for copying or pickling an object that holds C++ env cores."""
    return ArgumentTypeError(
        f"{type(obj).__name__} holds C++ env cores (simulation state, schedules, buffers) "
        "that are neither copied nor pickled, and a shallow copy would step the same core "
        "twice. Make another env instead, or pickle a factory: functools.partial(gym.make, "
        "'VDSim-DLC-v0', **kwargs) (what SubprocVecEnv and AsyncVectorEnv take); the same "
        "seed reproduces an episode bit for bit.")


# Gymnasium's np_random property, which CoreEnv's extends for vector rows seeded in C++.
_GYM_NP_RANDOM: Any = gym.Env.__dict__["np_random"]


# The parts that override no Gymnasium name come after gym.Env: CoreEnv's super().reset()
# then finds Gymnasium's past one class (EnvRender), as it did past EnvLatency before.
class CoreEnv(EnvRender, gym.Env[np.ndarray, np.ndarray], EnvLatency, EnvSpaces,
              EnvRandomization, EnvSeeding, EnvOutcome, EnvKwargs, EnvSnapshot):
    """A Gymnasium env over one C++ env core; subclasses are tasks (see the module doc)."""

    # A task that renders lists its modes (RENDER_MODES) and defines _frame().
    metadata: dict[str, Any] = {"render_modes": [], "render_fps": 50}
    DEFAULT_TIME_LIMIT: float | None = None  # [s]; subclasses set theirs
    # (name, Python type) of the task's info columns reported in every step's info.
    INFO_KEYS: tuple[tuple[str, type], ...] = ()
    # Info-row columns appended, as a tuple, to ``_step_log`` after every step (the
    # path envs: X, Y for ``trajectory()``); ``_after_reset`` starts the log.
    STEP_LOG: tuple[str, ...] = ()
    # Summary fields a sweep's text table shows, in order, with their labels (units); the
    # first is its headline metric (interval shown, plotted by default). Every summary
    # field is tabulated in the sweep's CSV whether labelled or not.
    METRIC_LABELS: dict[str, str] = {}
    # The gym.make keywords the observation's columns depend on: a policy trained with
    # them requires them of the env it runs on (policies.load_policy's
    # required_env_kwargs).
    OBSERVATION_KWARGS: tuple[str, ...] = ("action_history",)
    # A vector env's row whose generators may live in its C++ session (seeded there:
    # VectorEnvCore.seed_rows): (session, row). np_random takes them over at first use.
    _row_rng: tuple[Any, int] | None = None
    # Whether an episode was drawn since the core was built (a reset, here or in the core).
    _episode_drawn: bool = False
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
        self._init_render(render_mode)
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

        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.control_period)}
        self._init_spaces()
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

    def _adopt_core(self, core: Any) -> None:
        """This env on ``core`` instead of its own: a vector env's row core, a copy of one
        built from the same kwargs (so configured as this env's), in whatever episode it
        is."""
        self._core = core
        self._bind_core()
        if self.randomize is not None and not np.isnan(core.episode_draws).all():
            self._episode_from_core()  # the row's episode so far, drawn in C++

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

    # ---------------------------------------------------------------- copies

    def __copy__(self) -> CoreEnv:
        raise refuse_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> CoreEnv:
        raise refuse_copy(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise refuse_copy(self)

    # ---------------------------------------------------------------- Gymnasium API
    # (render, close: EnvRender; the other parts of the env: its bases, env_*.py)

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
        dict. No step runs past the core's ``run_end`` (``finish()`` advances the plant
        there after the last sample). For this env as it is, after its reset;
        ``refresh()`` after another."""
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
