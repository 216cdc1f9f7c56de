"""PathTrackingEnv: the shared base of the path-following environments.

Translation only: the task (projection on the path, cones, termination, observation and
reward terms) runs in the C++ core (``_core.PathEnvCore``); this module validates
arguments, owns the Gymnasium spaces and the numpy buffers the core writes into, and
names the reward terms.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import check_flag, is_real
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.course import Course
from vdsim_gym.envs.env_outcome import task_flags
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.plant import PhysicsSpec

# The task's facts come from its C++ spec (path_task.hpp), never copied here.
_SPEC = _core.PathEnvCore.default_spec()
_PARAMS = _core.TaskParams()  # the task's default parameters
OBS_NAMES: tuple[str, ...] = tuple(_SPEC.obs_names)
REWARD_TERM_NAMES: tuple[str, ...] = tuple(_SPEC.term_names)
DEFAULT_REWARD_WEIGHTS: dict[str, float] = dict(_SPEC.default_weights)

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
    width, spin-out (|e_psi| > 90 deg, or |beta| > 45 deg above 1 m/s), a stall (vx below
    a quarter of v_ref at every step end for ``stall_time`` seconds) or a non-finite
    state. Truncated: the projection reaches the course end (``info["pass_speed"]`` is
    vx there), or the simulated time reaches ``time_limit`` [s] (the env's own limit, in
    seconds whatever the control period). On episode end ``info`` carries ``outcome``
    ("cone_hit", "off_corridor", "spin_out", "stalled", "non_finite", "course_end" or
    "time_limit"),
    ``pass_speed`` [m/s] (NaN unless the course end was reached) and ``episode_summary``
    (outcome, steps, return, time [s], distance [m], cone_hits, rms_e_y and max_abs_e_y
    [m] over the episode's steps, pass_speed; computed in the core, so the vector env
    reports the same).
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
    - ``integrator="etd3"``: third order with the stiff wheel spins, tire lags and
      filters exponential; or "etd2" (the same at second order, 3-4 times the cost
      under noisy commands), "semi_implicit" (first order: it lags like an extra
      delay), "heun" (every substep: the reference configuration), "euler", "rk4"
      (the accuracy gates: docs/PHYSICS.md).
    - ``max_step=None`` [s]: the longest integration step (None: 10 ms for etd3, 5 ms for
      etd2 and semi_implicit, one substep otherwise); commands and delays stay on the
      substep grid.
    - ``step_tol=None`` [m/s]: etd3's (or etd2's) step-size tolerance, the local error a
      step may make in the body's velocities (None: 2e-4 for etd3, 1e-4 for etd2, each
      within 1 % of the fine reference in the closed-loop and noisy-command gates;
      docs/PHYSICS.md, "Step-size rule").
    - ``reward_weights=None``: mapping of term name -> weight overriding the defaults.
    - ``terminate_on_cone=True``: end the episode at the first cone hit.
    - ``stall_time=2.0`` [s]: terminate ("stalled") once vx has stayed below a quarter of
      the reference speed for this long; 0: never.
    - ``render_mode=None``: None, "rgb_array" (frames as arrays) or "human" (a pygame window).
    - ``latency=None``: a ``vdsim_gym.LatencyModel`` (``.fixed(c)``, ``.uniform(lo, hi,
      seed)``, ``.normal(mu, sd, seed)``, ``.measured()``): computation delay of each
      action (see Latency); None applies every action at once.
    - ``overrun="skip"``: "skip" or "queue", the policy when a delay exceeds the period.
    - ``time_limit`` [s]: the episode truncates ("time_limit") at the first step whose end
      reaches it (DLC 15 s, PathFollow 40 s by default); None: no limit.
"""


