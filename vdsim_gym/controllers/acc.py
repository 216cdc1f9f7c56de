"""The PID ACC baseline of the reference workflow (../shared/reference/
pid_acc_simulation.txt): ``PID`` (clamps, conditional-integration anti-windup, optional
integral limit, no derivative kick on the first call, ``reset()``) and ``ACCController``
(cruise / follow / emergency modes), with gains loaded from a ``tuning_results.yaml``-style
file whose ranges are checked (``load_gains``).

Scalar and exact to the reference's rules; the batched ``predict`` for VDSim-ACC-v0 comes
with that env.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from vdsim_gym._checks import is_real
from vdsim_gym._files import read_yaml
from vdsim_gym.errors import ConfigError

# Allowed gain ranges (inclusive): outside them the file is refused, naming the key.
GAIN_RANGES = {"kp": (0.0, 10.0), "ki": (0.0, 10.0), "kd": (0.0, 10.0),
               "integral_limit": (0.0, 1e4)}
GAIN_BLOCKS = ("pid_speed", "pid_distance")
MODES = ("cruise", "follow", "emergency")


class PID:
    """u = kp e + ki I + kd de/dt, clamped to [output_min, output_max].

    Anti-windup by conditional integration: the error is not integrated on a call where
    the output saturates and the error pushes further into the saturation (the integral
    keeps its value); ``integral_limit`` also bounds |I|. The derivative is 0 on the first
    call after construction or ``reset()`` (no kick from a stale previous error).
    """

    def __init__(self, kp: float, ki: float, kd: float = 0.0, *, output_min: float,
                 output_max: float, integral_limit: float | None = None) -> None:
        if not output_min < output_max:
            raise ConfigError(f"PID output_min ({output_min}) must be below output_max "
                              f"({output_max})")
        self.kp, self.ki, self.kd = float(kp), float(ki), float(kd)
        self.output_min, self.output_max = float(output_min), float(output_max)
        self.integral_limit = None if integral_limit is None else float(integral_limit)
        self.reset()

    def reset(self) -> None:
        self.integral = 0.0
        self.prev_error: float | None = None

    def _clamp_i(self, i: float) -> float:
        lim = self.integral_limit
        return i if lim is None else min(max(i, -lim), lim)

    def compute(self, error: float, dt: float, *, integrate: bool = True) -> float:
        """One step; ``integrate=False`` freezes the integral (an inactive controller)."""
        if not dt > 0.0 or not math.isfinite(dt):
            raise ConfigError(f"PID dt must be a positive number of seconds, got {dt!r}")
        if not math.isfinite(error):
            raise ConfigError(f"PID error must be finite, got {error!r}")
        d = 0.0 if self.prev_error is None else self.kd * (error - self.prev_error) / dt
        self.prev_error = error
        candidate = self._clamp_i(self.integral + error * dt) if integrate else self.integral
        u = self.kp * error + self.ki * candidate + d
        winding = (u > self.output_max and error > 0.0) or (u < self.output_min and error < 0.0)
        if winding:
            u = self.kp * error + self.ki * self.integral + d
        else:
            self.integral = candidate
        return min(max(u, self.output_min), self.output_max)

    def output(self, error: float, dt: float) -> float:
        """What ``compute(error, dt, integrate=False)`` would return, without any update."""
        d = 0.0 if self.prev_error is None else self.kd * (error - self.prev_error) / dt
        u = self.kp * error + self.ki * self.integral + d
        return min(max(u, self.output_min), self.output_max)


@dataclass(frozen=True)
class ACCConfig:
    """The reference's ACC settings and vehicle limits (SI units)."""

    set_speed: float = 30.0  # [m/s]
    time_headway: float = 1.5  # [s]
    min_distance: float = 10.0  # [m]
    emergency_ttc_threshold: float = 3.0  # [s]
    max_acceleration: float = 3.0  # [m/s^2]
    max_deceleration: float = 8.0  # [m/s^2], positive
    # Emergency braking, once entered, holds while closing with TTC below this [s]; None:
    # the entry threshold (the reference's rule, no hysteresis). See ACCController.
    emergency_exit_ttc: float | None = None

    def __post_init__(self) -> None:
        if self.emergency_exit_ttc is not None and not (
                math.isfinite(self.emergency_exit_ttc)
                and self.emergency_exit_ttc >= self.emergency_ttc_threshold):
            raise ConfigError(f"emergency_exit_ttc = {self.emergency_exit_ttc!r} s must be a "
                              f"number >= emergency_ttc_threshold "
                              f"({self.emergency_ttc_threshold!r} s), or None for no "
                              "hysteresis")


@dataclass(frozen=True)
class ACCGains:
    pid_speed: dict[str, float] = field(default_factory=lambda: {"kp": 0.5, "ki": 0.05,
                                                                 "kd": 0.0})
    pid_distance: dict[str, float] = field(default_factory=lambda: {"kp": 0.2, "ki": 0.01,
                                                                    "kd": 0.1})


