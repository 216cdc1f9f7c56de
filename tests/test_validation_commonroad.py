"""Against the CommonRoad vehicle models (commonroad-vehicle-models, the `validation`
extra; `pytest -m validation`): an independent published implementation."""

from __future__ import annotations

import copy
import math

import pytest

from vdsim_gym import _core
from vdsim_gym.config.vehicle import default_vehicle

pytestmark = pytest.mark.validation


# The generic sedan as CommonRoad's single-track models see a car: tires with cornering
# stiffness proportional to load, no drag or rolling resistance, and none of what those
# models lack (compliance steer, tire lag, a roll-stiffness split of lateral transfer).
SINGLE_TRACK_MAPPING = {"tire": {"pky2": 0.0, "pdy2": 0.0, "relaxation_length": 0.0},
                        "drag_coefficient": 0.0, "rolling_resistance": 0.0,
                        "compliance_steer_front": 0.0, "compliance_steer_rear": 0.0,
                        "roll_stiffness_front": None}


@pytest.fixture(autouse=True)
def _needs_commonroad() -> None:
    pytest.importorskip("vehiclemodels", reason="pip install '.[validation]'")


def test_combined_slip_weighting_matches_commonroad() -> None:
    """Our weighting functions (tire.combined.weighting) against CommonRoad's
    formula_longitudinal_comb / formula_lateral_comb with vehicle 2's coefficients, their
    shifts and kappa-induced side force set to zero (ours has none), each fed the slip
    angle in its own sign convention: the ratio of combined to pure force, G, within 1e-9
    over a grid of slips."""
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
    # their slip angle has the other sign (a left-turning car's front tire: ours > 0,
    # theirs < 0), so Byk's offset rby3 is theirs negated
    assert (w.rby1, w.rby2, w.rby3, w.rcy1, w.rey1) == \
        (cr.r_by1, cr.r_by2, -cr.r_by3, cr.r_cy1, cr.r_ey1)
    w.weighting = True
    fz = 4000.0
    for kappa in (-0.5, -0.1, -0.02, 0.0, 0.03, 0.2):
        for alpha in (-0.3, -0.05, 0.0, 0.01, 0.1, 0.4):
            t = math.tan(alpha)
            fx0 = _core.tire_forces(ours, fz, kappa, 0.0)[0]
            fy0 = _core.tire_forces(ours, fz, 0.0, t)[1]
            fx, fy = _core.tire_forces(ours, fz, kappa, t)
            gx_cr = formula_longitudinal_comb(kappa, -alpha, 1.0, cr)  # their sign
            gy_cr = formula_lateral_comb(kappa, -alpha, 0.0, 1.0, fz, 1.0, cr)
            if fx0 != 0.0:
                assert fx / fx0 == pytest.approx(gx_cr, rel=1e-9, abs=1e-12)
            if fy0 != 0.0:
                assert fy / fy0 == pytest.approx(gy_cr, rel=1e-9, abs=1e-12)


def _rk4_yaw_rates(f, x, t_end: float, dt: float) -> list[float]:
    """Classic RK4 of a CommonRoad right-hand side from x; the yaw rate (state 5) every
    10 ms."""
    every = round(0.01 / dt)
    out = []
    for k in range(round(t_end / dt)):
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        if (k + 1) % every == 0:
            out.append(x[5])
    return out


def _commonroad_st_yaw_rate(vehicle, speed: float, steer: float, t_end: float = 2.0,
                            dt: float = 1e-3) -> list[float]:
    """CommonRoad's single-track model (vehicle_dynamics_st: linear tires, axle stiffness
    mu C_S Fz) from a steer step at t = 0, RK4 at 1 ms; the yaw rate every 10 ms."""
    import numpy as np
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
    from vehiclemodels.vehicle_dynamics_st import vehicle_dynamics_st

    t = vehicle.tire
    p = parameters_vehicle2()
    p.m, p.I_z, p.a, p.b = vehicle.mass, vehicle.yaw_inertia, vehicle.cg_to_front, \
        vehicle.cg_to_rear
    p.h_s = vehicle.cg_height
    p.tire.p_dy1 = 1.0  # mu
    p.tire.p_ky1 = -t.lateral.B * t.lateral.C * t.lateral.D  # C_S = cornering stiffness / Fz

    def f(x: np.ndarray) -> np.ndarray:
        return np.array(vehicle_dynamics_st(list(x), [0.0, 0.0], p))

    return _rk4_yaw_rates(f, np.array([0.0, 0.0, steer, speed, 0.0, 0.0, 0.0]), t_end, dt)


