"""Loop analysis of the robot driver on the dyno bench (docs/DYNO.md, "Loop margins").

``loop_margins`` linearizes the driver + bench loop below the power-limited speed and
computes its frequency response with numpy:

- speed mode: L(s) = (kp + ki/s) * b/s * G(s) * H(s);
- accel mode: L(s) = (kp_a + ki_a/s) * b * G(s) * H(s) * M(z), the loop from the pedal to
  the measured acceleration: a = b G p, measured as the backward difference of v over dt
  through the first-order filter (the core's one lag discretization, exact for a held
  input), M(z) = (1 - z^-1)/(s dt) * alpha / (1 - (1 - alpha) z^-1), alpha = 1 -
  exp(-dt / tau), z = e^(s dt);
- accel mode fed as the reference rig feeds it ("accel_from_speed"), a_ref = (v_ref - v)
  / T: one loop in v, L(s) = (kp_a + ki_a/s) * (1/T + s M(z)) * b/s * G(s) * H(s);

with b the pedal authority [m/s^2 per unit pedal], G(s) = wn^2 / (s^2 + 2 zeta wn s +
wn^2) the torque lag and H(s) = e^(-s dt/2) the zero-order hold of a pedal held for dt.
``time_domain_delay_margin`` finds the smallest transport delay (in whole steps) at which
the simulated nonlinear loop stops settling, to check the linear figure against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym.dyno.bench import DynoBench
from vdsim_gym.dyno.driver import RobotDriver
from vdsim_gym.errors import ConfigError
from vdsim_gym.timing import nearest_ticks

LOOP_MODES = ("speed", "accel", "accel_from_speed")


@dataclass(frozen=True)
class LoopMargins:
    crossover_rad_s: float  # |L(j w_c)| = 1
    phase_margin_deg: float  # 180 + angle L(j w_c)
    delay_margin_s: float  # phase margin / w_c: the added delay that closes it
    gain_margin_db: float | None  # -20 log10 |L| where the phase is -180 deg

    def as_dict(self) -> dict[str, float | None]:
        return dict(vars(self))


@dataclass(frozen=True)
class LoopModel:
    mode: str = "speed"
    b: float = 7.25  # pedal authority [m/s^2 per unit pedal]
    kp: float = 0.45
    ki: float = 0.25
    kp_accel: float = 0.05
    ki_accel: float = 0.5
    accel_filter_s: float = 0.1
    lag_hz: float = 5.0
    zeta: float = 0.7
    dt: float = 0.05  # the driver's step [s]
    aref_horizon_s: float = 0.1  # T of accel_from_speed's a_ref = (v_ref - v) / T

    @classmethod
    def for_bench(cls, mode: str = "speed", vehicle: str = "ev_dyno_bench", **kw: float
                  ) -> LoopModel:
        bench = DynoBench(vehicle)
        return cls(mode=mode, b=bench.pedal_authority, lag_hz=bench.config.torque_lag_hz,
                   zeta=bench.config.torque_lag_zeta, **kw)

    def response(self, w: np.ndarray) -> np.ndarray:
        """L(j w) for angular frequencies ``w`` [rad/s]."""
        if self.mode not in LOOP_MODES:
            raise ConfigError(f"unknown mode {self.mode!r}; valid: {', '.join(LOOP_MODES)}")
        s = 1j * np.asarray(w, float)
        wn = 2.0 * math.pi * self.lag_hz
        lag = wn**2 / (s**2 + 2.0 * self.zeta * wn * s + wn**2)
        hold = np.exp(-s * self.dt / 2.0)
        if self.mode == "speed":
            return (self.kp + self.ki / s) * self.b / s * lag * hold
        zinv = np.exp(-s * self.dt)
        alpha = 1.0 - math.exp(-self.dt / self.accel_filter_s) if self.accel_filter_s > 0 \
            else 1.0
        measure = (1.0 - zinv) / (s * self.dt) * alpha / (1.0 - (1.0 - alpha) * zinv)
        pi = self.kp_accel + self.ki_accel / s
        if self.mode == "accel":
            return pi * self.b * lag * hold * measure
        return pi * (1.0 / self.aref_horizon_s + s * measure) * self.b / s * lag * hold


def loop_margins(model: LoopModel | None = None, *, w_min: float = 1e-2,
                 w_max: float | None = None, points: int = 20000) -> LoopMargins:
    """Crossover, phase margin, delay margin and gain margin of ``model`` (default: speed
    mode on the reference bench's figures)."""
    model = model or LoopModel()
    w_max = w_max or math.pi / model.dt  # the Nyquist frequency of the driver's step
    w = np.logspace(math.log10(w_min), math.log10(w_max), points)
    resp = model.response(w)
    mag, phase = np.abs(resp), np.unwrap(np.angle(resp))
    down = np.flatnonzero((mag[:-1] >= 1.0) & (mag[1:] < 1.0))
    if down.size == 0:
        raise ConfigError("the loop gain never crosses 1 in the band; no crossover")
    i = int(down[0])
    f = math.log(mag[i]) / (math.log(mag[i]) - math.log(mag[i + 1]))  # log interpolation
    wc = float(math.exp(math.log(w[i]) + f * (math.log(w[i + 1]) - math.log(w[i]))))
    ph = float(phase[i] + f * (phase[i + 1] - phase[i]))
    pm = math.degrees(ph) + 180.0
    gm = None
    cross = np.flatnonzero((phase[:-1] > -math.pi) & (phase[1:] <= -math.pi))
    if cross.size:
        j = int(cross[0])
        gm = float(-20.0 * math.log10(mag[j]))
    return LoopMargins(wc, pm, math.radians(pm) / wc, gm)


def settles(mode: str, delay_s: float, *, dt: float = 0.01, vehicle: str = "ev_dyno_bench",
            **driver: Any) -> bool:
    """Whether a small step in the linear range settles: speed modes from 5 to 5.5 m/s for
    120 s (the speed), accel mode a_ref 0.1 m/s^2 from 2 m/s for 50 s (the filtered
    acceleration). Settled: the peak-to-peak over the last 10 s is below 0.9 of the 10 s
    before (still decaying) or negligible (1e-4). A loop past its margin grows, or ends in
    a small limit cycle (the brake acts without the motors' lag, so oscillations that reach
    it are damped more): neither decays."""
    if mode not in LOOP_MODES:
        raise ConfigError(f"unknown mode {mode!r}; valid: {', '.join(LOOP_MODES)}")
    bench = DynoBench(vehicle, v0=2.0 if mode == "accel" else 5.0)
    drv = RobotDriver("speed" if mode == "speed" else "accel", delay_s=delay_s, **driver)
    horizon = LoopModel.aref_horizon_s
    n = nearest_ticks(50.0 if mode == "accel" else 120.0, dt)[0]
    v, trace = bench.speed, np.empty(n)
    for k in range(n):
        if mode == "speed":
            v = bench.step(*drv.step(5.5, v, dt), dt)
        elif mode == "accel_from_speed":
            v = bench.step(*drv.step(5.5, v, dt, a_ref=(5.5 - v) / horizon), dt)
        else:
            v = bench.step(*drv.step(0.0, v, dt, a_ref=0.1), dt)
        trace[k] = drv.filtered_accel if mode == "accel" else v
    w = nearest_ticks(10.0, dt)[0]
    late, before = np.ptp(trace[-w:]), np.ptp(trace[-2 * w:-w])
    return bool(late < 1e-4 or late < 0.9 * before)


def time_domain_delay_margin(mode: str = "speed", *, dt: float = 0.01,
                             max_delay_s: float = 1.5, **driver: Any) -> float:
    """The smallest delay (a whole number of steps of ``dt``) at which the simulated loop
    stops settling (bisection: settling is monotonic in the delay here)."""
    lo, hi = 0, nearest_ticks(max_delay_s, dt)[0]
    if not settles(mode, 0.0, dt=dt, **driver):
        return 0.0
    if settles(mode, hi * dt, dt=dt, **driver):
        return math.inf
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if settles(mode, mid * dt, dt=dt, **driver):
            lo = mid
        else:
            hi = mid
    return hi * dt


__all__ = ["LOOP_MODES", "LoopMargins", "LoopModel", "loop_margins", "settles",
           "time_domain_delay_margin"]
