"""integrator="etd2": stiff parts exact, body as Heun, low speed monotone (docs/PHYSICS.md,
"etd2"). References are heun on fine substeps, never etd2 itself."""

from __future__ import annotations

import numpy as np
import pytest

from vdsim_gym import _core
from vdsim_gym.cli.accuracy import low_speed_checks
from vdsim_gym.config import load_vehicle
from vdsim_gym.plant import make_session

LEVELS = ("L2", "L1")


def _run(level: str, integrator: str, substep: float, step_ticks: int, schedule,
         v0: float, longitudinal: str = "pedal", n: int = 100, dt: float = 0.01):
    """(t, vx, omega_0, omega_1) every dt under schedule(t) -> (steer, longitudinal)."""
    s = make_session(level=level, vehicle=load_vehicle(), substep_dt=substep,
                     longitudinal=longitudinal, actuator=None, integrator=integrator,
                     step_ticks=step_ticks)
    s.reset(0.0, 0.0, 0.0, v0, 0.0, 0.0)
    state, out = np.zeros(_core.STATE_SIZE), np.empty((n, 3))
    for k in range(n):
        s.command_now(*schedule(k * dt))
        s.advance(round(dt / substep))
        s.get_state(state)
        out[k] = state[3], state[6], state[7]
    return out


@pytest.mark.parametrize("level", LEVELS)
def test_etd2_low_speed_cases_match_the_reference(level):
    ref = low_speed_checks("heun", 5e-4, level)
    got = low_speed_checks("etd2", 5e-4, level, step_ticks=10)
    for case, r in ref.items():
        g = got[case]
        assert g["flips"] == 0, case
        if case in ("standstill", "brake_to_stop"):
            assert g["creep"] < 1e-9, case
        assert abs(g["vx_end"] - r["vx_end"]) <= 1e-3 * max(1.0, abs(r["vx_end"])), case


@pytest.mark.parametrize("level", LEVELS)
def test_etd2_releases_a_locked_wheel_as_the_reference(level):
    # Full brake locks the wheels at 12 m/s; a light brake then releases them. A tangent-only
    # Jacobian left the front wheel stalled at -19 % slip here (its tire's flat top).
    sched = lambda t: (0.0, -1.0 if t < 0.5 else -0.06)  # noqa: E731
    ref = _run(level, "heun", 1e-4, 1, sched, 12.0)
    got = _run(level, "etd2", 5e-4, 10, sched, 12.0)
    late = slice(60, None)  # 100 ms after the release
    assert np.max(np.abs(got[late, 1:] - ref[late, 1:])) < 0.1  # rad/s
    assert np.max(np.abs(got[:, 0] - ref[:, 0])) < 0.02  # m/s


@pytest.mark.parametrize("pedal", [0.3, -0.03])
def test_etd2_rolls_up_from_a_lock_at_walking_speed_without_oscillating(pedal):
    # From a full-brake lock at 3 m/s, throttle or a light brake at about 0.5 m/s: below the
    # slip-speed floor the wheel and the body are stiffly coupled; without the body's row in
    # the linear part the front wheel's spin flipped sign from step to step.
    sched = lambda t: (0.0, -1.0 if t < 0.3 else pedal)  # noqa: E731
    ref = _run("L1", "heun", 1e-4, 1, sched, 3.0, n=100, dt=0.005)
    got = _run("L1", "etd2", 5e-4, 10, sched, 3.0, n=100, dt=0.005)
    assert np.all(got[70:, 1:] >= 0.0)
    assert np.max(np.abs(got[70:, 1:] - ref[70:, 1:])) < 0.05
    assert np.max(np.abs(got[:, 0] - ref[:, 0])) < 0.01


def test_etd2_accel_cascade_is_the_sampled_law_in_its_limit():
    # The continuous cascade at 5 ms steps against the sampled one on 0.1 ms heun steps: a
    # target step and a braking target.
    sched = lambda t: (0.02, 2.0 if t < 1.0 else -4.0)  # noqa: E731
    ref = _run("L2", "heun", 1e-4, 1, sched, 15.0, longitudinal="accel", n=200)
    got = _run("L2", "etd2", 5e-4, 10, sched, 15.0, longitudinal="accel", n=200)
    assert np.max(np.abs(got[:, 0] - ref[:, 0])) < 2e-3  # m/s
    # The sampled law at 5 ms steps (semi_implicit) lags by a measurable amount.
    coarse = _run("L2", "semi_implicit", 5e-4, 10, sched, 15.0, longitudinal="accel", n=200)
    assert np.max(np.abs(coarse[:, 0] - ref[:, 0])) > 5 * np.max(np.abs(got[:, 0] - ref[:, 0]))