@pytest.mark.parametrize("level", ["L1", "L2"])
@pytest.mark.parametrize("speed", [10.0, 20.0, 30.0])
def test_linear_step_steer_matches_commonroad_single_track(level: str, speed: float) -> None:
    """Our vehicle mapped onto CommonRoad's single-track model (same mass, inertia, axle
    positions; tires with cornering stiffness proportional to load, B C D per newton, as
    theirs, pky2 = pdy2 = 0; no drag or rolling resistance, their speed is constant): a
    0.01 rad steer step, the yaw rate over 2 s within 2 % of its peak (docs/PHYSICS.md;
    measured: within 0.5 %)."""
    import numpy as np

    import vdsim_gym
    from vdsim_gym.config.vehicle import load_vehicle

    v = load_vehicle(SINGLE_TRACK_MAPPING)
    steer = 0.01
    ref = np.array(_commonroad_st_yaw_rate(v, speed, steer))
    plant = vdsim_gym.Plant(level=level, vehicle=v, control_period=0.01, longitudinal="force")
    plant.reset({"vx": speed})
    ours = np.array([plant.step((steer, 0.0))["r"] for _ in range(len(ref))])
    assert np.max(np.abs(ours - ref)) <= 0.02 * np.max(np.abs(ref))


def _commonroad_std(vehicle, speed: float, steer: float, t_end: float = 3.0,
                    dt: float = 5e-4) -> list[float]:
    """CommonRoad's single-track drift model (vehicle_dynamics_std: wheel spins, Pacejka
    tires with combined slip) with our tire mapped onto theirs: their pure-slip Magic
    Formula with D = mu Fz, K = B C D Fz (stiffness proportional to load, as ours with
    pky2 = pdy2 = 0), no shifts; one tire per axle at the axle load (theirs) is two of ours
    at half of it. The steer held from t = 0, no drive; RK4 at 0.5 ms, yaw rate every
    10 ms."""
    import numpy as np
    from vehiclemodels.parameters_vehicle2 import parameters_vehicle2
    from vehiclemodels.vehicle_dynamics_std import vehicle_dynamics_std

    t = vehicle.tire
    p = parameters_vehicle2()
    p.m, p.I_z, p.a, p.b = vehicle.mass, vehicle.yaw_inertia, vehicle.cg_to_front, \
        vehicle.cg_to_rear
    p.h_s, p.R_w, p.I_y_w = vehicle.cg_height, vehicle.wheel_radius, 2 * vehicle.wheel_inertia
    tp = p.tire
    lat, lon = t.lateral, t.longitudinal
    tp.p_cy1, tp.p_dy1, tp.p_ey1 = lat.C, lat.D * t.mu, lat.E
    tp.p_ky1 = -lat.B * lat.C * lat.D * t.mu  # their slip angle has the opposite sign
    tp.p_cx1, tp.p_dx1, tp.p_ex1 = lon.C, lon.D * t.mu, lon.E
    tp.p_kx1 = lon.B * lon.C * lon.D * t.mu
    tp.p_dx3 = tp.p_dy3 = 0.0
    tp.p_hx1 = tp.p_vx1 = tp.p_hy1 = tp.p_hy3 = tp.p_vy1 = tp.p_vy3 = 0.0
    tp.r_hx1 = tp.r_hy1 = tp.r_vy1 = tp.r_vy3 = 0.0
    x = np.array([0.0, 0.0, steer, speed, 0.0, 0.0, 0.0, speed / p.R_w, speed / p.R_w])

    def f(x: np.ndarray) -> np.ndarray:
        return np.array(vehicle_dynamics_std(list(x), [0.0, 0.0], p))

    return _rk4_yaw_rates(f, x, t_end, dt)


