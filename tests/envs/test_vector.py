"""VDSimVectorEnv (gym.make_vec): bit-identity with the single env, autoreset semantics,
batch validation, threads, close/reuse, memory.

The reference is Gymnasium's own SyncVectorEnv over ``gym.make(id)`` envs (TimeLimit and
all), i.e. a plain Python loop over single envs seeded s + i: obviously correct, slow.
"""

from __future__ import annotations

import gc
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

from vdsim_gym import LatencyModel
from vdsim_gym.envs import ENV_IDS
from vdsim_gym.envs.vector import VDSimVectorEnv

# Short episodes: a 40 m PathFollow course (2-5 s) and a small time limit cross several
# episode ends (course end, off-corridor, time limit) within a few hundred steps.
SHORT = {"course_length": 40.0}
ONLY_SINGLE: set[str] = set()  # keys only SyncVectorEnv reports (none)


def make_pair(env_id: str, n: int, mode: str = "next_step", threads: int = 1,
              **kwargs: Any) -> tuple[VDSimVectorEnv, SyncVectorEnv]:
    vec = gym.make_vec(env_id, num_envs=n, threads=threads, autoreset_mode=mode, **kwargs)
    ref = SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)],
                        autoreset_mode=AutoresetMode(vec.metadata["autoreset_mode"]))
    return vec, ref


def assert_same_infos(ours: dict[str, Any], ref: dict[str, Any]) -> None:
    """Same keys, same masks, same masked values and dtypes."""
    extra = {k.lstrip("_") for k in set(ref) - set(ours)}
    assert extra <= ONLY_SINGLE, extra
    for key, value in ours.items():
        if key.startswith("_"):
            continue
        mask = ours[f"_{key}"]
        np.testing.assert_array_equal(mask, ref[f"_{key}"], err_msg=key)
        if isinstance(value, dict):
            assert_same_infos(value, ref[key])
        elif key == "final_obs":
            for i in np.flatnonzero(mask):
                np.testing.assert_array_equal(value[i], ref[key][i])
        else:
            assert value.dtype == ref[key].dtype, key
            np.testing.assert_array_equal(value[mask], ref[key][mask], err_msg=key)


def run_pair(vec: VDSimVectorEnv, ref: gym.vector.VectorEnv, seed: int, steps: int,
             scale: float = 0.3, steer: float = 0.0) -> int:
    """Same seeded action batches into both; everything bit for bit. Returns the number
    of episode ends seen."""
    rng = np.random.default_rng(seed)
    o1, i1 = vec.reset(seed=seed)
    o2, i2 = ref.reset(seed=seed)
    np.testing.assert_array_equal(o1, o2)
    assert_same_infos(i1, i2)
    ends = 0
    for _ in range(steps):
        a = rng.uniform(-scale, scale, (vec.num_envs, *vec.single_action_space.shape))
        a = a.astype(np.float32)
        a[:, 0] += np.float32(steer)
        r1, r2 = vec.step(a), ref.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)
        assert_same_infos(r1[4], r2[4])
        ends += int(np.sum(r1[2] | r1[3]))
    return ends


LATENCIES = [
    {},
    {"latency": LatencyModel.fixed(0.01)},
    {"latency": LatencyModel.uniform(0.005, 0.05, seed=1), "overrun": "skip"},
    {"latency": LatencyModel.uniform(0.005, 0.03, seed=2), "overrun": "queue"},
]


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("lat", LATENCIES, ids=["none", "fixed", "uniform_skip", "uniform_q"])
def test_vector_matches_sync_vector_of_single_envs(lat: dict, mode: str) -> None:
    vec, ref = make_pair("VDSim-PathFollow-v0", 4, mode, max_episode_steps=60, **SHORT, **lat)
    assert run_pair(vec, ref, seed=5, steps=150) >= 4
    vec.close()
    ref.close()


