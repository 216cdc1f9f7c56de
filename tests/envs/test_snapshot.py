"""Snapshot and restore (``env.unwrapped.snapshot()`` / ``restore``, the vector env's
``snapshot(rows)`` / ``restore(snapshot, rows)``): the same actions after a restore give
the same observations, rewards, flags and infos bit for bit as after the snapshot was
taken, across episode ends and resets, in the same env or another built the same way;
every env, every delay kind (computation latency of each kind and measured, the sensor
delay, the network, the actuation dead times, the robot driver's transport delay), with
and without randomization.
Negative controls show the comparisons see the state a restore must put back (the
generators: an episode after more episodes differs without them). Refusals name the cause.
"""

from __future__ import annotations

import dataclasses
import pickle
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import vdsim_gym  # noqa: F401  (registers the ids)
from vdsim_gym import LatencyModel, NetworkModel
from vdsim_gym.dyno.cycles import from_segments
from vdsim_gym.envs.env_snapshot import Snapshot
from vdsim_gym.envs.vector_snapshot import VectorSnapshot
from vdsim_gym.errors import ConfigError

ENV_IDS = ("VDSim-DLC-v0", "VDSim-PathFollow-v0", "VDSim-ACC-v0", "VDSim-Dyno-v0")
SHORT_CYCLES = [from_segments("short_a", [[1, 0], [3, 6], [3, 6], [3, 0]]),
                from_segments("short_b", [[1, 0], [2, 9], [2, 4], [3, 0]])]
# Short episodes: several ends (and resets) inside a few hundred steps.
# The vehicle envs with actuation dead times (per-channel delay lines in the session).
DEAD = {"channel_delays": {"steer": 0.02, "longitudinal": 0.035}}
BASE: dict[str, dict[str, Any]] = {
    "VDSim-DLC-v0": {"speed": 15.0, **DEAD},
    "VDSim-PathFollow-v0": {"course_length": 50.0, **DEAD},
    "VDSim-ACC-v0": {"duration": 2.0, **DEAD},
    "VDSim-Dyno-v0": {"cycle": SHORT_CYCLES, "time_limit": 4.0,
                      "driver": {"mode": "speed", "delay_s": 0.15}},  # transport delay
}
LATENCY = {
    "fixed": LatencyModel.fixed(0.013),
    "uniform": LatencyModel.uniform(0.004, 0.03, seed=3),
    "normal": LatencyModel.normal(0.012, 0.006, seed=4),
    "empirical": LatencyModel.empirical([0.004, 0.011, 0.027, 0.018], seed=5),
}
OBS_DELAY = LatencyModel.uniform(0.0, 0.03, seed=6)
NETWORK = NetworkModel(drop=0.05, burst=(0.05, 0.5),
                       jitter=LatencyModel.uniform(0.0, 0.01, seed=7), seed=8)


def kwargs_of(env_id: str, kind: str, randomize: bool) -> dict[str, Any]:
    """Every delay kind on: ``kind``'s computation latency (``"drawn"``: drawn per episode
    by randomize), the sensor delay (drawn per episode with randomize) and the network."""
    kw: dict[str, Any] = {**BASE[env_id], "network": NETWORK}
    ranges: dict[str, Any] = {}
    if kind == "drawn":
        ranges["latency"] = {"mean": [0.004, 0.03], "jitter": [0.0, 0.5]}
        ranges["loss"] = [0.0, 0.1]
    else:
        kw["latency"] = LATENCY[kind]
    if randomize or kind == "drawn":
        ranges["obs_delay"] = [0.0, 0.03]
        ranges.update({"driver_delay": [0.1, 0.3]} if env_id == "VDSim-Dyno-v0"
                      else {"mass": [0.9, 1.1]})
        kw["randomize"] = ranges
    else:
        kw["obs_delay"] = OBS_DELAY
    return kw


def actions_for(env: Any, n: int, seed: int = 0, rows: int | None = None) -> np.ndarray:
    space = env.single_action_space if rows is not None else env.action_space
    shape = (n, space.shape[0]) if rows is None else (n, rows, space.shape[0])
    rng = np.random.default_rng(seed)
    return (0.6 * rng.uniform(-1.0, 1.0, shape) + 0.2).clip(-1, 1).astype(np.float32)


