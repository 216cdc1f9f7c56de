"""Fits the polynomials of the fast Magic Formula evaluation (csrc/vdsim/tire.hpp:
fast_atan, fast_sin_pi) and prints their coefficients and measured worst errors.

    python benchmarks/fit_fast_math.py

Chebyshev least-squares fits on Chebyshev nodes (close to minimax): atan(x) / x as a
polynomial of degree 11 in z = x^2 on [0, 1], cos(b) as a polynomial of degree 7 in
w = b^2 on [0, (pi/2)^2]. The errors are measured on a dense grid in double precision,
evaluated the way the C++ code does (Horner here, Estrin there: both within 1e-16).
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import Polynomial
from numpy.polynomial import chebyshev as cheb

NODES = 4001


def _fit(f, hi: float, deg: int) -> np.ndarray:
    """Monomial coefficients of the degree-``deg`` Chebyshev fit of f on [0, hi]."""
    u = np.cos(np.linspace(0.0, np.pi, NODES)) * 0.5 + 0.5
    c = cheb.chebfit(2.0 * u - 1.0, f(u * hi), deg)
    return Polynomial(cheb.cheb2poly(c))(Polynomial([-1.0, 2.0 / hi])).coef


def atan_coefficients() -> np.ndarray:
    return _fit(lambda z: np.where(z > 0, np.arctan(np.sqrt(z)) / np.sqrt(np.maximum(z, 1e-300)),
                                   1.0), 1.0, 11)


def cos_coefficients() -> np.ndarray:
    return _fit(lambda w: np.cos(np.sqrt(w)), (np.pi / 2) ** 2, 7)


def main() -> None:
    ca, cc = atan_coefficients(), cos_coefficients()
    x = np.linspace(0.0, 1.0, 2_000_001)
    err_atan = np.max(np.abs(x * np.polynomial.polynomial.polyval(x * x, ca) - np.arctan(x)))
    b = np.linspace(-np.pi / 2, np.pi / 2, 2_000_001)
    err_cos = np.max(np.abs(np.polynomial.polynomial.polyval(b * b, cc) - np.cos(b)))
    print("fast_atan coefficients:", ", ".join(repr(float(v)) for v in ca))
    print(f"  worst |error| on [0, 1] (and so on the real line): {err_atan:.2e} rad")
    print("fast_sin_pi coefficients:", ", ".join(repr(float(v)) for v in cc))
    print(f"  worst |error| on [-pi/2, pi/2]: {err_cos:.2e}")


if __name__ == "__main__":
    main()
