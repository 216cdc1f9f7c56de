"""The linear MPC's quadratic program, condensed to the inputs and solved by OSQP
(docs/CONTROLLERS.md, "MPC").

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

The optional ``mpc`` extra installs OSQP (``pip install 'vdsim-gym[mpc]'``); ``load_osqp``
imports it.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym._checks import check_integer
from vdsim_gym.errors import ConfigError

# The longest plan in steps: the condensed QP is dense, its matrices hold (4 N)^2 doubles
# (N = 500: 8 MB each, N = 20000: 13 GB) and a solve costs ~N^3; 500 steps of the default
# 0.05 s are 25 s of look-ahead, far past the path preview (30 m).
MAX_HORIZON = 500
# The Hessian's reciprocal condition number (1-norm) below which the unconstrained
# minimizer from its inverse is not trusted to OSQP's tolerance: its relative error is about
# 1e-16 / rcond, 1e-8 here against OSQP's 1e-7; such a QP always goes to OSQP.
MIN_RCOND = 1e-8

OSQP_MISSING = "the MPC baseline needs OSQP: pip install 'vdsim-gym[mpc]' (osqp)"


def load_osqp() -> Any:
    """The osqp module and scipy.sparse (an ImportError naming the extra without them)."""
    try:
        import osqp
        import scipy.sparse
    except ImportError as exc:
        raise ImportError(OSQP_MISSING) from exc
    return osqp, scipy.sparse


# OSQP's statuses whose x is a plan: solved, or stopped by the iteration limit (the last
# iterate, feasible to the tolerances' scale; counted in MPCSteer.statuses).
_USABLE = ("solved", "solved inaccurate", "maximum iterations reached")


@dataclass
class QPResult:
    u: np.ndarray  # (N, m) the input plan
    status: str  # OSQP's; "solved" also when the unconstrained minimizer met every bound
    iterations: int  # OSQP's; 0: the unconstrained minimizer, no OSQP call
    solve_time_s: float  # this call's solve: OSQP's solve call, or the minimizer's product


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
        load_osqp()
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
        osqp, sparse = load_osqp()
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