def test_vector_dlc_terminations_match_single_envs() -> None:
    # A steady steer bias: cones and the corridor end episodes early.
    vec, ref = make_pair("VDSim-DLC-v0", 3, "same_step", speed=15.0)
    assert run_pair(vec, ref, seed=2, steps=120, scale=0.3, steer=0.3) >= 3
    vec.close()


def test_vector_env_i_is_the_single_env_seeded_s_plus_i() -> None:
    n, seed, steps = 3, 11, 120
    kw = {**SHORT, "latency": LatencyModel.uniform(0.0, 0.04, seed=3)}
    vec = gym.make_vec("VDSim-PathFollow-v0", num_envs=n, max_episode_steps=50, **kw)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-0.4, 0.4, (steps, n, 2)).astype(np.float32)
    obs, _ = vec.reset(seed=seed)
    batch = [vec.step(a) for a in actions]
    for i in range(n):
        env = gym.make("VDSim-PathFollow-v0", max_episode_steps=50, **kw)
        o, _ = env.reset(seed=seed + i)
        np.testing.assert_array_equal(o, obs[i])
        done = False
        for k, a in enumerate(actions):
            if done:  # NEXT_STEP: the vector env resets this row instead of stepping
                o, _ = env.reset()
                np.testing.assert_array_equal(o, batch[k][0][i])
                assert batch[k][1][i] == 0.0 and not batch[k][2][i] and not batch[k][3][i]
                done = False
                continue
            o, r, te, tr, info = env.step(a[i])
            np.testing.assert_array_equal(o, batch[k][0][i])
            assert (r, te, tr) == (batch[k][1][i], batch[k][2][i], batch[k][3][i])
            assert info["e_y"] == batch[k][4]["e_y"][i]
            assert info["c_k"] == batch[k][4]["c_k"][i]
            done = te or tr


def test_vector_results_do_not_depend_on_threads() -> None:
    runs = []
    for threads in (1, 2, 3):
        vec = gym.make_vec("VDSim-PathFollow-v0", num_envs=5, threads=threads,
                           max_episode_steps=40, **SHORT)
        rng = np.random.default_rng(1)
        out = [vec.reset(seed=4)[0]]
        for _ in range(90):
            o, r, te, tr, info = vec.step(rng.uniform(-0.3, 0.3, (5, 2)))
            out += [o, r, te, tr, info["e_y"]]
        vec.close()
        runs.append(out)
    for other in runs[1:]:
        for x, y in zip(runs[0], other, strict=True):
            np.testing.assert_array_equal(x, y)


def test_vector_next_step_autoreset_reports_final_then_reset_obs() -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2, max_episode_steps=3)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    vec.reset(seed=0)
    a = np.zeros((2, 2), np.float32)
    for _ in range(2):
        _, _, te, tr, _ = vec.step(a)
        assert not (te | tr).any()
    final, r, te, tr, info = vec.step(a)
    assert tr.all() and not te.any() and (r != 0).all()
    assert info["_reward_terms"].all()
    nxt, r, te, tr, info = vec.step(a)  # the reset step: actions ignored
    assert (r == 0).all() and not (te | tr).any()
    assert "reward_terms" not in info and info["_e_y"].all()  # as SyncVectorEnv: reset infos
    fresh, _ = gym.make_vec("VDSim-DLC-v0", num_envs=2).reset(seed=None)
    assert not np.array_equal(nxt, final)
    np.testing.assert_array_equal(nxt[:, 2], fresh[:, 2])  # vx back at the entry speed
    vec.step(a)  # stepping again runs normally
    assert (vec._elapsed == 1).all()


def test_vector_same_step_autoreset_puts_final_obs_in_infos() -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=3, autoreset_mode="same_step",
                       max_episode_steps=4)
    assert vec.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    vec.reset(seed=0)
    a = np.zeros((3, 2), np.float32)
    for _ in range(3):
        last, *_ = vec.step(a)
    obs, r, te, tr, info = vec.step(a)
    assert tr.all() and info["_final_obs"].all() and info["_final_info"].all()
    for i in range(3):
        assert not np.array_equal(info["final_obs"][i], obs[i])
        assert info["final_obs"][i][2] < last[i][2] or info["final_obs"][i][2] != obs[i][2]
    assert info["final_info"]["_reward_terms"].all() and "reward_terms" not in info
    np.testing.assert_array_equal(info["t"], 0.0)  # top level: the reset rows' info
    assert (info["final_info"]["t"] > 0).all()
    obs2, r2, te2, tr2, _ = vec.step(a)
    assert not (te2 | tr2).any() and (r2 != 0).all()


