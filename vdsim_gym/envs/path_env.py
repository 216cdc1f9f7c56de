"""PathTrackingEnv: the shared base of the path-following environments.

Translation only: the task (projection on the path, cones, termination, observation and
reward terms) runs in the C++ core (``_core.PathEnvCore``); this module validates
arguments, owns the Gymnasium spaces and the numpy buffers the core writes into, and
names the reward terms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from vdsim_gym import _core
from vdsim_gym.config import ActuatorConfig, VehicleConfig
from vdsim_gym.envs.course import Course
from vdsim_gym.latency import MAX_DELAY_S, LatencyModel, check_latency, check_overrun
from vdsim_gym.plant import DEFAULT_INTEGRATOR, PhysicsSpec
from vdsim_gym.timing import ceil_ticks
from vdsim_gym.tracking import check_path, ey_stats

OBS_NAMES: tuple[str, ...] = tuple(_core.PATH_OBS_NAMES)
REWARD_TERM_NAMES: tuple[str, ...] = tuple(_core.PATH_TERM_NAMES)
DEFAULT_REWARD_WEIGHTS: dict[str, float] = {
    k: getattr(_core.RewardWeights(), k) for k in REWARD_TERM_NAMES
}
_FLAGS: dict[str, int] = dict(_core.PATH_FLAGS)
_TERMINATED, _TRUNCATED = _FLAGS["terminated"], _FLAGS["truncated"]
_TIME_LIMIT = _FLAGS["time_limit"]
MAX_TIME_LIMIT_S = 3600.0  # [s]: longer episodes are a mistake (seconds, not steps)
_ACTION_TOL = 1.0 + 1e-6  # actions within this of [-1, 1] are clipped, beyond it rejected
_START_NOISE_Y = 0.05  # uniform lateral offset at reset, +- [m]
_START_NOISE_PSI = math.radians(0.5)  # uniform heading offset at reset, +- [rad]
_N_INFO = len(_core.PATH_STEP_INFO_NAMES)
# Tag of the latency seed stream derived from the reset seed (independent of np_random).
_LATENCY_STREAM = 0x1A7E_5EED

# The manual's shared sections; the subclasses' docstrings include them.
SHARED_DOC = """
    ## Action Space

    ``Box(-1, 1, (2,), float32)``: ``(steer, longitudinal)``.

    | index | action | maps to |
    |---|---|---|
    | 0 | steer | road-wheel steer ``delta = a0 * max_steer`` [rad] (vehicle file) |
    | 1 | longitudinal | ``longitudinal="pedal"``: pedal ``a1`` (+ throttle, - brake) |
    |   |              | ``"force"``: ``a1 * drive_torque_max / wheel_radius`` [N] if a1 >= 0, |
    |   |              | else ``a1 * 4 * brake_torque_max / wheel_radius`` [N] |

    The command holds for one control period. ``env.unwrapped.action_to_command(a)``
    returns ``(delta_rw [rad], longitudinal)``. Actions beyond [-1, 1] (by more than
    1e-6) or non-finite raise ``ValueError``.

    ## Observation Space

    ``Box(-10, 10, (16,), float32)``, normalized: ``obs = physical / scale``, clipped to
    [-10, 10]. Names in ``env.unwrapped.obs_names``, scales in ``env.unwrapped.obs_scale``.

    | idx | name | unit | scale | meaning |
    |---|---|---|---|---|
    | 0 | e_y | m | 2 | lateral error of the CG, + left of the path |
    | 1 | e_psi | rad | 0.5 | heading error psi - path heading, wrapped to [-pi, pi] |
    | 2 | vx | m/s | 30 | body-frame longitudinal velocity |
    | 3 | vy | m/s | 5 | body-frame lateral velocity |
    | 4 | r | rad/s | 1 | yaw rate |
    | 5 | v_ref | m/s | 30 | reference speed at the projection |
    | 6 | ax | m/s^2 | 10 | body-frame longitudinal acceleration |
    | 7 | ay | m/s^2 | 10 | body-frame lateral acceleration |
    | 8 | delta_rw | rad | max_steer | realized road-wheel steer over the last substep |
    | 9 | prev_steer | - | 1 | previous steer action |
    | 10 | prev_long | - | 1 | previous longitudinal action |
    | 11 | kappa_ref | 1/m | 0.1 | path curvature at the projection, + left |
    | 12-15 | preview_y_{5,10,20,30}m | m | 5 | vehicle-frame lateral position (+ left) of |
    |       |                         |   |   | the path point 5/10/20/30 m further along |

    ## Rewards

    ``reward`` is the sum of named terms, returned in ``info["reward_terms"]``; weights
    via ``reward_weights={...}`` (defaults in brackets):

    - ``tracking`` = -w (e_y / 1 m)^2 [1.0]
    - ``heading`` = -w e_psi^2 [0.5]
    - ``speed`` = -w ((vx - v_ref) / 5 m/s)^2 [0.2]
    - ``smoothness`` = -w |a_k - a_{k-1}|^2 [0.05]
    - ``progress`` = +w ds / (max(v_ref, 1 m/s) Tc): about +w per step on pace [1.0]
    - ``cone`` = -w per newly hit cone [5.0]
    - ``terminal`` = -w on termination [50.0]

    ## Episode End

    Terminated: a cone hit (``terminate_on_cone``), |e_y| > the course's corridor half
    width, spin-out (|e_psi| > 90 deg, or |beta| > 45 deg above 1 m/s) or a non-finite
    state. Truncated: the projection reaches the course end (``info["pass_speed"]`` is
    vx there), or the simulated time reaches ``time_limit`` [s] (the env's own limit, in
    seconds whatever the control period). On episode end ``info`` carries ``outcome``
    ("cone_hit", "off_corridor", "spin_out", "non_finite", "course_end" or "time_limit"),
    ``pass_speed`` (None unless the course end was reached) and ``episode_summary``.
    Every step's ``info``: ``reward_terms``, ``e_y`` [m],
    ``cone_hits`` (episode total), ``s`` [m], ``t`` [s].

    ## Latency

    With ``latency=LatencyModel...`` (or ``vdsim_gym.wrappers.LatencyWrapper``) the action
    chosen from the observation at t_k takes effect at its apply tick
    ``ceil((t_start + c_k) / substep_dt)``; the previous command holds until then. One
    worker computes one sample at a time (t_start = max(t_k, finish of the previous one)).
    ``overrun="skip"``: samples falling due while the worker is busy are not taken, so one
    env step spans several control periods; ``"queue"``: every step is one period and the
    delay accumulates while c_k > Tc. Cones and termination are checked at the end of each
    env step only. Every step's ``info`` then also has ``t_sample``, ``t_apply`` [s],
    ``c_k`` [s], ``overrun`` (bool), ``skipped`` (periods skipped by this step) and the
    episode totals ``n_overrun``, ``n_skipped``. The delays are reseeded at every reset
    from the reset seed (mixed with the model's seed), so ``reset(seed=...)`` fixes them.
    ``LatencyModel.measured()``: call ``env.unwrapped.set_next_delay(c_seconds)`` before
    every step. See docs/ENVS.md, "Latency".
"""

SHARED_ARGS = """
    Physics and task keywords (all keyword-only):

    - ``level="L2"``: "L1" single-track or "L2" two-track.
    - ``vehicle="generic_sedan"``: name under envs/vehicles, YAML path, mapping or
      VehicleConfig.
    - ``substep_dt=5e-4`` [s]; ``control_period=0.02`` [s], a whole multiple of it.
    - ``longitudinal="pedal"``: "pedal" or "force" (see Action Space).
    - ``actuator=None``: steering actuator chain (ActuatorConfig or mapping).
    - ``integrator="heun"``: "euler", "heun" or "rk4" (heun passes the accuracy gate;
      docs/PHYSICS.md).
    - ``reward_weights=None``: mapping of term name -> weight overriding the defaults.
    - ``terminate_on_cone=True``: end the episode at the first cone hit.
    - ``render_mode=None``: None or "rgb_array".
    - ``latency=None``: a ``vdsim_gym.LatencyModel`` (``.fixed(c)``, ``.uniform(lo, hi,
      seed)``, ``.normal(mu, sd, seed)``, ``.measured()``): computation delay of each
      action (see Latency); None applies every action at once.
    - ``overrun="skip"``: "skip" or "queue", the policy when a delay exceeds the period.
    - ``time_limit`` [s]: the episode truncates ("time_limit") at the first step whose end
      reaches it (DLC 15 s, PathFollow 40 s by default); None: no limit.
"""


def refuse_copy(obj: Any) -> TypeError:
    """The error for copying or pickling an object that holds C++ env cores."""
    return TypeError(
        f"{type(obj).__name__} holds C++ env cores (simulation state, schedules, buffers) "
        "that are neither copied nor pickled, and a shallow copy would step the same core "
        "twice. Make another env instead, or pickle a factory: functools.partial(gym.make, "
        "'VDSim-DLC-v0', **kwargs) (what SubprocVecEnv and AsyncVectorEnv take); the same "
        "seed reproduces an episode bit for bit.")


def episode_outcome(flags: int) -> str | None:
    """Why the env ended an episode: the termination cause ("cone_hit", "off_corridor",
    "spin_out", "non_finite"), "course_end" or "time_limit" for a truncation, None if it
    goes on (a ``max_episode_steps`` passed to gym.make is TimeLimit's, not the env's)."""
    if flags & _TERMINATED:
        for name in ("non_finite", "spin_out", "off_corridor", "cone_hit"):
            if flags & _FLAGS[name]:
                return name
        return "terminated"
    if flags & _TIME_LIMIT:
        return "time_limit"
    return "course_end" if flags & _TRUNCATED else None


class PathTrackingEnv(gym.Env[np.ndarray, np.ndarray]):
    """Follow a reference path (a ``Course``) with steer and longitudinal actions.

    Subclasses choose the course (``_next_course``) and may change the starting state.
    """

    __doc__ = (__doc__ or "") + SHARED_DOC + "\n    ## Arguments\n" + SHARED_ARGS

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 50}
    DEFAULT_TIME_LIMIT: float | None = None  # [s]; subclasses set theirs

    def __init__(
        self,
        *,
        level: str = "L2",
        vehicle: str | VehicleConfig | Mapping[str, Any] = "generic_sedan",
        substep_dt: float = 5e-4,
        control_period: float = 0.02,
        longitudinal: str = "pedal",
        actuator: ActuatorConfig | Mapping[str, Any] | None = None,
        integrator: str = DEFAULT_INTEGRATOR,
        reward_weights: Mapping[str, float] | None = None,
        terminate_on_cone: bool = True,
        render_mode: str | None = None,
        latency: LatencyModel | None = None,
        overrun: str = "skip",
        time_limit: float | None | str = "default",
    ) -> None:
        self.physics = PhysicsSpec.build(
            level=level, vehicle=vehicle, substep_dt=substep_dt, control_period=control_period,
            longitudinal=longitudinal, actuator=actuator, integrator=integrator,
        )
        p = self.physics
        self.substep_dt, self.ticks_per_period = p.substep_dt, p.ticks_per_period
        self.control_period = p.control_period
        self.vehicle, self.actuator = p.vehicle, p.actuator
        self.level, self.longitudinal, self.integrator = level, longitudinal, integrator
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or one of {self.metadata['render_modes']}, "
                f"got {render_mode!r}"
            )
        self.render_mode = render_mode
        session = p.make_session()
        task = _core.TaskParams()
        task.ticks_per_period = p.ticks_per_period
        self.cone_radius: float = task.cone_radius  # [m] hit test; courses place cones with it
        task.terminate_on_cone = check_flag(terminate_on_cone, "terminate_on_cone")
        self.reward_weights = resolve_reward_weights(reward_weights)
        for k, v in self.reward_weights.items():
            setattr(task.weights, k, v)
        self._core = _core.PathEnvCore(session, task)
        self.time_limit = self._check_time_limit(
            self.DEFAULT_TIME_LIMIT if time_limit == "default" else time_limit)
        self._core.time_limit_ticks = 0 if self.time_limit is None else ceil_ticks(
            self.time_limit, self.substep_dt)

        self.metadata = {**self.metadata, "render_fps": round(1.0 / self.control_period)}
        self.obs_names: tuple[str, ...] = OBS_NAMES
        self.obs_scale: np.ndarray = self._core.obs_scale()
        self.reward_term_names: tuple[str, ...] = REWARD_TERM_NAMES
        self.action_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
        self.observation_space = gym.spaces.Box(-10.0, 10.0, (len(OBS_NAMES),), np.float32)

        # Caller-owned buffers the core writes into; no allocation per step.
        self._obs = np.zeros(len(OBS_NAMES), np.float32)
        self._terms = np.zeros(len(REWARD_TERM_NAMES))
        self._info = np.zeros(_N_INFO)
        self._core_step = self._core.step
        self.latency: LatencyModel | None = None
        self.overrun: str = "skip"
        self._measured = False
        self._next_delay: float | None = None
        self._latency_rng: np.random.Generator | None = None
        self.configure_latency(latency, overrun)
        self.course: Course | None = None
        self._needs_reset = True
        self._reset_reason = "call reset() before step()"
        self._e_y_log: list[float] = []
        self._xy_log: list[tuple[float, float]] = []

    def __copy__(self) -> PathTrackingEnv:
        raise refuse_copy(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> PathTrackingEnv:
        raise refuse_copy(self)

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise refuse_copy(self)

    @staticmethod
    def _check_time_limit(value: Any) -> float | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value) or not 0 < value <= MAX_TIME_LIMIT_S:
            raise ValueError(f"time_limit must be None or seconds in (0, {MAX_TIME_LIMIT_S:g}]"
                             f", got {value!r} (it is simulated time, not a step count)")
        return float(value)

    # ---------------------------------------------------------------- subclass hooks

    def _next_course(self) -> Course:
        raise NotImplementedError

    def _initial_state(self, course: Course) -> tuple[float, ...]:
        """On the path at s = 0 with a small seeded offset; vx = course.start_speed."""
        (x0, y0), (x1, y1) = course.path[0], course.path[1]
        heading = math.atan2(y1 - y0, x1 - x0)
        dy = float(self.np_random.uniform(-_START_NOISE_Y, _START_NOISE_Y))
        dpsi = float(self.np_random.uniform(-_START_NOISE_PSI, _START_NOISE_PSI))
        x = float(x0) - math.sin(heading) * dy
        y = float(y0) + math.cos(heading) * dy
        return (x, y, heading + dpsi, float(course.start_speed), 0.0, 0.0)

    # ---------------------------------------------------------------- latency

    def configure_latency(self, latency: LatencyModel | None, overrun: str = "skip") -> None:
        """Sets the computation-delay model and overrun policy (None: no latency).

        Takes effect at the next ``reset()``, which is then required before ``step()``.
        The one implementation behind the ``latency``/``overrun`` kwargs and
        ``vdsim_gym.wrappers.LatencyWrapper``.
        """
        overrun = check_overrun(overrun)
        if latency is not None:
            if isinstance(latency, (int, float)) and not isinstance(latency, bool):
                raise ValueError(
                    f"latency must be a LatencyModel, got the number {latency!r}; for a fixed "
                    f"delay of {latency} s pass latency=LatencyModel.fixed({latency}) "
                    "(from vdsim_gym import LatencyModel)"
                )
            latency = check_latency(latency)
            self._core.set_latency(latency.spec(), getattr(_core.OverrunPolicy, overrun))
        else:
            self._core.clear_latency()
        self.latency, self.overrun = latency, overrun
        self._measured = latency is not None and latency.kind == "measured"
        self._next_delay = None
        self._needs_reset = True
        self._reset_reason = "the latency model changed; call reset() before step()"

    def set_next_delay(self, c: float) -> None:
        """The computation delay [s] of the next step's action (``LatencyModel.measured()``).

        The env cannot time the agent: whoever does (e.g. ClosedLoopEval) passes the
        measured compute time here before every ``step()``.
        """
        if not self._measured:
            raise ValueError(
                "set_next_delay() applies to latency=LatencyModel.measured() only; this env "
                f"has latency={self.latency!r} (its delays come from the model)"
            )
        if isinstance(c, bool) or not isinstance(c, (int, float, np.floating)) \
                or not math.isfinite(c) or not 0 <= c <= MAX_DELAY_S:
            raise ValueError(f"delay must be a finite number of seconds in [0, MAX_DELAY_S = "
                             f"{MAX_DELAY_S:g}], got {c!r}")
        self._next_delay = float(c)

    def _latency_seed(self, model: LatencyModel, seed: int | None) -> int:
        """Seed of this episode's delays: a stream derived from the reset seed, so the
        env's own ``np_random`` (courses, start noise) draws the same with or without
        latency."""
        if seed is not None or self._latency_rng is None:
            base = self.np_random_seed
            self._latency_rng = np.random.default_rng(
                [base, _LATENCY_STREAM] if base >= 0 else None)
        return model.seed ^ int(self._latency_rng.integers(2**63))

    # ---------------------------------------------------------------- Gymnasium API

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options:  # None and {} (what vector wrappers pass) are fine
            raise ValueError(
                f"unknown reset options {sorted(options)}: {type(self).__name__}.reset takes "
                "none; scenario settings are gym.make kwargs, the seed is reset(seed=...)")
        super().reset(seed=seed)
        course = self._next_course()
        if course is not self.course:
            self._set_course(course)
        latency_seed = 0 if self.latency is None else self._latency_seed(self.latency, seed)
        self._core.reset(self._initial_state(course), self._obs, self._info, latency_seed)
        self._next_delay = None
        self._needs_reset = False
        _, e_y, s, t, _, X, Y, *_ = self._info.tolist()
        self._e_y_log = []
        self._xy_log = [(X, Y)]
        return self._obs.copy(), {"e_y": e_y, "s": s, "t": t, "cone_hits": 0}

    def step(
        self, action: np.ndarray
    ) -> tuple[np.ndarray, SupportsFloat, bool, bool, dict[str, Any]]:
        if action.__class__ is np.ndarray and action.shape == (2,) and action.dtype.kind == "f":
            a0, a1 = action.tolist()
        else:
            a0, a1 = _coerce_action(action)
        # One chained comparison catches out-of-range and NaN (NaN compares False).
        if not (-_ACTION_TOL <= a0 <= _ACTION_TOL and -_ACTION_TOL <= a1 <= _ACTION_TOL):
            _reject_action(a0, a1)
        if self._needs_reset:
            raise gym.error.ResetNeeded(self._reset_reason)
        if self._measured and self._next_delay is None:
            raise RuntimeError(
                "latency=LatencyModel.measured(): the env cannot time the agent; call "
                "env.unwrapped.set_next_delay(c_seconds) with this step's compute time "
                "before every step()"
            )
        try:
            flags = self._advance(a0, a1)
        except BaseException:  # KeyboardInterrupt mid-step: the state is partly advanced
            self._needs_reset, self._reset_reason = True, (
                "the last step() was interrupted; call reset() before step()")
            raise
        (reward, e_y, s, t, vx, X, Y, _, _, hits,
         t_sample, t_apply, c_k, overrun, skipped, n_overrun, n_skipped) = self._info.tolist()
        self._e_y_log.append(e_y)
        self._xy_log.append((X, Y))
        info = {
            "reward_terms": dict(zip(REWARD_TERM_NAMES, self._terms.tolist(), strict=True)),
            "e_y": e_y, "cone_hits": int(hits), "s": s, "t": t,
        }
        if self.latency is not None:
            info.update(t_sample=t_sample, t_apply=t_apply, c_k=c_k, overrun=overrun != 0.0,
                        skipped=int(skipped), n_overrun=int(n_overrun),
                        n_skipped=int(n_skipped))
        terminated = (flags & _TERMINATED) != 0
        truncated = (flags & _TRUNCATED) != 0
        if terminated or truncated:
            info.update(self._episode_end(flags, vx, s, t, int(hits)))
            # Gymnasium leaves a step after the episode's end undefined; here it is an
            # error rather than a silent extra step past the course end or a cone hit.
            self._needs_reset, self._reset_reason = True, (
                f"the episode ended ({info['outcome']}) at t = {t:.3f} s; call reset() "
                "before step() (vector envs and SB3 VecEnvs reset automatically)")
        return self._obs.copy(), reward, terminated, truncated, info

    def _advance(self, a0: float, a1: float) -> int:
        """One env step in the core; returns its flags (buffers filled in place)."""
        if self._measured:
            delay, self._next_delay = self._next_delay, None
            return self._core_step(a0, a1, self._obs, self._terms, self._info, delay)
        return self._core_step(a0, a1, self._obs, self._terms, self._info)

    def render(self) -> np.ndarray | None:
        if self.render_mode != "rgb_array":
            return None
        from vdsim_gym.envs.render import render_rgb  # matplotlib only when rendering

        return render_rgb(self)

    # ---------------------------------------------------------------- helpers

    def action_to_command(self, action: Any) -> tuple[float, float]:
        """(delta_rw [rad], longitudinal) for an action: the core's own mapping (clipped
        to [-1, 1]; the Action Space table)."""
        a0, a1 = np.asarray(action, dtype=float).reshape(2).tolist()
        return self._core.command_from_action(a0, a1)

    @property
    def state(self) -> np.ndarray:
        """The plant state (X, Y, psi, vx, vy, r, wheel spins, lagged accelerations)."""
        out = np.zeros(_core.STATE_SIZE)
        self._core.session.get_state(out)
        return out

    @property
    def cone_hit_flags(self) -> np.ndarray:
        """Per cone of ``self.course.cones``: hit in this episode."""
        return self._core.cone_hits

    @property
    def trajectory(self) -> np.ndarray:
        """CG positions (X, Y) at reset and after every step of this episode [m]."""
        return np.asarray(self._xy_log, dtype=float).reshape(-1, 2)

    def _set_course(self, course: Course) -> None:
        check_path(course.path, f"course {course.name!r}: path")
        self._core.set_course(course.path, course.speed, course.cones,
                              float(course.corridor_half_width))
        self.course = course

    def _episode_end(self, flags: int, vx: float, s: float, t: float, hits: int
                     ) -> dict[str, Any]:
        outcome = episode_outcome(flags)
        pass_speed = vx if outcome == "course_end" else None
        rms_e_y, max_abs_e_y = ey_stats(self._e_y_log)
        summary = {
            "outcome": outcome, "steps": len(self._e_y_log), "time": t, "distance": s,
            "cone_hits": hits, "max_abs_e_y": max_abs_e_y,
            "rms_e_y": rms_e_y,
            "pass_speed": pass_speed,
        }
        return {"pass_speed": pass_speed, "episode_summary": summary, "outcome": outcome}


def resolve_reward_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """Defaults updated with ``weights``; unknown names and non-finite values are errors."""
    out = dict(DEFAULT_REWARD_WEIGHTS)
    if weights is None:
        return out
    if not isinstance(weights, Mapping):
        raise ValueError(f"reward_weights must be a mapping of term -> weight, got {weights!r}")
    for key, value in weights.items():
        if key not in out:
            raise ValueError(
                f"unknown reward weight {key!r}; valid keys: {', '.join(REWARD_TERM_NAMES)}"
            )
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            raise ValueError(f"reward weight {key!r} must be a finite number, got {value!r}")
        out[key] = float(value)
    return out


def check_flag(value: Any, name: str) -> bool:
    """A boolean option: True or False (numpy bools too), never a truthy string or number."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _coerce_action(action: Any) -> list[float]:
    try:
        arr = np.asarray(action)
        if arr.dtype.kind not in "biuf":  # strings, complex, objects: not an action
            raise TypeError
        arr = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"action must be 2 real numbers (steer, longitudinal) in [-1, 1], got {action!r}"
            + (f" (dtype {arr.dtype})" if isinstance(action, np.ndarray) else "")
        ) from None
    if arr.shape != (2,):
        raise ValueError(
            f"action must have shape (2,) = (steer, longitudinal), got shape {arr.shape}; "
            "pass one action per step (for batches use a vector env)"
        )
    return arr.tolist()


def _reject_action(a0: float, a1: float) -> None:
    if math.isnan(a0) or math.isnan(a1):
        raise ValueError(
            f"action contains NaN ({a0}, {a1}); the policy produced NaN, check its inputs "
            "and training (e.g. a diverged network or NaN observations)"
        )
    if math.isinf(a0) or math.isinf(a1):
        raise ValueError(f"action contains inf ({a0}, {a1}); actions must be finite in [-1, 1]")
    raise ValueError(
        f"action ({a0}, {a1}) out of range: actions must be in [-1, 1]; clip them "
        "(np.clip(action, -1, 1)) or use a squashed policy (SB3 clips Box actions, "
        "squash_output=True / tanh)"
    )
