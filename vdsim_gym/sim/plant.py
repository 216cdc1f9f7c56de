"""Plant: one simulated vehicle stepped one control period at a time.

Observation keys (``Plant.observe``): X, Y, psi at the CG; body-frame velocities and
accelerations (ISO 8855); ``delta_rw`` is the steer the dynamics integrated over the last
substep, after the actuator chain; per-wheel spins, forces and slips; the ``*_ref`` keys
of the reference point when one is set.

The physics options' checks and ``make_session`` are ``physics_options``'s; mode C's
runner and sensor hook on a plant session are ``realtime``'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym import _core
from vdsim_gym._checks import is_real
from vdsim_gym.config.vehicle import (
    WHEELS,
    ActuatorConfig,
    VehicleConfig,
    load_actuator,
    load_vehicle,
)
from vdsim_gym.errors import ConfigError, InvalidActionError
from vdsim_gym.sim.physics_options import (
    DEFAULT_INTEGRATOR,
    DEFAULT_STEP_TOL,
    IMPLICIT_INTEGRATORS,
    check_channel_delays,
    check_step_tol,
    default_step_ticks,
    make_session,
)
from vdsim_gym.timing import check_substep_dt, whole_ticks

# The longest control period [s]: a step integrates it in one call (at 0.5 ms, 20 000
# substeps); a controller slower than this is not a control loop.
MAX_CONTROL_PERIOD_S = 10.0
STATE_KEYS = ("X", "Y", "psi", "vx", "vy", "r")
# The core's state vector and auxiliary outputs, in doubles (the scratch buffers of
# derivative and integrator calls: vdsim-gym accuracy).
STATE_SIZE: int = _core.STATE_SIZE
AUX_SIZE: int = _core.AUX_SIZE
_LIMIT_TOL = 1.0 + 1e-9  # commands this close to a limit count as on it (rounding)
# Commands beyond their range saturate (a real actuator does); beyond this many times the
# range they are refused as a unit slip (degrees for radians, newtons for a pedal).
SATURATION_BOUND = 10.0


def resolve_ref_point(ref_point: Any, vehicle: VehicleConfig) -> tuple[float, float] | None:
    """None | "cg" | "rear_axle" | "front_axle" | [x_fwd, y_left] -> body offset [m]."""
    if ref_point is None:
        return None
    named = {
        "cg": (0.0, 0.0),
        "rear_axle": (-vehicle.cg_to_rear, 0.0),
        "front_axle": (vehicle.cg_to_front, 0.0),
    }
    if isinstance(ref_point, str):
        if ref_point not in named:
            raise ConfigError(
                f"ref_point {ref_point!r} unknown; use None, {', '.join(map(repr, named))} "
                "or an [x_fwd, y_left] offset in metres"
            )
        return named[ref_point]
    try:
        x, y = (float(v) for v in ref_point)
    except (TypeError, ValueError):
        raise ConfigError(
            f"ref_point must be None, a name or an [x_fwd, y_left] pair, got {ref_point!r}"
        ) from None
    if not (math.isfinite(x) and math.isfinite(y)):
        raise ConfigError(f"ref_point offset must be finite, got {ref_point!r}")
    return (x, y)


@dataclass(frozen=True)
class PhysicsSpec:
    """Validated physics options shared by the Plant and every environment."""

    level: str
    vehicle: VehicleConfig
    substep_dt: float  # [s]
    ticks_per_period: int  # substeps per control period
    longitudinal: str
    actuator: ActuatorConfig | None
    integrator: str
    step_ticks: int = 1  # multirate: integration steps of up to this many substeps
    # per-channel actuation dead times [s] (steer, longitudinal), whole substeps
    channel_delays: tuple[float, float] = (0.0, 0.0)
    step_tol: float = DEFAULT_STEP_TOL  # etd3, etd2: the step-size rule's tolerance [m/s]

    @classmethod
    def build(
        cls,
        *,
        level: str = "L2",
        vehicle: str | VehicleConfig | Mapping[str, Any] = "generic_sedan",
        substep_dt: float = 5e-4,
        control_period: float = 0.02,
        longitudinal: str = "pedal",
        actuator: ActuatorConfig | Mapping[str, Any] | None = None,
        integrator: str = DEFAULT_INTEGRATOR,
        max_step: float | None = None,
        channel_delays: Mapping[str, float] | None = None,
        step_tol: float | None = None,
    ) -> PhysicsSpec:
        """Check every option (clear errors naming cause and fix) and load the vehicle.
        ``max_step`` [s]: the longest integration step, a whole number of substeps
        (None: the integrator's default, ``default_step_ticks``). The time grid
        (commands, delays, traces) stays substep_dt; the physics steps up to max_step
        between those events (docs/PHYSICS.md). ``channel_delays``: per-channel actuation
        dead times [s], ``{"steer": 0.02, "longitudinal": 0.06}`` (each key optional, 0 by
        default; whole substeps, at most 1 s): a command's steer and longitudinal parts
        reach the vehicle that long after the command applies, on top of any computation
        latency (docs/ENVS.md, "Latency"). ``step_tol`` [m/s] (etd3 and etd2 only): the
        local error a step may make in the body's velocities; their steps, whole substeps up
        to max_step, are sized by it (None: the integrator's default_step_tol;
        docs/PHYSICS.md, "Step-size rule")."""
        dt = check_substep_dt(substep_dt)
        delays = check_channel_delays(channel_delays, dt)
        if is_real(control_period) \
                and control_period > MAX_CONTROL_PERIOD_S:
            raise ConfigError(f"control_period = {control_period!r} s is longer than the bound "
                              f"of {MAX_CONTROL_PERIOD_S:g} s (one step integrates the whole "
                              "period in one C++ call); use a shorter period")
        step_ticks = default_step_ticks(integrator, dt) if max_step is None else \
            whole_ticks(max_step, dt, "max_step")
        tol = check_step_tol(step_tol, integrator)
        spec = cls(
            level=level,
            vehicle=load_vehicle(dict(vehicle) if isinstance(vehicle, Mapping) else vehicle),
            substep_dt=dt,
            ticks_per_period=whole_ticks(control_period, dt, "control_period"),
            longitudinal=longitudinal,
            actuator=load_actuator(dict(actuator) if isinstance(actuator, Mapping) else actuator),
            integrator=integrator,
            step_ticks=step_ticks,
            channel_delays=delays,
            step_tol=tol,
        )
        # Validates level, longitudinal, integrator, actuator ticks; the new session is kept
        # for the first make_session() (an env's core, built next), not built twice.
        object.__setattr__(spec, "_spare_session", spec.make_session())
        spec._check_coupling()
        return spec

    def __getstate__(self) -> dict[str, Any]:  # pickles and copies without the spare
        return {k: v for k, v in self.__dict__.items() if k != "_spare_session"}

    def _check_coupling(self) -> None:
        """An explicit integrator steps a differential's viscous coupling explicitly: its
        mode decays at 2 c / I, stable for c <= I / dt."""
        if self.level != "L2" or self.integrator in IMPLICIT_INTEGRATORS:
            return
        dt = self.substep_dt * self.step_ticks
        limit = self.vehicle.wheel_inertia / dt
        for axle in ("front", "rear"):
            c = getattr(self.vehicle, f"diff_coupling_{axle}")
            if c > limit:
                raise ConfigError(
                    f"diff_coupling_{axle} = {c:g} N m s/rad is too stiff for integrator="
                    f"{self.integrator!r} at {dt * 1e3:g} ms steps (stable up to wheel_inertia"
                    f" / dt = {limit:g}); use integrator='etd3' (the default), which treats the "
                    "coupling implicitly, or a smaller substep_dt")

    @property
    def control_period(self) -> float:
        """[s], exactly ticks_per_period substeps."""
        return self.ticks_per_period * self.substep_dt

    def make_session(self) -> _core.Session:
        """A new core session of these physics (the one build() made, the first time)."""
        spare = self.__dict__.pop("_spare_session", None)
        if spare is not None:
            return spare
        return make_session(level=self.level, vehicle=self.vehicle, substep_dt=self.substep_dt,
                            longitudinal=self.longitudinal, actuator=self.actuator,
                            integrator=self.integrator, step_ticks=self.step_ticks,
                            channel_delays=self.channel_delays, step_tol=self.step_tol)


class Plant:
    """One vehicle, stepped one control period per call.

    Args (keyword):
        level: "L1" single-track or "L2" two-track.
        vehicle: a name under envs/vehicles, a YAML path, a mapping or a VehicleConfig.
        substep_dt: integration step [s].
        control_period: time per ``step`` [s], a whole multiple of ``substep_dt``.
        actuator: None (no steering chain) or ActuatorConfig / mapping of its fields.
        ref_point: None | "cg" | "rear_axle" | "front_axle" | [x_fwd, y_left]; adds
            X_ref, Y_ref, vx_ref, vy_ref for that body point.
        longitudinal: "pedal" (default: throttle/brake in [-1, 1] through the vehicle's
            powertrain map with its power cap, as the envs' action) or "force" (total
            longitudinal force [N], the reference workflow's Fx, split to the wheels as
            torque without the powertrain) or "accel" (target acceleration [m/s^2] in
            [-max_deceleration, max_acceleration], turned into a pedal every integration step by
            the core's cascade; docs/PHYSICS.md). One default for the Plant and every env.
        integrator: "etd3" (default: third order, within 1 % of the fine reference in
            closed loop and under noisy commands) | "etd2" (second order, 3-4 times the
            cost under noisy commands) | "semi_implicit" (first order: it lags like an
            extra delay) | "heun" | "euler" | "rk4" (see docs/PHYSICS.md for the accuracy
            gates; "heun" with max_step=None is the reference configuration).
        max_step: the longest integration step [s], a whole number of substeps (None: 10
            ms for etd3, 5 ms for etd2 and semi_implicit, one substep for the others);
            commands and delays stay on the substep grid (multirate).
        channel_delays: None or {"steer": s, "longitudinal": s}: each channel's actuation
            dead time after a command applies (whole substeps, at most 1 s).
        step_tol: etd3's or etd2's step-size tolerance [m/s], the local error a step may
            make in the body's velocities (None: the integrator's default_step_tol, 2e-4 or
            1e-4; docs/PHYSICS.md, "Step-size rule").
    """

    def __init__(
        self,
        level: str = "L2",
        vehicle: str | VehicleConfig | Mapping[str, Any] = "generic_sedan",
        substep_dt: float = 5e-4,
        control_period: float = 0.02,
        actuator: ActuatorConfig | Mapping[str, Any] | None = None,
        ref_point: Any = None,
        longitudinal: str = "pedal",
        integrator: str = DEFAULT_INTEGRATOR,
        max_step: float | None = None,
        channel_delays: Mapping[str, float] | None = None,
        step_tol: float | None = None,
    ) -> None:
        self.physics = PhysicsSpec.build(
            level=level, vehicle=vehicle, substep_dt=substep_dt, control_period=control_period,
            longitudinal=longitudinal, actuator=actuator, integrator=integrator,
            max_step=max_step, channel_delays=channel_delays, step_tol=step_tol,
        )
        p = self.physics
        self.substep_dt, self.ticks_per_period = p.substep_dt, p.ticks_per_period
        self.control_period = p.control_period
        self.vehicle, self.actuator = p.vehicle, p.actuator
        self.level, self.longitudinal, self.integrator = level, longitudinal, integrator
        self.session = p.make_session()
        self.last_saturated, self.n_saturated = False, 0
        self.ref_point = resolve_ref_point(ref_point, self.vehicle)
        # Once, not per step: the brake torque total comes from the core's parameters.
        self._lon_range = longitudinal_range(self.vehicle, longitudinal)
        self._state = np.zeros(_core.STATE_SIZE)
        self._aux = np.zeros(_core.AUX_SIZE)

    @property
    def t(self) -> float:
        return self.session.time

    @property
    def tick(self) -> int:
        return self.session.tick

    def reset(self, state0: Mapping[str, float] | None = None) -> dict[str, float]:
        """Place the vehicle (keys X, Y, psi, vx, vy, r; missing ones are 0) at t = 0."""
        state0 = dict(state0 or {})
        unknown = set(state0) - set(STATE_KEYS)
        if unknown:
            raise ConfigError(f"reset: unknown state keys {sorted(unknown)}; use {STATE_KEYS}")
        values = [float(state0.get(k, 0.0)) for k in STATE_KEYS]
        if not all(math.isfinite(v) for v in values):
            raise ConfigError(f"reset: state0 must be finite, got {state0}")
        x, y, psi, vx, vy, r = values  # STATE_KEYS
        self.session.reset(x, y, psi, vx, vy, r)
        self.last_saturated, self.n_saturated = False, 0
        return self.observe()

    def step(self, command: Sequence[float]) -> dict[str, float]:
        """Hold ``command = (delta_rw [rad], longitudinal)`` for one control period.

        A real actuator saturates: a finite ``delta_rw`` beyond +-max_steer or
        ``longitudinal`` beyond ``longitudinal_range`` is held at the limit, counted in
        ``n_saturated`` and flagged as ``obs["saturated"]`` (1.0). NaN, inf and commands
        beyond ``SATURATION_BOUND`` times the range (a unit slip: degrees for radians, N
        for a pedal) are a ValueError. After a KeyboardInterrupt the state is partly
        advanced: ``reset()`` before going on."""
        steer, lon = self.check_command(command)
        self.session.command_now(steer, lon)
        self.session.advance(self.ticks_per_period)
        obs = self.observe()
        obs["saturated"] = float(self.last_saturated)
        return obs

    def check_command(self, command: Sequence[float]) -> tuple[float, float]:
        """The command within the vehicle's range, saturated at its limits (see ``step``);
        ``last_saturated`` tells whether it was, ``n_saturated`` counts since reset."""
        steer, lon, saturated = self._saturate(command)
        self.last_saturated = saturated
        self.n_saturated += saturated
        return steer, lon

    def check_command_within(self, command: Sequence[float]) -> tuple[float, float]:
        """The command, which must lie within the vehicle's range (a configured command,
        such as a watchdog's fail-safe, is not saturated but refused)."""
        return command_within(command, self.vehicle, self.longitudinal, self._lon_range)

    def _saturate(self, command: Sequence[float]) -> tuple[float, float, bool]:
        return saturate_command(command, self.vehicle, self.longitudinal, self._lon_range)

    @property
    def longitudinal_range(self) -> tuple[float, float]:
        """(most braking, most driving) command: pedal [-1, 1], or force [N] at full brake
        torque and full drive torque at the wheels."""
        return self._lon_range

    def start_trace(self, decimation: int | None = None,
                    channels: Sequence[str] = ()) -> None:
        """Record a trace row every ``decimation`` substeps from now (default: the
        largest divisor of the control period keeping >= 100 Hz); ``channels`` adds
        optional channels ("steer_applied"). ``write_trace`` writes what was recorded;
        ``reset()`` clears the rows and keeps recording (docs/TRACES.md)."""
        from vdsim_gym.traces.recording import check_trace_channels, default_decimation

        self._trace_channels = check_trace_channels(channels)
        d = default_decimation(self.substep_dt, self.ticks_per_period) \
            if decimation is None else decimation
        if isinstance(d, bool) or not isinstance(d, int) or d < 1:
            raise ConfigError(f"decimation must be a whole number of substeps >= 1, got {d!r}")
        self.session.trace_decimation = d

    def write_trace(self, path: Any, *, tags: Sequence[str] = (),
                    overlays: Sequence[Mapping[str, Any]] = ()) -> Any:
        """Writes the rows recorded since ``start_trace`` (or the last reset), with a
        closing row at the current time, to ``path`` (atomically); recording goes on."""
        from vdsim_gym.traces.provenance import plant_meta
        from vdsim_gym.traces.recording import vehicle_channels, write_trace

        d = self.session.trace_decimation
        if d == 0:
            raise ConfigError("no trace is being recorded: call start_trace() first")
        self.session.record_trace_row()
        rows = self.session.take_trace()
        channels = vehicle_channels(rows, self.level, self.longitudinal,
                                    getattr(self, "_trace_channels", ()))
        meta = {"eval_mode": None, **plant_meta(self.physics, self.ref_point)}
        return write_trace(path, channels, meta=meta, physics=self.physics, decimation=d,
                           tags=tags, overlays=overlays)

    def observe(self) -> dict[str, float]:
        """The observation dict at the current time (see the class docstring)."""
        return observe_session(self.session, self.vehicle, self.level, self._state,
                               self._aux, self.ref_point)


def saturate_command(command: Sequence[float], vehicle: VehicleConfig, longitudinal: str,
                     lon_range: tuple[float, float]) -> tuple[float, float, bool]:
    """(delta_rw, longitudinal, saturated): a command held at the vehicle's limits
    (``lon_range``: ``longitudinal_range``), as a real actuator saturates. NaN, inf and
    commands beyond ``SATURATION_BOUND`` times the range (a unit slip) are an
    InvalidActionError naming it."""
    arr = np.asarray(command, dtype=float)
    if arr.shape != (2,):
        raise InvalidActionError(
            f"command must be (delta_rw [rad], longitudinal), shape (2,), got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise InvalidActionError(f"command must be finite, got {arr.tolist()}")
    steer, lon = float(arr[0]), float(arr[1])
    v = vehicle
    bound = SATURATION_BOUND
    if abs(steer) > bound * v.max_steer:
        raise InvalidActionError(
            f"road-wheel steer {steer!r} rad is beyond {bound:g} x the vehicle's "
            f"max_steer = {v.max_steer} rad: not a saturating command but a unit slip "
            "(the command is the road-wheel angle in radians, not the steering-wheel "
            "angle or degrees)")
    lo, hi = lon_range
    if not bound * lo <= lon <= bound * hi:
        unit = {"pedal": "pedal", "force": "force [N]",
                "accel": "acceleration target [m/s^2]"}[longitudinal]
        hint = ("; a force [N] needs Plant(longitudinal='force')"
                if longitudinal == "pedal" else "")
        raise InvalidActionError(
            f"{unit} command {lon!r} is beyond {bound:g} x the vehicle's range "
            f"[{lo:g}, {hi:g}] (longitudinal={longitudinal!r}: brakes to drive): "
            f"not a saturating command but a unit slip{hint}")
    saturated = False
    if abs(steer) > v.max_steer * _LIMIT_TOL:
        steer, saturated = math.copysign(v.max_steer, steer), True
    if not lo * _LIMIT_TOL <= lon <= hi * _LIMIT_TOL:
        lon, saturated = min(max(lon, lo), hi), True
    return steer, lon, saturated


def command_within(command: Sequence[float], vehicle: VehicleConfig, longitudinal: str,
                   lon_range: tuple[float, float]) -> tuple[float, float]:
    """A configured command (a watchdog's fail-safe), which must lie within the vehicle's
    range: not saturated but refused (ConfigError)."""
    steer, lon, saturated = saturate_command(command, vehicle, longitudinal, lon_range)
    if saturated:
        lo, hi = lon_range
        raise ConfigError(
            f"command {list(map(float, command))} is outside the vehicle's range "
            f"(road-wheel steer within +-{vehicle.max_steer:g} rad, "
            f"longitudinal within [{lo:g}, {hi:g}])")
    return steer, lon


def longitudinal_range(vehicle: VehicleConfig, longitudinal: str) -> tuple[float, float]:
    """(most braking, most driving) longitudinal command of a mode: pedal [-1, 1], an
    acceleration target [m/s^2], or a force [N] at full brake torque and full drive
    torque at the wheels."""
    v = vehicle
    if longitudinal == "pedal":
        return (-1.0, 1.0)
    if longitudinal == "accel":
        return (-v.max_deceleration, v.max_acceleration)
    return (-v.total_brake_torque / v.wheel_radius, v.drive_torque_max / v.wheel_radius)


def observe_session(session: Any, vehicle: VehicleConfig, level: str, state: np.ndarray,
                    aux: np.ndarray, ref_point: tuple[float, float] | None = None
                    ) -> dict[str, float]:
    """The Plant observation dict of a core ``Session`` (a Plant's, or an env core's);
    ``state`` and ``aux`` are scratch buffers of STATE_SIZE and AUX_SIZE."""
    s, a = state, aux
    session.get_state(s)
    session.get_aux(a)
    delta = session.realized_steer
    obs = {"t": session.time, **dict(zip(STATE_COLUMNS, _state_columns(s, a, delta),
                                         strict=True))}
    if vehicle.steering_ratio is not None:
        obs["delta_sw"] = delta * vehicle.steering_ratio
    for i, w in enumerate(WHEELS[level]):
        base = 2 + 5 * i
        obs[f"omega_{w}"] = float(s[6 + i])
        for j, key in enumerate(("Fx", "Fy", "Fz", "kappa", "alpha")):
            obs[f"{key}_{w}"] = float(a[base + j])
    if ref_point is not None:
        add_ref_point(obs, ref_point)
    return obs


def add_ref_point(obs: dict[str, float], ref_point: tuple[float, float]) -> None:
    """Adds X_ref, Y_ref, vx_ref, vy_ref of the body point ``ref_point`` ([x_fwd,
    y_left] from the CG [m]) to an observation dict with X, Y, psi, vx, vy, r."""
    px, py = ref_point
    X, Y, psi, vx, vy, r = (obs[k] for k in STATE_KEYS)
    c, sn = math.cos(psi), math.sin(psi)
    obs["X_ref"] = X + c * px - sn * py
    obs["Y_ref"] = Y + sn * px + c * py
    obs["vx_ref"] = vx - r * py
    obs["vy_ref"] = vy + r * px


# The observation keys of the vehicle's state that evaluation traces record.
STATE_COLUMNS = ("X", "Y", "psi", "vx", "vy", "r", "ax", "ay", "beta", "delta_rw")


def _state_columns(s: np.ndarray, a: np.ndarray, steer: float) -> tuple[float, ...]:
    """X, Y, psi, vx, vy, r, ax, ay, beta, delta_rw from a session's state and aux rows
    and its realized steer: the one computation of these observation keys."""
    X, Y, psi, vx, vy, r = s[:6].tolist()
    beta = math.atan2(vy, vx) if (vx or vy) else 0.0
    return (X, Y, psi, vx, vy, r, float(a[0]), float(a[1]), beta, steer)


class StateColumns:
    """The trace's state columns (X, Y, psi, vx, vy, r, ax, ay, beta, delta_rw) of a core
    ``Session`` now, as ``observe_session`` gives those keys, bit for bit, without
    building the whole observation dict (an evaluation reads them every sample)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._s, self._a = np.zeros(_core.STATE_SIZE), np.zeros(_core.AUX_SIZE)

    @staticmethod
    def reads(session: Any) -> bool:
        """Whether ``session`` is the vehicle's (the dyno's has no such state)."""
        return isinstance(session, _core.Session)

    def __call__(self) -> tuple[float, ...]:
        s, a, session = self._s, self._a, self.session
        session.get_state(s)
        session.get_aux(a)
        return _state_columns(s, a, session.realized_steer)