def rollout(env: Any, actions: np.ndarray, delays: np.ndarray | None = None) -> list[Any]:
    """Every step's values, and after an episode end the reset's (obs, info)."""
    out: list[Any] = []
    for k, a in enumerate(actions):
        if delays is not None:
            env.unwrapped.set_next_delay(float(delays[k]))
        obs, reward, terminated, truncated, info = env.step(a)
        out.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            out.append(env.reset())
    return out


def vec_rollout(venv: Any, actions: np.ndarray) -> list[Any]:
    return [venv.step(a) for a in actions]


def n_resets(out: list[Any]) -> int:
    return sum(1 for x in out if len(x) == 2)


def same(a: Any, b: Any, where: str = "") -> None:
    """Bit for bit: the same structure, keys and types; arrays and floats by bytes."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (where, list(a), b)
        for k in a:
            same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, (list, tuple)):
        assert type(b) is type(a) and len(a) == len(b), (where, a, b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{where}[{i}]")
    elif isinstance(a, (np.ndarray, np.generic, float)) and not isinstance(a, bool):
        x, y = np.asarray(a), np.asarray(b)
        assert type(a) is type(b) and x.dtype == y.dtype and x.shape == y.shape, (where, a, b)
        if x.dtype == object:
            for i, (p, q) in enumerate(zip(x.ravel(), y.ravel(), strict=True)):
                same(p, q, f"{where}[{i}]")
        else:
            assert x.tobytes() == y.tobytes(), (where, a, b)
    else:
        assert type(a) is type(b) and a == b, (where, a, b)


# ---------------------------------------------------------------- single envs


@pytest.mark.parametrize("kind", [*LATENCY, "drawn"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_single_restore_bit_for_bit(env_id: str, kind: str) -> None:
    """Snapshot mid-episode, run across several episode ends and resets, restore: the same
    again; restored into another env built the same way: the same too; twice: the same."""
    kw = kwargs_of(env_id, kind, randomize=kind in ("uniform", "empirical"))
    env = gym.make(env_id, **kw)
    env.reset(seed=11)
    rollout(env, actions_for(env, 25, seed=1))
    snap = env.unwrapped.snapshot()
    actions = actions_for(env, 300, seed=2)
    first = rollout(env, actions)
    assert n_resets(first) >= 2  # the window crosses episode ends and resets
    env.unwrapped.restore(snap)
    same_snapshot(snap, env.unwrapped.snapshot())  # the state the outputs do not show
    same(first, rollout(env, actions))
    other = gym.make(env_id, **kw)
    other.reset(seed=99)  # gym.make's OrderEnforcing wants one reset first
    rollout(other, actions_for(other, 5, seed=3))
    other.unwrapped.restore(snap)
    same(first, rollout(other, actions))
    env.unwrapped.restore(snap)  # the snapshot is unchanged by the restores and steps
    same(first, rollout(env, actions))


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_restore_after_further_episodes(env_id: str) -> None:
    """Snapshot at a reset, three more episodes, restore, the same three again: each next
    episode is drawn from the env's generators (start, course, scenario, cycle, the
    randomization, the latency seed), so these must come back with the core. The negative
    controls restore the core alone, then all but the latency stream: the episodes after
    the first differ."""
    kw = kwargs_of(env_id, "uniform", randomize=True)
    env = gym.make(env_id, **kw)
    env.reset(seed=5)
    rollout(env, actions_for(env, 40, seed=1))
    env.reset()
    snap = env.unwrapped.snapshot()
    actions = actions_for(env, 2000, seed=4)

    def three_episodes() -> list[Any]:
        out: list[Any] = []
        for a in actions:
            out.append(env.step(a))
            if out[-1][2] or out[-1][3]:
                out.append(env.reset())
                if n_resets(out) == 3:
                    return out
        raise AssertionError("three episodes did not end")

    first = three_episodes()
    env.unwrapped.restore(snap)
    same(first, three_episodes())
    env.unwrapped.restore(snap)
    same(first, three_episodes())

    u = env.unwrapped
    u.restore(snap)
    rollout(env, actions_for(env, 300, seed=9))  # the generators move on
    u._core.restore(snap.core)  # the core alone (what a snapshot without Python state is)
    with pytest.raises(AssertionError):
        same(first, three_episodes())
    u.restore(snap)
    rollout(env, actions_for(env, 300, seed=9))
    moved = u._latency_rng.bit_generator.state
    u.restore(dataclasses.replace(snap, state=dataclasses.replace(snap.state,
                                                                  latency_rng=moved)))
    with pytest.raises(AssertionError):
        same(first, three_episodes())


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_measured_latency_restores_the_next_delay(env_id: str) -> None:
    """LatencyModel.measured(): the delay given to set_next_delay before the snapshot is
    the next step's after the restore (no second call needed)."""
    kw = {**BASE[env_id], "latency": LatencyModel.measured(), "obs_delay": OBS_DELAY,
          "network": NETWORK}
    env = gym.make(env_id, **kw)
    env.reset(seed=3)
    rng = np.random.default_rng(1)
    delays = rng.uniform(0.0, 0.035, 400)
    rollout(env, actions_for(env, 20), delays[:20])
    env.unwrapped.set_next_delay(0.021)
    snap = env.unwrapped.snapshot()
    actions = actions_for(env, 300, seed=6)
    first = [env.step(actions[0])] + rollout(env, actions[1:], delays[1:])
    assert n_resets(first) >= 1
    env.unwrapped.restore(snap)
    again = [env.step(actions[0])] + rollout(env, actions[1:], delays[1:])
    same(first, again)
    env.unwrapped.restore(snap)
    env.unwrapped.set_next_delay(0.001)  # another delay: another step
    with pytest.raises(AssertionError):
        same(first[0], env.step(actions[0]))