def test_vector_bad_action_row_names_env_and_steps_nothing() -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=6)
    vec.reset(seed=0)
    before = vec._info.copy()
    a = np.zeros((6, 2), np.float32)
    a[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"env 3: actions\[3\].*NaN"):
        vec.step(a)
    a[3, 1] = 0.0
    a[4, 0] = 1.5
    with pytest.raises(ValueError, match=r"env 4: .*out of range"):
        vec.step(a)
    a[4, 0] = -np.inf
    with pytest.raises(ValueError, match=r"env 4: .*inf"):
        vec.step(a)
    np.testing.assert_array_equal(vec._info, before)  # nothing stepped
    assert (vec._elapsed == 0).all()
    a[4, 0] = 0.0
    vec.step(a)  # still usable
    assert (vec._elapsed == 1).all()


@pytest.mark.parametrize(
    ("actions", "match"),
    [
        (np.zeros((5, 2)), r"shape \(num_envs, 2\) = \(4, 2\), got shape \(5, 2\)"),
        (np.zeros((4,)), r"got shape \(4,\)"),
        (np.zeros((4, 3)), r"got shape \(4, 3\)"),
        ([["a", "b"]] * 4, r"actions must be a \(4, 2\) array of real numbers"),
    ],
)
def test_vector_wrong_batch_shape_is_a_clear_error(actions: Any, match: str) -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=4)
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        vec.step(actions)


def test_vector_accepts_lists_ints_and_non_contiguous_actions() -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2)
    vec.reset(seed=0)
    vec.step([[0, 0], [0, 1]])
    vec.step(np.zeros((2, 4), np.float32)[:, ::2])
    vec.step(np.zeros((2, 2), np.int64))


def test_vector_close_step_after_close_and_reuse() -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2, threads=2)
    with pytest.raises(gym.error.ResetNeeded):
        vec.step(np.zeros((2, 2)))
    vec.reset(seed=0)
    vec.close()
    vec.close()  # idempotent
    with pytest.raises(gym.error.ClosedEnvironmentError, match="closed; create a new one"):
        vec.step(np.zeros((2, 2)))
    with pytest.raises(gym.error.ClosedEnvironmentError):
        vec.reset()
    other = gym.make_vec("VDSim-DLC-v0", num_envs=2, threads=2)
    other.reset(seed=0)
    other.step(np.zeros((2, 2)))
    other.close()
    del vec, other
    gc.collect()


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_make_vec_returns_vdsim_vector_env(env_id: str) -> None:
    dyno = env_id == "VDSim-Dyno-v0"  # the bench has no level: its plant kwargs differ
    vec = gym.make_vec(env_id, num_envs=3, **({"driver": "accel"} if dyno else {"level": "L1"}))
    assert isinstance(vec, VDSimVectorEnv)
    assert isinstance(vec.metadata["autoreset_mode"], AutoresetMode)
    single = gym.make(env_id)
    assert vec.observation_space.shape == (3, *single.observation_space.shape)
    assert vec.action_space.shape == (3, *single.action_space.shape)
    assert vec.single_observation_space == gym.make(env_id).observation_space
    assert vec.max_episode_steps == gym.spec(env_id).max_episode_steps
    assert vec.get_attr("longitudinal" if dyno else "level") == ("accel" if dyno else "L1",) * 3
    obs, _ = vec.reset(seed=0)
    assert obs in vec.observation_space
    obs2, *_ = vec.step(vec.action_space.sample())
    assert obs2 in vec.observation_space
    obs2[:] = 99  # returned arrays are copies, not the session's buffers
    assert not (vec._obs == 99).any()


