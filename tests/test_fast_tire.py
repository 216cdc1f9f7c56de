"""The fast Magic Formula evaluation (integrator="semi_implicit") against libm and numpy
over the whole slip range, with the error bounds stated in tire.hpp, and the reference
integrators untouched by it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vdsim_gym import _core
from vdsim_gym.config.vehicle import default_vehicle

ATAN_BOUND = 5e-11  # [rad], tire.hpp
SIN_BOUND = 4e-15


def _slips() -> np.ndarray:
    """Every scale of B*x the formula sees: 0, tiny, linear range, peak, far past it."""
    mag = np.concatenate([[0.0], np.logspace(-12, 8, 200_001), np.linspace(0.0, 40.0, 400_001)])
    return np.concatenate([mag, -mag])


def test_fast_atan_within_bound_on_the_real_line() -> None:
    x = _slips()
    err = np.abs(_core.fast_atan(x) - np.arctan(x))
    assert err.max() <= ATAN_BOUND
    assert err.max() > 0.0  # it is an approximation (the test would catch libm in disguise)
    assert _core.fast_atan(math.inf) == pytest.approx(math.pi / 2, abs=ATAN_BOUND)
    assert _core.fast_atan(-math.inf) == pytest.approx(-math.pi / 2, abs=ATAN_BOUND)
    assert math.isnan(_core.fast_atan(math.nan))
    assert _core.fast_atan(0.0) == 0.0


def test_fast_sin_within_bound_on_its_range() -> None:
    a = np.linspace(-math.pi, math.pi, 1_000_001)
    assert np.abs(_core.fast_sin_pi(a) - np.sin(a)).max() <= SIN_BOUND


@pytest.mark.parametrize("C,E", [(1.3, -1.0), (1.3, 0.5), (1.65, 0.97), (1.9, -2.0), (2.0, 0.0)])
def test_fast_shape_within_propagated_bound(C: float, E: float) -> None:
    u = _slips()
    exact = np.sin(C * np.arctan(u - E * (u - np.arctan(u))))
    fast = _core.mf_shape(u, C, E, True)
    bound = C * (1.0 + abs(E)) * ATAN_BOUND + SIN_BOUND
    assert np.abs(fast - exact).max() <= bound
    assert np.array_equal(_core.mf_shape(u, C, E, False), _core.mf_shape(u, C, E, False))


def test_fast_tire_forces_match_exact_over_combined_slip() -> None:
    tire = default_vehicle().to_core().tire
    worst = 0.0
    for fz in (500.0, 4000.0, 9000.0):
        for kappa in np.linspace(-1.0, 1.0, 81):
            for tan_a in np.linspace(-1.2, 1.2, 81):
                e = _core.tire_forces(tire, fz, kappa, tan_a)
                f = _core.tire_forces(tire, fz, kappa, tan_a, fast=True)
                worst = max(worst, abs(e[0] - f[0]) / fz, abs(e[1] - f[1]) / fz)
    assert worst > 0.0  # the fast path is in use
    # forces scale with D mu fz (<= ~1.2 fz): the shape bound times that, per newton of load
    assert worst <= 1.2 * 2.0 * 3.0 * ATAN_BOUND


def test_curves_past_the_fast_sine_range_use_libm() -> None:
    tire = default_vehicle().to_core().tire
    tire.lateral.C = 2.5  # |C atan(.)| reaches past pi: the fast path must not be used
    for tan_a in (0.05, 0.3, 2.0, 50.0):
        assert _core.tire_forces(tire, 4000.0, 0.0, tan_a, fast=True) == \
            _core.tire_forces(tire, 4000.0, 0.0, tan_a)


BUILDS = ["baseline"] + (["avx2"] if _core.tire4_build() == "avx2" else [])


@pytest.mark.parametrize("build", BUILDS)
def test_four_tires_at_once_equal_four_scalar_calls_bit_for_bit(build):
    """tire_forces4 (the L2 model's tires evaluated together, tire.hpp) against the scalar
    tire_forces lane by lane: forces and the recorded constants, over loads (unloaded
    included), slips from the linear limit to full slide, and non-finite inputs."""
    from vdsim_gym.config.vehicle import load_vehicle

    vehicle = load_vehicle()
    core = vehicle.to_core()
    front, rear = _core.axle_tire(core, 0), _core.axle_tire(core, 1)
    rng = np.random.default_rng(3)
    n = 4000
    fz = rng.uniform(-500.0, 9000.0, (n, 4))
    fz[::7] = 0.0
    kappa = rng.normal(0.0, 0.2, (n, 4)) * rng.choice([1e-15, 1e-3, 1.0, 10.0], (n, 4))
    tan_a = rng.normal(0.0, 0.1, (n, 4)) * rng.choice([0.0, 1e-14, 1.0, 5.0], (n, 4))
    kappa[5, 1], tan_a[6, 2], fz[7, 3] = np.nan, np.inf, np.nan
    got = _core.tire_forces4(front, rear, fz, kappa, tan_a, build=build)
    want = np.empty_like(got)
    for r in range(n):
        for i in range(4):
            tire = front if i < 2 else rear
            want[:, r, i] = _core.tire_forces_recorded(tire, front, fz[r, i], kappa[r, i],
                                                       tan_a[r, i])
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    assert np.count_nonzero(got[0]) > n  # not all trivially zero
    # Stiffness proportional to load (pky2 = 0): the other branch of the lateral B.
    rear.pky2 = 0.0
    got = _core.tire_forces4(front, rear, fz[:300], kappa[:300], tan_a[:300], build=build)
    for r in range(300):
        for i in (2, 3):
            np.testing.assert_array_equal(
                got[:, r, i], _core.tire_forces_recorded(rear, front, fz[r, i], kappa[r, i],
                                                         tan_a[r, i]))


@pytest.mark.parametrize("build", BUILDS)
def test_four_tires_fx_at_equal_the_scalar_calls_bit_for_bit(build):
    """tire_fx_at4 (the etd2 Jacobian's four tires at once) against tire_fx_at lane by
    lane, from recorded constants over the slip range, zero and non-finite slips."""
    from vdsim_gym.config.vehicle import load_vehicle

    core = load_vehicle().to_core()
    front, rear = _core.axle_tire(core, 0), _core.axle_tire(core, 1)
    rng = np.random.default_rng(4)
    n = 3000
    dx = rng.uniform(0.0, 9000.0, (n, 4))
    dx[::9] = 0.0
    sy = rng.normal(0.0, 0.5, (n, 4)) * rng.choice([0.0, 1e-14, 1.0, 4.0], (n, 4))
    kappa = rng.normal(0.0, 0.2, (n, 4)) * rng.choice([0.0, 1e-15, 1e-3, 1.0, 10.0], (n, 4))
    kappa[3, 0], kappa[4, 3] = np.nan, -np.inf
    got = _core.tire_fx_at4(front, rear, dx, sy, kappa, build=build)
    want = np.array([[_core.tire_fx_at(front if i < 2 else rear, front, dx[r, i], sy[r, i],
                                       1000.0, kappa[r, i], 0.0) for i in range(4)]
                     for r in range(n)])
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))
    assert np.count_nonzero(got) > n


def test_tire4_builds_are_named_and_checked():
    assert _core.tire4_build() in ("avx2", "baseline")
    with pytest.raises(ValueError, match="build must be 'auto', 'baseline' or 'avx2'"):
        _core.tire_forces4(_core.TireParams(), _core.TireParams(), np.zeros((1, 4)),
                           np.zeros((1, 4)), np.zeros((1, 4)), build="sse9")
