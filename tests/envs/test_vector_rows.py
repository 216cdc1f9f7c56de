"""Rows as C++ state: a vector env of rows built alike is row 0's core and copies of it made
in C++ (``VectorEnvCore.replicate``, ``EnvCore``'s copy); a row's single env is built only
when asked for, on the row's core, with its generators and seed. Checked against single
envs stepped alike (the slow, obviously correct reference)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import _core
from vdsim_gym.config.latency import LatencyModel

ENVS = ["VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0"]


def _actions(env: gym.Env, steps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, (steps, *env.action_space.shape))


def _step_core(core: object, env: gym.Env, action: np.ndarray) -> tuple[np.ndarray, ...]:
    obs, terms, info = (np.zeros_like(b) for b in env.unwrapped.rows)
    core.step(*action.tolist(), obs, terms, info)  # type: ignore[attr-defined]
    return obs, info


@pytest.mark.parametrize("env_id", ENVS)
def test_a_row_copy_steps_as_its_original(env_id: str) -> None:
    """A copy made mid-episode continues as the original would: same state, schedule,
    latency timeline and delay generator. Changing the original's vehicle afterwards
    leaves the copy alone (its model context points at its own parameters)."""
    kw = {"latency": LatencyModel.uniform(0.005, 0.03, seed=4)}
    original = gym.make(env_id, **kw).unwrapped
    reference = gym.make(env_id, **kw).unwrapped
    acts = _actions(original, 30, 1)
    original.reset(seed=7)
    reference.reset(seed=7)
    for a in acts[:10]:
        original.step(a.astype(np.float32))
        reference.step(a.astype(np.float32))
    session = _core.VectorEnvCore.replicate([original.core], [0, 0, 0], 1)
    copy = session.row_core(2)
    assert copy is not original.core and type(copy) is type(original.core)
    if env_id != "VDSim-Dyno-v0":  # the dyno has no vehicle parameters
        heavy = original.vehicle.to_core()
        heavy.mass *= 1.5
        original.core.set_vehicle(heavy)
    for a in acts[10:]:
        got = _step_core(copy, reference, a)
        want = _step_core(reference.core, reference, a)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(session.row_summary(2), reference.core.summary())
    if env_id != "VDSim-Dyno-v0":  # and the heavier original did move differently
        assert not np.array_equal(session.row_summary(0), reference.core.summary())
    session.close()


@pytest.mark.parametrize("env_id", ENVS)
def test_rows_get_their_single_envs_only_when_asked(env_id: str) -> None:
    vec = gym.make_vec(env_id, num_envs=5, max_episode_steps=6)
    rows = vec.unwrapped.envs
    assert rows.n_built() == 1
    vec.reset(seed=10)
    acts = _actions(vec.unwrapped.envs[0], 9, 2)
    singles = [gym.make(env_id) for _ in range(5)]
    for i, s in enumerate(singles):
        s.reset(seed=10 + i)
    for t, a in enumerate(acts):
        batch = np.repeat(a[None].astype(np.float32), 5, axis=0)
        vec.step(batch)
        if t < 6:  # the rows' first episode; then the vector's autoreset, in C++
            for s in singles:
                s.step(batch[0])
    assert rows.n_built() == 1  # ends, resets and infos without the row envs
    row = rows[3]
    assert rows.n_built() == 2 and rows[3] is row and rows[-2] is row
    assert row.core is vec.unwrapped._session.row_core(3)
    assert row.np_random_seed == 13
    ref = singles[3].unwrapped
    ref.reset()  # the autoreset's draw: the row's generator is where this one's is
    assert row.np_random.bit_generator.state == ref.np_random.bit_generator.state
    np.testing.assert_equal(vec.unwrapped.episode_summary(3), row.episode_summary())
    with pytest.raises(IndexError):
        rows[5]
    assert len(rows[1:3]) == 2 and rows.n_built() == 4
    vec.close()


def test_an_unseeded_first_reset_seeds_each_row_from_fresh_entropy() -> None:
    """As Gymnasium's env: each row's np_random_seed is SeedSequence()'s entropy (128 OS
    bits), and the row starts as a single env reset with that seed does."""
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=4)
    obs, _ = vec.reset()
    seeds = [vec.unwrapped.envs[i].np_random_seed for i in range(4)]
    assert len(set(seeds)) == 4 and all(0 <= s < 2**128 for s in seeds)
    assert len({tuple(o) for o in obs.tolist()}) == 4
    for i, s in enumerate(seeds):
        single = gym.make("VDSim-DLC-v0")
        o, _ = single.reset(seed=s)
        np.testing.assert_array_equal(obs[i], o)
    vec.close()


def test_seeds_of_several_words_and_latency_streams_match_single_envs() -> None:
    """Seeds beyond 32 bits (several SeedSequence words) and the latency stream derived
    from them, in the seeding made in C++."""
    kw = {"latency": LatencyModel.uniform(0.005, 0.03, seed=2)}
    seeds = [2**70 + 3, 5, 2**33, 0]
    vec = gym.make_vec("VDSim-ACC-v0", num_envs=4, max_episode_steps=3, **kw)
    ref = gym.vector.SyncVectorEnv([lambda: gym.make("VDSim-ACC-v0", max_episode_steps=3, **kw)
                                    for _ in range(4)])
    o1, _ = vec.reset(seed=seeds)
    o2, _ = ref.reset(seed=seeds)
    np.testing.assert_array_equal(o1, o2)
    a = np.full((4, 1), 0.3, np.float32)
    for _ in range(8):  # two autoresets in C++
        r1, r2 = vec.step(a), ref.step(a)
        for x, y in zip(r1[:4], r2[:4], strict=True):
            np.testing.assert_array_equal(x, y)
        assert ("t_apply" in r1[4]) == ("t_apply" in r2[4])
        np.testing.assert_array_equal(r1[4].get("t_apply"), r2[4].get("t_apply"))
    vec.close()
    ref.close()


def test_rows_of_their_own_are_built_with_the_vector_env() -> None:
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=3,
                       per_env_kwargs=[{"speed": 15.0}, {"speed": 18.0}, {"speed": 20.0}])
    assert vec.unwrapped.envs.n_built() == 3
    vec.close()


def test_rows_whose_kwargs_do_not_compare_are_built_apart() -> None:
    """Rows with equal per_env_kwargs are one group (numpy scalars compare); a value that
    compares to no single truth value (an array) keeps its rows apart."""
    from vdsim_gym.envs.vector_rows import _same_kwargs

    vec = gym.make_vec("VDSim-DLC-v0", num_envs=2, per_env_kwargs=[
        {"reward_weights": {"tracking": np.float64(2.0)}},
        {"reward_weights": {"tracking": np.float64(2.0)}}])
    assert vec.unwrapped.envs.n_built() == 1
    vec.close()
    assert not _same_kwargs({"a": np.zeros(2)}, {"a": np.zeros(2)})
    assert _same_kwargs({"a": 1.0}, {"a": 1.0})


def test_randomized_rows_are_copies_too() -> None:
    """A randomized row draws its parameters in its core (randomize_episode): it is a copy
    of row 0's core like any other, and its env, built after an episode drawn in C++,
    reports that episode's parameters."""
    vec = gym.make_vec("VDSim-DLC-v0", num_envs=3, randomize={"mass": [0.9, 1.1]})
    assert vec.unwrapped.envs.n_built() == 1
    _, info = vec.reset(seed=5)
    single = gym.make("VDSim-DLC-v0", randomize={"mass": [0.9, 1.1]})
    _, ref = single.reset(seed=7)
    row = vec.unwrapped.envs[2]
    assert row.episode_params == single.unwrapped.episode_params
    assert info["randomization"]["mass"][2] == ref["randomization"]["mass"]
    vec.close()