def test_vector_per_env_kwargs_give_each_row_its_own_latency() -> None:
    lats = [None, LatencyModel.fixed(0.01), LatencyModel.fixed(0.05)]
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=3, per_env_kwargs=[{"latency": m} for m in lats])
    assert vec.get_attr("latency") == tuple(lats)
    vec.reset(seed=0)
    info = vec.step(np.zeros((3, 2)))[4]
    np.testing.assert_array_equal(info["_c_k"], [False, True, True])
    np.testing.assert_array_equal(info["c_k"], [0.0, 0.01, 0.05])
    assert info["skipped"][2] == 2  # 50 ms with skip: the step spans 3 periods
    for bad, match in [({"latency": LatencyModel.measured()}, "measured"),
                       ({"render_mode": "rgb_array"}, "does not render"),
                       ({"max_episode_steps": 0}, "max_episode_steps"),
                       ({"autoreset_mode": "disabled"}, "autoreset_mode"),
                       ({"threads": -1}, "threads"),
                       ({"per_env_kwargs": [{}]}, "sequence of 3 mappings")]:
        with pytest.raises(ValueError, match=match):
            gym.make_vec("VDSim-DLC-v0", num_envs=3, **bad)


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_vector_per_env_latency_rows_match_single_envs(mode: str) -> None:
    """A latency grid in one batch: row i is the single env built with row i's kwargs."""
    grid = [{}, {"latency": LatencyModel.fixed(0.03), "overrun": "queue"},
            {"latency": LatencyModel.uniform(0.0, 0.06, seed=9)}, {"level": "L1"}]
    kw = {**SHORT, "max_episode_steps": 45}
    vec = gym.make_vec("VDSim-PathFollow-v0", num_envs=4, threads=2, autoreset_mode=mode,
                       per_env_kwargs=grid, **kw)
    ref = SyncVectorEnv([lambda g=g: gym.make("VDSim-PathFollow-v0", **kw, **g) for g in grid],
                        autoreset_mode=AutoresetMode(vec.metadata["autoreset_mode"]))
    assert run_pair(vec, ref, seed=1, steps=120) >= 4
    vec.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_vector_rows_with_equal_kwargs_are_copies_of_their_groups_first(mode: str) -> None:
    """A latency grid of several rows per cell (a sweep's batch): one env per distinct
    per_env_kwargs is built, the cell's other rows are copies of its core, and every row
    is the single env built with its kwargs; a copied row's env, built when asked for,
    carries its own kwargs."""
    cells = [{}, {"latency": LatencyModel.fixed(0.03), "overrun": "queue"},
             {"latency": LatencyModel.uniform(0.0, 0.06, seed=9)}]
    grid = [cells[i % 3] for i in range(7)]
    kw = {**SHORT, "max_episode_steps": 30}
    vec = gym.make_vec("VDSim-PathFollow-v0", num_envs=7, autoreset_mode=mode,
                       per_env_kwargs=grid, **kw)
    assert vec.unwrapped.envs.n_built() == 3
    ref = SyncVectorEnv([lambda g=g: gym.make("VDSim-PathFollow-v0", **kw, **g) for g in grid],
                        autoreset_mode=AutoresetMode(vec.metadata["autoreset_mode"]))
    assert run_pair(vec, ref, seed=1, steps=80) >= 14
    assert vec.unwrapped.envs[5].latency == cells[2]["latency"]
    assert vec.unwrapped.envs[4].overrun == "queue"
    assert vec.unwrapped.envs.n_built() == 5
    vec.close()
    ref.close()


def test_vector_seed_list_and_unseeded_reset() -> None:
    vec = gym.make_vec("VDSim-PathFollow-v0", num_envs=2, **SHORT)
    a, _ = vec.reset(seed=[5, 3])
    b, _ = vec.reset(seed=3)
    np.testing.assert_array_equal(a[1], b[0])
    with pytest.raises(ValueError, match="list of 2 seeds"):
        vec.reset(seed=[1, 2, 3])


def rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * 4096


@pytest.mark.slow
def test_vector_1000_envs_memory_is_stable() -> None:
    n = 1000
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=n, autoreset_mode="same_step",
                       max_episode_steps=100, level="L1", integrator="euler")
    vec.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.uniform(-0.2, 0.2, (8, n, 2)).astype(np.float32)

    def run(steps: int) -> None:
        for k in range(steps):
            vec.step(actions[k % 8])

    run(300)  # warm-up: every row through at least two autoresets
    gc.collect()
    base = rss_bytes()
    run(600)
    gc.collect()
    grown = rss_bytes() - base
    vec.close()
    assert grown < 8 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 600 steps of {n} envs"


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_reset_mask_resets_only_masked_rows_as_sync_vector_env(mode):
    """reset(options={"reset_mask": m}) as SyncVectorEnv: masked rows reset (with their
    seeds), the others keep their episode; obs, rewards, flags and infos bit for bit."""
    vec, ref = make_pair("VDSim-PathFollow-v0", 3, mode=mode, threads=2, **SHORT)
    rng = np.random.default_rng(0)
    o1, _ = vec.reset(seed=5)
    o2, _ = ref.reset(seed=5)
    for step in range(60):
        if step in (7, 31):
            mask = np.array([True, False, step == 31])
            o1, i1 = vec.reset(seed=[100 + step, None, 7], options={"reset_mask": mask})
            o2, i2 = ref.reset(seed=[100 + step, None, 7], options={"reset_mask": mask})
            np.testing.assert_array_equal(o1, o2)
            assert_same_infos(i1, i2)
            np.testing.assert_array_equal(i1["_e_y"], mask)
        a = rng.uniform(-0.3, 0.3, (3, 2)).astype(np.float32)
        r1, r2 = vec.step(a), ref.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        assert_same_infos(r1[4], r2[4])
    vec.close()
    ref.close()


def test_reset_mask_bad_input():
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2, threads=1)
    with pytest.raises(gym.error.ResetNeeded, match="first reset"):
        vec.reset(options={"reset_mask": np.array([True, False])})
    vec.reset(seed=0)
    for bad in (np.array([1, 0]), np.array([True]), [True, False], np.zeros(2, bool)):
        with pytest.raises(ValueError, match="reset_mask"):
            vec.reset(options={"reset_mask": bad})
    options = {"reset_mask": np.array([False, True])}
    vec.reset(options=options)
    assert "reset_mask" in options  # the caller's dict is not consumed
    vec.step(np.zeros((2, 2)))
    vec.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("lat", [{}, {"latency": LatencyModel.uniform(0.0, 0.03, seed=2)}],
                         ids=["none", "uniform"])
def test_one_call_step_equals_the_general_path(lat: dict, mode: str) -> None:
    """The one-call C++ step (return values built in C++) against the general Python path
    of the same env (forced), bit for bit: obs, rewards, flags, every info key, dtype and
    mask, across episode ends and max_episode_steps cuts; float64, float32 and list
    actions."""
    fast = gym.make_vec("VDSim-PathFollow-v0", num_envs=4, threads=1, max_episode_steps=50,
                        autoreset_mode=mode, **SHORT, **lat)
    slow = gym.make_vec("VDSim-PathFollow-v0", num_envs=4, threads=1, max_episode_steps=50,
                        autoreset_mode=mode, **SHORT, **lat)
    assert fast._fast
    slow._fast = False
    calls = []
    fast._session = _Spy(fast._session, calls)
    rng = np.random.default_rng(3)
    fast.reset(seed=1), slow.reset(seed=1)
    ends = 0
    for t in range(160):
        a = rng.uniform(-0.4, 0.4, (4, 2))
        a = [a.astype(np.float32), a, a.tolist()][t % 3]
        r1, r2 = fast.step(a), slow.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            assert x.dtype == y.dtype
            np.testing.assert_array_equal(x, y)
        assert set(r1[4]) == set(r2[4])
        assert_same_infos(r1[4], r2[4])
        ends += int(np.sum(r1[2] | r1[3]))
    assert ends >= 4 and len(calls) > 100  # episode ends crossed, the fast path taken