def test_restore_before_the_first_reset() -> None:
    """A snapshot of an env never reset: after its restore the episode is undrawn again
    (ACC's scenario, the dyno's cycle: None) and step asks for a reset."""
    for env_id, what in (("VDSim-ACC-v0", "scenario"), ("VDSim-Dyno-v0", "cycle")):
        env = gym.make(env_id, **BASE[env_id])
        u = env.unwrapped
        fresh = u.snapshot()
        env.reset(seed=0)
        assert getattr(u, what) is not None
        u.restore(fresh)
        assert getattr(u, what) is None
        with pytest.raises(gym.error.ResetNeeded, match="call reset"):
            u.step(np.zeros(1, np.float32))


def test_restore_puts_back_the_python_state() -> None:
    """The episode's randomized models, the reset bookkeeping and the generators' seeds
    as they were; a snapshot before the first reset needs a reset after its restore."""
    env = gym.make("VDSim-PathFollow-v0", **kwargs_of("VDSim-PathFollow-v0", "drawn", True))
    u = env.unwrapped
    fresh = u.snapshot()
    _, info = env.reset(seed=4)
    rollout(env, actions_for(env, 30))
    snap = u.snapshot()
    latency, network, obs_delay = u.latency, u.network, u.obs_delay
    params, course = u.episode_params, u.course
    trajectory = u.trajectory.copy()
    env.reset(seed=8)
    assert u.latency != latency
    u.restore(snap)
    assert (u.latency, u.network, u.obs_delay) == (latency, network, obs_delay)
    assert u.episode_params.values == params.values
    assert u.np_random_seed == 4
    np.testing.assert_array_equal(u.course.path, course.path)
    np.testing.assert_array_equal(u.trajectory, trajectory)
    u.restore(fresh)
    with pytest.raises(gym.error.ResetNeeded):
        u.step(np.zeros(2, np.float32))
    obs, info2 = env.reset(seed=4)
    assert info2["randomization"] == info["randomization"]


