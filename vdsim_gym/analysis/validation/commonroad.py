"""CommonRoad's vehicle 2 as our VehicleConfig: their parameter set
(``parameters_vehicle2``), the mapping (``commonroad_mapping``, ``commonroad_vehicle``)
and their set as run (``commonroad_params_as_run``: the tire terms we have no counterpart
for zeroed). Needs the ``validation`` extra (commonroad-vehicle-models) when called.

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
from typing import Any

from vdsim_gym.config.vehicle import VehicleConfig, load_vehicle
from vdsim_gym.errors import ConfigError

INSTALL_HINT = "pip install 'vdsim-gym[validation]'"
MODELS = {"L1": "std", "L2": "mb"}  # our level -> their model
# Their tire terms without a counterpart in ours, zeroed on their side (module doc).
DROPPED_TIRE_TERMS = ("p_hx1", "p_vx1", "p_hy1", "p_hy3", "p_vy1", "p_vy3", "r_hx1",
                      "r_hy1", "r_vy1", "r_vy3", "p_dx3", "p_dy3")


def _vehiclemodels() -> Any:
    try:
        import vehiclemodels
    except ImportError as exc:
        raise ImportError(f"vdsim_gym.analysis.validation needs CommonRoad's vehicle models: "
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
        raise ConfigError(f"model must be 'mb' or 'std', got {model!r}")
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
                           "decide it in vdsim_gym/analysis/validation/commonroad.py "
                           "(commonroad_mapping)")
    return load_vehicle(mapping)


def commonroad_params_as_run(params: Any = None) -> Any:
    """Their parameter set as run: the published one with DROPPED_TIRE_TERMS zeroed."""
    p = copy.deepcopy(parameters_vehicle2() if params is None else params)
    for name in DROPPED_TIRE_TERMS:
        setattr(p.tire, name, 0.0)
    return p
