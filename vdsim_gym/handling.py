"""Steady-state handling from a vehicle's parameters: cornering stiffness, lateral load
transfer by the roll-stiffness distribution, and the understeer gradient.

The quasi-static axle balance of a steady turn at lateral acceleration ay (constant speed,
flat road, small angles): each axle carries its share of m ay (b/L front, a/L rear), its
two tires carry the axle's static load -+ its share of the lateral transfer m ay h / t
(``roll_stiffness_front`` in front, the rest behind; unset: the static load share b/L),
and the axle's slip angle is the one at which the two tires of the core's own Magic
Formula (``_core.tire_forces``) give that force. Then delta - L / R = alpha_f - alpha_r,
and the understeer gradient is K(ay) = (alpha_f - alpha_r) / ay (at ay -> 0 the linear
m / L (b / C_f - a / C_r)). It uses the tire, not the vehicle models, so it checks them
(tests/test_physics.py: the L2 model's steady turns match it within 0.1 deg/g to 0.5 g).
"""

from __future__ import annotations

import math

from vdsim_gym import _core
from vdsim_gym.config import VehicleConfig, load_vehicle

GRAVITY = 9.80665  # [m/s^2], the core's kGravity
_LINEAR_SLIP = 1e-14  # tan(alpha) inside the tire's exact linear branch


def deg_per_g(k: float) -> float:
    """An understeer gradient in rad/(m/s^2) as deg/g."""
    return math.degrees(k) * GRAVITY


def cornering_stiffness(vehicle: VehicleConfig | str, fz: float) -> float:
    """One tire's cornering stiffness dFy/dtan(alpha) at zero slip and load fz [N/rad]."""
    tire = load_vehicle(vehicle).to_core().tire
    return _core.tire_forces(tire, fz, 0.0, _LINEAR_SLIP)[1] / _LINEAR_SLIP


def front_transfer_share(vehicle: VehicleConfig) -> float:
    """The front axle's share of the lateral load transfer (L2)."""
    v = vehicle
    if v.roll_stiffness_front is not None:
        return v.roll_stiffness_front
    return v.cg_to_rear / v.wheelbase


def axle_loads(vehicle: VehicleConfig, ay: float) -> tuple[tuple[float, float],
                                                          tuple[float, float]]:
    """((front inner, front outer), (rear inner, rear outer)) tire loads [N] in a steady
    turn at ay [m/s^2] (inner: the side the car turns to)."""
    v = vehicle
    m, a, b, L = v.mass, v.cg_to_front, v.cg_to_rear, v.wheelbase
    share = front_transfer_share(v)
    dlat = m * abs(ay) * v.cg_height / v.track
    fz_f, fz_r = 0.5 * m * GRAVITY * b / L, 0.5 * m * GRAVITY * a / L
    return ((fz_f - share * dlat, fz_f + share * dlat),
            (fz_r - (1.0 - share) * dlat, fz_r + (1.0 - share) * dlat))


def _axle_slip(tire: _core.TireParams, loads: tuple[float, float], force: float) -> float:
    """The slip angle [rad] at which the axle's two tires give ``force`` [N] (bisection on
    tan(alpha); ValueError past the axle's peak)."""
    def axle(t: float) -> float:
        return sum(_core.tire_forces(tire, fz, 0.0, t)[1] for fz in loads)

    lo, hi = 0.0, 0.05
    while axle(hi) < force:
        if hi > 5.0 or axle(2.0 * hi) <= axle(hi):
            raise ValueError(f"the axle cannot carry {force:.0f} N (past its peak)")
        hi *= 2.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if axle(mid) < force else (lo, mid)
    return math.atan(0.5 * (lo + hi))


def understeer_gradient(vehicle: VehicleConfig | str = "generic_sedan", ay: float = 0.0
                        ) -> float:
    """K(ay) = (delta - L / R) / ay [rad/(m/s^2)] of the quasi-static axle balance (the
    module doc); ``ay = 0``: the linear limit m / L (b / C_f - a / C_r). ``ay`` [m/s^2]
    must be below what the axles can carry."""
    v = load_vehicle(vehicle)
    if not (math.isfinite(ay) and ay >= 0.0):
        raise ValueError(f"ay must be a finite lateral acceleration >= 0 m/s^2, got {ay!r}")
    m, a, b, L = v.mass, v.cg_to_front, v.cg_to_rear, v.wheelbase
    if ay == 0.0:
        (f0, _), (r0, _) = axle_loads(v, 0.0)
        c_f, c_r = 2.0 * cornering_stiffness(v, f0), 2.0 * cornering_stiffness(v, r0)
        return m / L * (b / c_f - a / c_r)
    tire = v.to_core().tire
    front, rear = axle_loads(v, ay)
    alpha_f = _axle_slip(tire, front, m * ay * b / L)
    alpha_r = _axle_slip(tire, rear, m * ay * a / L)
    return (alpha_f - alpha_r) / ay


__all__ = ["axle_loads", "cornering_stiffness", "deg_per_g", "front_transfer_share",
           "understeer_gradient"]
