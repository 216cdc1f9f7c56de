"""Against the CommonRoad vehicle models (commonroad-vehicle-models, the `validation`
extra; `pytest -m validation`): an independent published implementation."""

from __future__ import annotations

import copy
import math

import pytest

from vdsim_gym import _core
from vdsim_gym.config import default_vehicle

pytestmark = pytest.mark.validation
vehiclemodels = pytest.importorskip("vehiclemodels")


def test_combined_slip_weighting_matches_commonroad() -> None:
    """Our weighting functions (tire.combined.weighting) against CommonRoad's
    formula_longitudinal_comb / formula_lateral_comb with vehicle 2's coefficients, their
    shifts and kappa-induced side force set to zero (ours has none): the ratio of combined
    to pure force, G, within 1e-9 over a grid of slips."""
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
    from vehiclemodels.utils.tire_model import (
        formula_lateral_comb,
        formula_longitudinal_comb,
    )

    cr = copy.deepcopy(parameters_vehicle2().tire)
    cr.r_hx1 = cr.r_hy1 = 0.0
    cr.r_vy1 = cr.r_vy3 = 0.0
    ours = default_vehicle().to_core().tire
    w = ours.combined
    assert (w.rbx1, w.rbx2, w.rcx1, w.rex1) == (cr.r_bx1, cr.r_bx2, cr.r_cx1, cr.r_ex1)
    assert (w.rby1, w.rby2, w.rby3, w.rcy1, w.rey1) == \
        (cr.r_by1, cr.r_by2, cr.r_by3, cr.r_cy1, cr.r_ey1)
    w.weighting = True
    fz = 4000.0
    for kappa in (-0.5, -0.1, -0.02, 0.0, 0.03, 0.2):
        for alpha in (-0.3, -0.05, 0.0, 0.01, 0.1, 0.4):
            t = math.tan(alpha)
            fx0 = _core.tire_forces(ours, fz, kappa, 0.0)[0]
            fy0 = _core.tire_forces(ours, fz, 0.0, t)[1]
            fx, fy = _core.tire_forces(ours, fz, kappa, t)
            gx_cr = formula_longitudinal_comb(kappa, alpha, 1.0, cr)
            gy_cr = formula_lateral_comb(kappa, alpha, 0.0, 1.0, fz, 1.0, cr)
            if fx0 != 0.0:
                assert fx / fx0 == pytest.approx(gx_cr, rel=1e-9, abs=1e-12)
            if fy0 != 0.0:
                assert fy / fy0 == pytest.approx(gy_cr, rel=1e-9, abs=1e-12)
