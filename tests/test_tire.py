"""The C++ tire against a slow, obviously-correct Python Magic Formula."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vdsim_gym import _core
from vdsim_gym.config.vehicle import load_vehicle


def tire_params(pdy2: float = -0.1, pky2: float = 1.0, mu: float = 1.0) -> _core.TireParams:
    p = load_vehicle().to_core().tire
    p.pdy2, p.pky2, p.mu = pdy2, pky2, mu
    return p


# ---- reference -------------------------------------------------------------------------

def mf(x: float, B: float, C: float, D: float, E: float) -> float:
    """Pure-slip Magic Formula D sin(C atan(Bx - E(Bx - atan Bx)))."""
    bx = B * x
    return D * math.sin(C * math.atan(bx - E * (bx - math.atan(bx))))


def peak_slip(B: float, C: float, E: float) -> float:
    """Slip x > 0 where the MF curve peaks: C atan(phi) = pi/2, found by bisection."""
    lo, hi = 0.0, 1.0 / B
    while C * math.atan(B * hi - E * (B * hi - math.atan(B * hi))) < math.pi / 2:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        phi = B * mid - E * (B * mid - math.atan(B * mid))
        lo, hi = (mid, hi) if C * math.atan(phi) < math.pi / 2 else (lo, mid)
    return 0.5 * (lo + hi)


def ref_mu(p, fz: float) -> float:
    """Friction falls linearly with load: mu (1 + pdy2 (Fz - Fz0) / Fz0), floor 0.1 mu."""
    return p.mu * max(0.1, 1.0 + p.pdy2 * (fz - p.fz_nominal) / p.fz_nominal)


def ref_cornering_stiffness(p, fz: float) -> float:
    """dFy/dalpha at zero slip [N/rad]: B C D mu Fz0 at Fz0, peaking at pky2 Fz0."""
    lat = p.lateral
    k0 = lat.B * lat.C * lat.D * p.mu * p.fz_nominal
    if p.pky2 <= 0.0:
        return k0 * fz / p.fz_nominal
    return k0 * math.sin(2 * math.atan(fz / (p.pky2 * p.fz_nominal))) / math.sin(
        2 * math.atan(1 / p.pky2))


def ref_tire(p, fz: float, kappa: float, tan_alpha: float) -> tuple[float, float]:
    """Combined slip by normalized slip: s = |(kappa/kappa*, tan_a/tan_a*)|; each pure curve
    is read at s times its own peak slip and the force is split along the slip direction."""
    if fz <= 0.0:
        return 0.0, 0.0
    lon, lat = p.longitudinal, p.lateral
    dx, dy = lon.D * ref_mu(p, fz) * fz, lat.D * ref_mu(p, fz) * fz
    bx = lon.B
    by = ref_cornering_stiffness(p, fz) / (lat.C * dy)
    kx, ky = peak_slip(bx, lon.C, lon.E), peak_slip(by, lat.C, lat.E)
    sx, sy = kappa / kx, tan_alpha / ky
    s = math.hypot(sx, sy)
    if s == 0.0:
        return 0.0, 0.0
    return (mf(s * kx, bx, lon.C, dx, lon.E) * sx / s,
            mf(s * ky, by, lat.C, dy, lat.E) * sy / s)


# ---- tests -----------------------------------------------------------------------------

@pytest.mark.parametrize(("pdy2", "pky2"), [(-0.1, 1.0), (0.0, 0.0), (-0.2, 2.0), (0.0, 0.8)])
def test_tire_matches_python_reference(pdy2: float, pky2: float) -> None:
    p = tire_params(pdy2, pky2)
    loads = (500.0, 2500.0, 4000.0, 6500.0, 9000.0)
    kappas = (-1.0, -0.2, -0.03, -1e-4, 0.0, 1e-4, 0.01, 0.1, 0.5)
    tans = (-1.0, -0.1, -0.01, 0.0, 1e-5, 0.02, 0.2, 0.7)
    for fz, k, ta in itertools.product(loads, kappas, tans):
        fx, fy = _core.tire_forces(p, fz, k, ta)
        rx, ry = ref_tire(p, fz, k, ta)
        scale = fz * 1e-12  # absolute floor for forces that cancel to ~0
        assert fx == pytest.approx(rx, rel=1e-12, abs=scale), (fz, k, ta)
        assert fy == pytest.approx(ry, rel=1e-12, abs=scale), (fz, k, ta)


def test_tire_peak_slip_is_curve_maximum() -> None:
    p = tire_params()
    for curve in (p.lateral, p.longitudinal):
        x_star = _core.mf_peak_u(curve) / curve.B
        grid = [x_star * (0.5 + i / 1000) for i in range(1001)]
        best = max(grid, key=lambda x: mf(x, curve.B, curve.C, 1.0, curve.E))
        assert best == pytest.approx(x_star, rel=2e-3)
        assert mf(x_star, curve.B, curve.C, 1.0, curve.E) == pytest.approx(1.0, rel=1e-12)


def test_tire_linear_range_slope_is_cornering_stiffness() -> None:
    p = tire_params()
    for fz in (2000.0, 4000.0, 6000.0):
        h = 1e-7
        _, fy = _core.tire_forces(p, fz, 0.0, h)
        assert fy / h == pytest.approx(ref_cornering_stiffness(p, fz), rel=1e-6)


def test_tire_zero_or_negative_load_gives_no_force() -> None:
    p = tire_params()
    assert _core.tire_forces(p, 0.0, 0.1, 0.1) == (0.0, 0.0)
    assert _core.tire_forces(p, -100.0, 0.1, 0.1) == (0.0, 0.0)


@settings(max_examples=200, deadline=None)
@given(
    fz=st.floats(50.0, 15000.0),
    kappa=st.floats(-1.0, 1.0),
    tan_alpha=st.floats(-3.0, 3.0),
    pdy2=st.floats(-0.2, 0.0),
    pky2=st.floats(0.8, 2.0),
)
def test_tire_friction_ellipse_never_exceeded(fz, kappa, tan_alpha, pdy2, pky2) -> None:
    p = tire_params(pdy2, pky2)
    fx, fy = _core.tire_forces(p, fz, kappa, tan_alpha)
    dx = p.longitudinal.D * ref_mu(p, fz) * fz
    dy = p.lateral.D * ref_mu(p, fz) * fz
    assert (fx / dx) ** 2 + (fy / dy) ** 2 <= 1.0 + 1e-12
    assert fx * kappa >= 0.0 and fy * tan_alpha >= 0.0  # forces oppose sliding


def _weighted_reference(p, fz: float, kappa: float, tan_alpha: float) -> tuple[float, float]:
    """The weighting-function combined slip written from its formulas (params.hpp,
    docs/PHYSICS.md): each pure-slip force times cos(C atan(B s - E (B s - atan(B s))))
    of the other slip; the pure forces from the core's own ellipse path at one slip."""
    w = p.combined
    fx0 = _core.tire_forces(p, fz, kappa, 0.0)[0]
    fy0 = _core.tire_forces(p, fz, 0.0, tan_alpha)[1]
    alpha = math.atan(tan_alpha)

    def g(b: float, c: float, e: float, s: float) -> float:
        return math.cos(c * math.atan(b * s - e * (b * s - math.atan(b * s))))

    gx = g(w.rbx1 * math.cos(math.atan(w.rbx2 * kappa)), w.rcx1, w.rex1, alpha)
    gy = g(w.rby1 * math.cos(math.atan(w.rby2 * (alpha - w.rby3))), w.rcy1, w.rey1, kappa)
    return fx0 * gx, fy0 * gy


