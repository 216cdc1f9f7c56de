"""Against CommonRoad's drift and multi-body models: one published vehicle, five maneuvers.

CommonRoad's vehicle models (commonroad-vehicle-models, the ``validation`` extra) publish
parameter sets; ``commonroad_vehicle`` maps vehicle 2 (a BMW 320i) onto a VehicleConfig,
and the maneuver runners drive our plant and their model with the same commands on the
same time grid: L1 against the single-track drift model (``vehicle_dynamics_std``), L2
against the multi-body model (``vehicle_dynamics_mb``). ``comparison`` returns the table
(theirs, ours, difference, tolerance), ``plot`` the time histories;
``vdsim-gym validate --plot docs/img/validation_commonroad.png`` (or ``python -m
vdsim_gym.validation``, the same options: ``add_arguments`` and ``run``) prints the
Markdown table and writes the plot. docs/PHYSICS.md, "Against CommonRoad's drift and
multi-body models", has the mapping table, the measured table and why each tolerance is
what it is; tests/test_validation_commonroad.py checks each metric (``pytest -m
validation``).

Why vehicle 2: vehicles 1-3 (Ford Escort, BMW 320i, VW Vanagon) share one full tire set
(the ADAMS handbook's, parameters_tire.yaml; vehicle 4 is a kinematic truck); vehicle 2 is
the sedan that the library's own derivative tests run the drift and multi-body models
with, and our combined-slip coefficients are already its.

Mapping (``commonroad_mapping`` states every VehicleConfig field, so no default of the
generic sedan leaks in; a new field raises until it is decided here):

- mass m (total); yaw_inertia I_z; cg_to_front, cg_to_rear a, b (the sprung mass's CG,
  their yaw lever arms); cg_height h_s (their longitudinal transfer's height; h_cg is used
  by none of their models); track the mean of T_f, T_r; wheel_radius R_w; wheel_inertia
  I_y_w per wheel ("mb"), I_y_w / 2 ("std": its one wheel per axle has I_y_w).
- roll_stiffness_front: each axle's suspension (two springs K_s at +-T/2, the auxiliary
  torsion K_ts, negative in their sign) K_s T^2 / 2 - K_ts, in series with its tires
  K_zt T^2 / 2 (each axle's unsprung mass rolls on its own tires): 25.4 and 18.3 kN m/rad,
  front share 0.581 (0.593 without the tires). Their roll axis is at the ground, as ours.
- front_brake_share T_sb, front_drive_share T_se; drive_torque_max m R_w a_max,
  drive_power_max m a_max v_switch (their limit a_max v_switch / v), brake_torque_max
  m R_w a_max / 4; max_steer steering.max; no drag or rolling resistance (theirs have
  none); relaxation_length 0, compliance steer 0, diff couplings 0 (open);
  load_transfer_tau 0.02 s (ours needs a lag; theirs: none, or the suspension's
  dynamics).
- tire: lateral C, D, E = p_cy1, p_dy1, p_ey1 and B = |p_ky1| / (p_cy1 p_dy1) with
  pky2 = 0 (their K_y = p_ky1 Fz, no p_ky2: stiffness proportional to load); pdy2 = 0
  (no p_dy2); longitudinal C, D, E = p_cx1, p_dx1, p_ex1, B = p_kx1 / (p_cx1 p_dx1); mu 1
  (their scaling factors are 1); combined: the weighting functions with r_bx1 ... r_ey1,
  rby3 = -r_by3 (their slip angle has the opposite sign).

Dropped (no counterpart in our tire; zeroed on their side too, ``DROPPED_TIRE_TERMS``, so
both run one tire): the shifts p_hx1 (0.0012 slip: Fx of 0.027 Fz at zero slip), p_vx1
(-8.8e-6 Fz), p_hy1, p_hy3 (sign(camber) (0.0027 + 0.031 |camber|) rad), p_vy1, p_vy3
(sign(camber) Fz (0.037 - 0.33 |camber|)), r_hx1 (0.0051 rad), r_hy1 (5.7e-6); the
kappa-induced side force r_vy1, r_vy3 (up to 0.028 mu Fz); the camber terms p_dx3 (0),
p_dy3 (mu_y (1 + 2.9 camber^2)). The drift model has no camber; in the multi-body model
the published camber shifts switch sign with the camber, and straight ahead with no steer
at 20 m/s its yaw rate then wanders by +-1.5e-3 rad/s and its lateral velocity by
+-0.02 m/s.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from vdsim_gym.config import VehicleConfig, load_vehicle

INSTALL_HINT = "pip install 'vdsim-gym[validation]'"
MODELS = {"L1": "std", "L2": "mb"}  # our level -> their model
CONTROL_PERIOD = 0.01  # [s] the shared time grid: commands held, both sampled
THEIR_STEP = 5e-4  # [s] their RK4 step (finer at low speed when braking)
# Their tire terms without a counterpart in ours, zeroed on their side (module doc).
DROPPED_TIRE_TERMS = ("p_hx1", "p_vx1", "p_hy1", "p_hy3", "p_vy1", "p_vy3", "r_hx1",
                      "r_hy1", "r_vy1", "r_vy3", "p_dx3", "p_dy3")
SETTLE_TIME = 2.0  # [s] the multi-body model settles its heave and pitch from init_mb


def _vehiclemodels() -> Any:
    try:
        import vehiclemodels
    except ImportError as exc:
        raise ImportError(f"vdsim_gym.validation needs CommonRoad's vehicle models: "
                          f"{INSTALL_HINT}", name="vehiclemodels") from exc
    return vehiclemodels


def parameters_vehicle2() -> Any:
    """CommonRoad's published parameter set of vehicle 2 (BMW 320i)."""
    _vehiclemodels()
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2 as p2

    return p2()


