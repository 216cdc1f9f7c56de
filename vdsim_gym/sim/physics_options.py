"""The physics options of a core ``Session``: the model levels, longitudinal modes and
integrators with their defaults, each option's check (per-channel dead times, the
step-size tolerance, the integration step), the steering chain's core parameters, and
``make_session``, which checks the options and builds a session. ``plant.PhysicsSpec``
holds them validated for the Plant and every env.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.config.vehicle import MAX_ACTUATOR_DEAD_TIME_S, ActuatorConfig, VehicleConfig
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import floor_ticks, whole_ticks

LEVELS = ("L1", "L2")
LONGITUDINAL_MODES = ("force", "pedal", "accel")
INTEGRATORS = ("euler", "heun", "rk4", "semi_implicit", "etd2", "etd3")
# Integrators that treat the stiff wheel spins (and a differential's coupling) implicitly.
IMPLICIT_INTEGRATORS = ("semi_implicit", "etd2", "etd3")
# Integrators whose steps are sized by the error they make (step_tol).
ADAPTIVE_INTEGRATORS = ("etd2", "etd3")
# Chosen by the closed-loop gate (every env's task metric under its baseline across
# delays within 1 % of the fine reference) and the noisy-command gate (open-loop replays of
# RL-like commands), at the lowest cost under both smooth and noisy commands
# (docs/PHYSICS.md, "Default integration"); every plant and env defaults to it. etd2
# (second order, 3-4 times the cost under noisy commands), semi_implicit (first order, it
# lags like an extra delay) and heun on every 0.5 ms substep (the reference
# configuration) stay selectable.
DEFAULT_INTEGRATOR = "etd3"
# The longest integration step when max_step is not given: etd3 up to 10 ms, etd2 and
# semi_implicit up to 5 ms between events (commands, delays and traces stay on the substep
# grid); the explicit integrators step every substep (their stability needs it).
DEFAULT_MAX_STEP = {"semi_implicit": 5e-3, "etd2": 5e-3, "etd3": 1e-2}
# etd3's (and etd2's) steps are sized by the error they make: each may err by this much in
# the body's velocities [m/s] (the core's default_step_tol: etd3 2e-4, etd2 1e-4;
# docs/PHYSICS.md, "Step-size rule"). Chosen with the noisy-command gate and the
# closed-loop gate.
DEFAULT_STEP_TOL: float = _core.default_step_tol(getattr(_core.Integrator, DEFAULT_INTEGRATOR))


def make_session(
    *,
    level: str,
    vehicle: VehicleConfig,
    substep_dt: float,
    longitudinal: str,
    actuator: ActuatorConfig | None,
    integrator: str = DEFAULT_INTEGRATOR,
    step_ticks: int = 1,
    channel_delays: tuple[float, float] = (0.0, 0.0),
    step_tol: float | None = None,
) -> _core.Session:
    """Validate the physics options and build a core session."""
    if level not in LEVELS:
        raise ConfigError(f"level must be one of {LEVELS}, got {level!r}")
    if longitudinal not in LONGITUDINAL_MODES:
        raise ConfigError(
            f"longitudinal must be one of {LONGITUDINAL_MODES}, got {longitudinal!r}")
    if integrator not in INTEGRATORS:
        raise ConfigError(f"integrator must be one of {INTEGRATORS}, got {integrator!r}")
    cfg = _core.SimConfig()
    cfg.level = getattr(_core.Level, level)
    cfg.substep_dt = substep_dt
    cfg.integrator = getattr(_core.Integrator, integrator)
    cfg.longitudinal = getattr(_core.Longitudinal, longitudinal)
    cfg.step_ticks = step_ticks
    if step_tol is not None:  # else the core takes the integrator's default_step_tol
        cfg.step_tol = step_tol
    if actuator is not None:
        cfg.actuator, cfg.actuator_dead_ticks = actuator_params(actuator, substep_dt)
    cfg.steer_dead_ticks = whole_ticks(channel_delays[0], substep_dt, "channel_delays['steer']",
                                       allow_zero=True)
    cfg.longitudinal_dead_ticks = whole_ticks(channel_delays[1], substep_dt,
                                              "channel_delays['longitudinal']", allow_zero=True)
    return _core.Session(vehicle.core_params(), cfg)  # the session keeps its own copy


CHANNELS = ("steer", "longitudinal")


def check_channel_delays(value: Any, substep_dt: float) -> tuple[float, float]:
    """``channel_delays``: None or a mapping of "steer" / "longitudinal" to a dead time [s]
    in [0, MAX_ACTUATOR_DEAD_TIME_S], a whole number of substeps."""
    if value is None:
        return (0.0, 0.0)
    if not isinstance(value, Mapping):
        raise ConfigError(f"channel_delays must be None or a dict like {{'steer': 0.02, "
                          f"'longitudinal': 0.06}} (seconds), got {value!r}")
    unknown = sorted(set(value) - set(CHANNELS))
    if unknown:
        raise ConfigError(f"channel_delays: unknown channel {unknown[0]!r}; channels are "
                          f"{', '.join(CHANNELS)}")
    out = []
    for name in CHANNELS:
        d = value.get(name, 0.0)
        what = f"channel_delays['{name}']"
        if not is_real(d) or not math.isfinite(d) \
                or d < 0 or d > MAX_ACTUATOR_DEAD_TIME_S:
            raise ConfigError(f"{what} must be a dead time in [0, {MAX_ACTUATOR_DEAD_TIME_S:g}] "
                              f"s, got {d!r} (seconds: 60 ms is 0.06)")
        whole_ticks(float(d), substep_dt, what, allow_zero=True)
        out.append(float(d))
    return (out[0], out[1])


def actuator_params(actuator: ActuatorConfig, substep_dt: float
                    ) -> tuple[_core.ActuatorParams, int]:
    """The core's steering chain for ``actuator`` and its dead time in substeps."""
    a = _core.ActuatorParams()
    a.enabled = True
    a.dead_time = actuator.dead_time
    a.time_constant = actuator.time_constant
    a.rate_limit = actuator.rate_limit
    a.max_angle = actuator.max_angle
    return a, whole_ticks(actuator.dead_time, substep_dt, "actuator dead_time", allow_zero=True)