@pytest.mark.parametrize("steer,tol", [(0.01, 0.02), (0.03, 0.02), (0.05, 0.05)])
def test_l1_step_steer_matches_commonroad_single_track_drift(steer: float, tol: float) -> None:
    """L1 (its tires mapped as in _commonroad_std) against CommonRoad's single-track drift
    model from 20 m/s, coasting: the yaw rate over 3 s within 2 % of its peak up to
    ay ~4.4 m/s^2 (steer 0.03) and 5 % at ~6.8 m/s^2 (0.05), where the slip definitions
    part (ours tan(alpha), theirs alpha) and our lagged load transfer acts
    (docs/PHYSICS.md; measured 0.1, 0.9 and 3.7 %)."""
    import numpy as np

    import vdsim_gym
    from vdsim_gym.config.vehicle import load_vehicle

    v = load_vehicle(SINGLE_TRACK_MAPPING)
    ref = np.array(_commonroad_std(v, 20.0, steer))
    plant = vdsim_gym.Plant(level="L1", vehicle=v, control_period=0.01, longitudinal="force")
    plant.reset({"vx": 20.0})
    ours = np.array([plant.step((steer, 0.0))["r"] for _ in range(len(ref))])
    assert np.max(np.abs(ours - ref)) <= tol * np.max(np.abs(ref))


# --- vdsim_gym.analysis.validation: CommonRoad's vehicle 2 mapped onto ours, five maneuvers, L1
# against the drift model and L2 against the multi-body model (docs/PHYSICS.md, "Against
# CommonRoad's drift and multi-body models"). The runs are cached per session
# (validation.cached_run), so the tests below share them.


def test_commonroad_mapping_states_every_vehicle_field() -> None:
    """The mapping states every VehicleConfig field (a field added to the sedan's config
    must be decided in the mapping, not leak in from the sedan), with the derived values
    of the module doc."""
    from vdsim_gym.analysis import validation as val
    from vdsim_gym.analysis.validation.commonroad import _field_paths, _flatten
    from vdsim_gym.config.vehicle import VehicleConfig

    p = val.parameters_vehicle2()
    assert _flatten(val.commonroad_mapping(p)) == _field_paths(VehicleConfig)
    mb, std = val.commonroad_vehicle(p), val.commonroad_vehicle(p, model="std")
    assert (mb.mass, mb.yaw_inertia, mb.cg_to_front, mb.cg_to_rear) == (p.m, p.I_z, p.a, p.b)
    assert mb.roll_stiffness_front == pytest.approx(0.581, abs=5e-4)
    assert (mb.wheel_inertia, std.wheel_inertia) == (p.I_y_w, p.I_y_w / 2)
    assert mb.tire.lateral.B * mb.tire.lateral.C * mb.tire.lateral.D == \
        pytest.approx(-p.tire.p_ky1)
    assert (mb.tire.pky2, mb.tire.pdy2, mb.tire.combined.weighting) == (0.0, 0.0, True)
    assert mb.tire.combined.rby3 == -p.tire.r_by3
    assert (mb.drag_coefficient, mb.rolling_resistance, mb.front_brake_share) == \
        (0.0, 0.0, p.T_sb)


def test_mapped_tire_matches_commonroad_tire() -> None:
    """Our tire of commonroad_vehicle() against their Magic Formula as run (the dropped
    terms zeroed), per tire at 1.5, 3 and 6 kN: pure slip as functions of each one's slip
    (ours tan(alpha) and kappa, theirs alpha and s = -kappa; their slip angle has the other
    sign) and the combined-slip weightings at the same angle, within 1e-9."""
    from vehiclemodels.utils import tire_model as tm

    from vdsim_gym.analysis import validation as val

    p = val.commonroad_params_as_run()
    ours = val.commonroad_vehicle().to_core().tire
    for fz in (1500.0, 3000.0, 6000.0):
        for x in (-0.6, -0.15, -0.02, 0.004, 0.05, 0.3, 1.0):
            assert _core.tire_forces(ours, fz, 0.0, x)[1] == \
                pytest.approx(tm.formula_lateral(-x, 0.0, fz, p.tire)[0], rel=1e-9)
            assert _core.tire_forces(ours, fz, x, 0.0)[0] == \
                pytest.approx(tm.formula_longitudinal(-x, 0.0, fz, p.tire), rel=1e-9)
        for kappa in (-0.4, -0.05, 0.01, 0.2):
            for alpha in (-0.3, -0.04, 0.02, 0.1, 0.5):
                t = math.tan(alpha)
                fx, fy = _core.tire_forces(ours, fz, kappa, t)
                gx = tm.formula_longitudinal_comb(-kappa, -alpha, 1.0, p.tire)
                gy = tm.formula_lateral_comb(-kappa, -alpha, 0.0, 1.0, fz, 1.0, p.tire)
                assert fx / _core.tire_forces(ours, fz, kappa, 0.0)[0] == \
                    pytest.approx(gx, rel=1e-9)
                assert fy / _core.tire_forces(ours, fz, 0.0, t)[1] == \
                    pytest.approx(gy, rel=1e-9)