def test_etd2_tire_algebra_matches_the_plain_evaluation():
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


def test_etd2_is_deterministic_and_matches_across_vector_threads():
    import gymnasium as gym

    import vdsim_gym  # noqa: F401
    out = []
    for threads in (1, 2):
        vec = gym.make_vec("VDSim-DLC-v0", num_envs=4, threads=threads, integrator="etd2")
        obs, _ = vec.reset(seed=3)
        rng = np.random.default_rng(0)
        rows = [obs]
        for _ in range(60):
            obs, *_ = vec.step(rng.uniform(-0.3, 0.3, (4, 2)).astype(np.float32))
            rows.append(obs)
        vec.close()
        out.append(np.stack(rows))
    assert np.array_equal(out[0], out[1])


# ---------------------------------------------------------------- event_step


def _random_rollout(**physics):
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


def test_event_step_of_one_substep_is_the_default_bit_for_bit():
    assert np.array_equal(_random_rollout(event_step=5e-4), _random_rollout())


def test_event_step_changes_only_the_steps_after_wheel_events():
    # Random actions take the event rule nearly every step: longer steps after an event
    # give another (nearby) trajectory; the baseline's smooth inputs never take it.
    default, longer = _random_rollout(), _random_rollout(event_step=1.5e-3)
    assert not np.array_equal(default, longer)
    assert np.max(np.abs(default[:20] - longer[:20])) < 0.05  # the same run, early on
    import gymnasium as gym

    from vdsim_gym.controllers import stanley_pi

    runs = []
    for kw in ({}, {"event_step": 1.5e-3}):
        env = gym.make("VDSim-DLC-v0", level="L2", **kw)
        policy = stanley_pi(env)
        obs, _ = env.reset(seed=0)
        seq, done = [obs], False
        while not done:
            obs, _, term, trunc, _ = env.step(policy.predict(obs)[0])
            seq.append(obs)
            done = term or trunc
        runs.append(np.array(seq))
    assert len(runs[0]) > 100 and np.array_equal(runs[0], runs[1])


def test_event_step_passes_the_closed_loop_gate_where_the_rule_matters():
    """The ACC PID's hard braking locks and releases the wheels every few samples: the
    case the event rule was made for (docs/PHYSICS.md, "Events")."""
    from vdsim_gym.eval.closed_loop_gate import run_gate

    rows = run_gate({"event_step": 1.5e-3}, cases=["acc_hard_brake"], levels=("L2",))
    assert rows and all(r.passes for r in rows), [(r.metric, r.rel_err) for r in rows]


@pytest.mark.parametrize("kwargs,match", [
    ({"event_step": 1.5e-3, "integrator": "semi_implicit"}, "integrator='etd2' only"),
    ({"event_step": 1e-2}, "longer than the longest step"),
    ({"event_step": 1.2e-3}, "not a whole multiple of substep_dt"),
    ({"event_step": -5e-4}, "must be positive"),
    ({"event_step": True}, "finite number of seconds"),
    ({"event_step": 1e-3, "integrator": "etd3"}, "integrator must be one of"),  # the typo named
])
def test_event_step_refuses_bad_values(kwargs, match):
    import gymnasium as gym

    from vdsim_gym.config import ConfigError

    with pytest.raises(ConfigError, match=match):
        gym.make("VDSim-DLC-v0", **kwargs)


def test_event_step_enters_the_physics_hash_only_when_set():
    import gymnasium as gym

    from vdsim_gym.traces.provenance import param_hash

    default = param_hash(gym.make("VDSim-DLC-v0").unwrapped.physics)
    one = param_hash(gym.make("VDSim-DLC-v0", event_step=5e-4).unwrapped.physics)
    longer = param_hash(gym.make("VDSim-DLC-v0", event_step=1.5e-3).unwrapped.physics)
    assert default == one != longer