def roll_stiffness(params: Any) -> tuple[float, float]:
    """(front, rear) roll stiffness [N m/rad] of the multi-body model: suspension springs
    and auxiliary torsion in series with the tires."""
    p = params

    def axle(k_s: float, k_ts: float, track: float) -> float:
        suspension = k_s * track**2 / 2.0 - k_ts
        tires = p.K_zt * track**2 / 2.0
        return 1.0 / (1.0 / suspension + 1.0 / tires)

    return axle(p.K_sf, p.K_tsf, p.T_f), axle(p.K_sr, p.K_tsr, p.T_r)


def _field_paths(cls: type, prefix: str = "") -> set[str]:
    paths = set()
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    import typing

    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        tp = hints[f.name]
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            paths |= _field_paths(tp, f"{prefix}{f.name}.")
        else:
            paths.add(prefix + f.name)
    return paths


def _flatten(d: dict[str, Any], prefix: str = "") -> set[str]:
    out = set()
    for k, v in d.items():
        out |= _flatten(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


def commonroad_mapping(params: Any = None, model: str = "mb") -> dict[str, Any]:
    """Every VehicleConfig field from CommonRoad's parameter set (module doc, "Mapping");
    ``model``: "mb" (multi-body, the physical car) or "std" (the single-track drift model:
    one wheel per axle with I_y_w)."""
    if model not in ("mb", "std"):
        raise ValueError(f"model must be 'mb' or 'std', got {model!r}")
    p = parameters_vehicle2() if params is None else params
    t = p.tire
    g = 9.81  # theirs
    front, rear = roll_stiffness(p)
    length = p.a + p.b
    return {
        "name": f"commonroad_vehicle2_{model}",
        "mass": p.m,
        "yaw_inertia": p.I_z,
        "cg_to_front": p.a,
        "cg_to_rear": p.b,
        "track": 0.5 * (p.T_f + p.T_r),
        "cg_height": p.h_s,
        "wheel_radius": p.R_w,
        "wheel_inertia": p.I_y_w if model == "mb" else 0.5 * p.I_y_w,
        "drive_torque_max": p.m * p.R_w * p.longitudinal.a_max,
        "drive_power_max": p.m * p.longitudinal.a_max * p.longitudinal.v_switch,
        "brake_torque_max": p.m * p.R_w * p.longitudinal.a_max / 4.0,
        "front_drive_share": p.T_se,
        "front_brake_share": p.T_sb,
        "diff_coupling_front": 0.0,
        "diff_coupling_rear": 0.0,
        "steering_ratio": None,
        "max_steer": p.steering.max,
        "drag_coefficient": 0.0,
        "frontal_area": 2.2,  # unused with no drag
        "air_density": 1.225,  # unused with no drag
        "rolling_resistance": 0.0,
        "load_transfer_tau": 0.02,
        "roll_stiffness_front": front / (front + rear),
        "compliance_steer_front": 0.0,  # their models have no compliance steer
        "compliance_steer_rear": 0.0,
        "body_width": p.w,
        "front_overhang": 0.5 * (p.l - length),
        "rear_overhang": 0.5 * (p.l - length),
        "max_acceleration": p.longitudinal.a_max,
        "max_deceleration": p.longitudinal.a_max,
        "accel_kp": 0.05,  # the sedan's cascade gains (longitudinal="accel" only)
        "accel_ki": 0.5,
        "accel_filter_tau": 0.02,
        "tire": {
            "mu": 1.0,
            "fz_nominal": p.m * g / 4.0,  # no effect with pky2 = pdy2 = 0
            "pdy2": 0.0,
            "pky2": 0.0,
            "relaxation_length": 0.0,
            "lateral": {"B": abs(t.p_ky1) / (t.p_cy1 * t.p_dy1), "C": t.p_cy1,
                        "D": t.p_dy1, "E": t.p_ey1},
            "longitudinal": {"B": t.p_kx1 / (t.p_cx1 * t.p_dx1), "C": t.p_cx1,
                             "D": t.p_dx1, "E": t.p_ex1},
            "combined": {"weighting": True, "rbx1": t.r_bx1, "rbx2": t.r_bx2,
                         "rcx1": t.r_cx1, "rex1": t.r_ex1, "rby1": t.r_by1,
                         "rby2": t.r_by2, "rby3": -t.r_by3, "rcy1": t.r_cy1,
                         "rey1": t.r_ey1},
        },
    }


def commonroad_vehicle(params: Any = None, model: str = "mb") -> VehicleConfig:
    """Our VehicleConfig of CommonRoad's vehicle 2 (``params``: their parameter set,
    default ``parameters_vehicle2()``); see the module doc for the mapping. Raises if
    VehicleConfig has a field the mapping does not state (decide it here)."""
    mapping = commonroad_mapping(params, model)
    missing = _field_paths(VehicleConfig) - _flatten(mapping)
    if missing:
        raise RuntimeError(f"the CommonRoad mapping states no value for {sorted(missing)}: "
                           "decide it in vdsim_gym/validation.py (commonroad_mapping)")
    return load_vehicle(mapping)


def commonroad_params_as_run(params: Any = None) -> Any:
    """Their parameter set as run: the published one with DROPPED_TIRE_TERMS zeroed."""
    p = copy.deepcopy(parameters_vehicle2() if params is None else params)
    for name in DROPPED_TIRE_TERMS:
        setattr(p.tire, name, 0.0)
    return p


# ---------------------------------------------------------------------------- maneuvers


@dataclass(frozen=True)
class Maneuver:
    """Commands on the shared grid: ``steer(t)`` [rad] read at the middle of each hold;
    the longitudinal command an acceleration a [m/s^2], from the speed hold (``speed``
    set) or constant (``accel``). Theirs turn their input a into the total wheel torque
    m R_w a; ours gets the same torque, the force m R_w a / R (their m and R_w: a wrong
    mass or radius in the mapping shows)."""

    name: str
    speed0: float  # [m/s]
    duration: float  # [s]
    steer: Callable[[float], float]
    speed: float | None = None  # speed-hold target [m/s]
    accel: float = 0.0  # constant command when speed is None [m/s^2]
    stop_speed: float = 0.0  # end below this speed [m/s]
    max_sideslip: float = math.inf  # end when |vy| / vx exceeds this (spun) [-]

    def steps(self) -> int:
        return round(self.duration / CONTROL_PERIOD)


HOLD_KP, HOLD_KI = 2.0, 1.0  # speed hold: a = kp (v* - vx) + ki int (v* - vx) dt
SPEED = 20.0  # [m/s] the lateral maneuvers' speed (72 km/h)
RAMP_START, RAMP_RATE = 1.0, 0.005  # [s], [rad/s]: steady-state circular
K_AY_RANGE = (0.5, 4.0)  # [m/s^2] the understeer gradient's fit (about 0.05-0.4 g)
STEADY_DVY = 0.25  # [m/s^2] the limit's samples: |ay - r vx| = |dvy/dt| below this
STEP_TIME, STEP_STEER = 0.5, 0.025  # [s], [rad]: about 3.9 m/s^2 steady
SINE_FREQ, SINE_STEER = 1.0, 0.03  # [Hz], [rad]: peak ay about 3 m/s^2
BRAKE_SPEED, BRAKE_ACCEL = 100 / 3.6, -7.0  # [m/s], [m/s^2]: 100 km/h, 0.71 g
BRAKE_END = 1.0  # [m/s] stopping distance: to here, plus BRAKE_END^2 / (2 |a|)


def _ramp_steer(t: float) -> float:
    return max(0.0, RAMP_RATE * (t - RAMP_START))


def _step_steer(t: float) -> float:
    return STEP_STEER if t >= STEP_TIME else 0.0


def _sine_steer(t: float) -> float:
    return SINE_STEER * math.sin(2 * math.pi * SINE_FREQ * t)


def _no_steer(t: float) -> float:
    return 0.0


MANEUVERS = {
    # Constant speed, steer rising at RAMP_RATE through the limit; ends when spun.
    "circular": Maneuver("circular", SPEED, 30.0, _ramp_steer, speed=SPEED,
                         max_sideslip=0.15),
    "step": Maneuver("step", SPEED, 4.0, _step_steer, speed=SPEED),
    "sine": Maneuver("sine", SPEED, 5.0, _sine_steer, speed=SPEED),
    "braking": Maneuver("braking", BRAKE_SPEED, 8.0, _no_steer, accel=BRAKE_ACCEL,
                        stop_speed=BRAKE_END),
}


@dataclass
class Run:
    """Time histories at the end of each control period (t = 0 first): t [s], steer
    [rad], accel (the command) [m/s^2], x, y [m], vx, vy [m/s], r [rad/s], ay [m/s^2]."""

    t: np.ndarray
    steer: np.ndarray
    accel: np.ndarray
    x: np.ndarray
    y: np.ndarray
    vx: np.ndarray
    vy: np.ndarray
    r: np.ndarray
    ay: np.ndarray

    @classmethod
    def of(cls, rows: list[tuple[float, ...]]) -> Run:
        a = np.array(rows, dtype=float)
        return cls(*(a[:, i] for i in range(a.shape[1])))


class _Longitudinal:
    """The longitudinal command of one maneuver, one call per control period."""

    def __init__(self, m: Maneuver) -> None:
        self.m, self.integral = m, 0.0

    def __call__(self, vx: float) -> float:
        if self.m.speed is None:
            return self.m.accel
        err = self.m.speed - vx
        self.integral += err * CONTROL_PERIOD
        return HOLD_KP * err + HOLD_KI * self.integral


def _ended(m: Maneuver, vx: float, vy: float) -> bool:
    return vx < m.stop_speed or abs(vy) > m.max_sideslip * abs(vx)


def _maneuver(maneuver: Maneuver | str) -> Maneuver:
    return MANEUVERS[maneuver] if isinstance(maneuver, str) else maneuver


def run_ours(level: str, maneuver: Maneuver | str, vehicle: VehicleConfig | None = None,
             params: Any = None, **plant_kwargs: Any) -> Run:
    """Our plant through ``maneuver``: the default physics (integrator, substep) unless
    ``plant_kwargs`` say otherwise, longitudinal="force" (their wheel torque m R_w a as
    the force m R_w a / R, with m and R_w of ``params``, default vehicle 2); ``vehicle``
    defaults to ``commonroad_vehicle(params)`` for the level's counterpart."""
    from vdsim_gym.plant import Plant

    m = _maneuver(maneuver)
    p = parameters_vehicle2() if params is None else params
    v = vehicle if vehicle is not None else commonroad_vehicle(p, model=MODELS[level])
    force_per_accel = p.m * p.R_w / v.wheel_radius
    plant = Plant(level=level, vehicle=v, control_period=CONTROL_PERIOD,
                  longitudinal="force", **plant_kwargs)
    lo, hi = plant.longitudinal_range
    obs = plant.reset({"vx": m.speed0})
    lon = _Longitudinal(m)

    def row(steer: float, accel: float) -> tuple[float, ...]:
        return (obs["t"], steer, accel, obs["X"], obs["Y"], obs["vx"], obs["vy"], obs["r"],
                obs["ay"])

    rows = [row(m.steer(0.5 * CONTROL_PERIOD), 0.0)]
    for k in range(m.steps()):
        steer, accel = m.steer((k + 0.5) * CONTROL_PERIOD), lon(obs["vx"])
        obs = plant.step((steer, min(max(force_per_accel * accel, lo), hi)))
        rows.append(row(steer, accel))
        if _ended(m, obs["vx"], obs["vy"]):
            break
    return Run.of(rows)


def _their_model(model: str) -> tuple[Callable[..., list[float]], Callable[..., list[float]]]:
    """(vehicle_dynamics_*, init_*) of "std" or "mb"."""
    _vehiclemodels()
    if model == "std":
        from vehiclemodels.init_std import init_std
        from vehiclemodels.vehicle_dynamics_std import vehicle_dynamics_std

        return vehicle_dynamics_std, init_std
    if model == "mb":
        from vehiclemodels.init_mb import init_mb
        from vehiclemodels.vehicle_dynamics_mb import vehicle_dynamics_mb

        return vehicle_dynamics_mb, init_mb
    raise ValueError(f"model must be 'std' or 'mb', got {model!r}")


def _their_outputs(model: str, x: np.ndarray, dx: np.ndarray, p: Any) -> tuple[float, ...]:
    """(X, Y, vx, vy, r, ay) of their state x with derivative dx."""
    if model == "std":  # the speed and the slip angle at the CG are its states
        v, beta = x[3], x[6]
        ay = dx[3] * math.sin(beta) + v * math.cos(beta) * (dx[6] + x[5])
        return x[0], x[1], v * math.cos(beta), v * math.sin(beta), x[5], ay
    # mb: the sprung mass's velocities; ay of the whole car (sprung and both unsprung
    # masses: the tires' lateral force over m), as ours.
    ay = (p.m_s * dx[10] + p.m_uf * dx[15] + p.m_ur * dx[20]) / p.m + x[5] * x[3]
    return x[0], x[1], x[3], x[10], x[5], ay


def _rk4_step(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, h: float) -> np.ndarray:
    k1 = f(x)
    k2 = f(x + h / 2 * k1)
    k3 = f(x + h / 2 * k2)
    k4 = f(x + h * k3)
    return x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def _their_initial(model: str, speed: float, p: Any) -> np.ndarray:
    """Straight ahead at ``speed`` from init_std / init_mb; the multi-body model then
    SETTLE_TIME at constant speed (init_mb's heave and pitch are not at rest)."""
    f, init = _their_model(model)
    x = np.array(init([0.0, 0.0, 0.0, speed, 0.0, 0.0, 0.0], p), dtype=float)
    if model == "mb":
        def rhs(x: np.ndarray) -> np.ndarray:
            return np.array(f(list(x), [0.0, 0.0], p))

        for _ in range(round(SETTLE_TIME / THEIR_STEP)):
            x = _rk4_step(rhs, x, THEIR_STEP)
        x[0] = x[1] = x[4] = 0.0
    return x


def run_theirs(model: str, maneuver: Maneuver | str, params: Any = None) -> Run:
    """Their model ("std" or "mb") through ``maneuver``, ``params`` (default: vehicle 2)
    as ``commonroad_params_as_run``: RK4 at THEIR_STEP (below 10 m/s THEIR_STEP v / 10 m/s,
    as their slip's stiffness grows as 1/v); their steer (a state) set at each hold, their
    acceleration input the command (their steering-rate input 0)."""
    m = _maneuver(maneuver)
    p = commonroad_params_as_run(params)
    f, _ = _their_model(model)
    x = _their_initial(model, m.speed0, p)
    lon = _Longitudinal(m)
    rows: list[tuple[float, ...]] = []

    def sample(t: float, steer: float, accel: float) -> tuple[float, ...]:
        dx = np.array(f(list(x), [0.0, accel], p))
        rows.append((t, steer, accel, *_their_outputs(model, x, dx, p)))
        return rows[-1]

    x[2] = m.steer(0.5 * CONTROL_PERIOD)
    last = sample(0.0, x[2], 0.0)
    for k in range(m.steps()):
        steer, accel = m.steer((k + 0.5) * CONTROL_PERIOD), lon(last[5])
        x[2] = steer
        u = [0.0, accel]

        def rhs(x: np.ndarray, u: list[float] = u) -> np.ndarray:
            return np.array(f(list(x), u, p))

        t, t_end = k * CONTROL_PERIOD, (k + 1) * CONTROL_PERIOD
        while t < t_end - 1e-12:
            h = min(THEIR_STEP * min(1.0, max(abs(x[3]), 0.5) / 10.0), t_end - t)
            x = _rk4_step(rhs, x, h)
            t += h
        last = sample(t_end, steer, accel)
        if _ended(m, last[5], last[6]):
            break
    return Run.of(rows)


@functools.cache
def cached_run(side: str, level: str, maneuver: str, integrator: str | None = None) -> Run:
    """One run per (side "ours" | "commonroad", level, maneuver) per process, shared by
    the tests, the table and the plot; ``integrator`` (ours only) overrides the default."""
    if side == "ours":
        kwargs = {} if integrator is None else {"integrator": integrator}
        return run_ours(level, maneuver, **kwargs)
    if side == "commonroad":
        return run_theirs(MODELS[level], maneuver)
    raise ValueError(f"side must be 'ours' or 'commonroad', got {side!r}")


# ------------------------------------------------------------------------------ metrics


def _crossing(t: np.ndarray, y: np.ndarray, level: float) -> float:
    """The first time y reaches ``level`` (linear interpolation); nan if never."""
    i = np.nonzero(y >= level)[0]
    if len(i) == 0:
        return math.nan
    i = int(i[0])
    if i == 0:
        return float(t[0])
    return float(t[i - 1] + (level - y[i - 1]) / (y[i] - y[i - 1]) * (t[i] - t[i - 1]))


def _wheelbase() -> float:
    p = parameters_vehicle2()
    return p.a + p.b


def understeer_gradient(run: Run) -> float:
    """K [deg/g] of the steady-state circular run: the slope of delta - L r / vx against
    ay over K_AY_RANGE on the rising branch (quasi-steady: a constant lag of the ramp goes
    into the intercept)."""
    rising = np.arange(len(run.t)) < int(np.argmax(run.ay))
    sel = rising & (run.t > RAMP_START) & (run.ay >= K_AY_RANGE[0]) & \
        (run.ay <= K_AY_RANGE[1])
    y = run.steer[sel] - _wheelbase() * run.r[sel] / run.vx[sel]
    return math.degrees(np.polyfit(run.ay[sel], y, 1)[0]) * 9.80665


def lateral_limit(run: Run) -> float:
    """The largest steady lateral acceleration of the circular run [m/s^2]: samples with
    |ay - r vx| = |dvy/dt| below STEADY_DVY (not the transient of a spin)."""
    steady = np.abs(run.ay - run.r * run.vx) < STEADY_DVY
    return float(np.max(run.ay[steady]))


def step_metrics(run: Run) -> dict[str, float]:
    """Steady yaw rate (mean of the last second) [rad/s], the time from the step to 90 %
    of it [s], the yaw rate's overshoot over it [%]."""
    steady = float(np.mean(run.r[run.t >= run.t[-1] - 1.0]))
    after = run.t >= STEP_TIME
    return {"r_steady": steady,
            "t90": _crossing(run.t[after], run.r[after], 0.9 * steady) - STEP_TIME,
            "overshoot": 100.0 * (float(np.max(run.r)) - steady) / steady}


def sine_metrics(run: Run) -> dict[str, float]:
    """Over the last two cycles: the peak |ay| [m/s^2] and the yaw rate's phase lag behind
    the steer sine [deg] (its fundamental, by least squares)."""
    sel = run.t > run.t[-1] - 2.0 / SINE_FREQ
    t, r = run.t[sel], run.r[sel]
    w = 2 * math.pi * SINE_FREQ
    basis = np.column_stack([np.sin(w * t), np.cos(w * t), np.ones_like(t)])
    a, b, _ = np.linalg.lstsq(basis, r, rcond=None)[0]
    return {"ay_peak": float(np.max(np.abs(run.ay[sel]))),
            "phase_lag": math.degrees(math.atan2(-b, a))}


def stopping_distance(run: Run) -> float:
    """Distance from the start to BRAKE_END (interpolated) plus BRAKE_END^2 / (2 |a|) [m]:
    their slip is singular at standstill, so neither model's last metre counts."""
    i = int(np.nonzero(run.vx < BRAKE_END)[0][0])
    frac = (run.vx[i - 1] - BRAKE_END) / (run.vx[i - 1] - run.vx[i])
    return float(run.x[i - 1] + frac * (run.x[i] - run.x[i - 1]) +
                 BRAKE_END**2 / (2 * abs(BRAKE_ACCEL)))


@dataclass(frozen=True)
class Metric:
    """One row of the comparison: its maneuver (the run), key, label, unit, number format
    and, per level, the band (low, high) that ours - theirs must lie in (``relative``:
    (ours - theirs) / |theirs|). A band is one-sided where the known cause of the
    difference has a sign (docs/PHYSICS.md gives each cause), so an error of the other
    sign does not hide inside it."""

    maneuver: str
    key: str
    label: str
    unit: str
    fmt: str
    relative: bool
    tolerance: dict[str, tuple[float, float]]


METRICS = (
    Metric("circular", "K", "understeer gradient K", "deg/g", ".3f", False,
           {"L1": (-0.05, 0.02), "L2": (-0.15, 0.02)}),
    Metric("circular", "ay_limit", "lateral limit (max steady ay)", "m/s^2", ".2f", True,
           {"L1": (-0.01, 0.04), "L2": (-0.01, 0.08)}),
    Metric("step", "r_steady", "step steer: steady yaw rate", "rad/s", ".4f", True,
           {"L1": (-0.005, 0.01), "L2": (-0.005, 0.03)}),
    Metric("step", "t90", "step steer: 90 % response time", "s", ".3f", False,
           {"L1": (-0.01, 0.01), "L2": (-0.01, 0.01)}),
    Metric("step", "overshoot", "step steer: yaw-rate overshoot", "%", ".2f", False,
           {"L1": (-0.5, 0.5), "L2": (-0.5, 0.5)}),
    Metric("sine", "ay_peak", "sine steer: peak ay", "m/s^2", ".3f", True,
           {"L1": (-0.005, 0.025), "L2": (-0.005, 0.04)}),
    Metric("sine", "phase_lag", "sine steer: yaw-rate phase lag", "deg", ".2f", False,
           {"L1": (-1.5, 0.5), "L2": (-1.5, 0.5)}),
    Metric("braking", "stop", "braking from 100 km/h: stopping distance", "m", ".2f", True,
           {"L1": (-0.003, 0.01), "L2": (-0.003, 0.01)}),
)


def maneuver_metrics(maneuver: str, run: Run) -> dict[str, float]:
    """The metrics of one maneuver's run (keys as in METRICS)."""
    if maneuver == "circular":
        return {"K": understeer_gradient(run), "ay_limit": lateral_limit(run)}
    if maneuver == "step":
        return step_metrics(run)
    if maneuver == "sine":
        return sine_metrics(run)
    if maneuver == "braking":
        return {"stop": stopping_distance(run)}
    raise ValueError(f"unknown maneuver {maneuver!r}; known: {', '.join(MANEUVERS)}")


@dataclass(frozen=True)
class Row:
    """One metric at one level: CommonRoad's value, ours, ours - theirs, the band
    (low, high) for the difference (``relative``: as a fraction of |theirs|) and whether
    the difference is in it."""

    level: str
    model: str
    maneuver: str
    metric: str
    unit: str
    commonroad: float
    ours: float
    difference: float
    tolerance: tuple[float, float]
    relative: bool
    fmt: str

    @property
    def error(self) -> float:
        """The difference as the band measures it (relative: a fraction of |theirs|)."""
        return self.difference / abs(self.commonroad) if self.relative else self.difference

    @property
    def within(self) -> bool:
        lo, hi = self.tolerance
        return bool(lo <= self.error <= hi)

    def cells(self) -> list[str]:
        f, (lo, hi) = self.fmt, self.tolerance
        if self.relative:
            diff = f"{self.difference:+{f}} ({100 * self.error:+.2f} %)"
            tol = f"{100 * lo:+g} to {100 * hi:+g} %"
        else:
            unit = "points" if self.unit == "%" else self.unit
            diff, tol = f"{self.difference:+{f}}", f"{lo:+g} to {hi:+g} {unit}"
        return [f"{self.level} vs {self.model}", f"{self.metric} [{self.unit}]",
                f"{self.commonroad:{f}}", f"{self.ours:{f}}", diff, tol]


def comparison(levels: Sequence[str] = ("L1", "L2"), maneuvers: Sequence[str] | None = None,
               integrator: str | None = None) -> list[Row]:
    """The table: one Row per metric and level (runs cached per process)."""
    rows = []
    for level in levels:
        for name in maneuvers or MANEUVERS:
            theirs = maneuver_metrics(name, cached_run("commonroad", level, name))
            ours = maneuver_metrics(name, cached_run("ours", level, name, integrator))
            for m in METRICS:
                if m.maneuver != name:
                    continue
                rows.append(Row(level, MODELS[level], name, m.label, m.unit, theirs[m.key],
                                ours[m.key], ours[m.key] - theirs[m.key],
                                m.tolerance[level], m.relative, m.fmt))
    return rows


TABLE_HEADER = ("models", "metric", "CommonRoad", "ours", "difference", "tolerance")


def markdown_table(rows: Sequence[Row]) -> str:
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    lines += ["| " + " | ".join(r.cells()) + " |" for r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------------- plot

def _decel(run: Run) -> tuple[np.ndarray, np.ndarray]:
    return run.t[1:], -np.diff(run.vx) / np.diff(run.t)


_PANELS: dict[str, tuple[Callable[[Run], tuple[np.ndarray, np.ndarray]], str, str, str]] = {
    "circular": (lambda r: (r.steer, r.ay), "steer [rad]", "ay [m/s^2]",
                 "steady-state circular: 20 m/s, steer ramp 0.005 rad/s"),
    "step": (lambda r: (r.t, r.r), "t [s]", "yaw rate [rad/s]",
             f"step steer {STEP_STEER} rad at 20 m/s"),
    "sine": (lambda r: (r.t, r.r), "t [s]", "yaw rate [rad/s]",
             f"sine steer {SINE_FREQ:g} Hz, {SINE_STEER} rad at 20 m/s"),
    "braking": (_decel, "t [s]", "deceleration [m/s^2]",
                f"braking from 100 km/h, torque m R_w {-BRAKE_ACCEL:g} m/s^2"),
}


def plot(path: str | Path, integrator: str | None = None) -> Path:
    """Ours against theirs, one panel per maneuver (rows) and level (columns), as a PNG."""
    from vdsim_gym._plotting import figure

    fig = figure(figsize=(11, 12))
    axes = fig.subplots(len(_PANELS), 2, squeeze=False)
    for j, level in enumerate(("L1", "L2")):
        for i, (name, (xy, xl, yl, title)) in enumerate(_PANELS.items()):
            ax = axes[i][j]
            theirs = cached_run("commonroad", level, name)
            ours = cached_run("ours", level, name, integrator)
            ax.plot(*xy(theirs), color="black", lw=1.6, label=f"CommonRoad {MODELS[level]}")
            ax.plot(*xy(ours), color="tab:red", lw=1.0, ls="--", label=f"ours {level}")
            ax.set_title(f"{level} vs {MODELS[level]}: {title}", fontsize=9)
            ax.set_xlabel(xl, fontsize=8)
            ax.set_ylabel(yl, fontsize=8)
            ax.tick_params(labelsize=7)
            if name == "braking":  # the steady part (the first 20 ms spin the wheels down)
                ax.set_ylim(6.0, 7.0)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=90)
    return out
