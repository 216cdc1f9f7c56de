"""Predicting the car across a known loop delay: the single-track model of the classical
delay-compensating controllers (docs/CONTROLLERS.md, "Delay compensation").

A command computed from the observation of sample t_k reaches the wheels at t_k + d,
where d is the loop's delay: the sensor's age, the computation, and the steering channel's
dead time. Until then the command already sent holds, so a controller that knows d can
act on where the car *will be* at t_k + d instead of where it was at t_k: a Smith
predictor. ``SingleTrackPredictor`` integrates the state the path envs observe (e_y,
e_psi, vx, vy, r) across d, with the steer in flight (``prev_steer``: the last action,
which holds until the new one applies) and the path's curvature at the projection held.

The model: the nonlinear single-track (bicycle) model in path coordinates, each axle's
lateral force from the vehicle's own Magic Formula curve at its static load (the peak mu
Fz, the curve's shape C and E, its slope matched to the axle's cornering stiffness with
compliance steer, ``analysis.handling.cornering_stiffness``), the tire's relaxation
length as a first-order lag of each axle's slip, and the speed held. Integrated by RK4
in each row's own equal steps of at most ``max_step`` (20 ms) and of at most 1.5 over the
model's fastest rate at the row's speed (the slips' relaxation u / sigma, the lateral and
yaw modes' damping), in the core (vdsim/single_track.hpp, the GIL released;
tests/test_delay_compensation.py keeps the numpy version as the reference). The
compensating Stanley's e_y on ISO 3888-1 and the random courses is that of 2.5 ms steps
within 5e-5 relative (docs/CONTROLLERS.md, "Delay compensation"). It
is the controller's model, not the plant's: no load transfer, no longitudinal slip, one
tire per axle. ``tests/test_delay_compensation.py`` checks what it predicts against the
L2 plant over 20-60 ms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import is_real
from vdsim_gym.config.vehicle import VehicleConfig, load_vehicle
from vdsim_gym.errors import ConfigError

GRAVITY = 9.80665  # [m/s^2], the core's
_MIN_SPEED = 1.0  # [m/s] the slip angles' speed floor (the plant's slip_speed_floor scale)


@dataclass(frozen=True)
class AxleTire:
    """One axle's lateral force law Fy(tan alpha) = -D sin(C atan(B t - E (B t - atan B t)))
    (the sign: a positive slip pushes the car to the right)."""

    stiffness: float  # [N/rad], dFy/dtan(alpha) at 0
    peak: float  # D [N]
    shape: float  # C
    curvature: float  # E

    @property
    def b(self) -> float:
        return self.stiffness / (self.peak * self.shape)

    def force(self, tan_alpha: np.ndarray) -> np.ndarray:
        bt = self.b * tan_alpha
        return -self.peak * np.sin(self.shape * np.arctan(bt - self.curvature
                                                          * (bt - np.arctan(bt))))


class SingleTrackPredictor:
    """The state of a path env's car ``horizon`` seconds on, under a held steer.

    Args:
        vehicle: the vehicle (a VehicleConfig or a packaged name).
        relaxation: model the tires' relaxation length (the vehicle's; on by default).
        max_step: the longest RK4 step [s] (shorter where the model's fastest rate asks:
            ``steps``).
    """

    def __init__(self, vehicle: VehicleConfig | str, *, relaxation: bool = True,
                 max_step: float = 0.02) -> None:
        from vdsim_gym.analysis.handling import cornering_stiffness

        v = load_vehicle(vehicle)
        if not (math.isfinite(max_step) and max_step > 0.0):
            raise ConfigError(f"max_step must be a positive number of seconds, got {max_step!r}")
        self.vehicle = v
        self.max_step = float(max_step)
        a, b, m = v.cg_to_front, v.cg_to_rear, v.mass
        fz = (m * GRAVITY * b / v.wheelbase, m * GRAVITY * a / v.wheelbase)  # axle loads
        lat = v.tire.lateral
        self.axles = tuple(
            AxleTire(stiffness=2.0 * cornering_stiffness(v, f / 2.0, axle),
                     peak=v.tire.mu * lat.D * f, shape=lat.C, curvature=lat.E)
            for axle, f in enumerate(fz))
        self.sigma = v.tire.relaxation_length if relaxation else 0.0
        self._kernel: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # The core's model is rebuilt at its first use after a copy or pickle.
        return {**self.__dict__, "_kernel": None}

    def kernel(self) -> Any:
        """The model in the core (``sim.baselines.SingleTrackModel``), built at the first
        use."""
        if self._kernel is None:
            from vdsim_gym.sim.baselines import SingleTrackModel

            v = self.vehicle
            self._kernel = SingleTrackModel(
                mass=v.mass, yaw_inertia=v.yaw_inertia, cg_to_front=v.cg_to_front,
                cg_to_rear=v.cg_to_rear, sigma=self.sigma,
                **{name: [ax.stiffness, ax.peak, ax.shape, ax.curvature]
                   for name, ax in zip(("front", "rear"), self.axles, strict=True)})
        return self._kernel

    def predict(self, e_y: Any, e_psi: Any, vx: Any, vy: Any, r: Any, delta: Any,
                kappa: Any, horizon: Any) -> np.ndarray:
        """(5, N) array: e_y, e_psi, vx, vy, r after ``horizon`` seconds (one for all rows,
        or one per row) with the road-wheel steer ``delta`` [rad] held and the path's
        curvature ``kappa`` [1/m]; the tires' lagged slips start at the kinematic ones.
        Each row takes its own equal RK4 steps (``steps``; a row with horizon 0 stays
        where it is). Computed in the core (vdsim/single_track.hpp), one call for the
        batch."""
        cols = np.broadcast_arrays(*(np.atleast_1d(np.asarray(c, dtype=float)) for c in
                                     (e_y, e_psi, vx, vy, r, delta, kappa, horizon)))
        if not (np.isfinite(cols[7]).all() and (cols[7] >= 0.0).all()):
            raise ConfigError(f"horizon must be finite seconds >= 0 (a delay to predict "
                              f"across), got {horizon!r:.100}")
        return self.kernel().predict(np.stack(cols), self.max_step)

    def steps(self, horizon: float, vx: float) -> int:
        """The RK4 steps of a row with this horizon [s] at speed vx [m/s]: the fewest of
        at most ``max_step`` and of at most 1.5 over the model's fastest rate at the speed
        floor max(|vx|, 1 m/s) (0 for a horizon of 0)."""
        return int(self.kernel().steps(float(horizon), float(vx), self.max_step))


def loop_delay(env: gym.Env | Any, *, steer: bool = True) -> float:
    """The delay [s] from an observation's capture to its command's effect at the wheels,
    as ``env`` is configured for its episode now: the latency model's mean (computation),
    the sensor delay's mean (``obs_delay``) and, with ``steer``, the steering channel's
    dead time (``channel_delays``). 0 without any. With a randomization these are the
    episode's own (``episode_params``, read from the core's draws: a vector env's row is
    reset in C++, and only its draws are current). A ``LatencyModel.measured()`` (unknown
    in advance) is a ConfigError: pass the delay to the controller instead."""
    base: Any = getattr(env, "unwrapped", env)
    params = base.episode_params if getattr(base, "randomize", None) is not None else None
    total = 0.0
    for name in ("latency", "obs_delay"):
        model = getattr(params if params is not None else base, name, None)
        if model is not None:
            mean = model.mean_delay
            if not math.isfinite(mean):
                raise ConfigError(f"the env's {name} is {model.kind}: its delay is not known "
                                  "in advance; give the controller delay=<seconds>")
            total += mean
    physics = getattr(base, "physics", None)
    if steer and physics is not None:
        channels = params.channel_delays if params is not None else physics.channel_delays
        total += float(channels[0])
    return total


class RowDelays:
    """The delay a compensating controller predicts across: one for every row
    (``delay``), or one per batch row (``set(delays)``: each episode's own, e.g. drawn by
    a latency randomization), used for batches of that many rows."""

    def __init__(self, delay: float) -> None:
        if not (is_real(delay) and math.isfinite(delay) and delay >= 0.0):
            raise ConfigError(f"delay must be a finite number of seconds >= 0, got {delay!r}")
        self.delay = float(delay)
        self.rows: np.ndarray | None = None

    def set(self, delays: Any) -> None:
        """Per-row delays [s]; None: ``delay`` for every row again."""
        if delays is None:
            self.rows = None
            return
        d = np.asarray(delays, dtype=float).reshape(-1)
        if not (np.isfinite(d).all() and (d >= 0.0).all()):
            raise ConfigError(f"delays must be finite numbers of seconds >= 0, got {delays!r}")
        self.rows = d

    @property
    def none(self) -> bool:
        """No row is ever delayed: the controller is its plain law."""
        return self.delay == 0.0 and self.rows is None

    def for_batch(self, n: int) -> Any:
        """The delays of an n-row batch: the per-row array when it has n entries, else
        ``delay``; None when every row's is 0 (nothing to predict)."""
        if self.rows is not None and len(self.rows) == n:
            return self.rows if self.rows.any() else None
        return self.delay if self.delay != 0.0 else None

    @staticmethod
    def keep_undelayed(out: np.ndarray, obs: np.ndarray, d: Any) -> np.ndarray:
        """Rows whose delay is 0 get their observation back as it was (bit for bit)."""
        if not np.isscalar(d):
            keep = d == 0.0
            out[keep] = obs[keep]
        return out


