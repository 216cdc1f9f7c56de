"""Linear model-predictive path tracking, solved by OSQP (docs/CONTROLLERS.md, "MPC").

The generic part is ``condensed_qp`` (``CondensedQP``, ``CondensedMPC``): a linear
discrete model, a quadratic cost and bounds, condensed to a QP in the inputs alone and
solved by its unconstrained minimizer or OSQP. The model is discretized by
``discretization``; the reference line is ``reference_spline``'s.

``MPCSteer`` is the path tracker on a path env's observation: the linear single-track
model (each axle's cornering stiffness with compliance steer, the speed held) in the
frame of the car at the observation, the reference line from the observation's preview
points (the path's lateral offsets 0, 5, 10, 20 and 30 m ahead), the loop delay handled
by a prediction step (the state is first carried across the delay under the steer in
flight, ``prev_steer``), and the road-wheel angle and its rate bounded. The first input
of the plan is the command. It keeps one ``CondensedQP`` per model speed (the observed
speed to 1/1000 m/s) and one delay prediction per (speed, delay); a batch's reference
lines, predictions and unconstrained plans are computed for all rows at once, and a row
whose plan meets a bound goes to OSQP (one problem per batch row). ``mpc_pi(env)`` pairs
it with the PI speed loop.

The optional ``mpc`` extra installs OSQP (``pip install 'vdsim-gym[mpc]'``); it is
imported when the first controller is built.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_number, check_seconds, is_real
from vdsim_gym.config.latency import MAX_DELAY_S
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.controllers.base import ObsLayout, as_batch
from vdsim_gym.controllers.composite import LateralLongitudinal
from vdsim_gym.controllers.condensed_qp import (
    CondensedMPC,
    CondensedQP,
    InputCost,
    StateCost,
    check_horizon,
    load_osqp,
    stacked_bounds,
)
from vdsim_gym.controllers.discretization import discretize
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.prediction import GRAVITY, RowDelays, loop_delay
from vdsim_gym.controllers.reference_spline import reference_line, spline_at, spline_pieces
from vdsim_gym.errors import ConfigError

# The plan's step [s]: below 1 ms it is finer than the control period (10 ms and up) for
# nothing, above 1 s the zero-order hold of one step spans a whole manoeuvre.
DT_BOUNDS = (1e-3, 1.0)
# The observation columns MPCSteer plans from (and the preview_y_*m ones): a path env's.
PATH_COLUMNS = ("e_y", "e_psi", "vx", "vy", "r", "prev_steer")
# The bytes of CondensedQPs the MPC controllers keep (one per model and model speed: 51 kB
# at the default 30 steps, so 661 of them); past it the oldest goes first.
QP_CACHE_BYTES = 32 << 20


class SharedQPs:
    """The condensed QPs and the delay predictions of every MPCSteer in the process, keyed by
    what they are built from (the model's parameters, the plan's step, horizon and weights,
    the model speed; and the delay), so that controllers built alike (a sweep's or a
    tolerance search's, one per cell) build each only once. QPs are kept up to
    ``QP_CACHE_BYTES``, the oldest dropped first; predictions up to 4096. Built outside the
    lock (the same key builds the same bits), inserted under it."""

    def __init__(self) -> None:
        self.qps: dict[tuple[float, ...], CondensedQP] = {}  # insertion order: oldest first
        self.bytes = 0
        self.predictions: dict[tuple[float, ...], np.ndarray] = {}
        self._lock = threading.Lock()

    def qp(self, key: tuple[float, ...], build: Any) -> CondensedQP:
        qp = self.qps.get(key)
        if qp is None:
            qp = build()
            with self._lock:
                if key not in self.qps:
                    while self.qps and self.bytes + qp.nbytes > QP_CACHE_BYTES:
                        self.bytes -= self.qps.pop(next(iter(self.qps))).nbytes
                    self.qps[key] = qp
                    self.bytes += qp.nbytes
        return qp

    def prediction(self, key: tuple[float, ...], build: Any) -> np.ndarray:
        e = self.predictions.get(key)
        if e is None:
            e = build()
            with self._lock:
                if len(self.predictions) >= 4096:
                    self.predictions.clear()
                self.predictions[key] = e
        return e

    def clear(self) -> None:
        """Forget every QP and prediction (a benchmark's cold start)."""
        with self._lock:
            self.qps.clear()
            self.predictions.clear()
            self.bytes = 0


SHARED_QPS = SharedQPs()


class MPCSteer:
    """Linear MPC steering on a path env's observation (module docstring).

    Args:
        layout: the env's observation columns (needs e_y, e_psi, vx, vy, r, prev_steer
            and the preview_y_*m columns).
        vehicle: the vehicle the model describes.
        delay: the loop delay [s] to predict across (``from_env``: the env's).
        dt: the plan's step [s]; horizon: its steps (dt * horizon: the look-ahead;
            defaults 0.05 s x 30 = 1.5 s).
        q_y, q_psi: weights on the lateral [1/m^2] and heading [1/rad^2] deviation from the
            reference line; terminal: the last step's factor on them.
        r_steer, s_rate: weights on the steer [1/rad^2] and on its change per step.
        max_steer_rate: the road-wheel rate bound [rad/s]; steer_limit: the bound on the
            angle as a fraction of the vehicle's max_steer.
    """

    def __init__(self, layout: ObsLayout, vehicle: Any, *, delay: float = 0.0,
                 follows_env: bool = False,
                 dt: float = 0.05, horizon: int = 30, q_y: float = 1.0, q_psi: float = 1.0,
                 terminal: float = 1.0, r_steer: float = 0.0, s_rate: float = 1.0,
                 max_steer_rate: float = 1.0, steer_limit: float = 1.0) -> None:
        from vdsim_gym.analysis.handling import cornering_stiffness

        load_osqp()  # fail now, naming the extra
        check_drives(layout)
        delay = check_seconds(delay, "delay", allow_zero=True, maximum=MAX_DELAY_S,
                              hint=" (the loop delay to predict across; delays are seconds, "
                                   "not milliseconds: 20 ms is 0.02)")
        self._delays = RowDelays(delay)
        dt = check_number(dt, "dt", *DT_BOUNDS, what="the plan's step [s]")
        horizon = check_horizon(horizon)
        steer_limit = check_number(steer_limit, "steer_limit", 0.0, 1.0, open_low=True,
                                   what="a fraction of the vehicle's max_steer")
        for name, value, positive in (("q_y", q_y, False), ("q_psi", q_psi, False),
                                      ("terminal", terminal, False),
                                      ("r_steer", r_steer, False), ("s_rate", s_rate, False),
                                      ("max_steer_rate", max_steer_rate, True)):
            if not (is_real(value) and math.isfinite(value)
                    and (value > 0.0 if positive else value >= 0.0)):
                raise ConfigError(f"{name} must be a finite number "
                                  f"{'> 0' if positive else '>= 0'}, got {value!r}")
        if q_y + q_psi <= 0.0:
            raise ConfigError("q_y and q_psi are both 0: the plan would not track the path")
        self._layout = layout
        self.vehicle = v = load_vehicle(vehicle)
        self.dt, self.horizon = float(dt), int(horizon)
        self.q = np.diag([q_y, q_psi, 0.0, 0.0])
        self.terminal = float(terminal)
        self.r, self.s = np.array([[r_steer]]), np.array([[s_rate]])
        self.max_rate = float(max_steer_rate)
        self.limit = float(steer_limit) * v.max_steer
        fz = (v.mass * GRAVITY * v.cg_to_rear / v.wheelbase,
              v.mass * GRAVITY * v.cg_to_front / v.wheelbase)
        self.cf, self.cr = (2.0 * cornering_stiffness(v, f / 2.0, axle)
                            for axle, f in enumerate(fz))
        names = layout.names
        preview = sorted((float(mt.group(1)), n) for n in names
                          if (mt := re.fullmatch(r"preview_y_(\d+(?:\.\d+)?)m", n)))
        if not preview:
            raise ConfigError(f"MPCSteer needs the path's preview columns (preview_y_*m); "
                              f"the observation has {names}")
        self.distances = tuple(d for d, _ in preview)
        self._pieces = spline_pieces(self.distances)
        cols = list(PATH_COLUMNS) + [n for _, n in preview]
        self._col_names = list(PATH_COLUMNS) + [f"preview_{k}" for k in range(len(preview))]
        self._col_index = np.array([layout.index(n) for n in cols])
        self._col_scale = np.array([float(layout.scale[layout.index(n)]) for n in cols])
        self._col_pairs = list(zip(self._col_index.tolist(), self._col_scale.tolist(),
                                   strict=True))
        #: built from the env's own delay (``from_env`` without ``delay``): a residual
        #: wrapper then keeps each row's delay that of its episode (``set_delays``)
        self.follows_env = follows_env
        self._inputs = InputCost(self.horizon, self.r, self.s)
        self._states = StateCost(self.q, self.terminal)
        self._weighted = self._states.weighted.tolist()  # 0: y, 1: psi
        self._state_scale = np.array([1.0, 1.0, v.max_steer])
        self._steps = self.dt * np.arange(1, self.horizon + 1)
        self._times_key, self._times_value = 0.0, self._steps
        # the bounds on the plan and its changes: the angle's, and the rate's per step
        self._bounds = stacked_bounds(self.horizon, -self.limit, self.limit,
                                      self.max_rate * self.dt, 1)
        # what this controller's QPs and predictions are built from, besides the speed
        self._model_key = (v.cg_to_front, v.cg_to_rear, v.mass, v.yaw_inertia, self.cf,
                           self.cr, self.dt, float(self.horizon), float(q_y), float(q_psi),
                           self.terminal, float(r_steer), float(s_rate))
        self._solvers: list[CondensedMPC] = []
        # [s] per row solve: OSQP's solve call, or the row's share of the batch's
        # unconstrained plans (one product per model speed); the last 100 000
        self.solve_times: deque[float] = deque(maxlen=100_000)
        # rows per status: OSQP's, and "solved" for a plan that met every bound unconstrained
        self.statuses: dict[str, int] = {}

    @property
    def layout(self) -> ObsLayout:
        return self._layout

    @property
    def delay(self) -> float:
        """The delay [s] predicted across for every row (per row: ``set_delays``)."""
        return self._delays.delay

    @classmethod
    def from_env(cls, env: gym.Env | Any, *, delay: float | None = None, **kwargs: Any
                 ) -> MPCSteer:
        check_drives(ObsLayout.from_env(env), env)
        base: Any = env.unwrapped
        return cls(ObsLayout.from_env(env), base.vehicle,
                   delay=loop_delay(env) if delay is None else delay,
                   follows_env=delay is None, **kwargs)

    def set_delays(self, delays: Any) -> None:
        """One delay per batch row [s] for batches of that many rows (None: ``delay``)."""
        self._delays.set(delays)

    def model(self, vx: float) -> tuple[np.ndarray, np.ndarray]:
        """The continuous single-track model at speed vx in the car's frame: state (y,
        psi, vy, r), input the road-wheel angle."""
        v, u = self.vehicle, max(vx, 1.0)
        a, b, m, iz = v.cg_to_front, v.cg_to_rear, v.mass, v.yaw_inertia
        cf, cr = self.cf, self.cr
        am = np.array([
            [0.0, u, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, -(cf + cr) / (m * u), -(a * cf - b * cr) / (m * u) - u],
            [0.0, 0.0, -(a * cf - b * cr) / (iz * u), -(a * a * cf + b * b * cr) / (iz * u)],
        ])
        bm = np.array([[0.0], [0.0], [cf / m], [a * cf / iz]])
        return am, bm

    def structure(self, speed: float) -> CondensedQP:
        """The plan's CondensedQP at the model speed ``speed`` (the observed vx rounded to
        1/1000 m/s: a change far below the linear model's own error, so a sweep's or a
        training's steps reuse a few hundred), shared by the controllers built alike
        (``SHARED_QPS``)."""
        def build() -> CondensedQP:
            am, bm = self.model(speed)
            ad, bd, wd = discretize(am, bm, np.zeros(4), self.dt)
            return CondensedQP(ad, bd, wd, self._states, self._inputs)

        return SHARED_QPS.qp(self._model_key + (speed,), build)

    def prediction(self, speed: float, delay: float) -> np.ndarray:
        """E (4, 3): the state (y, psi, vy, r) after ``delay`` from (0, 0, vy, r) under the
        steer in flight is E [vy, r, steer], the model at ``speed`` discretized over the
        delay (identity on vy and r without delay); shared per (model, speed, delay)."""
        def build() -> np.ndarray:
            if delay > 0.0:
                am, bm = self.model(speed)
                ad, bd, _ = discretize(am, bm, np.zeros(4), delay)
                return np.column_stack([ad[:, 2], ad[:, 3], bd[:, 0]])
            e = np.zeros((4, 3))
            e[2, 0] = e[3, 1] = 1.0
            return e

        return SHARED_QPS.prediction(self._model_key + (speed, delay), build)

    def steer(self, obs: np.ndarray) -> np.ndarray:
        """Road-wheel steer [rad] for an (N, n_obs) batch: the first input of each row's
        plan."""
        rows = len(obs)
        if len(self._solvers) != rows:
            self._solvers = [CondensedMPC(self.horizon) for _ in range(rows)]
        if rows == 0:
            return np.empty(0)
        d = self._delays.for_batch(rows)  # None, one delay, or one per row
        delay = 0.0 if d is None else d
        if rows == 1:  # in Python floats: numpy's per-call overhead dominates one row
            row = obs[0].tolist()
            one = [row[j] * s for j, s in self._col_pairs]
            if not math.isfinite(sum(one)):  # a non-finite entry (or an overflow)
                self._check_finite(np.array([one]))
            return self._steer_row(one, float(delay[0]) if isinstance(delay, np.ndarray)
                                   else delay)
        cols = obs[:, self._col_index] * self._col_scale
        if not math.isfinite(cols.sum()):
            self._check_finite(cols)
        speeds, groups, v = self._vectors(cols, delay)
        qps = {speed: self.structure(speed) for speed in groups}
        t0 = time.perf_counter()
        if len(groups) == 1 and qps[speeds[0]].gain_t is not None:
            u, ok = qps[speeds[0]].plans(v, None, self._bounds[1])
        else:
            u, ok = np.empty((rows, self.horizon)), np.zeros(rows, dtype=bool)
            for speed, idx in groups.items():  # a row whose QP has no gains: OSQP
                if qps[speed].gain_t is not None:
                    u[idx], ok[idx] = qps[speed].plans(v[idx], None, self._bounds[1])
        out = u[:, 0]
        if ok.all():
            self._solved(rows, (time.perf_counter() - t0) / rows)
            return out
        self._solved(int(ok.sum()), (time.perf_counter() - t0) / rows)
        out = out.copy()
        for i in np.flatnonzero(~ok).tolist():
            out[i] = self._osqp_row(i, qps[speeds[i]], v[i])
        return out

    def _steer_row(self, cols: list[float], delay: float) -> np.ndarray:
        """``steer`` for a single row (its columns as floats)."""
        speed, v = self._row_vector(cols, delay)
        qp = self.structure(speed)
        t0 = time.perf_counter()
        if qp.gain_t is not None:
            u, ok = qp.plans(v, None, self._bounds[1])
            if ok[0]:
                self._solved(1, time.perf_counter() - t0)
                return u[0, :1]
        return np.array([self._osqp_row(0, qp, v[0])])

    def _solved(self, rows: int, share: float) -> None:
        """Counts ``rows`` plans that met every bound unconstrained, ``share`` s each."""
        if rows:
            self.statuses["solved"] = self.statuses.get("solved", 0) + rows
            self.solve_times.extend([share] * rows)

    def _osqp_row(self, i: int, qp: CondensedQP, v: np.ndarray) -> float:
        """Row i's first steer [rad] from OSQP (its plan met a bound unconstrained)."""
        res = self._solvers[i].solve_qp(qp, v, v[-1:], *self._bounds)
        self.solve_times.append(res.solve_time_s)
        self.statuses[res.status] = self.statuses.get(res.status, 0) + 1
        return float(res.u[0, 0])

    def _check_finite(self, cols: np.ndarray) -> None:
        """A ConfigError naming the first row's columns that are not finite, if any."""
        finite = np.isfinite(cols)
        if not finite.all():
            i = int(np.flatnonzero(~finite.all(axis=1))[0])
            bad = [n for n, ok in zip(self._col_names, finite[i], strict=True) if not ok]
            raise ConfigError(f"observation row {i} is not finite in {bad}: the MPC "
                              "plans from every one of these columns")

    def _vectors(self, cols: np.ndarray, delay: Any
                 ) -> tuple[list[float], dict[float, Any], np.ndarray]:
        """Each row's model speed, the rows of each speed, and the rows' QP vectors v
        (``CondensedQP``: the reference's y and psi, the state after the delay, the steer
        in flight) from the physical columns ``cols`` (R, PATH_COLUMNS + previews)."""
        rows = len(cols)
        e_y, e_psi, vx = cols[:, 0], cols[:, 1], cols[:, 2]
        state = cols[:, 3:6] * self._state_scale  # vy, r, the steer in flight [rad]
        speeds = [round(x, 3) for x in vx.tolist()]
        first = speeds[0]
        if not isinstance(delay, np.ndarray) and speeds.count(first) == rows:
            groups: dict[float, Any] = {first: slice(None)}  # one model for every row
            z0 = state @ self.prediction(first, delay).T
        else:
            groups = {}
            for i, speed in enumerate(speeds):
                groups.setdefault(speed, []).append(i)
            dl = delay.tolist() if isinstance(delay, np.ndarray) else [delay] * rows
            e = np.stack([self.prediction(sp, x) for sp, x in zip(speeds, dl, strict=True)])
            z0 = (e @ state[:, :, None])[:, :, 0]
        # the plan's steps ahead [m]: (delay + dt k) vx, k = 1..N (standing: all at 0)
        x = np.maximum(vx, 0.0)[:, None] * self._times(delay)
        ref = reference_line(e_y, e_psi, cols[:, 6:], self.distances, x)
        return speeds, groups, np.concatenate([ref[k] for k in self._weighted]
                                              + [z0, state[:, 2:]], axis=1)

    def _row_vector(self, cols: list[float], delay: float) -> tuple[float, np.ndarray]:
        """``_vectors`` for one row (its columns as floats), its scalar arithmetic in
        Python: numpy's per-call overhead is most of a single observation's cost. The
        same formulas; tests/test_mpc.py checks the two agree."""
        e_y, e_psi, vx, vy, r, prev = cols[:6]
        steer = prev * self.vehicle.max_steer
        speed = round(vx, 3)
        sin, cos = math.sin(e_psi), math.cos(e_psi)
        x = max(vx, 0.0) * self._times(delay)
        out = spline_at(np.array([[e_y * cos, *cols[6:], sin]]), (x + e_y * sin) / cos,
                        self._pieces)
        ref = (out[:, 0], np.arctan(out[:, 1] / cos))
        z0 = [a * vy + b * r + c * steer for a, b, c in self.prediction(speed, delay).tolist()]
        return speed, np.concatenate([ref[k] for k in self._weighted] + [z0 + [steer]])[None]

    def _times(self, delay: Any) -> np.ndarray:
        """delay + dt k [s] for k = 1..N: (N,) for one delay (kept), (R, N) per row."""
        if isinstance(delay, np.ndarray):
            return delay[:, None] + self._steps
        if delay != self._times_key:
            self._times_key, self._times_value = delay, delay + self._steps
        return self._times_value

    def solve_time_stats(self) -> dict[str, float]:
        """The QP solve times so far [s]: n, mean, p50, p99, max."""
        t = np.asarray(self.solve_times)
        if t.size == 0:
            return {"n": 0}
        return {"n": int(t.size), "mean_s": float(t.mean()),
                "p50_s": float(np.percentile(t, 50)), "p99_s": float(np.percentile(t, 99)),
                "max_s": float(t.max())}

    def predict(self, observation: np.ndarray, state: Any = None, episode_start: Any = None,
                deterministic: bool = True) -> tuple[np.ndarray, Any]:
        obs, single = as_batch(observation, len(self._layout.names))
        if episode_start is not None:  # a new episode: no warm start from the last one
            mask = np.asarray(episode_start, dtype=bool).reshape(-1)
            if mask.any():
                for i in np.flatnonzero(mask).tolist():
                    if i < len(self._solvers):
                        self._solvers[i].reset()
        steer = self.steer(obs)
        if len(steer) == 1:  # float32 of the clipped float64: the same as clipping the float32
            action = np.array([[min(max(float(steer[0]) / self.vehicle.max_steer, -1.0), 1.0)]],
                              dtype=np.float32)
        else:
            action = np.minimum(np.maximum(steer / self.vehicle.max_steer, -1.0), 1.0)
            action = action.astype(np.float32)[:, None]
        return (action[0] if single else action), state


def check_drives(layout: ObsLayout, env: Any = None) -> None:
    """A ConfigError when ``layout`` lacks a column the MPC plans from: it steers along a
    path (a path env: VDSim-DLC-v0, VDSim-PathFollow-v0, ...), not a car-following or
    dyno env."""
    names = tuple(layout.names)
    missing = [n for n in PATH_COLUMNS if n not in names]
    if not any(re.fullmatch(r"preview_y_(\d+(?:\.\d+)?)m", n) for n in names):
        missing.append("preview_y_*m")
    if missing:
        spec = getattr(env, "spec", None)
        which = spec.id if spec is not None else "this env"
        raise ConfigError(
            f"the MPC steers along a path and does not drive {which}: its observation has "
            f"no {', '.join(missing)} (it has {', '.join(names)}); use it on a path env "
            "(VDSim-DLC-v0, VDSim-PathFollow-v0, ...)")


def mpc_pi(env: gym.Env | Any, *, delay: float | None = None,
           mpc: dict[str, Any] | None = None, pi: dict[str, Any] | None = None
           ) -> LateralLongitudinal:
    """The MPC steering + PI speed baseline for ``env`` (the delay: the env's configured
    loop delay unless given)."""
    return LateralLongitudinal(MPCSteer.from_env(env, delay=delay, **(mpc or {})),
                               PISpeed.from_env(env, **(pi or {})))
