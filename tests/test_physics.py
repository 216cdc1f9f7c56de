"""Vehicle models against physics a reader can verify (docs/PHYSICS.md)."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import vdsim_gym
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.eval import accuracy
from vdsim_gym.sim.plant import WHEELS

G = 9.80665
V = load_vehicle()
M, L, A, B = V.mass, V.wheelbase, V.cg_to_front, V.cg_to_rear
M_EFF = M + 4 * V.wheel_inertia / V.wheel_radius**2  # L1: 2 axle wheels of 2 J, same
F_ROLL = V.rolling_resistance * M * G
C_DRAG = 0.5 * V.air_density * V.drag_coefficient * V.frontal_area


def axle_cornering_stiffness(fz_axle: float) -> float:
    """2 B_y(Fz) C_y D_y(Fz) at half the axle load, written from the parameter docs:
    B C D mu Fz0 at Fz0, scaled by sin(2 atan(Fz / (pky2 Fz0))) / sin(2 atan(1 / pky2))."""
    t = V.tire
    fz = 0.5 * fz_axle
    k0 = t.lateral.B * t.lateral.C * t.lateral.D * t.mu * t.fz_nominal
    law = math.sin(2 * math.atan(fz / (t.pky2 * t.fz_nominal)))
    return 2 * k0 * law / math.sin(2 * math.atan(1 / t.pky2))


CF = axle_cornering_stiffness(M * G * B / L)
CR = axle_cornering_stiffness(M * G * A / L)
# understeer gradient [rad / (m/s^2)]: each axle's compliance steer c adds to its
# compliance 1 / C (Gillespie's steering-system term: m_axle c)
K_US = M / L * (B * (1 / CF + V.compliance_steer_front) - A * (1 / CR + V.compliance_steer_rear))


def deg_per_g(k: float) -> float:
    return math.degrees(k) * G


def steady_turn(level: str, delta: float, v: float = 20.0, t_end: float = 4.0,
                vehicle: object = "generic_sedan") -> dict:
    """Hold steer ``delta`` at speed ``v`` (force mode, resistances fed forward plus a
    speed loop) until steady; returns the last observation."""
    p = vdsim_gym.Plant(level=level, control_period=0.01, longitudinal="force",
                        vehicle=vehicle)
    obs = p.reset({"vx": v})
    for _ in range(round(t_end / 0.01)):
        force = F_ROLL + C_DRAG * obs["vx"] ** 2 + 2000.0 * (v - obs["vx"])
        obs = p.step((delta, force))
    return obs


def test_understeer_gradient_from_parameters_in_target_band() -> None:
    # the generic sedan's linear gradient sits in +2 to +3 deg/g (docs/PHYSICS.md)
    assert 2.0 <= deg_per_g(K_US) <= 3.0


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_understeer_gradient_measured_matches_parameters(level: str) -> None:
    # Constant speed, two small steer angles: delta = L r / V + K ay; K is the slope.
    deltas, kin, ays = [0.006, 0.012], [], []
    for d in deltas:
        o = steady_turn(level, d)
        speed = math.hypot(o["vx"], o["vy"])
        kin.append(d - L * o["r"] / speed)
        ays.append(o["r"] * speed)
    k_meas = (kin[1] - kin[0]) / (ays[1] - ays[0])
    assert deg_per_g(k_meas) == pytest.approx(deg_per_g(K_US), rel=0.05)


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_yaw_rate_steady_state_matches_bicycle_formula(level: str) -> None:
    v, delta = 20.0, 0.01
    o = steady_turn(level, delta, v)
    assert o["r"] == pytest.approx(v * delta / (L + K_US * v**2), rel=0.02)


def coast_down_speed(t: float, v0: float) -> float:
    """m_eff dv/dt = -(F0 + c v^2) solved in closed form."""
    f0, c = F_ROLL, C_DRAG
    return math.sqrt(f0 / c) * math.tan(
        math.atan(v0 * math.sqrt(c / f0)) - t * math.sqrt(f0 * c) / M_EFF)


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_coast_down_matches_analytic_solution(level: str) -> None:
    # The tires slip slightly to decelerate the wheels; that slip dissipates ~1e-6 of the
    # road-load power, so 0.5 % bounds it (and the integrator) with a wide margin.
    p = vdsim_gym.Plant(level=level, control_period=0.5)
    p.reset({"vx": 30.0})
    for k in range(1, 61):
        o = p.step((0.0, 0.0))
        assert o["vx"] == pytest.approx(coast_down_speed(0.5 * k, 30.0), rel=5e-3)


def test_l1_l2_agree_on_small_step_steer() -> None:
    traces = {}
    for level in ("L1", "L2"):
        p = vdsim_gym.Plant(level=level, control_period=0.01)
        p.reset({"vx": 20.0})
        traces[level] = np.array([[o["r"], o["ay"]] for o in
                                  (p.step((0.01, 0.0)) for _ in range(200))])
    err = np.max(np.abs(traces["L1"] - traces["L2"]), axis=0)
    assert np.all(err <= 0.03 * np.max(np.abs(traces["L2"]), axis=0))


def test_friction_ellipse_holds_when_braking_in_a_turn() -> None:
    p = vdsim_gym.Plant(level="L2", longitudinal="pedal", control_period=0.01)
    p.reset({"vx": 25.0})
    t = V.tire
    for k in range(300):
        o = p.step((0.08, -0.8 if k >= 100 else 0.0))
        for w in ("FL", "FR", "RL", "RR"):
            fz = o[f"Fz_{w}"]
            mu = t.mu * max(0.1, 1 + t.pdy2 * (fz - t.fz_nominal) / t.fz_nominal)
            use = (o[f"Fx_{w}"] / (t.longitudinal.D * mu * fz)) ** 2 + (
                o[f"Fy_{w}"] / (t.lateral.D * mu * fz)) ** 2
            assert use <= 1.0 + 1e-9, (k, w)


# ---- low speed ---------------------------------------------------------------------------

def finite(o: dict) -> bool:
    return all(math.isfinite(v) for v in o.values())


@pytest.mark.parametrize("level", ["L1", "L2"])
@pytest.mark.parametrize("steer", [0.0, 0.5])
def test_standstill_zero_drive_stays_still(level: str, steer: float) -> None:
    p = vdsim_gym.Plant(level=level, control_period=0.1)
    p.reset()
    for _ in range(100):
        o = p.step((steer, 0.0))
        assert finite(o)
        assert abs(o["X"]) < 1e-9 and abs(o["Y"]) < 1e-9 and abs(o["vx"]) < 1e-9


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_braking_stops_without_reversing(level: str) -> None:
    p = vdsim_gym.Plant(level=level, longitudinal="pedal", control_period=0.01)
    p.reset({"vx": 10.0})
    vx = []
    for _ in range(500):
        o = p.step((0.0, -0.5))
        assert finite(o)
        vx.append(o["vx"])
    assert min(vx) >= -1e-6
    assert np.all(np.diff(vx) <= 0.0)
    assert max(abs(v) for v in vx[-100:]) < 1e-6
    assert all(o[f"omega_{w}"] == 0.0 for w in WHEELS[level])


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_brake_at_standstill_holds(level: str) -> None:
    for mode, lon in (("force", -500.0), ("pedal", -1.0)):
        p = vdsim_gym.Plant(level=level, longitudinal=mode, control_period=0.1)
        p.reset()
        for _ in range(20):
            o = p.step((0.3, lon))
            assert o["X"] == 0.0 and o["vx"] == 0.0


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_full_throttle_full_steer_from_rest_is_finite(level: str) -> None:
    p = vdsim_gym.Plant(level=level, longitudinal="pedal", control_period=0.02)
    p.reset()
    for k in range(300):
        o = p.step((V.max_steer if k < 200 else -V.max_steer, 1.0 if k < 250 else -1.0))
        assert finite(o)
    assert o["vx"] >= -1e-6


# ---- longitudinal modes ------------------------------------------------------------------

def accel_after_slip_builds(level: str, mode: str, lon: float, v0: float) -> tuple[float, dict]:
    """Mean acceleration over 0.1 s, after 0.1 s in which the driven wheels build their
    slip (spinning them up absorbs J d(omega) of momentum, up to ~0.5 kN for 0.05 s)."""
    p = vdsim_gym.Plant(level=level, longitudinal=mode, control_period=0.05)
    p.reset({"vx": v0})
    for _ in range(2):
        o1 = p.step((0.0, lon))
    o_mid = p.step((0.0, lon))
    o2 = p.step((0.0, lon))
    return (o2["vx"] - o1["vx"]) / 0.1, o_mid


def road_load(v: float) -> float:
    return F_ROLL + C_DRAG * v**2


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_force_mode_initial_acceleration(level: str) -> None:
    force = 3000.0
    a, o = accel_after_slip_builds(level, "force", force, 15.0)
    assert a == pytest.approx((force - road_load(o["vx"])) / M_EFF, rel=0.01)


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_pedal_mode_respects_torque_cap(level: str) -> None:
    # At 5 m/s P_max / omega = 150 kW / 15.6 rad/s >> 1500 N m: the torque cap binds.
    a, o = accel_after_slip_builds(level, "pedal", 1.0, 5.0)
    expected = (V.drive_torque_max / V.wheel_radius - road_load(o["vx"])) / M_EFF
    assert a == pytest.approx(expected, rel=0.01)


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_pedal_mode_respects_power_cap(level: str) -> None:
    # At 50 m/s omega ~ 156 rad/s: P_max / omega ~ 960 N m < 1500 N m, so the power cap
    # binds; the cap uses the driven wheels' spin (which includes their drive slip).
    a, o = accel_after_slip_builds(level, "pedal", 1.0, 50.0)
    assert V.front_drive_share in (0.0, 1.0)
    axle = "F" if V.front_drive_share == 1.0 else "R"
    driven = [o[f"omega_{w}"] for w in WHEELS[level] if w.startswith(axle)]
    omega = sum(driven) / len(driven)
    torque = V.drive_power_max / omega
    assert torque < 0.7 * V.drive_torque_max
    expected = (torque / V.wheel_radius - road_load(o["vx"])) / M_EFF
    assert a == pytest.approx(expected, rel=0.01)


# ---- determinism and accuracy -------------------------------------------------------------

@pytest.mark.parametrize("level", ["L1", "L2"])
def test_plant_same_commands_bit_identical(level: str) -> None:
    rng = np.random.default_rng(0)
    commands = np.column_stack([rng.uniform(-0.1, 0.1, 100), rng.uniform(-1, 1, 100)])
    runs = []
    for _ in range(2):
        p = vdsim_gym.Plant(level=level, longitudinal="pedal")
        p.reset({"vx": 12.0})
        runs.append([p.step(c) for c in commands])
    assert runs[0] == runs[1]


@pytest.mark.parametrize("scenario", ["step_steer", "double_lane_change"])
def test_accuracy_gate_default_integrator_and_substep_l2(scenario: str) -> None:
    defaults = inspect.signature(vdsim_gym.Plant).parameters
    integrator, substep = defaults["integrator"].default, defaults["substep_dt"].default
    ref = accuracy.simulate("L2", "rk4", accuracy.REFERENCE_SUBSTEP, scenario)
    trace = accuracy.simulate("L2", integrator, substep, scenario)
    err_ay, err_r = accuracy.relative_errors(trace, ref)
    assert err_ay <= accuracy.GATE and err_r <= accuracy.GATE


@pytest.mark.slow
def test_accuracy_gate_full_table() -> None:
    rows = accuracy.run_gate(with_cost=False)
    failing = [r for r in rows if r.substep <= 5e-4 and not r.passes]
    assert not failing, accuracy.format_table(failing)
    assert accuracy.recommend(rows) is not None


def test_linear_understeer_gradient_of_handling_matches_the_closed_form() -> None:
    from vdsim_gym.analysis.handling import understeer_gradient

    assert understeer_gradient("generic_sedan") == pytest.approx(K_US, rel=1e-9)


@pytest.mark.parametrize("share", [None, 0.6, 0.8])
def test_roll_stiffness_split_steady_turns_match_the_axle_balance(share) -> None:
    """L2 steady turns at 20 m/s against the quasi-static axle balance
    (vdsim_gym.analysis.handling: the lateral transfer m ay h / t split by roll_stiffness_front,
    each axle's slip angle from two tires of the Magic Formula): K = (delta - L r / V) / ay
    within 0.1 deg/g at ay ~1.2 and ~3.3 m/s^2; more front share, more understeer."""
    import dataclasses

    from vdsim_gym.analysis.handling import understeer_gradient

    v = dataclasses.replace(V, roll_stiffness_front=share)
    for delta in (0.01, 0.03):
        o = steady_turn("L2", delta, vehicle=v)
        speed = math.hypot(o["vx"], o["vy"])
        ay = o["r"] * speed
        k_meas = (delta - L * o["r"] / speed) / ay
        assert deg_per_g(k_meas) == pytest.approx(deg_per_g(understeer_gradient(v, ay)),
                                                  abs=0.1)


def test_front_roll_stiffness_share_raises_understeer_and_is_validated() -> None:
    import dataclasses

    from vdsim_gym.analysis.handling import understeer_gradient
    from vdsim_gym.errors import ConfigError

    ks = [understeer_gradient(dataclasses.replace(V, roll_stiffness_front=f), 4.0)
          for f in (0.4, 0.55, 0.7, 0.85)]
    assert all(x < y for x, y in zip(ks, ks[1:], strict=False))
    # unset: the static load share b / L (the model's turn equals stating it, to rounding)
    static = dataclasses.replace(V, roll_stiffness_front=B / L)
    unset = steady_turn("L2", 0.03, vehicle=dataclasses.replace(V, roll_stiffness_front=None))
    stated = steady_turn("L2", 0.03, vehicle=static)
    assert stated["r"] == pytest.approx(unset["r"], rel=1e-9)
    assert stated["Fz_FL"] == pytest.approx(unset["Fz_FL"], rel=1e-9)
    with pytest.raises(ConfigError, match="roll_stiffness_front"):
        load_vehicle({"roll_stiffness_front": 1.2})


@pytest.mark.parametrize("share", [0.6, 0.8])
def test_l1_equivalent_axle_follows_l2_with_a_roll_stiffness_split(share) -> None:
    """With roll_stiffness_front set, L1's axle curve is its two tires at half the axle
    load -+ the axle's share of the lateral transfer: its steady turns then match L2's
    and the axle balance (vdsim_gym.analysis.handling) within 0.1 deg/g up to ~0.5 g, where
    without it L1 would stay near the linear gradient."""
    import dataclasses

    from vdsim_gym.analysis.handling import understeer_gradient

    v = dataclasses.replace(V, roll_stiffness_front=share)
    ks = {}
    for level in ("L1", "L2"):
        o = steady_turn(level, 0.045, vehicle=v)
        speed = math.hypot(o["vx"], o["vy"])
        ks[level] = deg_per_g((0.045 - L * o["r"] / speed) / (o["r"] * speed)), o["r"] * speed
    (k1, ay1), (k2, _) = ks["L1"], ks["L2"]
    assert k1 == pytest.approx(k2, abs=0.1)
    assert k1 == pytest.approx(deg_per_g(understeer_gradient(v, ay1)), abs=0.1)
    assert k1 > deg_per_g(K_US) + 0.2  # the transfer shows


def _diff_turn(c: float, integrator: str = "semi_implicit", steer: float = 0.05) -> dict:
    import dataclasses

    v = dataclasses.replace(V, diff_coupling_rear=c, front_drive_share=0.0)  # rear drive
    p = vdsim_gym.Plant(vehicle=v, control_period=0.01, integrator=integrator)
    o = p.reset({"vx": 15.0})
    for _ in range(400):  # 4 s at a quarter throttle
        o = p.step((steer, 0.25))
    return o


def test_differential_coupling_from_open_to_locked() -> None:
    """A viscous coupling across the rear differential (L2) drives the two rear wheels'
    spins together, open (0) -> limited slip -> locked (1e5 N m s/rad: equal to 0.2 % of
    the open difference), and the locked axle's yaw moment against the turn lowers the
    yaw rate (more understeer); straight ahead it changes nothing (the wheels turn
    alike); the explicit integrators agree where they are stable and refuse a stiffer
    coupling with the fix."""
    runs = [_diff_turn(c) for c in (0.0, 50.0, 200.0, 1e5)]
    spread = [abs(o["omega_RR"] - o["omega_RL"]) for o in runs]
    yaw = [o["r"] for o in runs]
    assert all(a > b for a, b in zip(spread, spread[1:], strict=False))
    assert all(a > b for a, b in zip(yaw, yaw[1:], strict=False))
    assert spread[-1] < 2e-3 * spread[0]  # the residual: the transferred torque / c
    straight = [_diff_turn(c, steer=0.0) for c in (0.0, 1e5)]
    assert straight[1]["vx"] == pytest.approx(straight[0]["vx"], rel=1e-9)
    heun = _diff_turn(200.0, integrator="heun")
    assert heun["r"] == pytest.approx(runs[2]["r"], rel=0.01)
    import dataclasses

    with pytest.raises(ValueError,
                       match=r"too stiff for integrator='heun'.*'etd3' \(the default\)"):
        vdsim_gym.Plant(vehicle=dataclasses.replace(V, diff_coupling_rear=1e5),
                        integrator="heun")


def test_relaxation_length_follows_its_law() -> None:
    """With tire.relaxation_length sigma the slip a tire acts on (the observed alpha) obeys
    d tan(alpha)/dt = (V / sigma) (tan(alpha_kin) - tan(alpha)), V = max(|v_x,wheel|, the
    slip speed floor), tan(alpha_kin) written out here from the front-left hub velocity:
    finite differences of the observed slip against the law (trapezoid), heun on every
    0.5 ms substep, away from the steer's step changes: within 1e-3 of the peak rate."""
    v = load_vehicle({"tire": {"relaxation_length": 0.4}})
    p = vdsim_gym.Plant(vehicle=v, control_period=5e-4, longitudinal="force",
                        integrator="heun")
    p.reset({"vx": 20.0})
    obs = [p.step((0.02 if k < 200 else -0.01, 0.0)) for k in range(600)]
    lag = np.array([math.tan(o["alpha_FL"]) for o in obs])

    def kinematic(o: dict) -> tuple[float, float]:
        d = o["delta_rw"]
        vxh, vyh = o["vx"] - o["r"] * 0.5 * v.track, o["vy"] + o["r"] * v.cg_to_front
        vxw = vxh * math.cos(d) + vyh * math.sin(d)
        vyw = -vxh * math.sin(d) + vyh * math.cos(d)
        return -vyw / max(abs(vxw), 2.5), abs(vxw)  # slip_speed_floor 2.5 m/s

    k = np.array([kinematic(o) for o in obs])
    law = k[:, 1] / 0.4 * (k[:, 0] - lag)
    fd, trap = np.diff(lag) / 5e-4, 0.5 * (law[:-1] + law[1:])
    away = np.ones(len(fd), bool)
    away[198:201] = False  # the steer steps at sample 200
    assert np.max(np.abs(fd - trap)[away]) <= 1e-3 * np.max(np.abs(law))
    assert np.max(np.abs(lag - k[:, 0])) > 1e-3  # it does lag


def test_relaxation_keeps_the_steady_state_and_delays_the_response() -> None:
    """A 0.01 rad steer step at 20 m/s: the same steady yaw rate with and without the
    lag (relaxation changes transients only); the time to 63 % of it grows with sigma,
    by less than sigma / V (both axles lag)."""
    def response(sigma: float) -> tuple[float, float]:
        v = load_vehicle({"tire": {"relaxation_length": sigma}})
        p = vdsim_gym.Plant(vehicle=v, control_period=0.0025, longitudinal="force")
        p.reset({"vx": 20.0})
        r = np.array([p.step((0.01, F_ROLL + C_DRAG * 400.0))["r"] for _ in range(1200)])
        return r[-1], 0.0025 * (1 + int(np.argmax(r >= 0.632 * r[-1])))

    (r0, t0), (r1, t1), (r2, t2) = response(0.0), response(0.3), response(0.6)
    assert r1 == pytest.approx(r0, rel=1e-4) and r2 == pytest.approx(r0, rel=1e-4)
    assert t0 < t1 < t2
    assert t2 - t0 <= 0.6 / 20.0


# ---- compliance steer, measured handling ---------------------------------------------------

def test_compliance_steer_is_the_equivalent_axle_stiffness() -> None:
    """axle_tire divides the lateral B by 1 + c C_axle (C_axle: two tires at static load),
    so 1 / C_eff = 1 / C + c exactly in the linear range; the rear (c = 0) keeps the tire
    as it is; the force peak is unchanged."""
    from vdsim_gym import _core
    from vdsim_gym.analysis.handling import cornering_stiffness

    fz_f = 0.5 * M * G * B / L
    c_axle = 2 * cornering_stiffness(V, fz_f)
    c_eff = 2 * cornering_stiffness(V, fz_f, axle=0)
    assert 1 / c_eff == pytest.approx(1 / c_axle + V.compliance_steer_front, rel=1e-9)
    core = V.to_core()
    rear = _core.axle_tire(core, 1)
    assert rear.lateral.B == core.tire.lateral.B
    front = _core.axle_tire(core, 0)
    peak = [max(_core.tire_forces(t, fz_f, 0.0, x)[1] for x in np.linspace(0, 1.5, 3001))
            for t in (core.tire, front)]
    assert peak[1] == pytest.approx(peak[0], rel=1e-5)


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_compliance_steer_adds_its_understeer_in_steady_turns(level: str) -> None:
    """Doubling the front compliance raises the measured gradient by m b c_f / L (the
    closed form's steering-system term), within 3 %."""
    import dataclasses

    def k_meas(vehicle) -> float:
        kin, ays = [], []
        for d in (0.006, 0.012):
            o = steady_turn(level, d, vehicle=vehicle)
            speed = math.hypot(o["vx"], o["vy"])
            kin.append(d - L * o["r"] / speed)
            ays.append(o["r"] * speed)
        return (kin[1] - kin[0]) / (ays[1] - ays[0])

    more = dataclasses.replace(V, compliance_steer_front=2 * V.compliance_steer_front)
    assert k_meas(more) - k_meas(V) == pytest.approx(M * B / L * V.compliance_steer_front,
                                                     rel=0.03)


def test_compliance_steer_bad_values_are_refused() -> None:
    from vdsim_gym.errors import ConfigError

    with pytest.raises(ConfigError, match="compliance_steer_front.*use a compliance above"):
        load_vehicle({"compliance_steer_front": -5e-5})
    with pytest.raises(ConfigError, match="'compliance_steer_rear' = 0.01 is outside"):
        load_vehicle({"compliance_steer_rear": 0.01})


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_steady_state_ramp_measures_the_axle_balance_gradient(level: str) -> None:
    """The ramp's fitted gradient (ay 0.5-4 m/s^2) lies between the quasi-static axle
    balance's secant K at the band's ends (it grows with ay), and the generic sedan
    understeers at its limit, between 0.7 and 0.9 g."""
    from vdsim_gym.analysis.handling import steady_state_ramp, understeer_gradient

    res = steady_state_ramp(V, level)
    assert understeer_gradient(V, 0.5) * 0.98 <= res.understeer_gradient
    assert res.understeer_gradient <= understeer_gradient(V, 4.0) * 1.15
    assert res.limit == "understeer" and 0.7 * G < res.limit_ay < 0.9 * G


def test_step_steer_metrics_follow_their_definitions() -> None:
    """The reported metrics recomputed from the returned histories (ISO 7401: times from
    the steer's 50 % point); the response reaches the commanded ay within 5 %."""
    from vdsim_gym.analysis.handling import step_steer

    res = step_steer(V, "L2", ay=4.0)
    t50 = 0.05
    steady = res.r[res.t > res.t[-1] - 1.0].mean()
    assert res.steady_r == steady
    first90 = res.t[np.nonzero(res.r >= 0.9 * steady)[0][0]]
    assert res.response_time == pytest.approx(first90 - t50, abs=1e-12)
    assert res.overshoot == pytest.approx(res.r.max() / steady - 1.0, rel=1e-12)
    assert res.steady_ay == pytest.approx(4.0, rel=0.05)
    assert 0.05 < res.response_time < res.peak_response_time < 1.0


@pytest.mark.parametrize("level", ["L1", "L2"])
def test_relaxation_lag_fades_out_below_the_slip_speed_floor(level: str) -> None:
    """A stopping car with a saturated lagged slip is not pushed backwards by it: full
    throttle at full lock, then full brake; vx never goes below zero (docs/PHYSICS.md)."""
    p = vdsim_gym.Plant(level=level, longitudinal="pedal", control_period=0.02)
    p.reset()
    vx = []
    for k in range(300):
        o = p.step((V.max_steer if k < 200 else -V.max_steer, 1.0 if k < 250 else -1.0))
        vx.append(o["vx"])
    assert min(vx) >= -1e-9
