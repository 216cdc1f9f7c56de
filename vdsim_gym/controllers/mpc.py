"""Linear model-predictive path tracking, solved by OSQP (docs/CONTROLLERS.md, "MPC").

``CondensedMPC`` is the generic part: a linear discrete model z+ = A z + B u + w, a
quadratic cost on the states' distance from a reference and on the inputs and their
changes, bounds on the inputs and on their changes, condensed to a QP in the inputs alone
and solved by OSQP (Stellato et al., "OSQP: an operator splitting solver for quadratic
programs", Math. Prog. Comp. 2020; the ``osqp`` package). ``tests/test_mpc.py`` checks it
against hand-solved cases.

``MPCSteer`` is the path tracker on a path env's observation: the linear single-track
model (each axle's cornering stiffness with compliance steer, the speed held) in the
frame of the car at the observation, the reference line from the observation's preview
points (the path's lateral offsets 0, 5, 10, 20 and 30 m ahead), the loop delay handled
by a prediction step (the state is first carried across the delay under the steer in
flight, ``prev_steer``), and the road-wheel angle and its rate bounded. The first input
of the plan is the command. ``mpc_pi(env)`` pairs it with the PI speed loop.

The optional ``mpc`` extra installs OSQP (``pip install 'vdsim-gym[mpc]'``); it is
imported when the first controller is built.
"""

from __future__ import annotations

import math
import re
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_integer, check_number, check_seconds, is_real
from vdsim_gym.controllers.base import ObsLayout, as_batch
from vdsim_gym.controllers.composite import LateralLongitudinal
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.prediction import GRAVITY, RowDelays, loop_delay
from vdsim_gym.errors import ConfigError
from vdsim_gym.sim.config import load_vehicle
from vdsim_gym.sim.latency import MAX_DELAY_S

# The longest plan in steps: the condensed QP is dense, its matrices hold (4 N)^2 doubles
# (N = 500: 8 MB each, N = 20000: 13 GB) and a solve costs ~N^3; 500 steps of the default
# 0.05 s are 25 s of look-ahead, far past the path preview (30 m).
MAX_HORIZON = 500
# The plan's step [s]: below 1 ms it is finer than the control period (10 ms and up) for
# nothing, above 1 s the zero-order hold of one step spans a whole manoeuvre.
DT_BOUNDS = (1e-3, 1.0)
# The observation columns MPCSteer plans from (and the preview_y_*m ones): a path env's.
PATH_COLUMNS = ("e_y", "e_psi", "vx", "vy", "r", "prev_steer")

OSQP_MISSING = "the MPC baseline needs OSQP: pip install 'vdsim-gym[mpc]' (osqp)"


def _osqp() -> Any:
    try:
        import osqp
        import scipy.sparse
    except ImportError as exc:
        raise ImportError(OSQP_MISSING) from exc
    return osqp, scipy.sparse


