"""Linear model-predictive path tracking, solved by OSQP (docs/CONTROLLERS.md, "MPC").

``CondensedMPC`` is the generic part: a linear discrete model z+ = A z + B u + w, a
quadratic cost on the states' distance from a reference and on the inputs and their
changes, bounds on the inputs and on their changes, condensed to a QP in the inputs alone.
The parts of that QP the model, the weights and the horizon fix (``CondensedQP``: the
Hessian, the linear term as a map of the initial state, the reference and the last input,
and the gains of the unconstrained minimizer) are built once; a solve is then a
matrix-vector product: the unconstrained minimizer, which is the QP's solution whenever it
meets every bound (the QP is convex), else OSQP (Stellato et al., "OSQP: an operator
splitting solver for quadratic programs", Math. Prog. Comp. 2020; the ``osqp`` package)
on the same QP, its problem set up once per solver and updated after (P when the model
changed, q and the bounds every time), warm-started from its last plan.
``tests/test_mpc.py`` checks it against hand-solved cases and against the QP rebuilt and
solved by OSQP on every call.

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

import functools
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from vdsim_gym._checks import check_integer, check_number, check_seconds, is_real
from vdsim_gym.config.latency import MAX_DELAY_S
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.controllers.base import ObsLayout, as_batch
from vdsim_gym.controllers.composite import LateralLongitudinal
from vdsim_gym.controllers.pi_speed import PISpeed
from vdsim_gym.controllers.prediction import GRAVITY, RowDelays, loop_delay
from vdsim_gym.errors import ConfigError

# The longest plan in steps: the condensed QP is dense, its matrices hold (4 N)^2 doubles
# (N = 500: 8 MB each, N = 20000: 13 GB) and a solve costs ~N^3; 500 steps of the default
# 0.05 s are 25 s of look-ahead, far past the path preview (30 m).
MAX_HORIZON = 500
# The plan's step [s]: below 1 ms it is finer than the control period (10 ms and up) for
# nothing, above 1 s the zero-order hold of one step spans a whole manoeuvre.
DT_BOUNDS = (1e-3, 1.0)
# The observation columns MPCSteer plans from (and the preview_y_*m ones): a path env's.
PATH_COLUMNS = ("e_y", "e_psi", "vx", "vy", "r", "prev_steer")
# The Hessian's reciprocal condition number (1-norm) below which the unconstrained
# minimizer from its inverse is not trusted to OSQP's tolerance: its relative error is about
# 1e-16 / rcond, 1e-8 here against OSQP's 1e-7; such a QP always goes to OSQP.
MIN_RCOND = 1e-8
# The bytes of CondensedQPs the MPC controllers keep (one per model and model speed: 51 kB
# at the default 30 steps, so 661 of them); past it the oldest goes first.
QP_CACHE_BYTES = 32 << 20

OSQP_MISSING = "the MPC baseline needs OSQP: pip install 'vdsim-gym[mpc]' (osqp)"


def _osqp() -> Any:
    try:
        import osqp
        import scipy.sparse
    except ImportError as exc:
        raise ImportError(OSQP_MISSING) from exc
    return osqp, scipy.sparse


# The [13/13] Pade approximant's coefficients and the largest 1-norm it serves to double
# precision without scaling (Higham, "The scaling and squaring method for the matrix
# exponential revisited", SIAM J. Matrix Anal. Appl. 26, 2005, table 2.3).
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
           1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
           33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def expm(a: np.ndarray) -> np.ndarray:
    """The matrix exponential e^a: scaling and squaring with the [13/13] Pade approximant
    (Higham 2005, above), in numpy. scipy.linalg.expm computes the same (tests/test_mpc.py)
    but solves with scipy's threaded LAPACK, which took milliseconds per small matrix with
    the other core busy."""
    norm = float(np.abs(a).sum(axis=0).max())
    squarings = max(0, math.ceil(math.log2(norm / _THETA13))) if norm > _THETA13 else 0
    a = a / 2.0 ** squarings
    b, eye = _PADE13, np.eye(len(a))
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * eye
    e = np.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        e = e @ e
    return e


def discretize(a: np.ndarray, b: np.ndarray, w: np.ndarray, dt: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact zero-order-hold discretization of x' = a x + b u + w over ``dt``: the
    matrix exponential of the augmented matrix [[a, b, w], [0, 0, 0]] (``expm``)."""
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
    status: str  # OSQP's; "solved" also when the unconstrained minimizer met every bound
    iterations: int  # OSQP's; 0: the unconstrained minimizer, no OSQP call
    solve_time_s: float  # this call's solve: OSQP's solve call, or the minimizer's product


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


