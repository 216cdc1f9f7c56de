"""Mode-B latency in the path envs (``latency=`` / ``overrun=`` kwargs): timing semantics,
bit-identity of a zero delay, seeding and errors."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest
from _helpers import canon

from vdsim_gym import LatencyModel
from vdsim_gym.envs import ENV_IDS, core_env

TC, DT = 0.02, 5e-4  # default control period and substep [s]
STEER = 8  # obs column delta_rw
TIMING_KEYS = tuple(k for k, _ in core_env.TIMING_KEYS)  # reported with latency only


def rollout(env: gym.Env, seed: int, n: int) -> list[tuple]:
    """(obs, reward, terminated, truncated, info) per step over n steps, resetting at ends."""
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out: list[tuple] = [(obs,)]
    for _ in range(n):
        step = env.step(rng.uniform(-0.3, 0.3, env.action_space.shape).astype(np.float32))
        out.append(step)
        if step[2] or step[3]:
            out.append(env.reset()[:1])
    return out


def assert_same_run(a: list[tuple], b: list[tuple], timing: bool = True) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x[0], y[0])
        if len(x) > 1:
            assert x[1:4] == y[1:4]
            ix, iy = x[4], y[4]
            if not timing:
                ix = {k: v for k, v in ix.items() if k not in TIMING_KEYS}
                iy = {k: v for k, v in iy.items() if k not in TIMING_KEYS}
            assert canon(ix) == canon(iy)


@pytest.mark.parametrize("overrun", ["skip", "queue"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_latency_fixed_zero_is_bit_identical_to_no_latency(env_id: str, overrun: str) -> None:
    kw = {"course_length": 40.0} if env_id == "VDSim-PathFollow-v0" else {}
    plain = rollout(gym.make(env_id, **kw), seed=3, n=150)
    env = gym.make(env_id, latency=LatencyModel.fixed(0.0), overrun=overrun, **kw)
    tc = env.unwrapped.control_period  # the dyno's is 0.1 s
    delayed = rollout(env, seed=3, n=150)
    assert_same_run(plain, delayed, timing=False)
    for step in delayed[1:]:
        if len(step) > 1:
            info = step[4]
            assert info["t_apply"] == info["t_sample"] == pytest.approx(info["t"] - tc)
            assert info["c_k"] == 0.0 and not info["overrun"] and info["n_skipped"] == 0


def test_latency_info_keys_only_with_latency() -> None:
    env = gym.make("VDSim-DLC-v0")
    env.reset(seed=0)
    info = env.step(np.zeros(2, np.float32))[4]
    assert not set(TIMING_KEYS) & set(info)
    assert env.unwrapped.latency is None and env.unwrapped.overrun == "skip"
    model = LatencyModel.fixed(0.01)
    env = gym.make("VDSim-DLC-v0", latency=model, overrun="queue")
    assert env.unwrapped.latency == model and env.unwrapped.overrun == "queue"
    env.reset(seed=0)
    info = env.step(np.zeros(2, np.float32))[4]
    assert set(TIMING_KEYS) <= set(info)
    assert isinstance(info["overrun"], bool) and isinstance(info["skipped"], int)


@pytest.mark.parametrize("overrun", ["skip", "queue"])
@pytest.mark.parametrize("delay_ms", [0.2, 3.0, 7.25, 12.5])
def test_latency_fixed_delay_shifts_realized_steer_by_ceil_d_over_dt(
    delay_ms: float, overrun: str
) -> None:
    # Rate-limited steering ramps from the substep the command applies at: at the end of
    # the period the realized steer is short by exactly (delay in substeps) * rate * dt.
    rate = 0.5  # [rad/s], slow enough to ramp through the whole period
    kw = {"actuator": {"rate_limit": rate}}
    ends = []
    for latency in (None, LatencyModel.fixed(delay_ms / 1000.0)):
        env = gym.make("VDSim-DLC-v0", latency=latency, overrun=overrun, **kw)
        env.reset(seed=0)
        env.step(np.array([0.5, 0.0], np.float32))
        ends.append(env.unwrapped._core.session.realized_steer)
    shift = (ends[0] - ends[1]) / (rate * DT)
    assert shift == pytest.approx(math.ceil(delay_ms / 1000.0 / DT - 1e-9), abs=1e-6)


@pytest.mark.parametrize("overrun", ["skip", "queue"])
def test_latency_delay_of_one_period_moves_the_steer_step_one_env_step(overrun: str) -> None:
    # c == Tc: no overrun, no skip; the command lands on the next grid point, so the
    # steering step shows one env step later (plain actuator: realized = commanded).
    def steer_trace(latency: LatencyModel | None) -> list[float]:
        env = gym.make("VDSim-DLC-v0", latency=latency, overrun=overrun)
        env.reset(seed=0)
        trace = []
        for k in range(6):
            action = np.array([0.2 if k >= 2 else 0.0, 0.0], np.float32)
            obs, _, _, _, info = env.step(action)
            trace.append(float(obs[STEER]))
            if latency is not None:
                assert not info["overrun"] and info["skipped"] == 0
                assert info["t"] == pytest.approx((k + 1) * TC)
                assert info["t_apply"] == pytest.approx(info["t_sample"] + TC)
        return trace

    plain, late = steer_trace(None), steer_trace(LatencyModel.fixed(TC))
    assert plain.index(max(plain)) == 2 and plain[1] == 0.0
    assert late[:3] == [0.0, 0.0, 0.0] and late[3:] == plain[2:5]


def test_latency_skip_overrun_spans_the_skipped_periods() -> None:
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(2.5 * TC), overrun="skip")
    env.reset(seed=0)
    t_prev = 0.0
    for n in range(1, 6):
        _, _, _, _, info = env.step(np.zeros(2, np.float32))
        assert info["t"] == pytest.approx(t_prev + 3 * TC)
        assert info["t_sample"] == pytest.approx(t_prev)
        assert info["t_apply"] == pytest.approx(t_prev + 2.5 * TC)
        assert info["overrun"] is True and info["skipped"] == 2
        assert info["n_overrun"] == n and info["n_skipped"] == 2 * n
        t_prev = info["t"]


def test_latency_queue_overrun_accumulates_delay() -> None:
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(2.5 * TC), overrun="queue")
    env.reset(seed=0)
    lags = []
    for n in range(1, 6):
        _, _, _, _, info = env.step(np.zeros(2, np.float32))
        assert info["t"] == pytest.approx(n * TC)
        assert info["t_sample"] == pytest.approx((n - 1) * TC)
        assert info["overrun"] is True and info["skipped"] == 0 and info["n_skipped"] == 0
        assert info["n_overrun"] == n
        lags.append(info["t_apply"] - info["t_sample"])
    assert np.diff(lags) == pytest.approx([1.5 * TC] * 4)
    assert lags[0] == pytest.approx(2.5 * TC)


def test_latency_seeded_uniform_reproducible_per_reset_seed() -> None:
    def infos(seed: int, model_seed: int = 0) -> list[dict]:
        env = gym.make("VDSim-DLC-v0", latency=LatencyModel.uniform(0.0, 0.03, model_seed))
        return [step[4] for step in rollout(env, seed=seed, n=40)[1:] if len(step) > 1]

    a, b, c = infos(11), infos(11), infos(12)
    assert a == b
    assert [i["c_k"] for i in a] != [i["c_k"] for i in c]
    assert [i["c_k"] for i in a] != [i["c_k"] for i in infos(11, model_seed=1)]
    assert len({i["c_k"] for i in a}) == len(a)  # drawn afresh every sample
    assert any(i["overrun"] for i in a) and not all(i["overrun"] for i in a)


def test_latency_reset_reseeds_each_episode_and_leaves_the_scenario_stream_alone() -> None:
    env = gym.make("VDSim-PathFollow-v0", course_length=40.0,
                   latency=LatencyModel.normal(0.01, 0.005, seed=4))
    plain = gym.make("VDSim-PathFollow-v0", course_length=40.0)
    cks = []
    for seed in (5, None, 5):
        obs, _ = env.reset(seed=seed)
        obs_plain, _ = plain.reset(seed=seed)
        np.testing.assert_array_equal(obs, obs_plain)  # same course and start noise
        cks.append([env.step(np.zeros(2, np.float32))[4]["c_k"] for _ in range(5)])
    assert cks[0] == cks[2] and cks[0] != cks[1]


def test_latency_measured_needs_a_delay_per_step() -> None:
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.measured(), overrun="queue")
    env.reset(seed=0)
    with pytest.raises(RuntimeError, match=r"set_next_delay\(c_seconds\)"):
        env.step(np.zeros(2, np.float32))
    assert env.unwrapped._info[3] == 0.0  # nothing advanced
    u = env.unwrapped
    for c in (0.004, 0.031):
        u.set_next_delay(c)
        info = env.step(np.zeros(2, np.float32))[4]
        assert info["c_k"] == c
    assert info["overrun"] is True
    with pytest.raises(RuntimeError, match="set_next_delay"):  # consumed by the step
        env.step(np.zeros(2, np.float32))
    for bad in (-0.001, math.nan, "1ms"):
        with pytest.raises(ValueError, match=r"finite number of seconds in \[0, MAX_DELAY_S"):
            u.set_next_delay(bad)
    u.set_next_delay(0.01)
    env.reset(seed=0)  # a pending delay does not survive a reset
    with pytest.raises(RuntimeError, match="set_next_delay"):
        env.step(np.zeros(2, np.float32))


def test_latency_set_next_delay_rejected_without_measured_model() -> None:
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.01))
    with pytest.raises(ValueError, match=r"LatencyModel.measured\(\) only"):
        env.unwrapped.set_next_delay(0.01)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"overrun": "later"}, r"overrun must be one of \('skip', 'queue'\), got 'later'"),
        ({"latency": 0.01}, r"pass latency=LatencyModel.fixed\(0.01\)"),
        ({"latency": "fixed"}, r"latency must be a LatencyModel: build it with LatencyModel.fixed"),
        ({"latency": LatencyModel.fixed(0.01), "overrun": None}, "overrun must be one of"),
    ],
)
def test_latency_bad_kwargs_raise_naming_the_fix(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        gym.make("VDSim-DLC-v0", **kwargs)


def test_latency_configure_requires_reset_and_can_be_removed() -> None:
    env = gym.make("VDSim-DLC-v0").unwrapped
    env.reset(seed=1)
    env.configure_latency(LatencyModel.fixed(0.0), "queue")
    with pytest.raises(gym.error.ResetNeeded):
        env.step(np.zeros(2, np.float32))
    env.configure_latency(None)
    assert env.latency is None
    ref = gym.make("VDSim-DLC-v0").unwrapped
    assert_same_run(rollout(env, 2, 20), rollout(ref, 2, 20))


# ------------------------------------------------------------------ time limit in seconds

def _run_to_end(env, seed=0):
    from vdsim_gym.controllers import stanley_pi

    policy = stanley_pi(env)
    obs, _ = env.reset(seed=seed)
    steps = 0
    while True:
        obs, _, term, trunc, info = env.step(policy.predict(obs)[0])
        steps += 1
        if term or trunc:
            return steps, info


@pytest.mark.parametrize("period", [0.02, 0.01, 0.005])
def test_time_limit_is_seconds_whatever_the_control_period(period):
    """A slow DLC (5 m/s: the course takes ~36 s) given 15 s is truncated at 15 s of
    simulated time, not at a step count fixed for 20 ms (750 steps would cut a 10 ms
    episode at 7.5 s)."""
    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", speed=5.0,
                   control_period=period, time_limit=15.0)
    steps, info = _run_to_end(env)
    assert info["outcome"] == "time_limit" and math.isnan(info["pass_speed"])
    assert info["t"] == pytest.approx(15.0, abs=1e-9)
    assert steps == round(15.0 / period)
    assert info["episode_summary"]["outcome"] == "time_limit"


def test_time_limit_counts_time_under_skip_latency():
    """Under skip, one env step spans several periods: the limit is still 15 s of time."""
    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", speed=5.0,
                   latency=LatencyModel.fixed(0.05), overrun="skip", time_limit=15.0)
    steps, info = _run_to_end(env)
    assert info["outcome"] == "time_limit" and 15.0 <= info["t"] < 15.0 + 0.06
    assert steps < 750


def test_time_limit_options():
    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", speed=5.0, time_limit=1.01)
    steps, info = _run_to_end(env)
    assert (steps, info["outcome"]) == (51, "time_limit")  # first step end at or past 1.01 s
    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", speed=20.0, time_limit=None)
    _, info = _run_to_end(env)
    assert info["outcome"] != "time_limit"
    for bad in (0, -1.0, float("nan"), 1e9, "15"):
        with pytest.raises(ValueError, match="time_limit must be None or seconds"):
            gym.make("VDSim-DLC-v0", time_limit=bad)


def test_vector_env_time_limit_matches_single_envs():
    kw = {"preset": "lane_change_3p5_30", "speed": 5.0, "time_limit": 0.5}
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2, threads=1, **kw)
    obs, _ = vec.reset(seed=0)
    singles = [gym.make("VDSim-DLC-v0", **kw) for _ in range(2)]
    for i, e in enumerate(singles):
        np.testing.assert_array_equal(e.reset(seed=i)[0], obs[i])
    for _ in range(25):
        o, r, term, trunc, infos = vec.step(np.zeros((2, 2)))
        ref = [e.step(np.zeros(2)) for e in singles]
        np.testing.assert_array_equal(o, np.stack([x[0] for x in ref]))
        np.testing.assert_array_equal(trunc, [x[3] for x in ref])
    assert trunc.all() and list(infos["outcome"]) == ["time_limit"] * 2
    vec.close()