def test_snapshot_is_immutable_and_leaves_the_env_alone() -> None:
    env = gym.make("VDSim-DLC-v0", latency=LATENCY["uniform"])
    twin = gym.make("VDSim-DLC-v0", latency=LATENCY["uniform"])
    actions = actions_for(env, 200)
    for e in (env, twin):
        e.reset(seed=2)
    snap = env.unwrapped.snapshot()
    same(rollout(twin, actions), rollout(env, actions))  # taking it changed nothing
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.core = None  # type: ignore[misc]
    with pytest.raises(ValueError):
        snap.state.obs[0] = 1.0
    assert "DoubleLaneChangeEnv" in repr(snap)


# ---------------------------------------------------------------- refusals


def _usable_after(env: Any, twin: Any) -> None:
    """The refused env goes on as its untouched twin."""
    actions = actions_for(env, 60, seed=7)
    same(rollout(twin, actions), rollout(env, actions))


def test_refusals_name_the_cause() -> None:
    kw = {"latency": LATENCY["fixed"]}
    env = gym.make("VDSim-DLC-v0", **kw)
    env.reset(seed=1)
    snap = env.unwrapped.snapshot()
    cases: list[tuple[Any, Any, str]] = [
        (gym.make("VDSim-PathFollow-v0", **kw), snap, "PathFollowEnv"),
        (gym.make("VDSim-DLC-v0", speed=25.0, **kw), snap, "speed=25.0"),
        (gym.make("VDSim-DLC-v0", preset="iso3888_2", **kw), snap, "preset='iso3888_2'"),
        (gym.make("VDSim-DLC-v0", level="L1", **kw), snap, "physics="),
        (gym.make("VDSim-DLC-v0", latency=LATENCY["normal"]), snap, "latency=NormalLatency"),
        (gym.make("VDSim-DLC-v0", **kw, randomize={"mass": [0.9, 1.1]}), snap, "randomize="),
        (gym.make("VDSim-DLC-v0", **kw, reward_weights={"tracking": 2.0}), snap,
         "reward_weights="),
        (gym.make("VDSim-DLC-v0", **kw, terminate_on_cone=False), snap, "terminate_on_cone"),
        (gym.make("VDSim-DLC-v0", **kw), "not a snapshot", "takes a Snapshot"),
        (gym.make("VDSim-DLC-v0", **kw), None, "takes a Snapshot"),
    ]
    configured = [lambda u: u.configure_latency(LATENCY["uniform"]),
                  lambda u: u.configure_obs_delay(OBS_DELAY),
                  lambda u: u.configure_network(NETWORK),
                  lambda u: u.set_longitudinal("force"),
                  lambda u: u.set_action_history(2)]
    names = ["latency=UniformLatency", "obs_delay=", "network=", "physics=",
             "action_history=2"]
    for change, name in zip(configured, names, strict=True):
        e = gym.make("VDSim-DLC-v0", **kw)
        change(e.unwrapped)
        cases.append((e, snap, name))
    for target, arg, message in cases:
        target.reset(seed=3)
        with pytest.raises(ConfigError, match="snapshot|Snapshot") as err:
            target.unwrapped.restore(arg)
        assert message in str(err.value), (message, str(err.value))
        if "takes a Snapshot" not in message:
            assert "built the same way" in str(err.value)
    # the env stays usable: it steps on as an untouched twin
    e, twin = gym.make("VDSim-DLC-v0", speed=25.0, **kw), gym.make("VDSim-DLC-v0",
                                                                   speed=25.0, **kw)
    e.reset(seed=3)
    twin.reset(seed=3)
    with pytest.raises(ConfigError):
        e.unwrapped.restore(snap)
    _usable_after(e, twin)
    # a configuration changed back is the same configuration
    e = gym.make("VDSim-DLC-v0", **kw)
    e.unwrapped.configure_latency(LATENCY["uniform"])
    e.unwrapped.configure_latency(LATENCY["fixed"])
    e.reset(seed=0)
    e.unwrapped.restore(snap)


def test_vector_snapshots_do_not_go_into_single_envs_and_back() -> None:
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=2, vectorization_mode="vector_entry_point")
    venv.reset(seed=0)
    env = gym.make("VDSim-DLC-v0")
    env.reset(seed=0)
    with pytest.raises(ConfigError, match="vector env's snapshot"):
        env.unwrapped.restore(venv.snapshot())
    with pytest.raises(ConfigError, match="single env's Snapshot"):
        venv.restore(env.unwrapped.snapshot())
    with pytest.raises(ConfigError, match=r"venv.snapshot\(rows=\[1\]\)"):
        venv.envs[1].snapshot()
    with pytest.raises(ConfigError, match="row 0 of a vector env"):
        venv.envs[0].restore(env.unwrapped.snapshot())