def check_horizon(horizon: Any) -> int:
    """The plan's length: an integer number of steps in [1, MAX_HORIZON]."""
    return check_integer(horizon, "horizon", minimum=1, maximum=MAX_HORIZON,
                         what="a whole number of steps",
                         note=" (the condensed QP is dense: memory grows as the horizon "
                              "squared and a solve as its cube; lengthen dt for a longer "
                              "look-ahead)")


def weighted_states(q: np.ndarray) -> np.ndarray:
    """The state components the cost weighs (a nonzero entry in their row or column of
    Q): only their columns of the reference enter the QP."""
    nz = q != 0.0
    return np.flatnonzero(nz.any(axis=0) | nz.any(axis=1))


def _powers(a: np.ndarray, count: int) -> np.ndarray:
    """A^1 .. A^count stacked (count, n, n), by doubling: [A^1 .. A^k] @ A^k is
    [A^(k+1) .. A^(2k)]."""
    pw = a[None]
    while len(pw) < count:
        pw = np.concatenate([pw, pw @ pw[-1]])
    return pw[:count]


@functools.lru_cache(maxsize=8)
def _lag_index(horizon: int) -> np.ndarray:
    """(N, N) indices into [0, B, A B, A^2 B, ...]: block (i, j) of the prediction
    matrix (z_{i+1} by u_j) is A^(i-j) B for j <= i, else 0."""
    lag = np.subtract.outer(np.arange(horizon), np.arange(horizon))
    return np.where(lag >= 0, lag + 1, 0)