def test_weighting_combined_slip_matches_its_formula_and_pure_slip() -> None:
    from vdsim_gym.config.vehicle import default_vehicle

    p = default_vehicle().to_core().tire
    ellipse = [_core.tire_forces(p, 4000.0, k, t) for k, t in ((0.05, 0.0), (0.0, 0.05))]
    p.combined.weighting = True
    for fz in (1500.0, 4000.0, 7000.0):
        for kappa in (-0.3, -0.05, 0.0, 0.02, 0.1, 0.6):
            for tan_a in (-0.4, -0.03, 0.0, 0.01, 0.08, 0.3):
                got = _core.tire_forces(p, fz, kappa, tan_a)
                ref = _weighted_reference(p, fz, kappa, tan_a)
                assert got == pytest.approx(ref, rel=1e-12, abs=1e-9)
                fast = _core.tire_forces(p, fz, kappa, tan_a, fast=True)
                assert fast == pytest.approx(ref, rel=1e-8, abs=1e-6)
    # pure slip is unchanged (G = 1 at zero of the other slip)
    assert _core.tire_forces(p, 4000.0, 0.05, 0.0) == pytest.approx(ellipse[0], rel=1e-14)
    assert _core.tire_forces(p, 4000.0, 0.0, 0.05) == pytest.approx(ellipse[1], rel=1e-14)
    # braking at slip reduces the side force, and the reverse
    assert abs(_core.tire_forces(p, 4000.0, -0.1, 0.05)[1]) < abs(ellipse[1][1])