class PathTrackingEnv(CoreEnv):
    """Follow a reference path (a ``Course``) with steer and longitudinal actions.

    Subclasses choose the course (``_next_course``); the core draws the start on it.
    """

    __doc__ = (__doc__ or "") + SHARED_DOC + "\n    ## Arguments\n" + SHARED_ARGS

    metadata: dict[str, Any] = {**CoreEnv.metadata, "render_modes": ["human", "rgb_array"]}
    INFO_KEYS = (("e_y", float), ("cone_hits", int), ("s", float), ("t", float))
    STEP_LOG = ("X", "Y")  # the CG's trajectory (trajectory(), render)
    SUMMARY_INT_KEYS = ("steps", "cone_hits")
    METRIC_LABELS = {"rms_e_y": "e_y RMSE [m]", "max_abs_e_y": "max |e_y| [m]",
                     "cone_hits": "cone hits per episode"}
    TASK_FLAGS = task_flags(_SPEC)  # non_finite, spin_out, off_corridor, cone_hit, stalled
    TRUNCATED_OUTCOME = "course_end"

    def __init__(
        self,
        *,
        reward_weights: Mapping[str, float] | None = None,
        terminate_on_cone: bool = _PARAMS.terminate_on_cone,
        stall_time: float = _PARAMS.stall_time,
        **kwargs: Any,
    ) -> None:
        self.course: Course | None = None
        super().__init__(reward_weights=reward_weights, terminate_on_cone=terminate_on_cone,
                         stall_time=stall_time, **kwargs)

    # Narrower than CoreEnv._make_core(physics, **task_kwargs) on purpose: these keyword-only
    # parameters are the env's own gym.make keywords (CoreEnv reads them to refuse others).
    def _make_core(self, physics: PhysicsSpec, *, reward_weights: Mapping[str, float] | None,  # type: ignore[override]
                   terminate_on_cone: bool, stall_time: float) -> Any:
        task = _core.TaskParams()
        task.ticks_per_period = physics.ticks_per_period
        self.cone_radius: float = task.cone_radius  # [m] hit test; courses place cones with it
        task.terminate_on_cone = check_flag(terminate_on_cone, "terminate_on_cone")
        task.stall_time = self.stall_time = check_stall_time(stall_time)
        self.reward_weights = resolve_reward_weights(reward_weights)
        for k, v in self.reward_weights.items():
            setattr(task.weights, k, v)
        return _core.PathEnvCore(physics.make_session(), task)

    # ---------------------------------------------------------------- subclass hooks

    def _next_course(self) -> Course:
        raise NotImplementedError

    # ---------------------------------------------------------------- CoreEnv hooks

    def _after_core_rebuild(self) -> None:
        self.course = None  # the new core has no course yet: the next reset sets one

    def _reset_task(self, seed: int | None) -> tuple[float, ...]:
        """The episode's course (``_next_course``), then its start drawn by the core
        (``PathTask::draw_start``: on the path at s = 0, U(+-0.05 m) sideways, U(+-0.5 deg)
        in heading, at the course's start speed)."""
        course = self._next_course()
        if course is not self.course:
            self._set_course(course)
        return self._core.draw_start(self.np_random.bit_generator)

    def _frame(self) -> np.ndarray:
        """The bird's-eye frame (vdsim_gym.render.frames.path_frame): the course,
        the driven path, the body with the wheels at the actuator's angle, a scale bar,
        time, speed, e_y and steer, and with latency the command in force and the
        pending one with their sample and apply times."""
        from vdsim_gym.render.frames import path_frame  # Pillow only when rendering

        return path_frame(self)

    def action_to_command(self, action: Any) -> tuple[float, float]:
        """(delta_rw [rad], longitudinal) for an action: the core's own mapping (clipped
        to [-1, 1]; the Action Space table)."""
        a0, a1 = np.asarray(action, dtype=float).reshape(2).tolist()
        return self._core.command_from_action(a0, a1)

    def path_observer(self) -> Any:
        """The core's path observation outside the env: a ``_core.PathObserver`` on this
        episode's course and the env's vehicle, whose ``observe(X, Y, psi, vx, vy, r, ax,
        ay, delta_rw, prev_steer, prev_long)`` returns the task's observation columns as
        ``PathEnvCore`` computes them (the same C++ function; ``reset()`` forgets the
        projection hint). Requires a course (after ``reset()``)."""
        if self.course is None:
            raise ConfigError("reset the env first: its course is chosen at reset")
        return self._core.observer()

    @property
    def cone_hit_flags(self) -> np.ndarray:
        """Per cone of ``self.course.cones``: hit in this episode."""
        return self._core.cone_hits

    @property
    def trajectory(self) -> np.ndarray:
        """CG positions (X, Y) at reset and after every step of this episode [m]."""
        return np.asarray(self._step_log, dtype=float).reshape(-1, 2)

    def _set_course(self, course: Course) -> None:
        # shared by envs on this course; its path checked when the data is built
        self._core.set_course_data(course.core_data())
        self.course = course

    def _episode_end(self, outcome: str | None, summary: dict[str, Any]) -> dict[str, Any]:
        return {"pass_speed": summary["pass_speed"]}  # NaN unless the course end was reached


def check_stall_time(value: Any) -> float:
    """A stall time [s]: a finite number >= 0 (0: never terminate on a stall)."""
    if not is_real(value) \
            or not math.isfinite(value) or value < 0:
        raise ConfigError(f"stall_time must be a finite number of seconds >= 0 (0: no stall "
                          f"termination), got {value!r}")
    return float(value)


def resolve_reward_weights(weights: Mapping[str, float] | None) -> dict[str, float]:
    """Defaults updated with ``weights``; unknown names and non-finite values are errors."""
    out = dict(DEFAULT_REWARD_WEIGHTS)
    if weights is None:
        return out
    if not isinstance(weights, Mapping):
        raise ConfigError(f"reward_weights must be a mapping of term -> weight, got {weights!r}")
    for key, value in weights.items():
        if key not in out:
            raise ConfigError(
                f"unknown reward weight {key!r}; valid keys: {', '.join(REWARD_TERM_NAMES)}"
            )
        if not is_real(value) \
                or not math.isfinite(value):
            raise ConfigError(f"reward weight {key!r} must be a finite number, got {value!r}")
        out[key] = float(value)
    return out


def episode_outcome(flags: int) -> str | None:
    """Why the env ended an episode: the termination cause ("non_finite", "spin_out",
    "off_corridor", "cone_hit", "stalled", the first set in that order), "course_end" or
    "time_limit" for a truncation, None if it goes on (a ``max_episode_steps`` passed to
    gym.make is TimeLimit's, not the env's)."""
    return PathTrackingEnv.outcome(flags)


__all__ = ["PathTrackingEnv", "check_flag", "episode_outcome",
           "resolve_reward_weights"]
