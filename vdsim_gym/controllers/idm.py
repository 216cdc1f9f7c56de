"""The Intelligent Driver Model (Treiber, Hennecke, Helbing, Phys. Rev. E 62, 1805 (2000))
as a car-following baseline:

    a = a_max [1 - (v / v0)^delta - (s* / s)^2],  s* = s0 + v T + v dv / (2 sqrt(a_max b))

v the ego speed, dv = v - v_lead the approach rate, s the gap. Without a lead the
interaction term is dropped (free road). Defaults are the paper's highway values: v0 =
120 km/h, T = 1.6 s, s0 = 2 m, a_max = 0.73 m/s^2, b = 1.67 m/s^2, delta = 4. The output is
clamped to the vehicle's [-max_deceleration, max_acceleration] (the model itself has no
lower bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vdsim_gym._checks import is_real
from vdsim_gym.errors import ConfigError


@dataclass(frozen=True)
class IDM:
    v0: float = 120.0 / 3.6  # desired speed [m/s]
    time_headway: float = 1.6  # T [s]
    min_gap: float = 2.0  # s0 [m]
    a_max: float = 0.73  # [m/s^2]
    b_comfort: float = 1.67  # comfortable deceleration [m/s^2]
    delta: float = 4.0
    max_acceleration: float = 3.0  # vehicle limits for the clamp [m/s^2]
    max_deceleration: float = 8.0

    def __post_init__(self) -> None:
        for name in ("v0", "time_headway", "a_max", "b_comfort", "delta",
                     "max_acceleration", "max_deceleration"):
            value = getattr(self, name)
            if not (is_real(value) and math.isfinite(value) and value > 0):
                raise ConfigError(f"IDM {name} must be a positive number, got {value!r}")
        if not self.min_gap >= 0:
            raise ConfigError(f"IDM min_gap must be >= 0 m, got {self.min_gap!r}")

    def desired_gap(self, v: float, dv: float) -> float:
        """s* = s0 + v T + v dv / (2 sqrt(a b)) [m] (dv = v - v_lead)."""
        return self.min_gap + v * self.time_headway + v * dv / (
            2.0 * math.sqrt(self.a_max * self.b_comfort))

    def equilibrium_gap(self, v: float) -> float:
        """The gap at which a follower at the lead's speed v neither accelerates nor
        brakes: (s0 + v T) / sqrt(1 - (v / v0)^delta), for v < v0."""
        return (self.min_gap + v * self.time_headway) / math.sqrt(
            1.0 - (v / self.v0) ** self.delta)

    def acceleration(self, ego_speed: float, lead_speed: float | None = None,
                     gap: float | None = None) -> float:
        v = max(ego_speed, 0.0)
        a = self.a_max * (1.0 - (v / self.v0) ** self.delta)
        if lead_speed is not None and gap is not None and math.isfinite(lead_speed) \
                and math.isfinite(gap):
            s = max(gap, 1e-3)  # a gap at or below zero is a collision: full interaction
            a -= self.a_max * (max(self.desired_gap(v, v - lead_speed), 0.0) / s) ** 2
        return min(max(a, -self.max_deceleration), self.max_acceleration)


__all__ = ["IDM"]
