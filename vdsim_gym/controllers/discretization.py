"""Exact zero-order-hold discretization of a linear model, in numpy: ``discretize`` turns
x' = a x + b u + w into the discrete model x+ = A x + B u + w_d over one step, through the
matrix exponential ``expm`` (the MPC's model, ``mpc.MPCSteer``, at its plan's step and
across the loop delay)."""

from __future__ import annotations

import math

import numpy as np

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