@functools.lru_cache(maxsize=8)
def _upper_csc(size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The upper triangle of a (size, size) matrix in CSC order (column by column, rows
    ascending): its rows, columns and row-major flat indices."""
    rows, cols = np.triu_indices(size)
    order = np.lexsort((rows, cols))
    rows, cols = rows[order], cols[order]
    return rows, cols, rows * size + cols


def _norm1(a: np.ndarray) -> float:
    """The matrix 1-norm: the largest column sum of magnitudes."""
    return float(np.abs(a).sum(axis=0).max())


class InputCost:
    """The inputs' part of the condensed cost, sum_i u_i' R u_i + (u_i - u_{i-1})' S
    (u_i - u_{i-1}) = u' H u + 2 (F u_prev)' u + const over the N stacked inputs."""

    def __init__(self, horizon: int, r: np.ndarray, s: np.ndarray) -> None:
        self.N, self.m = horizon, r.shape[0]
        nm = horizon * self.m
        d = np.eye(nm) - np.eye(nm, k=-self.m)  # (D u)_i = u_i - u_{i-1}
        dts = d.T @ np.kron(np.eye(horizon), s)
        self.h = np.kron(np.eye(horizon), r) + dts @ d
        self.f_prev = -dts[:, :self.m]  # u_{-1} = u_prev enters (D u)_0 only


class StateCost:
    """The states' part of the cost, sum_i (z_i - ref_i)' Q_i (z_i - ref_i) with Q_N =
    ``terminal`` Q: the components it weighs (``weighted_states``) and Q among them."""

    def __init__(self, q: np.ndarray, terminal: float) -> None:
        self.q, self.terminal = q, float(terminal)
        self.weighted = weighted_states(q)
        self.q_w = q[np.ix_(self.weighted, self.weighted)]


class CondensedQP:
    """The condensed QP's parts that the model (A, B, w), the weights and the horizon fix.

    With v = [the reference's weighted columns (``weighted_states``), each column's N
    steps in turn; z0; u_prev], the cost over the stacked inputs u is u' H u + 2 f' u +
    const with f = F v + f_w (``f_map``, ``f_w``). When H is positive definite (to
    ``MIN_RCOND``) the unconstrained minimizer is u = K v + u_w (K = -H^-1 F, u_w =
    -H^-1 f_w), kept with its changes as ``gain_t`` = [K; D K - E]' and ``offset`` =
    [u_w; D u_w] (None when 0) for ``plans``: (D u)_i = u_i - u_{i-1}, and E takes u_prev
    (v's last m entries) from the first change. Else ``gain_t`` is None. ``p_upper``: the
    upper triangle of P = 2 H in CSC order, OSQP's.
    """

    __slots__ = ("N", "n", "m", "weighted", "f_map", "f_w", "gain_t", "offset", "p_upper",
                 "nbytes")

    def __init__(self, a: np.ndarray, b: np.ndarray, w: np.ndarray, states: StateCost,
                 inputs: InputCost) -> None:
        n, m = b.shape
        N = inputs.N
        nm = N * m
        self.N, self.n, self.m = N, n, m
        self.weighted = ws = states.weighted
        pw = _powers(a, N)  # A^(i+1): z_{i+1}'s part of z0
        ab = np.concatenate([np.zeros((1, len(ws), m)), b[None, ws], pw[:-1, ws] @ b])
        wsum = np.cumsum(np.concatenate([w[None], pw[:-1] @ w]), axis=0)  # sum_k<=i A^k w
        # the prediction's weighted rows (N, nw, N m): z_{i+1}[ws] by the stacked inputs,
        # A^(i-j) B for input j <= i
        g = ab[_lag_index(N)].transpose(0, 2, 1, 3).reshape(N, len(ws), nm)
        qg = np.tensordot(states.q_w, g, axes=(1, 1)).transpose(1, 0, 2)
        qg[-1] *= states.terminal
        gf, qgf = g.reshape(-1, nm), qg.reshape(-1, nm)
        h = gf.T @ qgf + inputs.h
        self.f_map = np.concatenate([-qg.transpose(1, 0, 2).reshape(-1, nm).T,
                                     qgf.T @ pw[:, ws, :].reshape(-1, n), inputs.f_prev],
                                    axis=1)
        self.f_w = qgf.T @ wsum[:, ws].reshape(-1)
        self.p_upper = 2.0 * h.ravel()[_upper_csc(nm)[2]]
        self.gain_t = self.offset = None
        # H is positive semidefinite: invertible means definite. numpy's LAPACK, not
        # scipy's: scipy's threaded triangular solves took milliseconds with a busy core.
        try:
            hinv = np.linalg.inv(h)
        except np.linalg.LinAlgError:
            hinv = None
        if hinv is not None and 1.0 >= MIN_RCOND * _norm1(h) * _norm1(hinv):
            k = -(hinv @ np.concatenate([self.f_map, self.f_w[:, None]], axis=1))
            dk = k.copy()
            dk[m:] -= k[:-m]
            dk[np.arange(m), np.arange(self.f_map.shape[1] - m, self.f_map.shape[1])] -= 1.0
            k = np.concatenate([k, dk])
            self.gain_t = np.ascontiguousarray(k[:, :-1].T)
            self.offset = k[:, -1] if k[:, -1].any() else None
        self.nbytes = sum(x.nbytes for x in (self.f_map, self.f_w, self.p_upper,
                                             self.gain_t, self.offset) if x is not None)

    def vector(self, z0: np.ndarray, ref: np.ndarray, u_prev: np.ndarray) -> np.ndarray:
        """v for one problem: ``ref`` (N, n), ``z0`` (n,), ``u_prev`` (m,)."""
        return np.concatenate([ref[:, self.weighted].T.ravel(), z0, u_prev])

    def plans(self, v: np.ndarray, lo_all: np.ndarray | None, hi_all: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray]:
        """The unconstrained minimizers for rows v (R, len(v)): the plans (R, N m), and
        per row whether the plan meets every bound, lo_all <= [u; its changes, the first
        from u_prev] <= hi_all (``stacked_bounds``; lo_all None: -hi_all); such a plan is
        the QP's solution. Needs ``gain_t``."""
        w = v @ self.gain_t
        if self.offset is not None:
            w += self.offset
        ok = np.abs(w) <= hi_all if lo_all is None else (w >= lo_all) & (w <= hi_all)
        return w[:, :self.N * self.m], ok.all(axis=1)


def stacked_bounds(horizon: int, lo: Any, hi: Any, du: Any, m: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The bounds on [u; its changes] (2 N m each) from the per-input bounds [lo, hi]
    and du on the changes."""
    lo, hi, du = (np.broadcast_to(np.asarray(x, float), (m,)) for x in (lo, hi, du))
    return (np.concatenate([np.tile(lo, horizon), np.tile(-du, horizon)]),
            np.concatenate([np.tile(hi, horizon), np.tile(du, horizon)]))


class CondensedMPC:
    """min over u_0..u_{N-1} of sum_{i=1..N} (z_i - ref_i)' Q_i (z_i - ref_i)
    + sum_i u_i' R u_i + sum_i (u_i - u_{i-1})' S (u_i - u_{i-1}),
    z_{i+1} = A z_i + B u_i + w, u_min <= u_i <= u_max, |u_i - u_{i-1}| <= du_max,
    u_{-1} = ``u_prev``; Q_N = ``terminal`` Q. The unconstrained minimizer when it meets
    every bound, else OSQP: one problem, set up at its first solve and updated after (P
    when the ``CondensedQP`` changed, q and the bounds always), warm-started from its
    last plan."""

    def __init__(self, horizon: int, *, eps: float = 1e-7, max_iter: int = 20000) -> None:
        self.N = check_horizon(horizon)
        self.eps = float(eps)
        self.max_iter = int(max_iter)
        self._prob: Any = None
        self._size = 0  # the OSQP problem's number of inputs
        self._loaded: CondensedQP | None = None  # the QP whose P the OSQP problem holds
        self._key: Any = None
        self._qp: CondensedQP | None = None  # solve's, kept while its inputs are the same
        self.osqp_solves = 0

    def structure(self, a: np.ndarray, b: np.ndarray, w: np.ndarray, q: np.ndarray,
                  r: np.ndarray, s: np.ndarray, terminal: float = 1.0) -> CondensedQP:
        """The CondensedQP of these arrays (the last one again when they are the same)."""
        key = (a.shape, b.shape, a.tobytes(), b.tobytes(), w.tobytes(), q.tobytes(),
               r.tobytes(), s.tobytes(), float(terminal))
        if self._key != key:
            self._qp = CondensedQP(a, b, w, StateCost(q, terminal), InputCost(self.N, r, s))
            self._key = key
        assert self._qp is not None
        return self._qp

    def solve(self, a: Any, b: Any, w: Any, z0: Any, ref: Any, q: Any, r: Any, s: Any,
              u_prev: Any, u_min: Any, u_max: Any, du_max: Any, terminal: float = 1.0
              ) -> QPResult:
        """The plan for one problem (class docstring); ``ref`` is (N, n)."""
        _osqp()
        a, b = np.atleast_2d(np.asarray(a, float)), np.atleast_2d(np.asarray(b, float))
        n, m = b.shape
        u_prev = np.asarray(u_prev, float).reshape(m)
        qp = self.structure(a, b, np.asarray(w, float).reshape(n),
                            np.atleast_2d(np.asarray(q, float)),
                            np.atleast_2d(np.asarray(r, float)),
                            np.atleast_2d(np.asarray(s, float)), terminal)
        v = qp.vector(np.asarray(z0, float).reshape(n),
                      np.asarray(ref, float).reshape(self.N, n), u_prev)
        lo_all, hi_all = stacked_bounds(self.N, u_min, u_max, du_max, m)
        t0 = time.perf_counter()
        if qp.gain_t is not None:
            u, ok = qp.plans(v[None], lo_all, hi_all)
            if ok[0]:
                return QPResult(u.reshape(self.N, m), "solved", 0, time.perf_counter() - t0)
        return self.solve_qp(qp, v, u_prev, lo_all, hi_all)

    def solve_qp(self, qp: CondensedQP, v: np.ndarray, u_prev: np.ndarray,
                 lo_all: np.ndarray, hi_all: np.ndarray) -> QPResult:
        """OSQP's plan for the QP ``qp`` at ``v`` (``CondensedQP``) with last input
        ``u_prev`` and the bounds on [u; its changes] (``stacked_bounds``)."""
        osqp, sparse = _osqp()
        N, m = self.N, qp.m
        nm = N * m
        if N != qp.N:
            raise ConfigError(f"a {qp.N}-step QP given to a {N}-step solver; build the QP "
                              "with the solver's horizon")
        f = qp.f_map @ v + qp.f_w
        lo, hi = lo_all.copy(), hi_all.copy()
        lo[nm:nm + m] += u_prev  # the first change is from u_prev
        hi[nm:nm + m] += u_prev
        if self._prob is None or self._size != nm:
            rows, cols, _ = _upper_csc(nm)
            # every upper entry stored, so later updates keep the sparsity pattern
            pm = sparse.csc_matrix((qp.p_upper, (rows, cols)), shape=(nm, nm))
            am = sparse.csc_matrix(np.vstack([np.eye(nm), np.eye(nm) - np.eye(nm, k=-m)]))
            self._prob = osqp.OSQP()
            self._prob.setup(pm, 2.0 * f, am, lo, hi, verbose=False, eps_abs=self.eps,
                             eps_rel=self.eps, max_iter=self.max_iter, polishing=False,
                             warm_starting=True)
            self._size = nm
        elif self._loaded is not qp:
            self._prob.update(Px=qp.p_upper, q=2.0 * f, l=lo, u=hi)
        else:
            self._prob.update(q=2.0 * f, l=lo, u=hi)
        self._loaded = qp
        t0 = time.perf_counter()
        res = self._prob.solve(raise_error=False)
        elapsed = time.perf_counter() - t0
        self.osqp_solves += 1
        status = str(res.info.status)
        if status not in _USABLE or res.x is None or not np.all(np.isfinite(res.x)):
            raise ConfigError(f"the MPC's QP was not solved ({status}); check the bounds "
                              "(u_min <= u_prev within du_max of a feasible input)")
        return QPResult(np.asarray(res.x).reshape(N, m), status, int(res.info.iter), elapsed)

    def reset(self) -> None:
        """Forget the warm start (the next OSQP solve sets the problem up anew)."""
        self._prob = self._loaded = None

    def __getstate__(self) -> dict[str, Any]:
        # The OSQP workspace is C memory: a copy or pickle sets its problem up anew at
        # its first OSQP solve (a cold start: the same optimum to the solver's tolerance).
        return {**self.__dict__, "_prob": None, "_loaded": None}


@functools.lru_cache(maxsize=16)
def spline_pieces(distances: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference spline (``reference_line``) as fixed linear maps, along the path's
    axis p (the knots at p = 0 and ``distances``: x = x0 + p cos(e_psi) in the car's
    frame). Its slopes dy/dp at the knots solve the spline's tridiagonal system (de Boor,
    "A Practical Guide to Splines", ch. IV: the first slope clamped, no curvature at the
    last knot), so they are linear in g = [the knots' y; the first slope dy/dp]; so is
    each piece's cubic in tau = p - its start. Pieces: before the first knot (straight
    on at the first slope), between each two knots, past the last (straight on at the
    last slope). Returns the knots, the pieces' starts and C (len(g), pieces * 8): g @ C
    is, per piece, (a3, a2, a1, a0) x (y, dy/dp), y = ((a3 tau + a2) tau + a1) tau + a0
    and the same for dy/dp; C takes g with its first and last entries negated
    (``reference_line``'s e_y cos e_psi and sin e_psi)."""
    d = np.concatenate([[0.0], distances])
    n, h = len(d), np.diff(d)
    a, rhs = np.zeros((n, n)), np.zeros((n, n + 1))  # a slopes = rhs g
    a[0, 0], rhs[0, n] = 1.0, 1.0
    for i in range(1, n - 1):  # 3 (h_i (y_i - y_i-1) / h_i-1 + h_i-1 (y_i+1 - y_i) / h_i)
        a[i, i - 1], a[i, i], a[i, i + 1] = h[i], 2.0 * (h[i - 1] + h[i]), h[i - 1]
        rhs[i, i - 1] = -3.0 * h[i] / h[i - 1]
        rhs[i, i] = 3.0 * (h[i] / h[i - 1] - h[i - 1] / h[i])
        rhs[i, i + 1] = 3.0 * h[i - 1] / h[i]
    a[n - 1, n - 2], a[n - 1, n - 1] = 1.0, 2.0  # natural end: y'' = 0
    rhs[n - 1, n - 2], rhs[n - 1, n - 1] = -3.0 / h[-1], 3.0 / h[-1]
    slope = np.linalg.solve(a, rhs)  # (n, n + 1): the knots' slopes from g
    value = np.eye(n, n + 1)  # the knots' y from g
    c = np.zeros((n + 1, 4, 2, n + 1))  # piece, power 3..0, (y, dy/dp), g
    c[0, 3, 0], c[0, 2, 0] = value[0], slope[0]  # before the first knot
    for k in range(n - 1):  # the Hermite cubic between knots k and k + 1
        dy, hk = value[k + 1] - value[k], h[k]
        c[k + 1, 3, 0], c[k + 1, 2, 0] = value[k], slope[k]
        c[k + 1, 1, 0] = (3.0 * dy / hk - 2.0 * slope[k] - slope[k + 1]) / hk
        c[k + 1, 0, 0] = (slope[k] + slope[k + 1] - 2.0 * dy / hk) / (hk * hk)
    c[n, 3, 0], c[n, 2, 0] = value[n - 1], slope[n - 1]  # past the last knot
    c[:, 1:, 1] = c[:, :3, 0] * np.array([3.0, 2.0, 1.0])[:, None]  # d/dtau
    c[..., [0, n]] *= -1.0
    return d, np.concatenate([[0.0], d]), np.ascontiguousarray(c.reshape(-1, n + 1).T)


_CUBIC = np.array([3.0, 2.0, 1.0, 0.0])


def reference_line(e_y: np.ndarray, e_psi: np.ndarray, preview: np.ndarray,
                   distances: tuple[float, ...], x: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The path ahead in the car's frame (x forward, y left), per row: y and heading at
    x (R, M) of the cubic spline through the projection (-e_y sin e_psi, -e_y cos e_psi)
    and the preview points (x0 + s cos e_psi, preview_s) for s in ``distances``, that
    leaves the projection at the path's heading (slope -tan e_psi) and ends without
    curvature, extended straight past its ends (``spline_pieces``, along the path's axis
    p = (x - x0) / cos e_psi). e_y, e_psi (R,), preview (R, len(distances)); the heading
    error within 90 degrees (past it the preview lies behind the car and the line is an
    extrapolation). scipy's CubicSpline with bc_type=((1, -tan e_psi), (2, 0)) gives the
    same (tests/test_mpc.py)."""
    sin, cos = np.sin(e_psi), np.cos(e_psi)
    # the knots' y and the first slope along p (d/dp = cos d/dx: -tan e_psi cos e_psi),
    # the first and the last negated
    g = np.concatenate([(e_y * cos)[:, None], preview, sin[:, None]], axis=1)
    out = _spline_at(g, (x + (e_y * sin)[:, None]) / cos[:, None], spline_pieces(distances))
    return out[..., 0], np.arctan(out[..., 1] / cos[:, None])


def _spline_at(g: np.ndarray, pos: np.ndarray,
               pieces: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """y and dy/dp (R, M, 2) at pos (R, M) along the path's axis of the splines with
    knot data g (R, len(distances) + 2) (``spline_pieces``: ``pieces``); (M, 2) for one
    row's g and pos (M,)."""
    knots, starts, c = pieces
    count = len(starts)
    coef = (g @ c).reshape(len(g) * count, 4, 2)
    piece = knots.searchsorted(pos, side="right")
    powers = (pos - starts.take(piece))[..., None] ** _CUBIC  # tau^3 .. tau^0
    if len(g) > 1:
        piece += count * np.arange(len(g))[:, None]
    return (powers[..., None, :] @ coef.take(piece, axis=0))[..., 0, :]


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
        out = _spline_at(np.array([[e_y * cos, *cols[6:], sin]]), (x + e_y * sin) / cos,
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
