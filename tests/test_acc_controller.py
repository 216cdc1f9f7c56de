"""The PID ACC baseline against the reference's checklist (pid_acc_simulation.txt):
clamps and anti-windup, no derivative kick, reset on mode change, emergency bypass,
follow blending that lets a far gap close under the set-speed cap, TTC only when
closing, gains loaded with their ranges checked."""

from __future__ import annotations

import math

import pytest

from vdsim_gym.controllers import PID, ACCConfig, ACCController, load_gains
from vdsim_gym.controllers.acc import ACCGains


def test_pid_terms_clamp_and_no_derivative_kick():
    pid = PID(2.0, 0.5, 1.0, output_min=-8.0, output_max=3.0)
    assert pid.compute(1.0, 0.1) == pytest.approx(2.0 * 1.0 + 0.5 * 0.1)  # no kd term
    # second call: d = kd * (0.5 - 1.0) / 0.1 = -5
    assert pid.compute(0.5, 0.1) == pytest.approx(1.0 + 0.5 * 0.15 - 5.0)
    assert pid.compute(100.0, 0.1) == 3.0 and pid.compute(-100.0, 0.1) == -8.0
    pid.reset()
    assert pid.integral == 0.0 and pid.prev_error is None
    assert pid.compute(1.0, 0.1) == pytest.approx(2.05)  # no kick after reset either


def test_pid_anti_windup_conditional_integration_and_limit():
    pid = PID(1.0, 1.0, output_min=-1.0, output_max=1.0)
    for _ in range(100):  # saturated high with a positive error: no integration
        assert pid.compute(5.0, 0.1) == 1.0
    assert pid.integral == 0.0
    # the error reverses: the output leaves saturation at once (no wound-up integral)
    assert pid.compute(-0.5, 0.1) == pytest.approx(-0.5 - 0.05)
    limited = PID(0.0, 1.0, output_min=-100.0, output_max=100.0, integral_limit=2.0)
    for _ in range(50):
        limited.compute(1.0, 0.1)
    assert limited.integral == 2.0
    with pytest.raises(ValueError, match="dt must be a positive"):
        pid.compute(1.0, 0.0)
    with pytest.raises(ValueError, match="output_min"):
        PID(1.0, 0.0, output_min=1.0, output_max=1.0)


def test_modes_ttc_and_desired_gap():
    acc = ACCController(ACCConfig(set_speed=30.0, time_headway=1.5, min_distance=10.0,
                                  emergency_ttc_threshold=3.0))
    out = acc.compute(20.0, None, None, 0.1)
    assert out.mode == "cruise" and out.ttc is None and out.distance_error is None
    out = acc.compute(20.0, 25.0, 50.0, 0.1)  # lead faster: not closing, no TTC
    assert out.mode == "follow" and out.ttc is None
    assert out.distance_error == pytest.approx(50.0 - (10.0 + 1.5 * 20.0))
    out = acc.compute(20.0, 10.0, 50.0, 0.1)  # closing at 10 m/s: TTC 5 s
    assert out.mode == "follow" and out.ttc == pytest.approx(5.0)
    out = acc.compute(20.0, 10.0, 25.0, 0.1)  # TTC 2.5 s < 3 s
    assert out.mode == "emergency" and out.acceleration == -8.0  # bypasses the PIDs
    assert acc.compute(20.0, math.nan, 25.0, 0.1).mode == "cruise"  # blank lead cell


def test_pids_reset_on_mode_change():
    acc = ACCController()
    for _ in range(20):
        acc.compute(29.0, None, None, 0.1)  # cruise 1 m/s below set speed: integral grows
    assert acc.speed_pid.integral > 0.0
    acc.compute(10.0, 10.0, 36.0, 0.1)  # -> follow: both reset before this step
    assert acc.speed_pid.integral == 0.0  # reset, then frozen (distance PID active)
    assert acc.distance_pid.integral == pytest.approx((36.0 - (10.0 + 1.5 * 10.0)) * 0.1)
    acc.compute(30.0, 0.0, 20.0, 0.1)  # -> emergency
    assert acc.speed_pid.integral == 0.0 and acc.distance_pid.integral == 0.0


