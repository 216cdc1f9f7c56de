"""ClosedLoopEval(env=..., policy=...): a policy on a path env's own core, in every mode,
checked against the callback form on a Plant driven by the slow Python reference of the
env's observation (PolicyController / PathObservation)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import LatencyModel
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval import ClosedLoopEval
from vdsim_gym.eval.policy_adapter import PolicyController


def make(**kw):
    return gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", terminate_on_cone=False, **kw)


def test_env_policy_sync_reproduces_the_env_rollout_bit_for_bit():
    env = make()
    policy = stanley_pi(env)
    res = ClosedLoopEval(env=make(), policy=stanley_pi(env), seed=3, duration=4.0).run()
    obs, _ = env.reset(seed=3)
    first = True
    for _ in range(200):
        action, _ = policy.predict(obs, episode_start=np.array([first]))
        first = False
        obs, *_ = env.step(action)
    xy = env.unwrapped.trajectory
    np.testing.assert_array_equal(res.trace["X"][: len(xy)], xy[:, 0])
    np.testing.assert_array_equal(res.trace["Y"][: len(xy)], xy[:, 1])
    assert res.meta["env_id"] == "VDSim-DLC-v0" and res.meta["env_seed"] == 3
    assert res.stats["n_samples"] == 200


def test_env_policy_runs_unchanged_in_both_modes_and_delay_hurts():
    env = make()
    policy = stanley_pi(env)
    a = ClosedLoopEval(env=env, policy=policy, duration=6.0).run()
    b0 = ClosedLoopEval(env=env, policy=policy, duration=6.0, mode="virtual_async",
                        latency=LatencyModel.fixed(0.0), overrun="queue").run()
    b40 = ClosedLoopEval(env=env, policy=policy, duration=6.0, mode="virtual_async",
                         latency=LatencyModel.fixed(0.04), overrun="skip").run()
    np.testing.assert_array_equal(a.trace["X"], b0.trace["X"])
    assert b40.stats["n_overrun"] > 0 and b40.stats["n_skipped"] > 0
    assert b40.stats["e_y_rmse_m"] > a.stats["e_y_rmse_m"]


def test_env_policy_sb3_model_predicts_through_the_eval():
    from stable_baselines3 import PPO

    env = make()
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=16, n_epochs=1, seed=0, device="cpu")
    res = ClosedLoopEval(env=env, policy=model, duration=0.5, mode="virtual_async",
                         latency=LatencyModel.uniform(0.0, 0.01, seed=1)).run()
    assert res.stats["n_samples"] == 25 and np.all(np.isfinite(res.trace["X"]))


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"policy": object()}, ValueError, r"predict\(obs\)"),
        ({"policy": "P", "controller": lambda o, t: (0, 0)}, ValueError, "not both"),
        ({"policy": "P", "env_kwargs": {"latency": LatencyModel.fixed(0.01)}}, ValueError,
         "give latency= and overrun= to ClosedLoopEval"),
        ({"policy": "P", "control_period": 0.01}, ValueError, "differs from the env's"),
    ],
)
def test_env_policy_bad_input(kwargs, error, match):
    env_for_policy = make()
    if kwargs.get("policy") == "P":
        kwargs["policy"] = stanley_pi(env_for_policy)
    with pytest.raises(error, match=match):
        ClosedLoopEval(env="VDSim-DLC-v0", **kwargs)


def test_policy_without_env_names_the_fix():
    with pytest.raises(ValueError, match="policy= runs on an env"):
        ClosedLoopEval(policy=stanley_pi(make()))


SAMPLE_COLUMNS = ("k", "t_sample", "t_start", "t_call", "c_k", "t_apply", "overrun",
                  "u_steer", "u_pedal")


@pytest.mark.parametrize("level", ["L1", "L2"])
@pytest.mark.parametrize(
    ("latency", "overrun"),
    [
        (None, None),
        (LatencyModel.fixed(0.01), "skip"),
        (LatencyModel.fixed(0.03), "skip"),
        (LatencyModel.fixed(0.03), "queue"),
        (LatencyModel.uniform(0.0, 0.035, seed=2), "skip"),
        (LatencyModel.uniform(0.0, 0.025, seed=2), "queue"),
        (LatencyModel.normal(0.012, 0.006, seed=4), "skip"),
        (LatencyModel.normal(0.012, 0.006, seed=4), "queue"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_env_form_equals_the_callback_form_on_the_plant(level, latency, overrun):
    """The same lane change both ways: the env form (the path env's core computes the
    observation and maps the action) and the callback form (the command env: the
    controller gets the plant's state as float32 and builds the path observation with the
    core's own projection, PolicyController) take the same samples with the same delays;
    the commands and the vehicle's path agree to float32 rounding (the callback form's
    observation is float32, its command goes through the command env's action)."""
    mode = "sync" if latency is None else "virtual_async"
    env = make(level=level)
    env.reset(seed=7)
    start = dict(zip(("X", "Y", "psi", "vx", "vy", "r"), env.unwrapped.state[:6].tolist(),
                     strict=True))
    callback = ClosedLoopEval(
        plant_kwargs=dict(level=level, longitudinal="pedal"),
        controller=PolicyController(env, stanley_pi(env)), mode=mode, latency=latency,
        overrun=overrun, duration=3.0, reference_path=env.unwrapped.course.path,
        initial_state=start).run()
    on_env = ClosedLoopEval(env=env, policy=stanley_pi(env), seed=7, mode=mode,
                            latency=latency, overrun=overrun, duration=3.0).run()
    for col in SAMPLE_COLUMNS[:-2] + ("applied",):
        np.testing.assert_array_equal(on_env.samples[col], callback.samples[col], err_msg=col)
    for col in ("u_steer", "u_pedal"):  # [rad], pedal [-1, 1]
        np.testing.assert_allclose(on_env.samples[col], callback.samples[col], rtol=0,
                                   atol=1e-5, err_msg=col)
    for key in ("n_overrun", "n_skipped", "n_unapplied", "n_samples"):
        assert on_env.stats[key] == callback.stats[key], key
    # Trace rows: the callback form has one per grid point, the env form one per sample;
    # both close at the duration.
    assert on_env.trace["t"][-1] == callback.trace["t"][-1] == 3.0
    tick = np.round(callback.trace["t"] / 5e-4).astype(np.int64)
    sampled = np.isin(tick, np.round(on_env.samples["t_sample"] / 5e-4).astype(np.int64))
    assert np.count_nonzero(sampled[:-1]) == len(on_env.trace["t"]) - 1
    if overrun is None:  # a sample at every grid point (a late queue's are not all called)
        assert sampled[:-1].all()
    for col in ("X", "Y", "e_y"):  # [m]
        np.testing.assert_allclose(on_env.trace[col][:-1], callback.trace[col][:-1][sampled[:-1]],
                                   rtol=0, atol=1e-5, err_msg=col)
    for col in ("u_steer", "u_pedal"):
        np.testing.assert_allclose(on_env.trace[col][:-1], callback.trace[col][:-1][sampled[:-1]],
                                   rtol=0, atol=1e-5, err_msg=col)
    if overrun is None:  # the same rows: the same statistics
        assert on_env.stats["e_y_rmse_m"] == pytest.approx(callback.stats["e_y_rmse_m"],
                                                           abs=1e-6)
    if latency is not None:
        assert callback.stats["n_overrun"] > 0 or latency.max_delay <= 0.02


def test_env_form_reports_the_episode_end_and_leaves_the_env_without_latency():
    env = make()
    res = ClosedLoopEval(env=env, policy=stanley_pi(env), duration=15.0,
                         mode="virtual_async", latency=LatencyModel.fixed(0.01)).run()
    assert res.stats["outcome"] == "course_end"
    assert res.stats["episode_summary"]["cone_hits"] == 0
    assert res.trace["t"][-1] < 15.0  # ended by the course, not the duration
    assert env.unwrapped.latency is None  # the eval's measured latency is gone
    obs, _ = env.reset(seed=0)
    env.step(env.action_space.sample())


def test_env_form_policy_error_names_the_sample():
    class Broken:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            if obs[2] > 0 and not episode_start[0]:
                raise RuntimeError("boom")
            return np.zeros(2), None

    from vdsim_gym.errors import ControllerError

    env = make()
    with pytest.raises(ControllerError, match=r"k=1, t=0.02 s: RuntimeError: boom"):
        ClosedLoopEval(env=env, policy=Broken(), duration=1.0).run()
    ok = ClosedLoopEval(env=env, policy=stanley_pi(env), duration=0.2).run()  # still usable
    assert ok.stats["n_samples"] == 10


def test_state_columns_are_the_plant_observations_bit_for_bit():
    """The evaluation's trace reads the state columns straight from the session
    (sim.plant.StateColumns); they are plant_observation()'s values, bit for bit."""
    from vdsim_gym.sim.plant import STATE_COLUMNS, StateColumns

    env = gym.make("VDSim-DLC-v0", preset="iso3888_1")
    env.reset(seed=3)
    columns = StateColumns(env.unwrapped.core.session)
    rng = np.random.default_rng(0)
    for _ in range(50):
        env.step(rng.uniform(-0.2, 0.2, 2).astype(np.float32))
        full = env.unwrapped.plant_observation()
        assert columns() == tuple(full[c] for c in STATE_COLUMNS)