def load_gains(path: str | Path) -> ACCGains:
    """Gains from a ``tuning_results.yaml``-style file: blocks ``pid_speed`` and
    ``pid_distance`` with ``kp``, ``ki``, ``kd`` (and optional ``integral_limit``), each
    within GAIN_RANGES. Errors name the file and the key."""
    path = Path(path)
    data = read_yaml(path, "the gains file")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected blocks {', '.join(GAIN_BLOCKS)}, got {data!r:.80}")
    unknown = sorted(set(data) - set(GAIN_BLOCKS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}; valid: {', '.join(GAIN_BLOCKS)}")
    blocks = {}
    for name in GAIN_BLOCKS:
        block = data.get(name)
        if not isinstance(block, dict):
            raise ConfigError(f"{path}: missing block {name!r} (with kp, ki, kd)")
        bad = sorted(set(block) - set(GAIN_RANGES))
        if bad:
            raise ConfigError(f"{path}: {name}.{bad[0]} is not a gain; valid: "
                              f"{', '.join(GAIN_RANGES)}")
        for key in ("kp", "ki", "kd"):
            if key not in block:
                raise ConfigError(f"{path}: {name}.{key} is missing")
        for key, value in block.items():
            lo, hi = GAIN_RANGES[key]
            if not is_real(value) \
                    or not lo <= value <= hi:
                raise ConfigError(f"{path}: {name}.{key} = {value!r} is outside its allowed "
                                  f"range [{lo:g}, {hi:g}]")
        blocks[name] = {k: float(v) for k, v in block.items()}
    return ACCGains(**blocks)


@dataclass(frozen=True)
class ACCOutput:
    acceleration: float  # [m/s^2], within [-max_deceleration, max_acceleration]
    mode: str  # cruise | follow | emergency
    distance_error: float | None  # distance - desired distance [m]; None without a lead
    ttc: float | None  # [s]; None without a lead or when not closing


class ACCController:
    """Cruise, follow and emergency modes as the reference defines them.

    - desired distance = min_distance + time_headway * ego_speed;
    - TTC = distance / (ego_speed - lead_speed) only when closing, else None;
    - mode: cruise without a valid lead; emergency when closing with TTC below the
      threshold, and (with ``emergency_exit_ttc``) held while closing with TTC below the
      exit threshold; follow otherwise. Without the hysteresis (the reference's rule) a
      sampled loop near the threshold toggles full braking on and off every few samples;
      ``acc_pid`` on the vehicle env exits at 4 s;
    - cruise: the speed PID on set_speed - ego_speed;
    - emergency: -max_deceleration, bypassing both PIDs;
    - follow: the distance PID on distance - desired is primary; the speed PID is a cap
      (min of the two), and its integral is frozen while it is not the active one, so a
      far gap can close up to the set speed;
    - both PIDs are reset on every mode change; the output is clamped to the limits.
    """

    def __init__(self, config: ACCConfig | None = None, gains: ACCGains | None = None
                 ) -> None:
        self.config = config or ACCConfig()
        self.gains = gains or ACCGains()
        c = self.config
        lo, hi = -c.max_deceleration, c.max_acceleration
        self.speed_pid = PID(**self.gains.pid_speed, output_min=lo, output_max=hi)
        self.distance_pid = PID(**self.gains.pid_distance, output_min=lo, output_max=hi)
        self.mode: str | None = None

    def reset(self) -> None:
        self.speed_pid.reset()
        self.distance_pid.reset()
        self.mode = None

    def compute(self, ego_speed: float, lead_speed: float | None, distance: float | None,
                dt: float, *, set_speed: float | None = None) -> ACCOutput:
        """One control step; ``set_speed`` overrides the config's for this step (an env
        whose episodes draw their set speed)."""
        c = self.config
        lead = lead_speed is not None and distance is not None \
            and math.isfinite(lead_speed) and math.isfinite(distance)
        ttc = None
        if lead:
            assert lead_speed is not None and distance is not None  # what lead means
            if ego_speed > lead_speed:
                ttc = distance / (ego_speed - lead_speed)
        if not lead:
            mode = "cruise"
        elif ttc is not None and (ttc < c.emergency_ttc_threshold or (
                self.mode == "emergency" and c.emergency_exit_ttc is not None
                and ttc < c.emergency_exit_ttc)):
            mode = "emergency"
        else:
            mode = "follow"
        if mode != self.mode:
            self.speed_pid.reset()
            self.distance_pid.reset()
            self.mode = mode
        e_speed = (c.set_speed if set_speed is None else set_speed) - ego_speed
        distance_error = None
        if mode == "cruise":
            accel = self.speed_pid.compute(e_speed, dt)
        elif mode == "emergency":
            assert distance is not None  # not cruise: there is a lead
            accel = -c.max_deceleration
            distance_error = distance - (c.min_distance + c.time_headway * ego_speed)
        else:
            assert distance is not None
            distance_error = distance - (c.min_distance + c.time_headway * ego_speed)
            a_dist = self.distance_pid.compute(distance_error, dt)
            if self.speed_pid.output(e_speed, dt) < a_dist:  # the cap is active
                accel = min(a_dist, self.speed_pid.compute(e_speed, dt))
            else:
                self.speed_pid.compute(e_speed, dt, integrate=False)
                accel = a_dist
        accel = min(max(accel, -c.max_deceleration), c.max_acceleration)
        return ACCOutput(accel, mode, distance_error, ttc)


__all__ = ["ACCConfig", "ACCController", "ACCGains", "ACCOutput", "GAIN_RANGES", "MODES",
           "PID", "load_gains"]