def test_follow_lets_a_far_gap_close_up_to_the_set_speed_cap():
    acc = ACCController(ACCConfig(set_speed=30.0))
    out = acc.compute(20.0, 20.0, 200.0, 0.1)  # far behind a lead at our speed
    assert out.mode == "follow" and out.acceleration > 0.0  # closes the gap
    capped = acc.compute(30.0, 30.0, 200.0, 0.1)  # at the set speed: the cap holds
    assert capped.acceleration <= 1e-9
    close = ACCController().compute(20.0, 20.0, 15.0, 0.1)  # too close: braking dominates
    assert close.acceleration < 0.0


def test_speed_integral_frozen_while_the_distance_pid_is_active():
    acc = ACCController()
    acc.compute(10.0, 10.0, 20.0, 0.1)  # too close: the distance PID (braking) is active
    for _ in range(30):
        acc.compute(10.0, 10.0, 20.0, 0.1)
    assert acc.speed_pid.integral == 0.0  # frozen: no windup from 20 m/s below set speed


def test_load_gains_checks_keys_and_ranges(tmp_path):
    good = tmp_path / "tuning_results.yaml"
    good.write_text("pid_speed: {kp: 0.4, ki: 0.02, kd: 0.0}\n"
                    "pid_distance: {kp: 0.3, ki: 0.01, kd: 0.2, integral_limit: 50}\n")
    gains = load_gains(good)
    assert gains == ACCGains(pid_speed={"kp": 0.4, "ki": 0.02, "kd": 0.0},
                             pid_distance={"kp": 0.3, "ki": 0.01, "kd": 0.2,
                                           "integral_limit": 50.0})
    assert ACCController(gains=gains).distance_pid.integral_limit == 50.0
    cases = {
        "pid_speed: {kp: 0.4, ki: 0.02, kd: 0.0}\n": "missing block 'pid_distance'",
        "pid_speed: {kp: 40, ki: 0, kd: 0}\npid_distance: {kp: 1, ki: 0, kd: 0}\n":
            r"pid_speed.kp = 40 is outside its allowed range \[0, 10\]",
        "pid_speed: {kp: 1, ki: 0}\npid_distance: {kp: 1, ki: 0, kd: 0}\n":
            "pid_speed.kd is missing",
        "pid_speed: {kp: 1, ki: 0, kd: 0, kx: 1}\npid_distance: {kp: 1, ki: 0, kd: 0}\n":
            "pid_speed.kx is not a gain",
        "pid_sped: {}\n": "unknown key 'pid_sped'",
        "[1, 2": "not valid YAML",
    }
    for i, (text, match) in enumerate(cases.items()):
        bad = tmp_path / f"bad{i}.yaml"
        bad.write_text(text)
        with pytest.raises(ValueError, match=match) as err:
            load_gains(bad)
        assert str(bad) in str(err.value)
    with pytest.raises(ValueError, match="cannot read"):
        load_gains(tmp_path / "absent.yaml")


