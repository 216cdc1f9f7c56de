"""VDSim-ACC-v0: follow a lead vehicle on a straight road (docs/ENVS.md, "ACC")."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.envs.acc_scenarios import FAMILIES, LeadScenario, load_sensor_csv
from vdsim_gym.envs.core_env import CoreEnv
from vdsim_gym.envs.env_kwargs import merge_reward_weights
from vdsim_gym.envs.env_outcome import task_flags
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.plant import PhysicsSpec
from vdsim_gym.timing import ceil_ticks, nearest_ticks

# The task's facts come from its C++ spec (acc_task.hpp), never copied here.
_SPEC = _core.AccEnvCore.default_spec()
_PARAMS = _core.AccTaskParams()  # the task's default parameters
TERM_NAMES: tuple[str, ...] = tuple(_SPEC.term_names)
# The costs saturate at their weights (sum 1.0) and `alive` pays 1.0 per step survived, so
# no step survived earns less than 0 and a collision never pays (docs/ENVS.md).
DEFAULT_WEIGHTS: dict[str, float] = dict(_SPEC.default_weights)


class ACCEnv(CoreEnv):
    """Car following: the ego vehicle (L1 by default) behind a lead on a straight road.

    ## Scenario
    Each reset draws a family from ``scenario`` ("random": any of cruise, follow, cut_in,
    hard_brake, stop_and_go, lead_leaves; a family name; or a list of them) with
    ``np_random``, or replays ``sensor_csv`` (time, lead_speed, distance; blanks: no lead).
    The lead appears at its sensor distance ahead of the ego's front bumper and then moves
    at its own speed; the gap is integrated, never copied from the sensor.

    ## Observation (float32, ``obs_names``)
    ego_speed / 30, set_speed / 30, gap / 100 (0 without a lead), (lead - ego speed) / 10,
    desired_gap / 100 (min_distance + time_headway * v), ttc / ttc_cap (capped at 10 s;
    1 when not closing), not_closing flag, lead_present flag, ax / 5, previous action.

    ## Action
    ``Box(-1, 1, (1,))``: with the default ``longitudinal="accel"`` a target acceleration
    a * max_acceleration (a >= 0) or a * max_deceleration through the core's cascade.

    ## Reward
    Named terms (``info["reward_terms"]``), each cost saturating at its weight
    (c(x) = x^2 / (1 + x^2)): gap tracking while a lead is present (relative gap error),
    speed tracking when free (overspeed only with a lead), jerk, comfort (ax), safety (TTC
    below ttc_safe); collision (-100) and alive (+1 per step survived), so surviving always
    pays more than colliding.

    ## Episode end
    Terminated on collision (gap <= 0) or a non-finite state; truncated at the scenario's
    end (``duration`` [s], the CSV's last time). ``info["outcome"]``: collision,
    non_finite, scenario_end; ``episode_summary``: min_gap [m], collision, rms_jerk
    [m/s^3], rms_time_gap_error [s] (gap / v - time_headway while following above 1 m/s).
    """

    metadata: dict[str, Any] = {**CoreEnv.metadata, "render_modes": ["human", "rgb_array"]}

    # gap [m] (+inf without a lead), lead_speed [m/s] (0 without), ttc [s] (+inf when not
    # closing), lead_present, ego_speed [m/s], ax [m/s^2], t [s].
    INFO_KEYS = (("gap", float), ("lead_speed", float), ("ttc", float), ("lead_present", bool),
                 ("ego_speed", float), ("ax", float), ("t", float))
    SUMMARY_INT_KEYS = ("steps", "collision")
    METRIC_LABELS = {"min_gap": "min gap [m]", "collision": "collisions per episode",
                     "rms_jerk": "RMS jerk [m/s^3]",
                     "rms_time_gap_error": "time-gap error RMS [s]"}
    TASK_FLAGS = task_flags(_SPEC)  # collision, non_finite
    TIME_LIMIT_OUTCOME = TRUNCATED_OUTCOME = "scenario_end"
    RESETS_IN_CORE = True  # the family's pick and draws are the core's (AccTask::draw_start)
    SNAPSHOT_CONFIG = ("families",)  # scenario=, checked (a snapshot's fingerprint)

    def __init__(self, *, scenario: str | Sequence[str] = "random",
                 sensor_csv: str | Path | None = None, duration: float = 30.0,
                 set_speed: float | None = None, **kwargs: Any) -> None:
        families = FAMILIES if scenario == "random" else \
            (scenario,) if isinstance(scenario, str) else tuple(scenario)
        for f in families:
            if f not in FAMILIES:
                raise ConfigError(f"unknown scenario {f!r}; valid: 'random' or "
                                  f"{', '.join(FAMILIES)}")
        if not families:
            raise ConfigError("scenario is an empty list; give 'random' or family names")
        if not (is_real(duration) and math.isfinite(duration)
                and 0 < duration <= 3600):
            raise ConfigError(f"duration must be seconds in (0, 3600], got {duration!r}")
        if set_speed is not None and not (is_real(set_speed)
                                          and 0 < set_speed < 70):
            raise ConfigError(f"set_speed must be None (drawn) or in (0, 70) m/s, got "
                              f"{set_speed!r}")
        self.families, self.set_speed = families, set_speed
        self.sensor_csv = None if sensor_csv is None else Path(sensor_csv)
        kwargs.setdefault("level", "L1")
        kwargs.setdefault("longitudinal", "accel")
        self._csv: LeadScenario | None = None
        self.duration = float(duration)
        super().__init__(**kwargs)
        if self.sensor_csv is not None:
            self._csv = load_sensor_csv(self.sensor_csv, dt=self.control_period,
                                        set_speed=30.0 if set_speed is None else set_speed)
            self.duration = (self._csv.periods - 1) * self.control_period
        self._set_source()

    def _set_source(self) -> None:
        """Where the core's episodes come from: the sensor file's scenario, or the families'
        draws (``AccTask::draw_start``, from ``np_random``); with no time limit, the
        scenario's end truncates the episode."""
        core = self._core
        if self._csv is not None:
            core.set_scenario(self._csv.lead_speed, self._csv.distance)
            core.set_fixed(self._csv.ego_speed0, self._csv.set_speed)
            periods = self._csv.periods
        else:
            periods = nearest_ticks(self.duration, self.control_period)[0] + 1
            core.set_drawn([FAMILIES.index(f) for f in self.families], periods,
                           self.control_period,
                           math.nan if self.set_speed is None else float(self.set_speed))
        core.set_episode_limit_ticks(-1 if self.time_limit is not None else ceil_ticks(
            (periods - 1) * self.control_period, self.substep_dt))
        self._episode_drawn = False

    def _after_core_rebuild(self) -> None:
        self._set_source()

    @property
    def scenario(self) -> LeadScenario | None:
        """This episode's lead scenario (None before the first reset): the sensor file's,
        or the one the core drew."""
        if not self._episode_drawn:
            return None
        if self._csv is not None:
            return self._csv
        family, speed, distance, set_speed, ego_speed0 = self._core.scenario()
        return LeadScenario(FAMILIES[family], speed, distance, set_speed, ego_speed0)

    # Narrower than CoreEnv._make_core(physics, **task_kwargs) on purpose: these keyword-only
    # parameters are the env's own gym.make keywords (CoreEnv reads them to refuse others).
    def _make_core(self, physics: PhysicsSpec, *, time_headway: float = _PARAMS.time_headway,  # type: ignore[override]
                   min_distance: float = _PARAMS.min_distance,
                   ttc_safe: float = _PARAMS.ttc_safe,
                   reward_weights: Mapping[str, float] | None = None) -> Any:
        weights = merge_reward_weights(DEFAULT_WEIGHTS, reward_weights)
        for name, value in (("time_headway", time_headway), ("min_distance", min_distance),
                            ("ttc_safe", ttc_safe)):
            if not is_real(value) \
                    or not math.isfinite(value) or value < 0:
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
        self.time_headway, self.min_distance = float(time_headway), float(min_distance)
        self.reward_weights = weights
        task = _core.AccTaskParams()
        task.ticks_per_period = physics.ticks_per_period
        task.time_headway, task.min_distance = float(time_headway), float(min_distance)
        task.ttc_safe = float(ttc_safe)
        for k, v in weights.items():
            setattr(task.weights, k, v)
        return _core.AccEnvCore(physics.make_session(), task)

    def _reset_task(self, seed: int | None) -> tuple[float, float]:
        """The episode's scenario and start, drawn by the core (``AccTask::draw_start``:
        ``integers(len(families))`` picks the family, then its draws; none for a sensor
        file)."""
        return self._core.draw_start(self.np_random.bit_generator)

    def _frame(self) -> np.ndarray:
        """The frame: the road from the side, ego and lead at their gap,
        the desired gap, TTC and ``render_notes`` (vdsim_gym.render.frames)."""
        from vdsim_gym.render.frames import acc_frame  # Pillow only when rendering

        return acc_frame(self)


__all__ = ["ACCEnv", "DEFAULT_WEIGHTS", "TERM_NAMES"]
