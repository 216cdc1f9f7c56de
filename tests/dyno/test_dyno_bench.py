"""The chassis-dyno bench against the reference's facts (../shared/reference/
dyno_bench.md), analytic road-load solutions and a slow Python reference of its law."""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np
import pytest
import yaml

from vdsim_gym import _core
from vdsim_gym._data import vehicles_dir
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.dyno import DynoBench, RobotDriver, default_dyno, load_dyno
from vdsim_gym.errors import ConfigError


def reference_step(p, s, throttle, brake, dt):
    """The bench law written plainly (dyno_bench.md): s = [v, Tf, Tf', Tr, Tr']. The
    "end" rule is the published one (Euler on v with the updated torque); "mean" takes the
    demand at a midpoint speed predicted from the torque in force and moves v by the
    torque's integral over the substep (the RK4 stages' quadrature of x) with the road
    load at the midpoint speed of a half step."""
    n = max(1, math.ceil(dt / p.max_substep - 1e-9))
    h = dt / n
    wn, z = 2 * math.pi * p.torque_lag_hz, p.torque_lag_zeta
    r = p.wheel_radius
    m_eff = p.mass + p.roller_inertia / r**2 + 4 * p.wheel_inertia / r**2
    for _ in range(n):
        v = s[0]
        v_demand = v
        if p.speed_update == "mean" and v != 0.0:  # the demand at a predicted midpoint
            load0 = p.road_load_a + p.road_load_b * abs(v) + p.road_load_c * v * v \
                + brake * 4 * p.brake_torque_max / r
            a0 = ((s[1] + s[3]) / r - p.mass * p.gravity * math.sin(p.grade)
                  - math.copysign(load0, v)) / m_eff
            v_mid = v + a0 * h / 2
            v_demand = v_mid if v_mid * v > 0 else 0.0
        omega = abs(v_demand) / r
        caps = [tm if omega <= 1e-3 else min(tm, pm / omega)
                for tm, pm in ((p.front_torque_max, p.front_power_max),
                               (p.rear_torque_max, p.rear_power_max))]
        lim = min(max((p.speed_limit - v_demand) / p.limiter_taper, 0.0), 1.0)
        d = throttle * lim * sum(caps)
        u = (min(caps[0], p.front_share * d), min(caps[1], (1 - p.front_share) * d))
        impulse = 0.0
        for i, ui in enumerate(u):
            x, xd = s[1 + 2 * i], s[2 + 2 * i]

            def f(a, ad, ui=ui):
                return wn * wn * (ui - a) - 2 * z * wn * ad
            k1 = (xd, f(x, xd))
            k2 = (xd + h / 2 * k1[1], f(x + h / 2 * k1[0], xd + h / 2 * k1[1]))
            k3 = (xd + h / 2 * k2[1], f(x + h / 2 * k2[0], xd + h / 2 * k2[1]))
            k4 = (xd + h * k3[1], f(x + h * k3[0], xd + h * k3[1]))
            # z' = x on the same stages: z(h) = h/6 (x1 + 2 x2 + 2 x3 + x4), x_i the stage x
            impulse += h / 6 * (x + 2 * (x + h / 2 * k1[0]) + 2 * (x + h / 2 * k2[0])
                                + (x + h * k3[0]))
            s[1 + 2 * i] = x + h / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
            s[2 + 2 * i] = xd + h / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        torque = s[1] + s[3] if p.speed_update == "end" else impulse / h
        drive = torque / r - p.mass * p.gravity * math.sin(p.grade)

        def load(w):
            return p.road_load_a + p.road_load_b * abs(w) + p.road_load_c * w * w \
                + brake * 4 * p.brake_torque_max / r
        resist = load(v)
        if p.speed_update == "mean" and v != 0.0:
            v_mid = v + (drive - math.copysign(resist, v)) / m_eff * h / 2
            resist = load(v_mid if v_mid * v > 0 else 0.0)
        if v == 0.0:
            s[0] = 0.0 if abs(drive) <= resist else \
                (drive - math.copysign(resist, drive)) / m_eff * h
        else:
            v_new = v + (drive - math.copysign(resist, v)) / m_eff * h
            s[0] = 0.0 if v_new * v < 0 else v_new
    return s[0]