def default_step_tol(integrator: str) -> float:
    """The step-size rule's default tolerance [m/s] for ``integrator`` (etd3 2e-4, etd2
    1e-4; the others have no rule and carry etd2's value, unused)."""
    return float(_core.default_step_tol(getattr(_core.Integrator, integrator)))


def check_step_tol(step_tol: float | None, integrator: str) -> float:
    """etd3's or etd2's step-size tolerance [m/s] (docs/PHYSICS.md, "Step-size rule"): the
    integrator's default for None, else a finite positive number; other integrators take
    none."""
    if step_tol is None:
        return default_step_tol(integrator) if integrator in INTEGRATORS else DEFAULT_STEP_TOL
    if integrator not in ADAPTIVE_INTEGRATORS and integrator in INTEGRATORS:
        # (make_session names the unknown ones)
        raise ConfigError(f"step_tol applies to integrator='etd3' or 'etd2' only (their steps "
                          f"are sized by the error they make), got integrator={integrator!r}; "
                          "drop step_tol")
    if not is_real(step_tol) \
            or not math.isfinite(step_tol) or step_tol <= 0.0:
        raise ConfigError(f"step_tol must be a positive finite number [m/s], got "
                          f"{step_tol!r}; the default is {default_step_tol(integrator):g}")
    return float(step_tol)


def default_step_ticks(integrator: str, substep_dt: float) -> int:
    """Substeps per integration step when ``max_step`` is not given: as many whole
    substeps as fit in DEFAULT_MAX_STEP (etd3 10 ms, etd2 and semi_implicit 5 ms; at least
    one), for the others one."""
    limit = DEFAULT_MAX_STEP.get(integrator)
    if limit is None:
        return 1
    return max(1, floor_ticks(limit, substep_dt))