def test_idm_against_its_closed_forms():
    from vdsim_gym.controllers import IDM

    idm = IDM()  # Treiber et al. (2000) highway parameters
    assert idm.acceleration(0.0) == pytest.approx(0.73)  # free road, standing: a_max
    assert idm.acceleration(idm.v0) == pytest.approx(0.0, abs=1e-15)  # at v0: none
    v = 20.0
    assert idm.acceleration(v, v, idm.equilibrium_gap(v)) == pytest.approx(0.0, abs=1e-12)
    # closer than equilibrium: brakes; farther: accelerates (and never above free road)
    assert idm.acceleration(v, v, 0.8 * idm.equilibrium_gap(v)) < 0.0
    assert 0.0 < idm.acceleration(v, v, 2.0 * idm.equilibrium_gap(v)) < idm.acceleration(v)
    # approaching a stopped car 30 m ahead at 20 m/s: the interaction term by hand
    s_star = 2.0 + 20.0 * 1.6 + 20.0 * 20.0 / (2.0 * math.sqrt(0.73 * 1.67))
    expected = 0.73 * (1 - (20.0 / idm.v0) ** 4 - (s_star / 30.0) ** 2)
    assert idm.acceleration(20.0, 0.0, 30.0) == max(expected, -8.0) == -8.0
    assert IDM(max_deceleration=100.0).acceleration(20.0, 0.0, 30.0) == pytest.approx(expected)
    with pytest.raises(ValueError, match="time_headway must be a positive"):
        IDM(time_headway=0.0)


def test_emergency_hysteresis_holds_braking_until_the_exit_ttc():
    latched = ACCController(ACCConfig(emergency_ttc_threshold=3.0, emergency_exit_ttc=4.0))
    plain = ACCController(ACCConfig(emergency_ttc_threshold=3.0))
    for ctrl in (latched, plain):
        assert ctrl.compute(20.0, 10.0, 25.0, 0.1).mode == "emergency"  # TTC 2.5 s
    # TTC 3.5 s, still closing: the latched controller keeps braking, the reference's leaves
    assert latched.compute(20.0, 10.0, 35.0, 0.1).mode == "emergency"
    assert plain.compute(20.0, 10.0, 35.0, 0.1).mode == "follow"
    assert latched.compute(20.0, 10.0, 40.0, 0.1).mode == "follow"  # TTC 4 s: out
    assert latched.compute(20.0, 10.0, 25.0, 0.1).mode == "emergency"
    assert latched.compute(20.0, 21.0, 25.0, 0.1).mode == "follow"  # opening: out at once
    # the exit threshold only holds: TTC 3.5 s from follow does not enter
    assert ACCController(ACCConfig(emergency_exit_ttc=4.0)).compute(
        20.0, 10.0, 35.0, 0.1).mode == "follow"
    with pytest.raises(ValueError, match=r"emergency_exit_ttc = 2.0 s must be a number >= "
                                         r"emergency_ttc_threshold \(3.0 s\)"):
        ACCConfig(emergency_exit_ttc=2.0)


def test_acc_pid_baseline_latches_emergency_braking_on_stop_and_go():
    """On the vehicle env at 0 ms the reference's rule toggles full braking on and off
    every sample or two once TTC grazes 3 s; the baseline's 1 s hysteresis brakes in a few
    long blocks, with a larger minimum gap and a third of the jerk."""
    import gymnasium as gym
    import numpy as np

    import vdsim_gym  # noqa: F401
    from vdsim_gym.controllers import acc_pid

    def run(**kw):
        env = gym.make("VDSim-ACC-v0", scenario="stop_and_go", control_period=0.02)
        pol = acc_pid(env, **kw)
        obs, _ = env.reset(seed=0)
        modes, gaps, accel = [], [], []
        for k in range(1000):
            a, _ = pol.predict(obs, episode_start=np.array([k == 0]))
            modes.append(pol.modes[0])
            obs, _, term, trunc, info = env.step(a)
            gaps.append(info["gap"])
            accel.append(float(a[0]))
            if term or trunc:
                break
        env.close()
        switches = sum(m != p for m, p in zip(modes[1:], modes[:-1], strict=False))
        return switches, min(gaps), float(np.std(np.diff(accel)))

    plain, latched = run(emergency_hysteresis=0.0), run()
    assert plain[0] > 40 and latched[0] <= plain[0] / 4
    assert latched[1] > plain[1]
    assert latched[2] < plain[2] / 2
    with pytest.raises(ValueError, match="emergency_hysteresis = -1.0 s must be >= 0"):
        acc_pid(gym.make("VDSim-ACC-v0"), emergency_hysteresis=-1.0)