def discretize(a: np.ndarray, b: np.ndarray, w: np.ndarray, dt: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact zero-order-hold discretization of x' = a x + b u + w over ``dt``: the
    matrix exponential of the augmented matrix [[a, b, w], [0, 0, 0]] (scipy's expm)."""
    from scipy.linalg import expm

    n, m = b.shape
    big = np.zeros((n + m + 1, n + m + 1))
    big[:n, :n], big[:n, n:n + m], big[:n, n + m] = a, b, w
    e = expm(big * dt)
    return e[:n, :n], e[:n, n:n + m], e[:n, n + m]


# OSQP's statuses whose x is a plan: solved, or stopped by the iteration limit (the last
# iterate, feasible to the tolerances' scale; counted in MPCSteer.statuses).
_USABLE = ("solved", "solved inaccurate", "maximum iterations reached")


@dataclass
class QPResult:
    u: np.ndarray  # (N, m) the input plan
    status: str
    iterations: int
    solve_time_s: float  # OSQP's own setup + solve time of this call


class CondensedMPC:
    """min over u_0..u_{N-1} of sum_{i=1..N} (z_i - ref_i)' Q_i (z_i - ref_i)
    + sum_i u_i' R u_i + sum_i (u_i - u_{i-1})' S (u_i - u_{i-1}),
    z_{i+1} = A z_i + B u_i + w, u_min <= u_i <= u_max, |u_i - u_{i-1}| <= du_max,
    u_{-1} = ``u_prev``; Q_N = ``terminal`` Q. One OSQP problem, set up at the first
    solve and updated (P, q, bounds) after, warm-started from the last plan."""

    def __init__(self, horizon: int, *, eps: float = 1e-7, max_iter: int = 20000) -> None:
        self.N = check_horizon(horizon)
        self.eps = float(eps)
        self.max_iter = int(max_iter)
        self._prob: Any = None
        self._shape: tuple[int, int] | None = None
        self._triu: tuple[np.ndarray, np.ndarray] | None = None
        self._const_key: Any = None
        self._const: Any = None

    def matrices(self, a: np.ndarray, b: np.ndarray, w: np.ndarray, z0: np.ndarray,
                 ref: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray,
                 u_prev: np.ndarray, terminal: float = 1.0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The condensed QP: (H, f, D) with cost u' H u + 2 f' u + const over the
        stacked inputs, and D the difference operator (D u)_i = u_i - u_{i-1}."""
        n, m = b.shape
        N = self.N
        ab = np.empty((N, n, m))  # A^k B
        ab[0] = b
        for k in range(1, N):
            ab[k] = a @ ab[k - 1]
        lag = np.subtract.outer(np.arange(N), np.arange(N))  # i - j
        blocks = np.where((lag >= 0)[:, :, None, None], ab[np.maximum(lag, 0)], 0.0)
        gamma = blocks.transpose(0, 2, 1, 3).reshape(N * n, N * m)  # z_{i+1} by u_j
        free = np.empty((N, n))  # z_{i+1} with every input 0: A^{i+1} z0 + sum A^k w
        z = np.asarray(z0, dtype=float)
        for i in range(N):
            z = a @ z + w
            free[i] = z
        key = (N, n, m, q.tobytes(), r.tobytes(), s.tobytes(), float(terminal))
        if self._const_key != key:  # the weights' parts of the QP, kept between solves
            qbar = np.kron(np.eye(N), q)
            qbar[(N - 1) * n:, (N - 1) * n:] *= terminal
            d = np.eye(N * m) - np.eye(N * m, k=-m)
            sbar = np.kron(np.eye(N), s)
            self._const = (qbar, d, np.kron(np.eye(N), r) + d.T @ sbar @ d, d.T @ sbar)
            self._const_key = key
        qbar, d, h_inputs, dts = self._const
        gq = gamma.T @ qbar
        h = gq @ gamma + h_inputs
        prev = np.zeros(N * m)
        prev[:m] = u_prev
        f = gq @ (free.reshape(-1) - np.asarray(ref, dtype=float).reshape(-1)) - dts @ prev
        return h, f, d

    def solve(self, a: Any, b: Any, w: Any, z0: Any, ref: Any, q: Any, r: Any, s: Any,
              u_prev: Any, u_min: Any, u_max: Any, du_max: Any, terminal: float = 1.0
              ) -> QPResult:
        """The plan for one problem (module docstring); ``ref`` is (N, n)."""
        osqp, sparse = _osqp()
        a, b = np.atleast_2d(np.asarray(a, float)), np.atleast_2d(np.asarray(b, float))
        n, m = b.shape
        u_prev = np.asarray(u_prev, float).reshape(m)
        h, f, d = self.matrices(a, b, np.asarray(w, float).reshape(n),
                                np.asarray(z0, float).reshape(n), ref,
                                np.atleast_2d(np.asarray(q, float)),
                                np.atleast_2d(np.asarray(r, float)),
                                np.atleast_2d(np.asarray(s, float)), u_prev, terminal)
        N = self.N
        lo_u = np.tile(np.broadcast_to(np.asarray(u_min, float), (m,)), N)
        hi_u = np.tile(np.broadcast_to(np.asarray(u_max, float), (m,)), N)
        du = np.tile(np.broadcast_to(np.asarray(du_max, float), (m,)), N)
        shift = np.zeros(N * m)
        shift[:m] = u_prev
        lo = np.concatenate([lo_u, shift - du])
        hi = np.concatenate([hi_u, shift + du])
        p = 2.0 * h
        if self._prob is None or self._shape != (n, m):
            self._triu = np.triu_indices(N * m)
            # every upper entry stored, so later updates keep the sparsity pattern
            pm = sparse.csc_matrix((p[self._triu], self._triu), shape=p.shape)
            am = sparse.csc_matrix(np.vstack([np.eye(N * m), d]))
            self._prob = osqp.OSQP()
            self._prob.setup(pm, 2.0 * f, am, lo, hi, verbose=False, eps_abs=self.eps,
                             eps_rel=self.eps, max_iter=self.max_iter, polishing=False,
                             warm_starting=True)
            self._shape = (n, m)
            self._order = _csc_order(self._triu)
        else:
            self._prob.update(Px=p[self._triu][self._order], q=2.0 * f, l=lo, u=hi)
        t0 = time.perf_counter()
        res = self._prob.solve(raise_error=False)
        elapsed = time.perf_counter() - t0
        status = str(res.info.status)
        if status not in _USABLE or res.x is None or not np.all(np.isfinite(res.x)):
            raise ConfigError(f"the MPC's QP was not solved ({status}); check the bounds "
                              "(u_min <= u_prev within du_max of a feasible input)")
        return QPResult(np.asarray(res.x).reshape(N, m), status, int(res.info.iter), elapsed)

    def reset(self) -> None:
        """Forget the warm start (the next solve sets the problem up anew)."""
        self._prob = None

    def __getstate__(self) -> dict[str, Any]:
        # The OSQP workspace is C memory: a copy or pickle sets its problem up anew at
        # its first solve (a cold start: the same optimum to the solver's tolerance).
        return {**self.__dict__, "_prob": None, "_shape": None}


def check_horizon(horizon: Any) -> int:
    """The plan's length: an integer number of steps in [1, MAX_HORIZON]."""
    return check_integer(horizon, "horizon", minimum=1, maximum=MAX_HORIZON,
                         what="a whole number of steps",
                         note=" (the condensed QP is dense: memory grows as the horizon "
                              "squared and a solve as its cube; lengthen dt for a longer "
                              "look-ahead)")


def _csc_order(triu: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The permutation from the row-major upper-triangle entries to CSC's column order."""
    rows, cols = triu
    return np.lexsort((rows, cols))


def reference_points(obs_cols: dict[str, float], distances: tuple[float, ...]
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The path ahead in the car's frame (x forward, y left) for one row: the projection
    (-e_y sin e_psi, -e_y cos e_psi) and the preview points (x0 + s cos e_psi, y_s)."""
    e_y, e_psi = obs_cols["e_y"], obs_cols["e_psi"]
    x0, y0 = -e_y * math.sin(e_psi), -e_y * math.cos(e_psi)
    xs = [x0] + [x0 + s * math.cos(e_psi) for s in distances]
    ys = [y0] + [obs_cols[f"preview_{k}"] for k in range(len(distances))]
    return np.array(xs), np.array(ys)


def spline_slopes(xs: np.ndarray, ys: np.ndarray, slope0: float) -> np.ndarray:
    """The slopes at the knots of the cubic spline through (xs, ys) with the first slope
    ``slope0`` (clamped) and no curvature at the last knot (natural): the spline's
    tridiagonal system in the knots' slopes (de Boor, "A Practical Guide to Splines",
    ch. IV), solved directly; scipy's CubicSpline with bc_type=((1, slope0), (2, 0))
    gives the same (tests/test_mpc.py)."""
    n = len(xs)
    h = np.diff(xs)
    delta = np.diff(ys) / h
    a = np.zeros((n, n))
    rhs = np.zeros(n)
    a[0, 0], rhs[0] = 1.0, slope0
    for i in range(1, n - 1):
        a[i, i - 1], a[i, i], a[i, i + 1] = h[i], 2.0 * (h[i - 1] + h[i]), h[i - 1]
        rhs[i] = 3.0 * (h[i] * delta[i - 1] + h[i - 1] * delta[i])
    a[n - 1, n - 2], a[n - 1, n - 1] = 1.0, 2.0  # natural end: y'' = 0
    rhs[n - 1] = 3.0 * delta[-1]
    return np.linalg.solve(a, rhs)


def _interp_line(x: np.ndarray, xs: np.ndarray, ys: np.ndarray, slope0: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """y and heading at x of the cubic spline through (xs, ys) that leaves the first
    point at ``slope0`` (the path's heading there) and ends without curvature, extended
    straight past its last point (cubic Hermite pieces with ``spline_slopes``)."""
    m = spline_slopes(xs, ys, slope0)
    inside = np.clip(x, xs[0], xs[-1])
    seg = np.clip(np.searchsorted(xs, inside) - 1, 0, len(xs) - 2)
    h = xs[seg + 1] - xs[seg]
    t = (inside - xs[seg]) / h
    y0, y1, m0, m1 = ys[seg], ys[seg + 1], m[seg], m[seg + 1]
    t2, t3 = t * t, t * t * t
    y = (2 * t3 - 3 * t2 + 1) * y0 + (t3 - 2 * t2 + t) * h * m0 \
        + (-2 * t3 + 3 * t2) * y1 + (t3 - t2) * h * m1
    slope = ((6 * t2 - 6 * t) * y0 + (-6 * t2 + 6 * t) * y1) / h \
        + (3 * t2 - 4 * t + 1) * m0 + (3 * t2 - 2 * t) * m1
    y = y + slope * (x - inside)  # straight on past the preview
    return y, np.arctan(slope)


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

        _osqp()  # fail now, naming the extra
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
        self._cols = {n: (layout.index(n), float(layout.scale[layout.index(n)]))
                      for n in ("e_y", "e_psi", "vx", "vy", "r", "prev_steer")}
        for k, (_, n) in enumerate(preview):
            self._cols[f"preview_{k}"] = (layout.index(n), float(layout.scale[layout.index(n)]))
        #: built from the env's own delay (``from_env`` without ``delay``): a residual
        #: wrapper then keeps each row's delay that of its episode (``set_delays``)
        self.follows_env = follows_env
        self._cache: dict[tuple[float, float], Any] = {}
        self._solvers: list[CondensedMPC] = []
        # [s] per row solve (OSQP's solve call), the last 100 000
        self.solve_times: deque[float] = deque(maxlen=100_000)
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

    def _discrete(self, vx: float, dt: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The model at vx discretized over dt, kept per (vx to the 1/1000 m/s, dt): the
        model's speed is vx rounded so (a change far below the linear model's own
        error), and a sweep's or training's steps reuse a few hundred exponentials."""
        key = (round(vx, 3), dt)
        hit = self._cache.get(key)
        if hit is None:
            am, bm = self.model(key[0])
            hit = discretize(am, bm, np.zeros(4), dt)
            if len(self._cache) >= 4096:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def plan(self, row: dict[str, float], solver: CondensedMPC,
             delay: float | None = None) -> QPResult:
        """The steer plan [rad] for one observation (physical columns); ``delay``
        overrides the controller's."""
        delay = self.delay if delay is None else delay
        vx = row["vx"]
        delta_prev = row["prev_steer"] * self.vehicle.max_steer
        z = np.array([0.0, 0.0, row["vy"], row["r"]])
        x_start = 0.0
        if delay > 0.0:  # across the delay the steer in flight holds
            ad, bd, wd = self._discrete(vx, delay)
            z = ad @ z + bd[:, 0] * delta_prev + wd
            x_start = max(vx, 0.0) * delay
        ad, bd, wd = self._discrete(vx, self.dt)
        xs, ys = reference_points(row, self.distances)
        x = x_start + max(vx, 0.0) * self.dt * np.arange(1, self.horizon + 1)
        y_ref, psi_ref = _interp_line(x, xs, ys, -math.tan(row["e_psi"]))
        ref = np.zeros((self.horizon, 4))
        ref[:, 0], ref[:, 1] = y_ref, psi_ref
        return solver.solve(ad, bd, wd, z, ref, self.q, self.r, self.s, [delta_prev],
                            -self.limit, self.limit, self.max_rate * self.dt, self.terminal)

    def steer(self, obs: np.ndarray) -> np.ndarray:
        """Road-wheel steer [rad] for an (N, n_obs) batch; one solve per row."""
        if len(self._solvers) != len(obs):
            self._solvers = [CondensedMPC(self.horizon) for _ in range(len(obs))]
        out = np.empty(len(obs))
        d = self._delays.for_batch(len(obs))  # None, one delay, or one per row
        for i, o in enumerate(obs):
            row = {n: float(o[j]) * s for n, (j, s) in self._cols.items()}
            bad = [n for n, v in row.items() if not math.isfinite(v)]
            if bad:
                raise ConfigError(f"observation row {i} is not finite in {bad}: the MPC "
                                  "plans from every one of these columns")
            delay = (0.0 if d is None else float(d[i]) if isinstance(d, np.ndarray)
                     else float(d))
            res = self.plan(row, self._solvers[i], delay)
            out[i] = res.u[0, 0]
            self.solve_times.append(res.solve_time_s)
            self.statuses[res.status] = self.statuses.get(res.status, 0) + 1
        return out

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
            for i in np.flatnonzero(mask).tolist():
                if i < len(self._solvers):
                    self._solvers[i].reset()
        action = (self.steer(obs) / self.vehicle.max_steer).astype(np.float32)[:, None]
        action = np.clip(action, -1.0, 1.0)
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
