"""integrator="etd3" (the default) and "etd2": stiff parts exact, the body third and second
order, low speed monotone, steps sized by the error they make (docs/PHYSICS.md, "Default
integration", "Step-size rule"). References are heun on fine substeps or RK4, never the
method itself."""

from __future__ import annotations

import numpy as np
import pytest

from vdsim_gym import _core
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.eval.accuracy import low_speed_checks
from vdsim_gym.sim.physics_options import make_session

LEVELS = ("L2", "L1")
ETD = ("etd3", "etd2")
# each one's default longest step on the 0.5 ms grid: 10 and 5 ms
TICKS = {"etd3": 20, "etd2": 10}


def _run(level: str, integrator: str, substep: float, step_ticks: int, schedule,
         v0: float, longitudinal: str = "pedal", n: int = 100, dt: float = 0.01,
         **physics):
    """(t, vx, omega_0, omega_1) every dt under schedule(t) -> (steer, longitudinal)."""
    s = make_session(level=level, vehicle=load_vehicle(), substep_dt=substep,
                     longitudinal=longitudinal, actuator=None, integrator=integrator,
                     step_ticks=step_ticks, **physics)
    s.reset(0.0, 0.0, 0.0, v0, 0.0, 0.0)
    state, out = np.zeros(_core.STATE_SIZE), np.empty((n, 3))
    for k in range(n):
        s.command_now(*schedule(k * dt))
        s.advance(round(dt / substep))
        s.get_state(state)
        out[k] = state[3], state[6], state[7]
    return out


def test_etd3_is_third_order_and_etd2_second():
    """Fixed steps (no step-size rule) on a smooth sine steer and pedal at 20 m/s, against
    RK4 at 0.025 ms: halving the step divides the body's velocity error by about 8 (etd3)
    and 4 (etd2)."""
    def body(integrator, substep, ticks, **physics):
        def sched(t):
            return 0.04 * np.sin(np.pi * t), 0.2 + 0.2 * np.sin(0.6 * np.pi * t)
        s = make_session(level="L2", vehicle=load_vehicle(), substep_dt=substep,
                         longitudinal="pedal", actuator=None, integrator=integrator,
                         step_ticks=ticks, **physics)
        s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
        state, out = np.zeros(_core.STATE_SIZE), []
        for k in range(100):
            s.command_now(*sched(0.02 * k))
            s.advance(round(0.02 / substep))
            s.get_state(state)
            out.append(state[3:6].copy())
        return np.array(out)

    ref = body("rk4", 2.5e-5, 1)
    for integrator, order in (("etd3", 3), ("etd2", 2)):
        errs = [np.max(np.abs(body(integrator, 5e-4, ticks, step_tol=1e9) - ref), axis=0)
                for ticks in (10, 5)]
        ratio = errs[0] / errs[1]  # vx, vy, r
        assert np.all(ratio > 0.8 * 2 ** order) and np.all(ratio < 1.25 * 2 ** order), \
            (integrator, ratio)
    assert np.all(errs[1] > 0)


@pytest.mark.parametrize("integrator", ETD)
@pytest.mark.parametrize("level", LEVELS)
def test_low_speed_cases_match_the_reference(level, integrator):
    ref = low_speed_checks("heun", 5e-4, level)
    got = low_speed_checks(integrator, 5e-4, level, step_ticks=TICKS[integrator])
    for case, r in ref.items():
        g = got[case]
        assert g["flips"] == 0, case
        if case in ("standstill", "brake_to_stop"):
            assert g["creep"] < 1e-9, case
        assert abs(g["vx_end"] - r["vx_end"]) <= 1e-3 * max(1.0, abs(r["vx_end"])), case


@pytest.mark.parametrize("integrator", ETD)
@pytest.mark.parametrize("level", LEVELS)
def test_releases_a_locked_wheel_as_the_reference(level, integrator):
    # Full brake locks the wheels at 12 m/s; a light brake then releases them. A tangent-only
    # Jacobian left the front wheel stalled at -19 % slip here (its tire's flat top).
    sched = lambda t: (0.0, -1.0 if t < 0.5 else -0.06)  # noqa: E731
    ref = _run(level, "heun", 1e-4, 1, sched, 12.0)
    got = _run(level, integrator, 5e-4, TICKS[integrator], sched, 12.0)
    late = slice(60, None)  # 100 ms after the release
    assert np.max(np.abs(got[late, 1:] - ref[late, 1:])) < 0.1  # rad/s
    assert np.max(np.abs(got[:, 0] - ref[:, 0])) < 0.02  # m/s


