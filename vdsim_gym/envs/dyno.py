"""VDSim-Dyno-v0: a robot driver on the chassis dyno follows a drive cycle (docs/ENVS.md,
"Dyno")."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.dyno.cycles import DriveCycle, load_cycle
from vdsim_gym.dyno.physics import DynoPhysics
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_kwargs import merge_reward_weights
from vdsim_gym.envs.env_outcome import task_flags
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import ceil_ticks

MAX_PHASES = int(_core.DYNO_MAX_PHASES)  # a cycle's phases with their own summary

# The task's facts come from its C++ spec (drive_cycle_task.hpp), never copied here.
_SPEC = _core.DynoEnvCore.default_spec()
_PARAMS = _core.DriveCycleParams()  # the task's default parameters
# Seconds ahead of the cycle's preview columns (cycle_0s, cycle_0.5s, ...), the core's.
CYCLE_PREVIEW_S: tuple[float, ...] = tuple(_core.CYCLE_PREVIEW_S)
TERM_NAMES: tuple[str, ...] = tuple(_SPEC.term_names)
DEFAULT_WEIGHTS: dict[str, float] = dict(_SPEC.default_weights)


class DynoEnv(CoreEnv):
    """Drive-cycle tracking on a chassis dyno through a robot driver.

    ## Description
    An EV on the rollers (``vehicle``, default ``ev_dyno_bench``; docs/DYNO.md) with a
    robot driver pressing the pedals every ``substep_dt`` (0.05 s) with its transport delay
    (``driver={"mode": ..., "delay_s": ..., ...}``: RobotDriver's keywords). Every
    ``control_period`` (0.1 s) the agent gives the driver its reference; the episode
    follows a drive cycle (``cycle``: a name under envs/cycles, a .yaml segment list or a
    measured .csv with time and speed; or a list of them, one drawn per episode).

    ## Action Space
    ``Box(-1, 1, (1,))``: with ``driver`` in speed mode (default) v_ref = (a + 1) / 2 *
    ref_speed_max (40 m/s); in accel mode a_ref = a * ref_accel_max (2 m/s^2) for a >= 0,
    a * ref_decel_max (3 m/s^2) below; with ``driver=None`` the pedal itself (throttle
    > 0, brake < 0).

    ## Observation Space
    float32, ``obs_names``: the cycle's speed now and 0.5, 1, 2, 3, 5 s ahead / 30 m/s;
    speed / 30 m/s; filtered acceleration (first-order, the driver's accel_filter_s) /
    3 m/s^2; the pedal reaching the car (after delay and actuator, [-1, 1]); the previous
    action; with ``observe_driver_delay=True`` then the robot driver's transport delay [s]
    (``driver_delay``: this episode's, drawn by ``randomize['driver_delay']`` or the
    driver's ``delay_s``), what the rig's owner knows, so one policy serves a range.

    ## Rewards
    Named terms (``info["reward_terms"]``): tracking -w ((v - v_cycle) / 2 m/s)^2, pedal_jerk
    -w (pedal change over the step)^2, energy -w (positive tractive work at the wheels over
    the step [kJ]); weights ``reward_weights`` (1.0, 0.1, 0.05).

    ## Starting State
    At the cycle's first speed, torques and driver at rest.

    ## Episode End
    Truncated at the cycle's end (outcome "cycle_end"); terminated on a non-finite state.
    ``episode_summary``: rms_speed_error [m/s], max_abs_speed_error [m/s], energy_wh
    (positive tractive energy at the wheels), distance_m, trace_violations_s (the seconds
    outside the speed-trace tolerance: 2 km/h and 1 s), cycle_index, and per phase k of
    the cycle (``cycle.phases[k]``; NaN for none) phase_rms_speed_error_k and
    phase_trace_violations_s_k; ``phase_summary(summary)`` names them. Info per step
    adds ``phase`` (-1: the cycle has none) and ``out_of_band``.

    ## Arguments
    ``cycle``, ``driver``, ``pedal_actuator`` ({"time_constant": s, "rate_limit":
    pedal/s}), ``vehicle``, ``substep_dt``, ``control_period``, ``ref_speed_max``,
    ``ref_accel_max``, ``ref_decel_max``, ``reward_weights``, ``observe_driver_delay``,
    ``latency``, ``overrun``, ``time_limit`` (None: the cycle's end).

    ## Version History
    - v0: initial version.
    """

    metadata: dict[str, Any] = {**CoreEnv.metadata, "render_modes": ["human", "rgb_array"]}

    PHYSICS = DynoPhysics
    INFO_KEYS = (("speed", float), ("cycle_speed", float), ("speed_error", float),
                 ("pedal", float), ("throttle", float), ("brake", float),
                 ("torque_front", float), ("torque_rear", float), ("t", float),
                 ("phase", int), ("out_of_band", bool))
    METRIC_LABELS = {"rms_speed_error": "speed error RMS [m/s]",
                     "max_abs_speed_error": "max |speed error| [m/s]",
                     "energy_wh": "tractive energy [Wh]", "distance_m": "distance [m]",
                     "trace_violations_s": "outside the speed-trace tolerance [s]"}
    SUMMARY_INT_KEYS = ("steps", "cycle_index")
    TASK_FLAGS = task_flags(_SPEC)  # non_finite
    TIME_LIMIT_OUTCOME = TRUNCATED_OUTCOME = "cycle_end"
    DEFAULT_TIME_LIMIT = None
    # the gym.make keywords the observation depends on (a trained policy requires them)
    OBSERVATION_KWARGS = (*CoreEnv.OBSERVATION_KWARGS, "observe_driver_delay")
    RESETS_IN_CORE = True  # the cycle's pick is the whole draw (DriveCycleTask::draw_start)
    SNAPSHOT_CONFIG = ("cycles",)  # cycle=, loaded (a snapshot's fingerprint)

    def __init__(self, *,
                 cycle: str | Path | DriveCycle | list[Any] | tuple[Any, ...] = "urban_stop_and_go",
                 **kwargs: Any) -> None:
        cycles = list(cycle) if isinstance(cycle, (list, tuple)) else [cycle]
        if not cycles:
            raise ConfigError("cycle is an empty list; give a cycle name, file or DriveCycle")
        self.cycles = [load_cycle(c) for c in cycles]
        super().__init__(**kwargs)
        self._speeds = [c.resample(self.control_period) for c in self.cycles]
        for c in self.cycles:
            if len(c.phases) > MAX_PHASES:
                raise ConfigError(f"cycle {c.name!r} has {len(c.phases)} phases; the dyno "
                                  f"reports at most {MAX_PHASES}")
        self._cycle_data = [_core.CycleSpeeds(v, *c.tolerance_band(self.control_period),
                                              c.phase_indices(self.control_period))
                            for c, v in zip(self.cycles, self._speeds, strict=True)]
        self._set_cycles()
        self._episode_drawn = False  # a cycle drawn (a reset) since the core was built

    def _set_cycles(self) -> None:
        """The env's cycles on its core (shared data; the core draws one per episode), each
        with its time limit when the env has none (the cycle's end truncates)."""
        limits = [-1] * len(self._speeds)
        if self.time_limit is None:
            limits = [ceil_ticks((len(v) - 1) * self.control_period, self.substep_dt)
                      for v in self._speeds]
        self._core.set_cycles(list(zip(self._cycle_data, limits, strict=True)))
        self._episode_drawn = False

    @property
    def cycle_index(self) -> int:
        """The index in ``cycles`` of this episode's cycle (0 before the first reset)."""
        return int(self._core.cycle_index)

    # The summary's per-phase fields: metric -> its slot k's field name.
    PHASE_METRICS: dict[str, str] = {"rms_speed_error": "phase_rms_speed_error_{}",
                                     "trace_violations_s": "phase_trace_violations_s_{}"}

    @property
    def cycle_phases(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Per cycle of ``cycles``: its name and its phases' names in summary slot order,
        a repeated name numbered from its second (class 1's ``low``, ``medium``,
        ``low_2``)."""
        out = []
        for c in self.cycles:
            names: list[str] = []
            for name, _, _ in c.phases:
                key, n = name, 2
                while key in names:
                    key, n = f"{name}_{n}", n + 1
                names.append(key)
            out.append((c.name, tuple(names)))
        return tuple(out)

    def phase_summary(self, summary: Mapping[str, Any]) -> dict[str, dict[str, float]]:
        """An episode summary's per-phase fields by phase name (the summary's cycle's
        ``cycle_phases``): ``{"low": {"rms_speed_error": ..., "trace_violations_s": ...},
        ...}``."""
        _, names = self.cycle_phases[int(summary["cycle_index"])]
        return {name: {m: summary[f.format(k)] for m, f in self.PHASE_METRICS.items()}
                for k, name in enumerate(names)}

    def metric_label(self, metric: str) -> str:
        """A summary field's label with its unit (``METRIC_LABELS``); a per-phase field's
        names its phase: "speed error RMS [m/s], phase 3 (extra_high)" (the name when
        every cycle of the env gives slot 3 the same one)."""
        for m, f in self.PHASE_METRICS.items():
            for k in range(MAX_PHASES):
                if metric == f.format(k):
                    names = {n[k] for _, n in self.cycle_phases if k < len(n)}
                    which = f" ({names.pop()})" if len(names) == 1 else ""
                    return f"{self.METRIC_LABELS[m]}, phase {k}{which}"
        return self.METRIC_LABELS.get(metric, metric)

    @property
    def cycle(self) -> DriveCycle | None:
        """This episode's cycle (None before the first reset)."""
        return self.cycles[self.cycle_index] if self._episode_drawn else None

    # Narrower than CoreEnv._make_core(physics, **task_kwargs) on purpose (PHYSICS is
    # DynoPhysics; the keyword-only parameters are the env's own gym.make keywords, which
    # CoreEnv reads to refuse others).
    def _make_core(self, physics: DynoPhysics, *, ref_speed_max: float = _PARAMS.ref_speed_max,  # type: ignore[override]
                   ref_accel_max: float = _PARAMS.ref_accel_max,
                   ref_decel_max: float = _PARAMS.ref_decel_max,
                   reward_weights: Mapping[str, float] | None = None,
                   observe_driver_delay: bool = False) -> Any:
        weights = merge_reward_weights(DEFAULT_WEIGHTS, reward_weights)
        if not isinstance(observe_driver_delay, (bool, np.bool_)):
            raise ConfigError("observe_driver_delay must be True or False, got "
                              f"{observe_driver_delay!r}")
        if observe_driver_delay and physics.driver is None:
            raise ConfigError("observe_driver_delay=True observes the robot driver's transport "
                              "delay, and this bench has none (driver=None: the action is the "
                              "pedal); pass driver='speed' or {'mode': 'pedal', 'delay_s': 0.3}")
        for name, value in (("ref_speed_max", ref_speed_max), ("ref_accel_max", ref_accel_max),
                            ("ref_decel_max", ref_decel_max)):
            if not is_real(value) \
                    or not math.isfinite(value) or not 0 < value <= 100:
                raise ConfigError(f"{name} must be a number in (0, 100], got {value!r}")
        p = _core.DriveCycleParams()
        p.ticks_per_period = physics.ticks_per_period
        p.action = getattr(_core.CycleAction, physics.longitudinal)
        p.ref_speed_max, p.ref_accel_max = float(ref_speed_max), float(ref_accel_max)
        p.ref_decel_max = float(ref_decel_max)
        p.observe_driver_delay = bool(observe_driver_delay)
        for k, v in weights.items():  # DriveCycleParams.w_<term>
            setattr(p, f"w_{k}", v)
        self.reward_weights = weights
        return _core.DynoEnvCore(p, physics.vehicle.to_core(), physics.sim_config())

    def _reset_task(self, seed: int | None) -> tuple[float]:
        """The episode's cycle, drawn by the core (``DriveCycleTask::draw_start``: a
        uniform pick, ``integers(len(cycles))`` when there are several); the start is its
        first speed."""
        return self._core.draw_start(self.np_random.bit_generator)

    def _frame(self) -> np.ndarray:
        """The frame: the cycle around now with its preview, the speed,
        and the pedal commanded and reaching the car (vdsim_gym.render.frames)."""
        from vdsim_gym.render.frames import dyno_frame  # Pillow only when rendering

        return dyno_frame(self)

    def set_driver(self, driver: str | Mapping[str, Any] | None) -> None:
        """Rebuilds the core with another robot driver (None: the action is the pedal;
        what ``RobotDriverWrapper`` does): same bench, task, latency and time limit.
        ``reset()`` is required before ``step()``."""
        if driver is None and self.randomize is not None and self.randomize.changes_driver:
            raise ConfigError("this env draws the robot driver's transport delay per episode "
                              "(randomize['driver_delay']); it needs a driver: build it "
                              "without that range to drive the pedal directly")
        physics = DynoPhysics.build(
            vehicle=self.physics.vehicle, substep_dt=self.substep_dt,
            control_period=self.control_period, driver=driver,
            pedal_actuator=self.physics.actuator)
        core = self._make_core(physics, **self._task_kwargs)  # refuses before any change
        self.physics, self.longitudinal = physics, physics.longitudinal
        self._core = core
        self._bind_core()
        self._set_time_limit_ticks()
        self._set_cycles()
        self.action_names = tuple(self._core.action_names)
        self.configure_latency(self.latency, self.overrun)  # also requires a reset

    def set_longitudinal(self, mode: str) -> None:
        """"pedal": no driver (the action is the pedal); "speed"/"accel": a driver in that
        mode with default settings (``set_driver`` takes its keywords)."""
        self.set_driver(None if mode == "pedal" else mode)

    def reference(self, action: float) -> float:
        """What an action stands for: v_ref [m/s], a_ref [m/s^2] or the pedal."""
        return self._core.reference(float(action))

    @property
    def state(self) -> np.ndarray:
        """(speed [m/s], filtered acceleration [m/s^2], front and rear axle torque [N m])."""
        c = self._core
        return np.array([c.speed, c.filtered_accel, *c.axle_torque])

    def plant_observation(self) -> dict[str, float]:
        c = self._core
        front, rear = c.axle_torque
        return {"t": c.time, "vx": c.speed, "ax": c.filtered_accel, "pedal": c.pedal,
                "torque_front": front, "torque_rear": rear, "energy_j": c.energy_j,
                "distance": c.distance}


__all__ = ["DEFAULT_WEIGHTS", "DynoEnv", "TERM_NAMES"]