def _within(level: str, maneuver: str, metrics: tuple[str, ...] = ()) -> None:
    """Every metric of ``maneuver`` (or those whose label starts with one of ``metrics``)
    in its band (validation.METRICS); the message lists each row outside."""
    from vdsim_gym.analysis import validation as val

    rows = [r for r in val.comparison([level], [maneuver])
            if not metrics or r.metric.startswith(metrics)]
    assert rows
    bad = [r.cells() for r in rows if not r.within]
    assert not bad, f"outside the tolerance (models, metric, theirs, ours, diff, tol): {bad}"


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_steady_state_circular_understeer_gradient(level: str) -> None:
    """Constant 20 m/s (speed hold on both), steer rising at 0.005 rad/s: K from the slope
    of delta - L r / vx against ay over 0.5-4 m/s^2. Both near neutral (their tire's
    stiffness is proportional to load). Ours - theirs: L1 in [-0.05, +0.02] deg/g
    (measured -0.017: the drift model's longitudinal transfer follows the drive command,
    ours the body's acceleration); L2 in [-0.15, +0.02] (measured -0.072: the multi-body
    model's unsprung masses load the axles while its yaw moment is taken about the sprung
    CG, +0.064 deg/g by the axle balance)."""
    _within(level, "circular", ("understeer",))


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_lateral_limit(level: str) -> None:
    """The largest steady ay of the same run, ours over theirs: L1 in [-1, +4] % (measured
    +2.5 %: the drift model's transfer from the drive command takes front load; with the
    body's acceleration instead it matches within 0.05 %); L2 in [-1, +8] % (measured
    +6.1 %: the multi-body model's body rolls 8 deg near the limit, its lateral transfer
    is 7-14 % above m ay h_s / t, the inner wheels unload earlier and the driven inner
    rear wheel spins up: it spins at 9.15 m/s^2)."""
    _within(level, "circular", ("lateral limit",))


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_step_steer(level: str) -> None:
    """0.025 rad at 0.5 s, 20 m/s, ours - theirs: the steady yaw rate (L1 [-0.5, +1] %,
    L2 [-0.5, +3] %; measured +0.4 % and +2.0 %, the causes of K's), the 90 % response
    time (+-10 ms; measured -4 and -1 ms: our 5 ms semi-implicit steps respond a few
    ms early) and the overshoot (+-0.5 points; both ~0.2 %). Both start settled: no yaw
    before the step."""
    from vdsim_gym.analysis import validation as val

    for side in ("commonroad", "ours"):
        run = val.cached_run(side, level, "step")
        assert abs(run.r[run.t < val.STEP_TIME]).max() < 1e-9
    _within(level, "step")


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_sine_steer(level: str) -> None:
    """1 Hz, 0.03 rad at 20 m/s, the last two cycles, ours - theirs: peak ay (L1
    [-0.5, +2.5] %, L2 [-0.5, +4] %; measured +1.2 % and +2.3 %) and the yaw rate's phase
    lag behind the steer ([-1.5, +0.5] deg; measured -0.6 deg both). With
    integrator="rk4" ours is within 0.1 % and 0.05 deg of the drift model: the rest is our
    default 5 ms stepping (and, for L2, the multi-body model's extra understeer)."""
    _within(level, "sine")


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_straight_braking(level: str) -> None:
    """From 100 km/h with the wheel torque m R_w 7 m/s^2 (their acceleration input -7,
    our force -7 m R_w / R; split T_sb = 0.66 front), to 1 m/s plus 1 / (2 * 7) m, ours
    over theirs in [-0.3, +1] % (measured +0.5 % both: our 5 ms semi-implicit steps brake
    weaker at low speed; with integrator="rk4" within 1 mm)."""
    _within(level, "braking")


def test_validation_cli_prints_the_table_and_writes_the_plot(tmp_path, capsys) -> None:
    """``python -m vdsim_gym.analysis.validation --plot PNG`` (main): the Markdown table of every
    metric and level, exit 0 while all are within tolerance, and the PNG."""
    from vdsim_gym.analysis import validation as val

    png = tmp_path / "img" / "validation.png"
    assert val.main(["--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert out.count("| L1 vs std |") == out.count("| L2 vs mb |") == 8
    assert png.stat().st_size > 10_000