@pytest.mark.parametrize("integrator", ETD)
@pytest.mark.parametrize("pedal", [0.3, -0.03])
def test_rolls_up_from_a_lock_at_walking_speed_without_oscillating(pedal, integrator):
    # From a full-brake lock at 3 m/s, throttle or a light brake at about 0.5 m/s: below the
    # slip-speed floor the wheel and the body are stiffly coupled; without the body's row in
    # the linear part the front wheel's spin flipped sign from step to step.
    sched = lambda t: (0.0, -1.0 if t < 0.3 else pedal)  # noqa: E731
    ref = _run("L1", "heun", 1e-4, 1, sched, 3.0, n=100, dt=0.005)
    got = _run("L1", integrator, 5e-4, TICKS[integrator], sched, 3.0, n=100, dt=0.005)
    assert np.all(got[70:, 1:] >= 0.0)
    assert np.max(np.abs(got[70:, 1:] - ref[70:, 1:])) < 0.05
    assert np.max(np.abs(got[:, 0] - ref[:, 0])) < 0.01


@pytest.mark.parametrize("integrator", ETD)
def test_accel_cascade_is_the_sampled_law_in_its_limit(integrator):
    # The continuous cascade at 10 or 5 ms steps against the sampled one on 0.1 ms heun
    # steps: a target step and a braking target.
    sched = lambda t: (0.02, 2.0 if t < 1.0 else -4.0)  # noqa: E731
    ref = _run("L2", "heun", 1e-4, 1, sched, 15.0, longitudinal="accel", n=200)
    got = _run("L2", integrator, 5e-4, TICKS[integrator], sched, 15.0, longitudinal="accel",
               n=200)
    # 1.6e-4 m/s over the run under the step-size rule (both; 0.004 % of the speed change)
    assert np.max(np.abs(got[:, 0] - ref[:, 0])) < 1e-3  # m/s
    # The sampled law at 5 ms steps (semi_implicit) lags by a measurable amount.
    coarse = _run("L2", "semi_implicit", 5e-4, 10, sched, 15.0, longitudinal="accel", n=200)
    assert np.max(np.abs(coarse[:, 0] - ref[:, 0])) > 5 * np.max(np.abs(got[:, 0] - ref[:, 0]))


def _accel_targets(integrator: str, substep: float, step_ticks: int, n: int = 100):
    """(vx every 20 ms, integration steps per 20 ms) under a new acceleration target in
    [-6, 3] m/s^2 every 20 ms (the ACC env under exploration noise) from 20 m/s."""
    s = make_session(level="L2", vehicle=load_vehicle(), substep_dt=substep,
                     longitudinal="accel", actuator=None, integrator=integrator,
                     step_ticks=step_ticks)
    s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
    state, vx = np.zeros(_core.STATE_SIZE), []
    for a in np.random.default_rng(0).uniform(-6.0, 3.0, n):
        s.command_now(0.0, a)
        s.advance(round(0.02 / substep))
        s.get_state(state)
        vx.append(state[3])
    return np.array(vx), s.steps_taken / n


@pytest.mark.parametrize("integrator,max_steps", [("etd3", 8), ("etd2", 18)])
def test_the_cascade_follows_the_slips_through_its_filter_and_integral(integrator, max_steps):
    # Each target jump moves the pedal, the driven wheels' slip settles within milliseconds
    # and the CG's ax with it; the cascade's filter (a_m) and integral see that transient
    # through the linear part (docs/PHYSICS.md, "Default integration"), not as an explicit
    # forcing. Without those rows etd2's rule took 31 steps per 20 ms here, limited by a_m,
    # and was 2.3e-3 m/s off; with them 15 steps and 1.6e-3 m/s (etd3: 6 steps, 6e-4 m/s).
    ref, _ = _accel_targets("heun", 1e-4, 1)
    got, steps = _accel_targets(integrator, 5e-4, TICKS[integrator])
    assert np.max(np.abs(got - ref)) < 2e-3  # m/s, over a 2.7 m/s swing
    assert steps < max_steps, steps


def test_the_fast_tire_algebra_matches_the_plain_evaluation():
    tire = load_vehicle().to_core().tire
    worst = 0.0
    for fz in (500.0, 2500.0, 4000.0, 6500.0, 9000.0):
        for kappa in np.linspace(-1.0, 1.0, 41):
            for tan_a in np.linspace(-0.4, 0.4, 21):
                a = np.array(_core.tire_forces(tire, fz, kappa, tan_a, fast=True))
                b = np.array(_core.tire_forces(tire, fz, kappa, tan_a, fast=True,
                                               fast_algebra=True))
                worst = max(worst, float(np.max(np.abs(a - b))) / fz)
    assert worst < 1e-12