def test_reference_parameters_and_derived_figures():
    cfg = load_dyno("ev_dyno_bench")
    assert cfg == default_dyno()  # the bench file and the C++ defaults agree
    data = yaml.safe_load((vehicles_dir() / "ev_dyno_bench.yaml").read_text())
    assert set(data) - {"model"} == {f.name for f in dataclasses.fields(cfg)}  # all stated
    for key, value in data.items():
        if key not in ("model", "name"):
            assert getattr(cfg, key) == value, key
    assert cfg.effective_mass == pytest.approx(2451.85, abs=0.01)
    assert DynoBench().pedal_authority == pytest.approx(7.25, abs=0.005)


@pytest.mark.parametrize("rule", ["mean", "end"])
def test_against_the_python_reference_for_random_commands(rule):
    rng = np.random.default_rng(3)
    p = dataclasses.replace(default_dyno(), speed_update=rule)
    bench = DynoBench(p)
    s = [0.0, 0.0, 0.0, 0.0, 0.0]
    for _ in range(400):
        dt = float(rng.choice([0.01, 0.02, 0.05, 0.07, 0.2]))
        th, br = (float(rng.uniform()), 0.0) if rng.uniform() < 0.7 else \
            (0.0, float(rng.uniform()))
        got = bench.step(th, br, dt)
        want = reference_step(p, s, th, br, dt)
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12)
    assert bench.speed > 1.0  # the run went somewhere


def _pull_speed(rule: str, max_substep: float) -> float:
    """Speed after 6 s of a throttle sine (0.2 to 0.6) from 20 m/s: drive torque through
    the lag, the power cap and road load all move, away from the kinks (standstill, the
    cap's corner) where no rule is smooth."""
    bench = DynoBench(dataclasses.replace(default_dyno(), speed_update=rule,
                                          max_substep=max_substep))
    bench.reset(20.0)
    dt = 0.04
    for k in range(150):
        bench.step(0.4 + 0.2 * math.sin(2.0 * k * dt), 0.0, dt)
    return bench.speed


def test_mean_rule_is_second_order_and_end_rule_first():
    """Halving the substep quarters the mean rule's error and halves the end rule's,
    against a 0.1 ms reference (from 10 ms down: at 20 to 40 ms the mean rule's error
    terms still cancel); at the default 20 ms the mean rule is over 100 times closer."""
    ref = _pull_speed("mean", 1e-4)
    err = {rule: [abs(_pull_speed(rule, h) - ref) for h in (0.01, 0.005, 0.0025)]
           for rule in ("mean", "end")}
    for rule, order in (("mean", 2.0), ("end", 1.0)):
        e = err[rule]
        for coarse, fine in itertools.pairwise(e):
            assert math.log2(coarse / fine) == pytest.approx(order, abs=0.25), (rule, e)
    assert abs(_pull_speed("mean", 0.02) - ref) * 100 < abs(_pull_speed("end", 0.02) - ref)


def test_bad_speed_update_is_refused_naming_the_choices():
    with pytest.raises(ConfigError, match=r"'speed_update' = 'rk4' is not one of \['end', "
                                          r"'mean'\]"):
        load_dyno({"speed_update": "rk4"})


def test_parked_car_stays_at_exactly_zero():
    bench = DynoBench()
    for _ in range(2000):
        assert bench.step(0.0, 0.0, 0.05) == 0.0
    # a throttle whose force is below the static road load (111 N) does not creep either
    small = 100.0 * 0.36 / 6400.0
    for _ in range(200):
        assert bench.step(small, 0.0, 0.05) == 0.0


def test_full_throttle_then_full_brake_stops_and_holds():
    bench = DynoBench()
    for _ in range(200):
        bench.step(1.0, 0.0, 0.05)
    assert bench.speed > 30.0
    speeds = [bench.step(0.0, 1.0, 0.05) for _ in range(400)]
    assert speeds[-1] == 0.0 and min(speeds) == 0.0  # never reversed
    stopped = speeds.index(0.0)
    assert all(v == 0.0 for v in speeds[stopped:])


def test_terminal_speed_against_road_load():
    """Coasting under a constant small throttle, power-limited on both axles: the
    terminal speed solves throttle (P_f + P_r) = A v + B v^2 + C v^3."""
    cfg, th = default_dyno(), 0.1
    roots = np.roots([cfg.road_load_c, cfg.road_load_b, cfg.road_load_a,
                      -th * (cfg.front_power_max + cfg.rear_power_max)])
    v_star = max(r.real for r in roots if abs(r.imag) < 1e-9)
    bench = DynoBench()
    for _ in range(8000):
        bench.step(th, 0.0, 0.1)
    assert bench.speed == pytest.approx(v_star, rel=0.02)
    assert 30.0 < v_star < 40.0


