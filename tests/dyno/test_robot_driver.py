"""The robot driver: its laws against a plain Python reference, the reference's rules
(../shared/reference/dyno_bench.md, robot_driver_delay_accel.txt), the delay line, the
actuator hook and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vdsim_gym.dyno import DynoBench, RobotDriver, delay_steps
from vdsim_gym.errors import ActuatorError, DelayRoundingWarning


class ReferenceDriver:
    """Speed mode written plainly from dyno_bench.md (no envelope, no hold, no delay)."""

    def __init__(self, kp=0.45, ki=0.25):
        self.kp, self.ki, self.i = kp, ki, 0.0

    def step(self, v_ref, v, dt):
        if v_ref <= 0.05 and v <= 0.05:
            self.i = 0.0
            return 0.0, 0.3
        e = v_ref - v
        if -1.0 < self.kp * e + self.ki * self.i < 1.0:
            self.i += e * dt
        p = min(max(self.kp * e + self.ki * self.i, -1.0), 1.0)
        return max(p, 0.0), max(-p, 0.0)


def closed_loop(driver, v_refs, dt=0.05, a_refs=None, bench=None):
    bench = bench or DynoBench()
    v, out = 0.0, []
    for k, v_ref in enumerate(v_refs):
        cmd = driver.step(v_ref, v, dt) if a_refs is None else \
            driver.step(v_ref, v, dt, a_ref=a_refs[k])
        v = bench.step(*cmd, dt)
        out.append((cmd, v))
    return out


def test_speed_mode_is_the_plain_law_bit_for_bit():
    refs = [15.0] * 400 + [5.0] * 400 + [0.0] * 200
    got = closed_loop(RobotDriver(), refs)
    bench, ref, v = DynoBench(), ReferenceDriver(), 0.0
    for (cmd, speed), v_ref in zip(got, refs, strict=True):
        want = ref.step(v_ref, v, 0.05)
        assert cmd == want  # bit for bit
        v = bench.step(*want, 0.05)
        assert speed == v


def test_options_off_are_bit_identical_to_the_plain_driver():
    refs = [15.0] * 300 + [5.0] * 300
    plain = closed_loop(RobotDriver(), refs)
    assert closed_loop(RobotDriver(delay_s=0.0, actuator=lambda t, b, dt: (t, b)),
                       refs) == plain
    assert closed_loop(RobotDriver(openpilot_hold=False, max_accel_mps2=None), refs) == plain


@settings(max_examples=200, deadline=None)
@given(st.floats(-5, 60), st.floats(-2, 60), st.sampled_from(["speed", "accel"]),
       st.floats(-10, 10))
def test_throttle_and_brake_never_both_non_zero(v_ref, v, mode, a_ref):
    d = RobotDriver(mode, max_accel_mps2=1.8, max_decel_mps2=3.0, openpilot_hold=True)
    for k in range(5):
        t, b = d.step(v_ref, v + 0.1 * k, 0.05, a_ref=a_ref)
        assert t == 0.0 or b == 0.0
        assert 0.0 <= t <= 1.0 and 0.0 <= b <= 1.0


def test_integral_bounded_at_an_unreachable_reference():
    d, bench, v = RobotDriver(), DynoBench(), 0.0
    integrals = []
    for _ in range(4000):  # 200 s at 100 m/s, above the 51.4 m/s limiter
        v = bench.step(*d.step(100.0, v, 0.05), 0.05)
        integrals.append(d.integral)
    assert v < 51.4
    assert integrals[-1] == integrals[2000]  # frozen while saturated
    assert abs(integrals[-1]) < 10.0


def test_standstill_brake_and_openpilot_hold():
    d = RobotDriver()
    assert d.step(0.0, 0.0, 0.05) == (0.0, 0.3)
    assert d.integral == 0.0
    hold = RobotDriver(openpilot_hold=True)
    assert hold.step(2.0, 0.2, 0.05, a_ref=0.05) == (0.0, 0.3)  # v < 0.3, a_ref < 0.1
    assert hold.step(2.0, 0.2, 0.05, a_ref=0.5)[0] > 0.0
    assert RobotDriver().step(2.0, 0.2, 0.05, a_ref=0.05)[0] > 0.0  # off by default


def test_envelope_ramp_starts_at_the_measured_speed_and_peaks_below_2():
    d, bench, v = RobotDriver(max_accel_mps2=1.8, max_decel_mps2=1.8), DynoBench(), 0.0
    accels = []
    for k in range(1200):
        v_ref = 15.0 if k < 600 else 5.0
        v_new = bench.step(*d.step(v_ref, v, 0.05), 0.05)
        accels.append((v_new - v) / 0.05)
        v = v_new
    assert max(accels) < 2.0 and min(accels) > -2.0
    assert max(accels) > 1.5  # the envelope is used, not a timid loop


def test_delayed_output_is_the_undelayed_output_delay_earlier():
    rng = np.random.default_rng(0)
    speeds = np.cumsum(rng.normal(0, 0.3, 300)).clip(0, None)
    plain, late = RobotDriver(), RobotDriver(delay_s=0.3)
    n = 6  # 0.3 s / 0.05 s
    out_plain, out_late = [], []
    for k, v in enumerate(speeds):
        v_ref = 10.0 + 5.0 * math.sin(k / 20)
        out_plain.append(plain.step(v_ref, float(v), 0.05))
        out_late.append(late.step(v_ref, float(v), 0.05))
        assert late.pedal == plain.pedal  # the fresh command is not delayed
    assert out_late[:n] == [(0.0, 0.0)] * n
    assert out_late[n:] == out_plain[:-n]


class LagActuator:
    """A first-order pedal lag that records what it sees."""

    def __init__(self, tau=0.1):
        self.tau, self.state, self.seen, self.resets = tau, (0.0, 0.0), [], 0

    def __call__(self, throttle, brake, dt):
        self.seen.append((throttle, brake))
        a = dt / (self.tau + dt)
        self.state = tuple(s + a * (x - s) for s, x in zip(self.state, (throttle, brake),
                                                             strict=True))
        return self.state

    def reset(self):
        self.state, self.resets = (0.0, 0.0), self.resets + 1


def test_actuator_sees_the_delayed_command_and_has_the_last_word():
    act = LagActuator()
    d, ref = RobotDriver(delay_s=0.1, actuator=act), RobotDriver(delay_s=0.1)
    for k in range(50):
        out = d.step(10.0, 0.1 * k, 0.05)
        delayed = ref.step(10.0, 0.1 * k, 0.05)
        assert act.seen[-1] == delayed
        assert out == act.state  # returned as the actuator gave it, not clamped
    boost = RobotDriver(actuator=lambda t, b, dt: (t * 2.0 + 0.5, b))
    assert boost.step(10.0, 0.0, 0.05)[0] > 1.0  # no clamp after the actuator


def test_reset_empties_the_delay_line_and_resets_the_actuator():
    act = LagActuator()
    d = RobotDriver(delay_s=0.2, actuator=act)
    for k in range(20):
        d.step(10.0, 0.2 * k, 0.05)
    d.reset()
    assert act.resets == 1 and d.integral == 0.0
    act.seen.clear()
    for _ in range(4):
        d.step(10.0, 0.0, 0.05)
    assert act.seen == [(0.0, 0.0)] * 4  # the line refills from empty


def test_accel_mode_tracks_a_constant_a_ref_and_ignores_v_ref():
    d, bench, v = RobotDriver("accel"), DynoBench(), 0.0
    accels = []
    for k in range(300):
        v_new = bench.step(*d.step(99.0 if k % 2 else -5.0, v, 0.02, a_ref=1.0), 0.02)
        accels.append((v_new - v) / 0.02)
        v = v_new
    assert np.mean(accels[-50:]) == pytest.approx(1.0, abs=0.02)
    a, b = RobotDriver("accel"), RobotDriver("accel")
    for k in range(30):
        assert a.step(0.0, 0.3 * k, 0.05, a_ref=0.7) == b.step(40.0, 0.3 * k, 0.05, a_ref=0.7)


def test_accel_mode_clamps_to_the_envelope_holds_at_rest_and_needs_a_ref():
    d, bench, v = RobotDriver("accel", max_accel_mps2=1.8), DynoBench(), 0.0
    accels = []
    for _ in range(400):
        v_new = bench.step(*d.step(0.0, v, 0.02, a_ref=5.0), 0.02)
        accels.append((v_new - v) / 0.02)
        v = v_new
    assert np.mean(accels[-50:]) == pytest.approx(1.8, abs=0.05)
    rest = RobotDriver("accel")
    assert rest.step(0.0, 0.0, 0.05, a_ref=-1.0) == (0.0, 0.3)
    assert rest.step(0.0, 0.0, 0.05, a_ref=0.0) == (0.0, 0.3)
    with pytest.raises(ValueError, match="mode='accel' tracks an acceleration.*a_ref"):
        rest.step(5.0, 0.0, 0.05)


def test_a_delayed_loop_at_0_2_s_still_settles():
    d = RobotDriver(delay_s=0.2, max_accel_mps2=1.8, max_decel_mps2=1.8)
    out = closed_loop(d, [15.0] * 800)
    assert out[-1][1] == pytest.approx(15.0, abs=0.01)


def test_delay_rounding_rule_and_warning():
    assert delay_steps(0.3, 0.05) == (6, True)
    assert delay_steps(0.07, 0.05) == (1, False)  # 1.4 steps -> 1
    assert delay_steps(0.125, 0.05) == (2, False)  # 2.5 -> 2: half to even
    d, plain = RobotDriver(delay_s=0.07), RobotDriver(delay_s=0.05)
    with pytest.warns(DelayRoundingWarning, match="rounded to 1"):
        first = d.step(10.0, 0.0, 0.05)
    assert first == plain.step(10.0, 0.0, 0.05) == (0.0, 0.0)
    assert d.step(10.0, 0.0, 0.05) == plain.step(10.0, 0.0, 0.05)  # warned once


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"delay_s": -0.1}, ValueError, "delay_s must be >= 0"),
    ({"delay_s": float("nan")}, ValueError, "delay_s must be a finite number"),
    ({"delay_s": 1e6}, ValueError, "beyond the 60 s bound"),
    ({"mode": "cruise"}, ValueError, "unknown mode 'cruise'; valid: speed, accel"),
    ({"actuator": 3}, TypeError, "actuator must be callable"),
    ({"max_accel_mps2": -1.8}, ValueError, "positive magnitude"),
    ({"kp": -1}, ValueError, "kp must be >= 0"),
])
def test_bad_driver_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        RobotDriver(**kwargs)


def _raise(t, b, dt):
    raise ZeroDivisionError("boom")


@pytest.mark.parametrize("actuator, match", [
    (_raise, "'hook' failed.*ZeroDivisionError: boom"),
    (lambda t, b, dt: (float("nan"), b), "not finite"),
    (lambda t, b, dt: 0.5, "must return two numbers"),
])
def test_a_failing_actuator_is_a_clear_error_and_the_state_is_intact(actuator, match):
    calls = {"fail": False}

    def hook(t, b, dt):
        return actuator(t, b, dt) if calls["fail"] else (t, b)

    d, twin = RobotDriver(delay_s=0.1, actuator=hook), RobotDriver(delay_s=0.1)
    for k in range(10):
        assert d.step(10.0, 0.5 * k, 0.05) == twin.step(10.0, 0.5 * k, 0.05)
    calls["fail"] = True
    with pytest.raises(ActuatorError, match=match):
        d.step(10.0, 5.0, 0.05)
    calls["fail"] = False
    for k in range(10, 20):  # as if the failed call never happened
        assert d.step(10.0, 0.5 * k, 0.05) == twin.step(10.0, 0.5 * k, 0.05)
    assert d.integral == twin.integral


@pytest.mark.parametrize("args, match", [
    ((float("nan"), 0.0, 0.05), "v_ref must be a finite number"),
    ((1.0, 0.0, -0.05), "dt must be a positive number"),
    ((1.0, "fast", 0.05), "v must be a finite number"),
])
def test_bad_step_input_changes_nothing(args, match):
    d, twin = RobotDriver(delay_s=0.1), RobotDriver(delay_s=0.1)
    d.step(5.0, 1.0, 0.05), twin.step(5.0, 1.0, 0.05)
    with pytest.raises(ValueError, match=match):
        d.step(*args)
    assert d.step(5.0, 1.5, 0.05) == twin.step(5.0, 1.5, 0.05)


def test_accel_filter_is_the_exact_hold_of_a_first_order_lag():
    """Accel mode's measured acceleration: a_raw = (v_k - v_{k-1}) / dt (0 on the first
    call), then a_f += (1 - exp(-dt / tau)) (a_raw - a_f), the one lag discretization of
    the core (csrc/vdsim/lag.hpp), checked against that law written plainly."""
    rng = np.random.default_rng(4)
    for tau, dt in ((0.1, 0.05), (0.3, 0.02), (0.0, 0.05)):
        driver = RobotDriver("accel", accel_filter_s=tau)
        driver.reset()
        a_f, v_prev = 0.0, None
        for v in np.cumsum(rng.uniform(-0.2, 0.4, 200)):
            driver.step(0.0, float(v), dt, a_ref=0.5)
            a_raw = 0.0 if v_prev is None else (float(v) - v_prev) / dt
            v_prev = float(v)
            g = 1.0 - math.exp(-dt / tau) if tau > 0 else 1.0
            a_f = a_f + g * (a_raw - a_f)
            assert driver.filtered_accel == pytest.approx(a_f, rel=1e-12, abs=1e-12)