@pytest.mark.parametrize("integrator", ETD)
def test_is_deterministic_and_matches_across_vector_threads(integrator):
    import gymnasium as gym

    import vdsim_gym  # noqa: F401
    out = []
    for threads in (1, 2):
        vec = gym.make_vec("VDSim-DLC-v0", num_envs=4, threads=threads, integrator=integrator)
        obs, _ = vec.reset(seed=3)
        rng = np.random.default_rng(0)
        rows = [obs]
        for _ in range(60):
            obs, *_ = vec.step(rng.uniform(-0.3, 0.3, (4, 2)).astype(np.float32))
            rows.append(obs)
        vec.close()
        out.append(np.stack(rows))
    assert np.array_equal(out[0], out[1])


# ---------------------------------------------------------------- step-size rule


def _random_rollout(**physics: object) -> np.ndarray:
    """Observations of VDSim-DLC-v0 at L2 under seeded uniform random actions (full pedal
    and steer swings: wheel locks, releases and large slips nearly every step)."""
    import gymnasium as gym

    env = gym.make("VDSim-DLC-v0", level="L2", terminate_on_cone=False, **physics)
    rng = np.random.default_rng(5)
    obs, _ = env.reset(seed=0)
    out = [obs]
    for a in rng.uniform(-1.0, 1.0, size=(150, 2)).astype(np.float32):
        obs, _, term, trunc, _ = env.step(a)
        out.append(obs)
        if term or trunc:
            break
    return np.array(out)


def _session(integrator: str = "etd2", **kw: object) -> _core.Session:
    from vdsim_gym.sim.physics_options import make_session

    return make_session(level="L2", vehicle=load_vehicle(), substep_dt=5e-4,
                        longitudinal="pedal", actuator=None, integrator=integrator,
                        step_ticks=TICKS[integrator], **kw)


def test_the_default_tolerances_are_the_cores():
    from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR, DEFAULT_STEP_TOL, default_step_tol

    assert DEFAULT_INTEGRATOR == "etd3"
    assert DEFAULT_STEP_TOL == default_step_tol("etd3") == 2e-4
    assert default_step_tol("etd2") == 1e-4
    assert _core.SimConfig().step_tol == 0.0  # the integrator's default

    def steps(integrator: str, tol: float) -> int:
        cfg = _core.SimConfig()
        cfg.level, cfg.substep_dt = _core.Level.L2, 5e-4
        cfg.integrator = getattr(_core.Integrator, integrator)
        cfg.longitudinal, cfg.step_ticks = _core.Longitudinal.pedal, TICKS[integrator]
        if tol:
            cfg.step_tol = tol
        s = _core.Session(load_vehicle().to_core(), cfg)
        s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
        for steer, pedal in np.random.default_rng(0).uniform(-1.0, 1.0, size=(20, 2)):
            s.command_now(0.3 * steer, pedal)
            s.advance(40)
        return int(s.steps_taken)

    for integrator in ETD:
        tol = default_step_tol(integrator)
        assert steps(integrator, 0.0) == steps(integrator, tol) > steps(integrator, 2 * tol)


@pytest.mark.parametrize("integrator", ETD)
def test_smooth_commands_take_the_longest_steps_and_noisy_ones_shorter(integrator):
    """Steps are sized by the error they make: cruising with a small steady command takes
    the longest steps (10 ms etd3, 5 ms etd2); a hard steer and pedal change every 20 ms
    takes shorter ones after each."""
    ticks = TICKS[integrator]
    s = _session(integrator)
    s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
    s.command_now(0.005, 0.05)
    s.advance(400)  # settle
    s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
    s.command_now(0.005, 0.05)
    s.advance(40)
    s.advance(400)
    steady = s.steps_taken
    assert s.steps_rejected <= 2 and steady <= 440 // ticks + 6, steady
    rng = np.random.default_rng(0)
    s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
    for steer, pedal in rng.uniform(-1.0, 1.0, size=(20, 2)):
        s.command_now(0.3 * steer, pedal)
        s.advance(40)
    assert 20 * 40 // ticks * 2 < s.steps_taken < 20 * 40  # shorter, yet not every tick
    assert s.steps_rejected > 0


@pytest.mark.parametrize("integrator", ETD)
def test_a_tighter_tolerance_takes_more_steps_and_comes_closer_to_the_reference(integrator):
    from vdsim_gym.eval.noisy_gate import run_gate
    from vdsim_gym.sim.physics_options import default_step_tol

    errs, steps = [], []
    rng = np.random.default_rng(1)
    commands = rng.uniform(-1.0, 1.0, size=(25, 2))
    for scale in (6.0, 1.0, 0.2):
        tol = scale * default_step_tol(integrator)
        rows = run_gate({"integrator": integrator, "step_tol": tol}, cases=("dlc",),
                        levels=("L2",), streams=("noise_0.3",), seeds=(1,))
        # the trajectory error: the metric's own error can cancel between signs
        errs.append(next(r.traj_err for r in rows if r.signal == "e_y"))
        s = _session(integrator, step_tol=tol)
        s.reset(0.0, 0.0, 0.0, 20.0, 0.0, 0.0)
        for steer, pedal in commands:
            s.command_now(0.3 * steer, pedal)
            s.advance(40)
        steps.append(s.steps_taken)
    assert errs[0] > errs[1] > errs[2], errs
    assert steps[0] < steps[1] < steps[2], steps