def test_grade_rolls_back_and_road_load_never_reverses():
    bench = DynoBench({"grade": 0.1})  # 10 % uphill-ish: gravity beats the static load
    for _ in range(40):
        bench.step(0.0, 0.0, 0.05)
    assert bench.speed < 0.0
    braked = DynoBench({"grade": 0.1})
    for _ in range(40):
        assert braked.step(0.0, 1.0, 0.05) == 0.0  # the brake holds it


@pytest.mark.parametrize("dt", [0.001, 0.02, 0.05, 0.1, 0.2])
def test_result_independent_of_the_callers_dt(dt):
    bench, driver = DynoBench(), RobotDriver()
    v = 0.0
    for _ in range(round(40.0 / dt)):
        v = bench.step(*driver.step(15.0, v, dt), dt)
    assert v == pytest.approx(15.0, abs=1e-3)


def test_substep_rule_and_axle_torque():
    assert _core.DynoBenchCore.substeps(0.06, 0.02) == 3
    assert _core.DynoBenchCore.substeps(0.05, 0.02) == 3
    assert _core.DynoBenchCore.substeps(0.001, 0.02) == 1
    bench = DynoBench()
    for _ in range(100):
        bench.step(0.2, 0.0, 0.02)
    front, rear = bench.axle_torque
    demand = 0.2 * 6400.0
    assert front == pytest.approx(0.42 * demand, rel=1e-3)  # settled lag, below the caps
    assert rear == pytest.approx(0.58 * demand, rel=1e-3)


def test_no_spill_over_and_limiter_taper():
    p = default_dyno().to_core()
    f, r = _core.DynoBenchCore.demand(p, 1.0, 0.0)
    assert (f, r) == (pytest.approx(0.42 * 6400.0), 3700.0)  # rear capped, front not raised
    omega = 50.4 / 0.36  # 1 m/s into the 2 m/s taper: half the (power-capped) demand
    caps = 74e3 / omega + 165e3 / omega
    assert _core.DynoBenchCore.demand(p, 1.0, 50.4)[1] == pytest.approx(0.58 * 0.5 * caps)
    assert _core.DynoBenchCore.demand(p, 1.0, 51.4) == (0.0, 0.0)


def test_a_road_vehicle_goes_on_the_bench_and_bench_files_are_not_vehicles():
    sedan = load_dyno("generic_sedan")  # front drive: all its torque on the front rollers
    assert sedan.front_torque_max == 1500.0 and sedan.rear_torque_max == 0.0
    rwd = load_dyno("generic_sedan_v0")  # rear drive
    assert rwd.rear_torque_max == 1500.0 and rwd.front_torque_max == 0.0
    assert sedan.road_load_a == pytest.approx(0.015 * 1500 * 9.81, rel=0.5)
    bench = DynoBench("generic_sedan")
    for _ in range(100):
        bench.step(1.0, 0.0, 0.05)
    assert bench.speed > 10.0
    with pytest.raises(ConfigError, match="chassis-dyno bench.*DynoBench"):
        load_vehicle("ev_dyno_bench")


@pytest.mark.parametrize("kwargs, match", [
    ({"vehicle": {"mass": -1}}, r"'mass' = -1.0 is outside its range"),
    ({"vehicle": {"bogus": 1}}, r"unknown key 'bogus'"),
    ({"vehicle": "no_such_bench"}, "vehicle file not found"),
])
def test_bad_bench_configuration(kwargs, match):
    with pytest.raises(ConfigError, match=match):
        DynoBench(**kwargs)


@pytest.mark.parametrize("args, match", [
    ((1.5, 0.0, 0.05), r"throttle must be a number in \[0, 1\]"),
    ((0.0, float("nan"), 0.05), "brake must be"),
    ((0.0, 0.0, 0.0), "dt must be a positive number"),
    ((0.0, 0.0, 1e9), "more than 10000000"),
])
def test_bad_step_input(args, match):
    bench = DynoBench()
    bench.step(0.5, 0.0, 0.05)
    v = bench.speed
    with pytest.raises(ValueError, match=match):
        bench.step(*args)
    assert bench.speed == v  # nothing changed