class _Spy:
    """Counts step_fast calls of a VectorEnvCore, passing everything else through."""

    def __init__(self, session: Any, calls: list[int]) -> None:
        self._s, self._calls = session, calls

    def step_fast(self, *args: Any) -> Any:
        self._calls.append(1)
        return self._s.step_fast(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._s, name)


def test_threads_zero_is_inline_for_small_batches() -> None:
    """threads=0: the pool from 16 envs up, inline below (a wake-up costs more than it
    saves on a small batch); the results are the same either way."""
    import os

    small = gym.make_vec("VDSim-DLC-v0", num_envs=8, threads=0)
    big = gym.make_vec("VDSim-DLC-v0", num_envs=16, threads=0)
    assert small.threads == 1
    assert big.threads == (os.cpu_count() or 1)  # std::thread::hardware_concurrency()
    small.close(), big.close()


# Rows whose episode draw is their core's (DLC: the start on its one course; the dyno:
# the cycle's pick; ACC: the scenario; PathFollow: the course and the start) reset in C++
# inside the batch step. Frequent ends, a multi-cycle dyno (its pick is a draw), latency
# (the latency seed's draw) and a seeded reset midway (new generators) against
# SyncVectorEnv, bit for bit; no row's Python reset runs, seeded resets included.
CORE_RESET_CASES = [
    ("VDSim-DLC-v0", {}),
    ("VDSim-DLC-v0", {"latency": LatencyModel.uniform(0.005, 0.03, seed=2)}),
    ("VDSim-Dyno-v0", {"cycle": ["urban_stop_and_go", "highway", "urban_stop_and_go"]}),
    ("VDSim-Dyno-v0", {"cycle": ["urban_stop_and_go", "highway"],
                       "latency": LatencyModel.fixed(0.02)}),
    ("VDSim-ACC-v0", {"latency": LatencyModel.uniform(0.01, 0.08, seed=3)}),
    ("VDSim-PathFollow-v0", {"course_length": 40.0}),
]


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("env_id,kw", CORE_RESET_CASES,
                         ids=["dlc", "dlc_latency", "dyno_cycles", "dyno_latency", "acc",
                              "path_follow"])
