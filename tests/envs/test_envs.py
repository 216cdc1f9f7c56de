"""Every registered VDSim env: API conformance, determinism, errors, task semantics."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

from vdsim_gym import ConfigError, _core
from vdsim_gym.envs import ENV_IDS
from vdsim_gym.envs.course import Course
from vdsim_gym.envs.path_env import REWARD_TERM_NAMES, PathTrackingEnv

PATH_IDS = ("VDSim-DLC-v0", "VDSim-PathFollow-v0")  # the path task's own checks


class StraightEnv(PathTrackingEnv):
    """A 60 m straight at 20 m/s, optionally with one cone on the path at x = 30 m."""

    def __init__(self, *, cone: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        x = np.arange(0.0, 60.01, 0.5)
        cones = np.array([[30.0, 0.0]]) if cone else np.zeros((0, 2))
        self._course = Course("straight", np.c_[x, 0 * x], np.full(x.shape, 20.0), cones,
                              corridor_half_width=3.0, start_speed=20.0)

    def _next_course(self) -> Course:
        return self._course


def rollout(env: gym.Env, seed: int, n: int) -> tuple[list[np.ndarray], list[float], list[dict]]:
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    observations, rewards, terms = [obs], [], []
    for _ in range(n):
        action = rng.uniform(-0.3, 0.3, env.action_space.shape).astype(np.float32)
        obs, reward, terminated, truncated, info = env.step(action)
        observations.append(obs)
        rewards.append(reward)
        terms.append(info["reward_terms"])
        if terminated or truncated:
            obs, _ = env.reset()
            observations.append(obs)
    return observations, rewards, terms


def tracking_action(env: PathTrackingEnv, obs: np.ndarray) -> np.ndarray:
    """Pure pursuit on the 5 m preview point (gain 1.3 for understeer); P control on speed."""
    phys = obs * env.obs_scale
    vx, v_ref, y_5m = phys[2], phys[5], phys[12]
    delta = 1.3 * env.vehicle.wheelbase * 2.0 * y_5m / 5.0**2
    return np.clip(np.array([delta / env.vehicle.max_steer, 0.3 * (v_ref - vx)], np.float32), -1, 1)


def drive(env: gym.Env, policy: Any, seed: int = 0, n: int = 2000) -> tuple[bool, bool, dict]:
    obs, _ = env.reset(seed=seed)
    for _ in range(n):
        obs, _, terminated, truncated, info = env.step(policy(obs))
        if terminated or truncated:
            return terminated, truncated, info
    raise AssertionError("episode did not end")


# Plant variants per env: the vehicle envs' levels, longitudinal modes and actuator; the
# dyno's driver modes (speed, accel, none: the pedal), delay and pedal actuator.
DYNO = "VDSim-Dyno-v0"
VEHICLE_IDS = [i for i in ENV_IDS if i != DYNO]
CHECK_CASES = [(i, {"level": lv}) for i in VEHICLE_IDS for lv in ("L1", "L2")] + [
    (DYNO, {"driver": "speed"}), (DYNO, {"driver": "accel"}), (DYNO, {"driver": None})]
ROLLOUT_CASES = [(i, kw) for i in VEHICLE_IDS for kw in (
    {}, {"level": "L1", "longitudinal": "force"}, {"actuator": {"time_constant": 0.05}})] + [
    (DYNO, {}), (DYNO, {"driver": {"mode": "accel", "delay_s": 0.2}}),
    (DYNO, {"pedal_actuator": {"time_constant": 0.1}})]


@pytest.mark.parametrize("env_id, kwargs", CHECK_CASES)
def test_envs_pass_gymnasium_and_sb3_checkers(env_id: str, kwargs: dict) -> None:
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = gym.make(env_id, **kwargs)
    gym_check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(env.unwrapped, warn=True)
    env.close()


@pytest.mark.parametrize("env_id, kwargs", ROLLOUT_CASES)
def test_envs_seeded_rollout_is_bit_identical(env_id: str, kwargs: dict) -> None:
    a = rollout(gym.make(env_id, **kwargs), seed=7, n=120)
    b = rollout(gym.make(env_id, **kwargs), seed=7, n=120)
    assert len(a[0]) == len(b[0])
    for x, y in zip(a[0], b[0], strict=True):
        np.testing.assert_array_equal(x, y)
    assert a[1] == b[1]
    assert a[2] == b[2]


@pytest.mark.parametrize("env_id", PATH_IDS)
def test_envs_names_scales_and_reward_terms(env_id: str) -> None:
    env = gym.make(env_id)
    u = env.unwrapped
    assert len(u.obs_names) == env.observation_space.shape[0] == len(u.obs_scale)
    assert u.obs_names == tuple(_core.PATH_OBS_NAMES)
    assert u.obs_names[0] == "e_y" and u.obs_names[-1] == "preview_y_30m"
    env.reset(seed=0)
    for _ in range(20):
        _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        assert set(info["reward_terms"]) == set(REWARD_TERM_NAMES)
        assert reward == pytest.approx(sum(info["reward_terms"].values()), rel=1e-12, abs=1e-12)
        for key in ("e_y", "cone_hits", "s", "t"):
            assert key in info
        if terminated or truncated:
            break


@pytest.mark.parametrize("longitudinal", ["pedal", "force"])
def test_envs_action_to_command_follows_the_manual(longitudinal: str) -> None:
    """The Action Space table, written out here as the reference."""
    env = StraightEnv(longitudinal=longitudinal)
    v = env.vehicle
    for a in [(-1.0, -1.0), (0.3, -0.4), (0.0, 0.0), (1.0, 0.7), (-0.2, 1.0), (2.0, -3.0)]:
        a0, a1 = (min(max(x, -1.0), 1.0) for x in a)
        if longitudinal == "pedal":
            lon = a1
        else:
            lon = a1 * (v.drive_torque_max if a1 >= 0 else 4 * v.brake_torque_max) / \
                v.wheel_radius
        got = env.action_to_command(np.array(a))
        assert got == pytest.approx((a0 * v.max_steer, lon), rel=1e-15)
    assert env.action_to_command([1.0, 0.0])[0] == env.vehicle.max_steer
    if longitudinal == "force":
        v = env.vehicle
        assert env.action_to_command([0, -1])[1] == pytest.approx(
            -4 * v.brake_torque_max / v.wheel_radius)


def test_envs_observation_wiring_matches_state() -> None:
    env = StraightEnv()
    env.reset(seed=1)
    for _ in range(5):
        obs, _, _, _, info = env.step(np.array([0.2, 0.1], np.float32))
    phys = obs.astype(float) * env.obs_scale
    x, y, psi, vx, vy, r = env.state[:6]
    assert phys[0] == pytest.approx(info["e_y"], rel=1e-6) and phys[0] == pytest.approx(y, abs=1e-5)
    assert phys[1] == pytest.approx(psi, abs=1e-6)
    assert phys[2:5] == pytest.approx([vx, vy, r], rel=1e-6, abs=1e-6)
    assert phys[9:11] == pytest.approx([0.2, 0.1], rel=1e-6)
    for k, d in enumerate(_core.PATH_PREVIEW_DISTANCES):
        px, py = info["s"] + d, 0.0  # straight path along x
        lateral = -math.sin(psi) * (px - x) + math.cos(psi) * (py - y)
        assert phys[12 + k] == pytest.approx(lateral, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"control_period": 0.0203}, ValueError, "not a whole multiple of substep_dt"),
        ({"substep_dt": -1}, ValueError, "substep_dt must be a positive"),
        ({"vehicle": "no_such_car"}, ConfigError, "unknown vehicle 'no_such_car'"),
        ({"reward_weights": {"trackin": 1.0}}, ValueError,
         "unknown reward weight 'trackin'.*valid keys: tracking"),
        ({"level": "L9"}, ValueError, "level must be one of"),
        ({"vehicle": {"mas": 1.0}}, ConfigError, "unknown key 'mas'"),
    ],
)
def test_envs_bad_config_raises_clear_error(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        gym.make("VDSim-DLC-v0", **kwargs)


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.array([np.nan, 0.0], np.float32), "action contains NaN"),
        (np.zeros(3, np.float32), r"shape \(2,\).*got shape \(3,\)"),
        (np.array([1.5, 0.0], np.float32), r"must be in \[-1, 1\].*clip"),
        (np.array([0.0, -np.inf]), "inf"),
    ],
)
def test_envs_bad_action_raises_and_env_stays_usable(action: np.ndarray, match: str) -> None:
    env = gym.make("VDSim-DLC-v0")
    env.reset(seed=0)
    env.step(np.zeros(2, np.float32))
    t_before = env.unwrapped._info[3]
    with pytest.raises(ValueError, match=match):
        env.step(action)
    assert env.unwrapped._info[3] == t_before  # the bad action did not advance the sim
    _, _, _, _, info = env.step(np.zeros(2, np.float32))
    assert info["t"] == pytest.approx(t_before + 0.02)


def test_envs_bad_render_mode_raises() -> None:
    from vdsim_gym.errors import UnsupportedRenderModeError

    with pytest.raises(ValueError, match="render_mode must be None or one of") as info:
        StraightEnv(render_mode="ansi")  # gym.make would warn first
    assert isinstance(info.value, TypeError)  # SB3's make_vec_env retries on a TypeError
    assert isinstance(info.value, UnsupportedRenderModeError)


def test_envs_reward_weights_apply() -> None:
    env = StraightEnv(reward_weights={"progress": 0.0, "tracking": 2.0})
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(2, np.float32))
    assert info["reward_terms"]["progress"] == 0.0
    assert info["reward_terms"]["tracking"] == pytest.approx(-2.0 * info["e_y"] ** 2)


def test_envs_render_returns_rgb_image() -> None:
    env = gym.make("VDSim-DLC-v0", render_mode="rgb_array")
    env.reset(seed=0)
    for _ in range(3):
        env.step(np.zeros(2, np.float32))
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert img.min() < 200  # something was drawn on the white background
    assert env.metadata["render_fps"] == 50


def test_envs_dlc_straight_fails_tracking_controller_passes() -> None:
    env = gym.make("VDSim-DLC-v0")
    terminated, _, info = drive(env, lambda obs: np.zeros(2, np.float32))
    assert terminated
    assert info["episode_summary"]["outcome"] in ("cone_hit", "off_corridor")

    env = gym.make("VDSim-DLC-v0", speed=15.0)  # linear range: a simple controller suffices
    u = env.unwrapped
    terminated, truncated, info = drive(env, lambda obs: tracking_action(u, obs))
    assert not terminated and truncated, info.get("episode_summary")
    assert info["cone_hits"] == 0 and info["episode_summary"]["outcome"] == "course_end"
    assert info["pass_speed"] == pytest.approx(u.speed, abs=2.0)
    assert info["s"] >= u.course.length


def test_envs_truncates_at_course_end() -> None:
    env = StraightEnv()
    terminated, truncated, info = drive(env, lambda obs: np.zeros(2, np.float32))
    assert truncated and not terminated
    assert info["s"] >= 60.0 and info["pass_speed"] == pytest.approx(20.0, abs=1.0)
    assert info["episode_summary"]["steps"] == pytest.approx(60.0 / 20.0 / 0.02, abs=3)


@pytest.mark.parametrize("terminate_on_cone", [True, False])
def test_envs_cone_hit_counts_once(terminate_on_cone: bool) -> None:
    env = StraightEnv(cone=True, terminate_on_cone=terminate_on_cone)
    env.reset(seed=0)
    penalties = []
    while True:
        _, _, terminated, truncated, info = env.step(np.zeros(2, np.float32))
        penalties.append(info["reward_terms"]["cone"])
        if terminated or truncated:
            break
    assert info["cone_hits"] == 1 and env.cone_hit_flags.tolist() == [True]
    assert penalties.count(-env.reward_weights["cone"]) == 1
    assert terminated is terminate_on_cone
    if terminate_on_cone:
        assert info["episode_summary"]["outcome"] == "cone_hit"
        assert info["reward_terms"]["terminal"] == -env.reward_weights["terminal"]


def test_envs_path_follow_new_course_each_reset_and_seeded() -> None:
    env = gym.make("VDSim-PathFollow-v0", course_length=60.0)
    env.reset(seed=5)
    first = env.unwrapped.course
    env.reset()
    assert not np.array_equal(first.path, env.unwrapped.course.path)
    env.reset(seed=5)
    np.testing.assert_array_equal(first.path, env.unwrapped.course.path)


def test_envs_non_finite_state_terminates_with_finite_obs() -> None:
    env = StraightEnv()
    env.reset(seed=0)
    bad = env.state
    bad[4] = np.nan
    env._core.session.set_state(bad)
    obs, reward, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["episode_summary"]["outcome"] == "non_finite"
    assert np.all(np.isfinite(obs)) and reward == -env.reward_weights["terminal"]


def test_envs_spin_out_terminates() -> None:
    env = StraightEnv()
    env.reset(seed=0)
    turned = env.state
    turned[2] = 2.0  # heading error beyond 90 deg
    env._core.session.set_state(turned)
    _, _, terminated, _, info = env.step(np.zeros(2, np.float32))
    assert terminated and info["episode_summary"]["outcome"] == "spin_out"


def _stall_run(env: PathTrackingEnv) -> tuple[list[float], dict]:
    """Full brake straight ahead from 20 m/s; the vx at each step end and the last info."""
    env.reset(seed=0)
    vx, info, done = [], {}, False
    while not done:
        _, _, terminated, truncated, info = env.step(np.array([0.0, -1.0], np.float32))
        vx.append(env.state[3])
        done = terminated or truncated
    return vx, info


def test_envs_stall_terminates_after_stall_time_below_a_quarter_of_v_ref() -> None:
    """A car braked to a halt ends "stalled" (with the terminal penalty) at the first step
    end at which vx has been below v_ref / 4 for stall_time, the time counted from the
    first slow step end, instead of idling to the time limit."""
    env = StraightEnv(time_limit=15.0)
    vx, info = _stall_run(env)
    assert info["outcome"] == "stalled"
    assert info["reward_terms"]["terminal"] == -env.reward_weights["terminal"]
    tc = env.unwrapped.control_period
    first_slow = next(k for k, v in enumerate(vx) if v < 0.25 * 20.0)
    assert all(v < 5.0 for v in vx[first_slow:])
    assert len(vx) - 1 - first_slow == round(2.0 / tc)  # 2 s after the first slow step
    assert info["t"] == pytest.approx((len(vx)) * tc)


def test_envs_stall_time_zero_never_stalls_and_bad_values_are_refused() -> None:
    env = StraightEnv(time_limit=6.0, stall_time=0.0)
    _, info = _stall_run(env)
    assert info["outcome"] == "time_limit"
    short = StraightEnv(time_limit=15.0, stall_time=0.5)
    vx_short, info_short = _stall_run(short)
    assert info_short["outcome"] == "stalled"
    for bad in (-1.0, math.nan, math.inf, "2", True):
        with pytest.raises(ValueError, match="stall_time must be a finite number"):
            StraightEnv(stall_time=bad)


def test_random_actions_end_path_follow_episodes_early() -> None:
    """The trainability review's case: uniform random actions brake the car to a halt (the
    brake is stronger than the drive); with the stall termination no episode idles to the
    40 s time limit (2000 steps)."""
    env = gym.make("VDSim-PathFollow-v0")
    env.action_space.seed(0)
    outcomes = []
    for ep in range(5):
        env.reset(seed=ep)
        done, n = False, 0
        while not done:
            _, _, terminated, truncated, info = env.step(env.action_space.sample())
            n += 1
            done = terminated or truncated
        outcomes.append(info["outcome"])
        assert n < 1000
    assert "stalled" in outcomes and "time_limit" not in outcomes


@pytest.mark.parametrize("speed", [5.0, 10.0, 20.0])
def test_dlc_time_limit_follows_the_course_so_the_baseline_reaches_its_end(speed):
    import gymnasium as gym

    from vdsim_gym.controllers import stanley_pi
    from vdsim_gym.envs.dlc import DoubleLaneChangeEnv

    env = gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=speed)
    base = env.unwrapped
    assert base.time_limit == pytest.approx(max(15.0, 1.5 * base._course.length / speed))
    assert DoubleLaneChangeEnv.course_time_limit(180.0, 5.0) == pytest.approx(54.0)
    policy = stanley_pi(env)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
        done = terminated or truncated
    assert info["outcome"] == "course_end"
    # An explicit limit is kept as given.
    assert gym.make("VDSim-DLC-v0", speed=speed, time_limit=7.0).unwrapped.time_limit == 7.0