# ---------------------------------------------------------------- vector envs

VEC_KINDS = {"VDSim-DLC-v0": "uniform", "VDSim-PathFollow-v0": "normal",
             "VDSim-ACC-v0": "empirical", "VDSim-Dyno-v0": "fixed"}
N = 6


def make_vec(env_id: str, mode: str, randomize: bool, kind: str | None = None,
             **extra: Any) -> Any:
    kw = kwargs_of(env_id, kind or VEC_KINDS[env_id], randomize)
    return gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point",
                        autoreset_mode=mode, **kw, **extra)


@pytest.mark.parametrize("randomize", [False, True])
@pytest.mark.parametrize("mode", ["next_step", "same_step"])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_vector_restore_bit_for_bit(env_id: str, mode: str, randomize: bool) -> None:
    """Every row: snapshot (with a row's next-step reset pending), run across episode ends
    (autoresets in C++; with randomize, max_episode_steps cuts too), restore, the same;
    restored into vector envs built the same way (one reset otherwise, one never reset),
    the same. Row 2's env has taken its generators (numpy's), row 4's env is built without
    (the session's, seeded in C++); in the other vector env row 4's env holds numpy
    generators and row 3's is built (the snapshot has none: it gets a new row env's
    state), row 2's is not."""
    extra = {"max_episode_steps": 45} if randomize else {}
    venv = make_vec(env_id, mode, randomize, **extra)
    venv.reset(seed=21)
    actions = actions_for(venv, 400, seed=2, rows=N)
    k = 0
    while k < 17 or not venv._autoreset.any() and mode == "next_step":
        venv.step(actions[k])
        k += 1
    window = actions[k:k + 280]
    assert venv.envs[2].np_random is not None  # takes the row's generators
    venv.envs[4]
    snap = venv.snapshot()
    first = vec_rollout(venv, window)
    ends = sum(int((t | u).sum()) for _, _, t, u, _ in first)
    assert ends >= 2 * N  # every row crosses episode ends
    venv.restore(snap)
    same_snapshot(snap, venv.snapshot())  # the state the outputs do not show, too
    same(first, vec_rollout(venv, window))
    other = make_vec(env_id, mode, randomize, **extra)
    other.reset(seed=3)
    assert other.envs[4].np_random is not None and other.envs[3].np_random_seed == 6
    other.restore(snap)
    same(first, vec_rollout(other, window))
    assert other.envs[2].np_random_seed == venv.envs[2].np_random_seed == 23
    assert other.envs[3].np_random_seed == venv.envs[3].np_random_seed == 24
    if randomize:
        assert other.envs[3].episode_params.values == venv.envs[3].episode_params.values
    fresh = make_vec(env_id, mode, randomize, **extra)  # never reset
    fresh.restore(snap)
    same(first, vec_rollout(fresh, window))
    venv.restore(snap)
    same(first, vec_rollout(venv, window))


def same_snapshot(a: Any, b: Any) -> None:
    """Two snapshots hold the same state (their cores aside: their steps compare them)."""
    if isinstance(a, VectorSnapshot):
        a, b = dataclasses.replace(a, cores=()), dataclasses.replace(b, cores=())
    else:
        a, b = dataclasses.replace(a, core=None), dataclasses.replace(b, core=None)
    same(dataclasses.asdict(a), dataclasses.asdict(b))


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_vector_restore_across_seeded_resets(mode: str) -> None:
    """Snapshot, reset(seed=...) (new generators in C++ for every row), run, restore: the
    rows' old generators come back (the session's own, seeded in C++). The negative
    control restores the rows' cores alone: the episodes after an autoreset differ."""
    venv = make_vec("VDSim-PathFollow-v0", mode, True)
    venv.reset(seed=1)
    actions = actions_for(venv, 250, seed=3, rows=N)
    vec_rollout(venv, actions[:30])
    snap = venv.snapshot()
    first = vec_rollout(venv, actions)
    venv.reset(seed=77)
    vec_rollout(venv, actions[:40])
    venv.restore(snap)
    same(first, vec_rollout(venv, actions))
    venv.restore(snap)
    vec_rollout(venv, actions[:120])  # the generators move on
    for i in range(N):
        venv._session.restore_row(i, snap.cores[i])
    venv._obs[:], venv._elapsed[:] = snap.obs, snap.elapsed
    venv._autoreset[:] = snap.autoreset
    venv._any_autoreset = bool(snap.autoreset.any())
    with pytest.raises(AssertionError):
        same(first, vec_rollout(venv, actions))


