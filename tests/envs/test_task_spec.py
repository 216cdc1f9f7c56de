"""Task facts come from the C++ task spec only (issue 28): every env's observation
bounds are the core's one clip, its scales the core's, its reward terms, default weights
and flag bits the spec's; reset info is read by column name; the Plant-side path
observation is the core's own."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym
from vdsim_gym import _core
from vdsim_gym.envs import acc, dyno, path_env

CORES = {"VDSim-DLC-v0": _core.PathEnvCore, "VDSim-PathFollow-v0": _core.PathEnvCore,
         "VDSim-ACC-v0": _core.AccEnvCore, "VDSim-Dyno-v0": _core.DynoEnvCore}


def test_every_registered_env_is_covered():
    assert set(CORES) == set(vdsim_gym.envs.ENV_IDS)


@pytest.mark.parametrize("env_id", sorted(CORES))
def test_env_reads_its_spec(env_id):
    env = gym.make(env_id).unwrapped
    spec = CORES[env_id].default_spec()
    core_spec = env._core.spec
    assert env.obs_names == spec.obs_names == core_spec.obs_names
    assert env.reward_term_names == spec.term_names
    assert env.info_names == spec.info_names
    assert env.summary_names == spec.summary_names
    assert list(spec.default_weights) == list(spec.term_names)
    assert set(spec.flags) >= {"terminated", "truncated", "time_limit"}
    assert {k: spec.flags[k] for k in ("terminated", "truncated", "time_limit")} == \
        dict(_core.ENV_FLAGS)
    # One clip for every task column: the core's.
    np.testing.assert_array_equal(env.observation_space.high, _core.OBS_CLIP)
    np.testing.assert_array_equal(env.observation_space.low, -_core.OBS_CLIP)
    np.testing.assert_array_equal(env.obs_scale, env._core.obs_scale())
    assert env.obs_scale.shape == (len(env.obs_names),) and np.all(env.obs_scale > 0)


def test_default_weights_are_the_params_defaults():
    p = _core.TaskParams().weights
    assert path_env.DEFAULT_REWARD_WEIGHTS == {k: getattr(p, k)
                                               for k in path_env.REWARD_TERM_NAMES}
    w = _core.AccTaskParams().weights
    assert acc.DEFAULT_WEIGHTS == {k: getattr(w, k) for k in acc.TERM_NAMES}
    d = _core.DriveCycleParams()
    assert dyno.DEFAULT_WEIGHTS == {k: getattr(d, f"w_{k}") for k in dyno.TERM_NAMES}
    assert acc.TERM_NAMES == tuple(_core.AccEnvCore.default_spec().term_names)
    assert dyno.TERM_NAMES == tuple(_core.DynoEnvCore.default_spec().term_names)


def test_given_weights_reach_the_core():
    env = gym.make("VDSim-ACC-v0", reward_weights={"alive": 0.0, "gap": 0.0, "speed": 0.0,
                                                   "jerk": 0.0, "comfort": 0.0,
                                                   "safety": 0.0}).unwrapped
    env.reset(seed=1)
    _, r, *_, info = env.step(np.zeros(1, np.float32))
    assert r == 0.0 and set(info["reward_terms"].values()) == {0.0}
    env = gym.make("VDSim-Dyno-v0", reward_weights={"energy": 0.0}).unwrapped
    env.reset(seed=1)
    *_, info = env.step(np.zeros(1, np.float32))
    assert info["reward_terms"]["energy"] == 0.0


def test_scale_follows_action_history_and_the_vehicle():
    env = gym.make("VDSim-DLC-v0", action_history=2).unwrapped
    n = len(_core.PATH_OBS_NAMES)
    assert env.obs_scale.shape == (n + 4,)
    np.testing.assert_array_equal(env.obs_scale[n:], 1.0)
    assert env.obs_scale[env.obs_names.index("delta_rw")] == env.vehicle.max_steer
    np.testing.assert_array_equal(env.observation_space.high[n:], 1.0)
    env.set_action_history(0)
    assert env.obs_scale.shape == (n,)


@pytest.mark.parametrize("env_id", sorted(CORES))
def test_reset_info_is_read_by_name(env_id):
    """The reset info has the step info's task keys and their values at reset, read from
    the info row by column name (as every step's info is)."""
    env = gym.make(env_id).unwrapped
    _, info = env.reset(seed=2)
    row = env._info
    for k, tp in type(env).INFO_KEYS:
        assert type(info[k]) is tp and info[k] == tp(row[env.info_names.index(k)]), k
    *_, step_info = env.step(np.zeros(env.action_space.shape, np.float32))
    assert {k for k, _ in type(env).INFO_KEYS} <= set(step_info)


def test_outcomes_use_the_spec_bits():
    f = dict(_core.AccEnvCore.default_spec().flags)
    assert acc.ACCEnv.outcome(f["terminated"] | f["collision"]) == "collision"
    assert acc.ACCEnv.outcome(f["terminated"] | f["non_finite"]) == "non_finite"
    f = dict(_core.DynoEnvCore.default_spec().flags)
    assert dyno.DynoEnv.outcome(f["terminated"] | f["non_finite"]) == "non_finite"
    f = dict(_core.PATH_FLAGS)
    assert path_env.episode_outcome(f["terminated"] | f["stalled"]) == "stalled"


def _reference_path_outcome(flags: int, f: dict[str, int]) -> str | None:
    """The path envs' outcome as it was written by hand before CoreEnv derived it from the
    spec: the termination causes in this priority order, then the truncations."""
    if flags & f["terminated"]:
        for name in ("non_finite", "spin_out", "off_corridor", "cone_hit", "stalled"):
            if flags & f[name]:
                return name
        return "terminated"
    if flags & f["time_limit"]:
        return "time_limit"
    return "course_end" if flags & f["truncated"] else None


def test_generic_outcome_equals_the_hand_written_rules_on_every_flag_combination():
    """CoreEnv.outcome (the task's flags in the spec's order, then the env's names for
    its truncations) against the rules each env wrote by hand, over every combination of
    the flag bits."""
    f = dict(_core.PathEnvCore.default_spec().flags)
    bits = list(f.values())
    for mask in range(1 << len(bits)):
        flags = sum(b for k, b in enumerate(bits) if mask >> k & 1)
        assert path_env.PathTrackingEnv.outcome(flags) == _reference_path_outcome(flags, f)
    for cls, core, end in ((acc.ACCEnv, _core.AccEnvCore, "scenario_end"),
                           (dyno.DynoEnv, _core.DynoEnvCore, "cycle_end")):
        f = dict(core.default_spec().flags)
        bits = list(f.values())
        for mask in range(1 << len(bits)):
            flags = sum(b for k, b in enumerate(bits) if mask >> k & 1)
            if flags & f["terminated"]:
                want = next((n for n in ("collision", "non_finite") if n in f and flags & f[n]),
                            "terminated")
            else:
                want = end if flags & (f["time_limit"] | f["truncated"]) else None
            assert cls.outcome(flags) == want, (cls.__name__, flags)


def test_a_path_core_without_a_course_refuses_to_step():
    """Stepping a path core that never had a course read an empty path (a segfault);
    it is now an error naming the fix, from the core, its observer and the vector
    session alike, and a reset afterwards steps normally."""
    env = gym.make("VDSim-PathFollow-v0").unwrapped
    core = env._core
    obs = np.zeros(len(core.obs_names), np.float32)
    terms, info = np.zeros(len(core.term_names)), np.zeros(len(core.info_names))
    with pytest.raises(RuntimeError, match="no course: call set_course_data or set_random_course"):
        core.step(0.0, 0.0, obs, terms, info)
    with pytest.raises(RuntimeError, match="no course"):
        core.observer()
    vec = gym.make_vec("VDSim-PathFollow-v0", num_envs=2, vectorization_mode="vector_entry_point")
    u = vec.unwrapped
    u._needs_reset = False  # as if reset: no row has a course yet
    with pytest.raises(RuntimeError, match="no course"):
        u.step_core(np.zeros((2, 2)))
    vec.reset(seed=0)
    _, _, term, trunc, _ = vec.step(np.zeros((2, 2), np.float32))
    assert term.shape == (2,) and not term.any()
    env.reset(seed=0)
    assert core.step(0.0, 0.0, obs, terms, info) == 0
    vec.close()


@pytest.mark.parametrize("env_id", ["VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0",
                                    "VDSim-Dyno-v0"])
def test_a_core_stepped_before_its_first_reset_does_not_crash(env_id):
    """Every task's core, stepped before the env's first reset (through the private core,
    as a vector row never reset would be): an error naming the fix where the task needs
    its episode's data (course, scenario), else a finite step; never a read out of
    bounds (the path and ACC cores segfaulted)."""
    env = gym.make(env_id).unwrapped
    core = env._core
    obs = np.zeros(len(core.obs_names), np.float32)
    terms, info = np.zeros(len(core.term_names)), np.zeros(len(core.info_names))
    try:
        core.step(*([0.0] * len(core.action_names)), obs, terms, info)
    except RuntimeError as exc:
        assert "before stepping it (the Python env's reset" in str(exc)
    else:
        assert np.all(np.isfinite(obs))
    env.reset(seed=0)
    core.step(*([0.0] * len(core.action_names)), obs, terms, info)
    assert np.all(np.isfinite(obs))


def test_path_observer_is_the_cores_observation():
    """PathObserver (what eval.policy_adapter uses on the Plant) computes the env's
    observation from the state the env's core is in, bit for bit."""
    with pytest.raises(ValueError, match="reset"):  # its course is drawn at reset
        gym.make("VDSim-PathFollow-v0").unwrapped.path_observer()
    env = gym.make("VDSim-DLC-v0").unwrapped  # its one course is set at construction
    obs, _ = env.reset(seed=5)
    obs_ref = env.path_observer()
    np.testing.assert_array_equal(obs_ref.obs_scale, env.obs_scale)
    prev = (0.0, 0.0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        p = env.plant_observation()
        vec = obs_ref.observe(p["X"], p["Y"], p["psi"], p["vx"], p["vy"], p["r"], p["ax"],
                              p["ay"], p["delta_rw"], *prev)
        np.testing.assert_array_equal(vec, obs)
        a = rng.uniform(-0.3, 0.3, 2).astype(np.float32)
        a[1] = 0.2
        obs, *_ = env.step(a)
        prev = (float(a[0]), float(a[1]))


def test_path_manual_numbers_are_the_cores():
    """The path envs' manual (SHARED_DOC) shows the scales and default weights; they are
    documentation of the core's values, checked here against it."""
    import re

    doc = path_env.SHARED_DOC
    env = gym.make("VDSim-DLC-v0").unwrapped
    for m in re.finditer(r"^\s*\| (\d+)(?:-(\d+))? \| (\S+) \| [^|]+ \| (\S+) \|", doc, re.M):
        lo, hi, scale = int(m[1]), int(m[2] or m[1]), m[4]
        want = env.vehicle.max_steer if scale == "max_steer" else float(scale)
        np.testing.assert_array_equal(env.obs_scale[lo:hi + 1], want)
    weights = dict(re.findall(r"^\s*- ``(\w+)`` = .*\[([\d.]+)\]$", doc, re.M))
    assert {k: float(v) for k, v in weights.items()} == path_env.DEFAULT_REWARD_WEIGHTS
    assert f"clipped to\n    [-{_core.OBS_CLIP:g}, {_core.OBS_CLIP:g}]" in doc