@pytest.mark.parametrize("integrator", ETD)
def test_a_braked_wheels_lock_ends_a_step(integrator):
    """Full braking from 10 m/s locks the wheels near walking speed; the step through each
    lock is taken again to end there (its zero crossing), and the car stops with every
    wheel held, as on one-tick steps."""
    from vdsim_gym.sim.physics_options import make_session

    rule = _session(integrator)
    fine = make_session(level="L2", vehicle=load_vehicle(), substep_dt=5e-4,
                        longitudinal="pedal", actuator=None, integrator=integrator,
                        step_ticks=1)
    state = np.zeros(_core.STATE_SIZE)
    stops = []
    for s in (fine, rule):
        s.reset(0.0, 0.0, 0.0, 10.0, 0.0, 0.0)
        s.command_now(0.0, -1.0)
        s.advance(6000)
        s.get_state(state)
        assert np.all(state[6:10] == 0.0) and abs(state[3]) < 1e-9
        stops.append(state[0])
    assert stops[1] == pytest.approx(stops[0], abs=0.02)  # the stopping distance [m]


@pytest.mark.parametrize("integrator", ETD)
def test_the_rule_is_deterministic_and_steps_only_on_the_grid(integrator):
    a, b = _random_rollout(integrator=integrator), _random_rollout(integrator=integrator)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("kwargs,match", [
    ({"step_tol": 1e-4, "integrator": "semi_implicit"}, "integrator='etd3' or 'etd2' only"),
    ({"step_tol": 0.0}, "positive finite number"),
    ({"step_tol": -1e-4}, "positive finite number"),
    ({"step_tol": float("nan")}, "positive finite number"),
    ({"step_tol": True}, "positive finite number"),
    ({"step_tol": "1e-4"}, "positive finite number"),
    ({"step_tol": 1e-4, "integrator": "etd4"}, "integrator must be one of"),  # the typo named
])
def test_step_tol_refuses_bad_values(kwargs, match):
    import gymnasium as gym

    from vdsim_gym.errors import ConfigError

    with pytest.raises(ConfigError, match=match):
        gym.make("VDSim-DLC-v0", **kwargs)


@pytest.mark.parametrize("integrator", ETD)
def test_step_tol_enters_the_physics_hash_only_when_set(integrator):
    import gymnasium as gym

    from vdsim_gym.sim.physics_options import default_step_tol
    from vdsim_gym.traces.provenance import param_hash, physics_dict

    def physics(**kw: object) -> object:
        return gym.make("VDSim-DLC-v0", integrator=integrator, **kw).unwrapped.physics

    default = param_hash(physics())
    same = param_hash(physics(step_tol=default_step_tol(integrator)))
    other = param_hash(physics(step_tol=1e-3))
    assert default == same != other
    assert "step_tol" not in physics_dict(physics())
    assert physics_dict(physics(step_tol=1e-3))["step_tol"] == 1e-3
    assert not np.array_equal(_random_rollout(integrator=integrator, step_tol=1e-3),
                              _random_rollout(integrator=integrator))


@pytest.mark.parametrize("physics", [{"actuator": {"time_constant": 0.05, "rate_limit": 1.0}},
                                     {"max_step": 5e-4}])
def test_etd3_on_one_tick_steps_takes_etd2s_step(physics):
    """A steering actuator (its chain runs per tick) or max_step of one substep forces
    one-tick steps, where the rule is off and a third stage buys nothing at 0.5 ms: etd3
    takes etd2's step there, bit for bit."""
    import gymnasium as gym

    rng = np.random.default_rng(0)
    actions = np.clip(0.3 * rng.standard_normal((100, 2)), -1.0, 1.0).astype(np.float32)
    runs = []
    for integrator in ETD:
        env = gym.make("VDSim-DLC-v0", integrator=integrator, terminate_on_cone=False,
                       **physics)
        obs, _ = env.reset(seed=0)
        rows = [obs]
        for a in actions:
            obs, _, term, trunc, _ = env.step(a)
            rows.append(obs)
            if term or trunc:
                break
        runs.append(np.array(rows))
        env.close()
    assert len(runs[0]) > 50 and np.array_equal(runs[0], runs[1])
    # on its own steps (10 ms at most) etd3 differs from etd2
    assert not np.array_equal(_random_rollout(integrator="etd3"),
                              _random_rollout(integrator="etd2"))