@pytest.mark.parametrize("mode", ["next_step", "same_step"])
def test_vector_rows_into_other_rows(mode: str) -> None:
    """Rows 1 and 3 of one vector env into rows 5 and 0 of another built the same way:
    those rows go on as the source's rows, the others as before (their twin's)."""
    env_id = "VDSim-ACC-v0"
    src, dst, twin = (make_vec(env_id, mode, True) for _ in range(3))
    src.reset(seed=4)
    dst.reset(seed=40)
    twin.reset(seed=40)
    actions = actions_for(src, 200, seed=5, rows=N)
    vec_rollout(src, actions[:13])
    vec_rollout(dst, actions[:9])
    vec_rollout(twin, actions[:9])
    snap = src.snapshot(rows=[1, 3])
    assert snap.rows == (1, 3) and snap.whole is None
    moved = actions.copy()
    moved[:, 5], moved[:, 0] = actions[:, 1], actions[:, 3]
    a = vec_rollout(src, actions)
    dst.restore(snap, rows=[5, 0])
    b = vec_rollout(dst, moved)
    c = vec_rollout(twin, moved)
    for (oa, ra, ta, ua, _), (ob, rb, tb, ub, _), (oc, rc, tc, uc, _) in zip(a, b, c,
                                                                           strict=True):
        for s, d in ((1, 5), (3, 0)):
            same((oa[s], ra[s], ta[s], ua[s]), (ob[d], rb[d], tb[d], ub[d]))
        for r in (1, 2, 3, 4):
            same((oc[r], rc[r], tc[r], uc[r]), (ob[r], rb[r], tb[r], ub[r]))
    for s, d in ((1, 5), (3, 0)):
        same(src.episode_summary(s), dst.episode_summary(d))
    assert sum(int(t[1] | u[1]) for _, _, t, u, _ in a) >= 2


def test_vector_partial_restore_keeps_the_first_reset() -> None:
    """A snapshot of some rows restored into a vector env never reset: its other rows have
    no episode, so step still asks for the first reset."""
    src, dst = (make_vec("VDSim-DLC-v0", "next_step", False) for _ in range(2))
    src.reset(seed=0)
    dst.restore(src.snapshot(rows=[0, 1]))
    with pytest.raises(gym.error.ResetNeeded):
        dst.step(actions_for(dst, 1, rows=N)[0])
    dst.restore(src.snapshot())  # every row: the vector env's own state too
    same(vec_rollout(src, actions_for(src, 30, rows=N)),
         vec_rollout(dst, actions_for(dst, 30, rows=N)))