def test_rows_reset_in_cpp_match_sync_vector_env(env_id: str, kw: dict, mode: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    vec, ref = make_pair(env_id, 3, mode, max_episode_steps=4, **kw)
    assert vec.unwrapped._all_core_resets
    python_resets = []
    for i, env in enumerate(vec.unwrapped.envs):
        real = env._reset
        monkeypatch.setattr(env, "_reset", lambda s, o, real=real, i=i:
                            python_resets.append(i) or real(s, o))
    assert run_pair(vec, ref, seed=3, steps=14) >= 9  # the seeded reset in C++ too
    if env_id == "VDSim-Dyno-v0":  # the cycles drawn in C++ are the single envs'
        picks = [e.cycle_index for e in vec.unwrapped.envs]
        assert picks == [e.unwrapped.cycle_index for e in ref.envs]
    # A seeded reset gives the rows new generators (made in C++): the resets draw from them.
    assert run_pair(vec, ref, seed=11, steps=9) >= 6
    # An unseeded reset continues them; the rows' generators are then numpy's own.
    o1, _ = vec.reset()
    o2, _ = ref.reset()
    np.testing.assert_array_equal(o1, o2)
    assert python_resets == []
    for env, single in zip(vec.unwrapped.envs, ref.envs, strict=True):
        assert env.np_random_seed == single.unwrapped.np_random_seed
        assert env.np_random.bit_generator.state == single.unwrapped.np_random.bit_generator.state
    assert run_pair(vec, ref, seed=13, steps=6) >= 3  # after the handover to numpy
    assert python_resets == []
    vec.close()
    ref.close()


def test_rows_reset_in_cpp_draw_what_a_python_reset_draws() -> None:
    """The generator a C++ reset leaves is where the env's own reset leaves it."""
    vec = gym.make_vec("VDSim-Dyno-v0", num_envs=2, max_episode_steps=2,
                       cycle=["urban_stop_and_go", "highway", "highway"])
    single = [gym.make("VDSim-Dyno-v0", cycle=["urban_stop_and_go", "highway",
                                               "highway"]) for _ in range(2)]
    vec.reset(seed=4)
    for i, env in enumerate(single):
        env.reset(seed=4 + i)
    a = np.zeros((2, 1), np.float32)
    for _ in range(3):
        vec.step(a)  # the third step resets every row in C++
    for i, env in enumerate(single):
        env.reset()
        assert vec.unwrapped.envs[i].np_random.bit_generator.state == \
            env.unwrapped.np_random.bit_generator.state
        assert vec.unwrapped.envs[i].cycle_index == env.unwrapped.cycle_index
    vec.close()


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_randomized_rows_reset_in_cpp(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Randomized rows draw their episode's parameters in the core too (randomize_episode):
    no row's Python reset runs, and the batch equals SyncVectorEnv, reset infos'
    ``randomization`` included."""
    rnd = {"randomize": {"mass": [0.9, 1.1], "latency": {"mean": [0.0, 0.04],
                                                         "jitter": [0.0, 0.5]}}}
    vec, ref = make_pair("VDSim-DLC-v0", 3, mode, max_episode_steps=3, **rnd)
    assert vec.unwrapped._all_core_resets and vec.unwrapped.envs.n_built() == 1
    python_resets = []
    for i, env in enumerate(vec.unwrapped.envs):
        real = env._reset
        monkeypatch.setattr(env, "_reset", lambda s, o, real=real, i=i:
                            python_resets.append(i) or real(s, o))
    assert run_pair(vec, ref, seed=1, steps=8) >= 4
    assert python_resets == []
    for env, single in zip(vec.unwrapped.envs, ref.envs, strict=True):  # built rows follow
        assert env.episode_params == single.unwrapped.episode_params
    vec.close()
    ref.close()


def test_a_rows_own_reset_gives_the_session_its_generators() -> None:
    """A row env reset on its own (not through the vector env) hands its new generators to
    the session: the batch's later resets in C++ draw from them, as its own would."""
    vec = gym.make_vec("VDSim-Dyno-v0", num_envs=2, max_episode_steps=2,
                       cycle=["urban_stop_and_go", "highway"])
    vec.reset(seed=0)
    row = vec.unwrapped.envs[0]
    row.reset(seed=99)
    assert vec.unwrapped._session.row_rng_state(0) is None  # numpy's, not the core's
    twin = gym.make("VDSim-Dyno-v0", cycle=["urban_stop_and_go", "highway"]).unwrapped
    twin.reset(seed=99)
    a = np.zeros((2, 1), np.float32)
    for _ in range(3):  # the third step resets both rows in C++
        vec.step(a)
    twin.reset()
    assert row.np_random.bit_generator.state == twin.np_random.bit_generator.state
    assert row.cycle_index == twin.cycle_index
    vec.close()


@pytest.mark.parametrize("bad", [[0, -1, 2], [0, 1.5, 2], [0, np.int64(1), 2]], ids=str)
def test_a_bad_seed_is_refused_before_any_row_resets(bad) -> None:
    """Gymnasium's own error for a seed it refuses, before any row is reset: the rows keep
    their episodes, and the env stays usable."""
    vec = gym.make_vec("VDSim-Dyno-v0", num_envs=3)
    vec.reset(seed=0)
    obs, *_ = vec.step(np.full((3, 1), 0.5, np.float32))
    with pytest.raises(gym.error.Error, match="Seed must be"):
        vec.reset(seed=bad)
    obs2, *_ = vec.step(np.full((3, 1), 0.5, np.float32))
    assert (vec.unwrapped._elapsed == 2).all()  # none was reset
    assert not np.array_equal(obs, obs2)
    vec.reset(seed=1)
    vec.close()