class DelayedObservation:
    """An observation batch rewritten to the one predicted across each row's delay
    (``RowDelays``): subclasses give ``_predict(obs, d)`` for the rows' delays ``d`` (a
    number or an array); rows without delay keep their observation bit for bit."""

    def __init__(self, delay: float) -> None:
        self.delays = RowDelays(delay)

    @property
    def delay(self) -> float:
        return self.delays.delay

    def set_delays(self, delays: Any) -> None:
        """One delay per batch row [s] (``RowDelays.set``)."""
        self.delays.set(delays)

    def __call__(self, obs: np.ndarray) -> np.ndarray:
        d = self.delays.for_batch(len(obs))
        if d is None:
            return obs
        return RowDelays.keep_undelayed(self._predict(obs, d), obs, d)

    def _predict(self, obs: np.ndarray, d: Any) -> np.ndarray:
        raise NotImplementedError


class PredictedObservation(DelayedObservation):
    """Rewrites a path env's observation batch to the predicted one ``delay`` seconds on:
    e_y, e_psi, vy and r replaced (normalized as the env does, unclipped), the other
    columns kept. The steer in flight is ``prev_steer`` (the last action) times
    ``max_steer``; with ``delay`` 0 the batch is returned as given."""

    COLUMNS = ("e_y", "e_psi", "vx", "vy", "r", "kappa_ref", "prev_steer")

    def __init__(self, layout: Any, vehicle: VehicleConfig | str, delay: float,
                 **predictor: Any) -> None:
        super().__init__(delay)
        self.layout = layout
        self.predictor = SingleTrackPredictor(vehicle, **predictor)
        self._cols = {n: (layout.index(n), float(layout.scale[layout.index(n)]))
                      for n in self.COLUMNS}
        self._idx = [i for i, _ in self._cols.values()]
        self._scales = [s for _, s in self._cols.values()]
        self._one: tuple[float, Any] = (math.nan, None)  # (delay, [delay])

    def _predict(self, obs: np.ndarray, d: Any) -> np.ndarray:
        """One core call (``SingleTrackModel.predict_obs``): the columns in the batch's
        dtype times their scales (numpy's arithmetic), each row's steps as
        ``SingleTrackPredictor.predict``'s, the batch back as float64 with the five
        predicted columns over their scales."""
        p = self.predictor
        if isinstance(d, float):  # one delay for every row: its array kept
            if d != self._one[0]:
                self._one = (d, np.array([d]))
            delays = self._one[1]
        else:
            delays = np.atleast_1d(np.asarray(d, dtype=float))
        batch = obs if obs.dtype in (np.float32, np.float64) else obs.astype(float)
        return p.kernel().predict_obs(batch, self._idx, self._scales, p.vehicle.max_steer,
                                      delays, p.max_step)