def test_vector_refusals() -> None:
    venv = make_vec("VDSim-DLC-v0", "next_step", False)
    venv.reset(seed=0)
    snap = venv.snapshot(rows=[0, 2])
    for rows, message in (([0, 0], "repeats a row"), ([0, N], r"in \[0, 6\)"), ([], "empty"),
                          ("01", "sequence of row indices"), ([True, 1], "row indices")):
        with pytest.raises(ConfigError, match=message):
            venv.snapshot(rows=rows)
    with pytest.raises(ConfigError, match="one destination row per snapshot row"):
        venv.restore(snap, rows=[1])
    with pytest.raises(ConfigError, match="takes a VectorSnapshot"):
        venv.restore("snapshot")  # type: ignore[arg-type]
    small = gym.make_vec("VDSim-DLC-v0", num_envs=2, vectorization_mode="vector_entry_point",
                         **kwargs_of("VDSim-DLC-v0", "uniform", False))
    with pytest.raises(ConfigError, match="pass rows="):
        small.restore(snap)
    small.restore(snap, rows=[1, 0])  # into rows that exist: fine
    other_mode = make_vec("VDSim-DLC-v0", "same_step", False)
    with pytest.raises(ConfigError, match="autoreset_mode=SAME_STEP"):
        other_mode.restore(snap)
    other_kind = make_vec("VDSim-DLC-v0", "next_step", False, kind="fixed")
    with pytest.raises(ConfigError, match="into row 0: the snapshot's env was built with "
                                          "latency=UniformLatency"):
        other_kind.restore(snap)
    kw = kwargs_of("VDSim-DLC-v0", "uniform", False)
    mixed = gym.make_vec("VDSim-DLC-v0", num_envs=N, vectorization_mode="vector_entry_point",
                         per_env_kwargs=[{}, {}, {"speed": 12.0}, {}, {}, {}], **kw)
    mixed.reset(seed=0)
    twin = make_vec("VDSim-DLC-v0", "next_step", False)
    twin.reset(seed=0)
    with pytest.raises(ConfigError, match="into row 2: .*speed=15.0.*speed=12.0"):
        mixed.restore(snap)  # rows 0 and 2: row 2 is built with another speed
    mixed.restore(snap, rows=[3, 4])
    # the refused vector env goes on as its untouched twin
    actions = actions_for(venv, 40, seed=1, rows=N)
    same(vec_rollout(twin, actions), vec_rollout(venv, actions))
    venv.close()
    with pytest.raises(ConfigError, match="closed"):
        venv.snapshot()


# ---------------------------------------------------------------- pickling


def test_everything_but_the_cores_pickles() -> None:
    """A snapshot is plain data around its core copies: without them it pickles and its
    fingerprint compares the same after the round trip."""
    env = gym.make("VDSim-Dyno-v0", **kwargs_of("VDSim-Dyno-v0", "empirical", True))
    env.reset(seed=1)
    rollout(env, actions_for(env, 20))
    snap = env.unwrapped.snapshot()
    back = pickle.loads(pickle.dumps(dataclasses.replace(snap, core=None)))
    assert back.fingerprint.same(snap.fingerprint)
    same(back.state.step_log, snap.state.step_log)
    assert back.state.np_random == snap.state.np_random
    venv = make_vec("VDSim-PathFollow-v0", "next_step", True)
    venv.reset(seed=0)
    assert venv.envs[1].np_random is not None  # row 1's env holds its generators
    vsnap = venv.snapshot()
    vback = pickle.loads(pickle.dumps(dataclasses.replace(vsnap, cores=())))
    assert all(a.same(b) for a, b in zip(vback.fingerprints, vsnap.fingerprints, strict=True))
    assert vback.rngs == vsnap.rngs


def test_snapshot_pickles_and_restores_bit_for_bit() -> None:
    kw = kwargs_of("VDSim-DLC-v0", "uniform", True)
    env = gym.make("VDSim-DLC-v0", **kw)
    env.reset(seed=1)
    rollout(env, actions_for(env, 30))
    snap = pickle.loads(pickle.dumps(env.unwrapped.snapshot()))
    assert isinstance(snap, Snapshot)
    actions = actions_for(env, 300, seed=2)
    first = rollout(env, actions)
    other = gym.make("VDSim-DLC-v0", **kw)
    other.reset(seed=5)
    other.unwrapped.restore(snap)
    same(first, rollout(other, actions))
    venv = make_vec("VDSim-DLC-v0", "next_step", True)
    venv.reset(seed=3)
    vsnap = pickle.loads(pickle.dumps(venv.snapshot()))
    assert isinstance(vsnap, VectorSnapshot)
    vactions = actions_for(venv, 100, rows=N)
    vfirst = vec_rollout(venv, vactions)
    vother = make_vec("VDSim-DLC-v0", "next_step", True)
    vother.restore(vsnap)
    same(vfirst, vec_rollout(vother, vactions))
