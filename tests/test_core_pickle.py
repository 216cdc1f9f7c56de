"""Env cores pickle, state and all (csrc/vdsim/archive.hpp; ``py::pickle`` in
csrc/bindings/bind_env_core.hpp).

Every env core type (``PathEnvCore`` for DLC and PathFollow, ``AccEnvCore``,
``DynoEnvCore``, ``SpeedEnvCore``) is built through its Python env, stepped into a rich
state (latency of every kind, a network with losses, bursts and jitter, a sensor delay,
domain randomization, an action history, a time limit, channel delays, a steering
actuator, the dyno's robot driver and its delay lines, a lazily built random course,
cones and their hits, the ACC's drawn and fixed scenarios, the dyno's cycles), pickled
and unpickled. The copy and the original then take the same actions through the cores'
own ``step`` bindings, and the same episode resets (``draw_start``,
``randomize_episode``, ``reset`` from numpy generators in the same state), for 200 steps:
obs, reward terms, info rows and flags must agree bit for bit, and so must every
observable of the two cores and their pickles (each member written, compared byte for
byte). A core that ``restore()``s an unpickled snapshot steps on as the snapshot does.
Blobs that are truncated, corrupted, of another core type or not blobs at all are refused
with a ValueError naming the cause.

The C++ side (tests/cpp/test_archive.cpp, run by test_cpp_units.py) checks the archive
on its own: every member kind, write -> read -> write, the layout check that finds a
member missing from an ``archive()`` list, and the refusals.
"""

from __future__ import annotations

import copy
import math
import pickle
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import speed_task_env

from vdsim_gym import LatencyModel, NetworkModel, _core

speed_task_env.register_speed_env()

STEPS = 200
ENDED = 1 | 2  # terminated, truncated

NET = NetworkModel(drop=0.1, burst=(0.05, 0.4), jitter=LatencyModel.uniform(0.0, 0.01, 3),
                   seed=4)
# long bad runs: most pickles catch the Gilbert-Elliott chain in its bad state
BURSTY = NetworkModel(drop=0.05, burst=(0.5, 0.1), jitter=LatencyModel.normal(0.004, 0.003, 1),
                      seed=2)
EMPIRICAL = LatencyModel.empirical([0.002, 0.011, 0.019, 0.027, 0.052], seed=6)
ACTUATOR = {"dead_time": 0.002, "time_constant": 0.03, "rate_limit": 3.0}


@dataclass
class Case:
    env_id: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    # applied to the core after the env's own episodes (then a reset in C++)
    tweak: Callable[[Any], None] | None = None
    measured: bool = False  # step with a measured delay
    trace: bool = False  # record trace rows through the pickle
    tracks: bool = False  # a path core: steer along the path (it gets far along its course)
    offset: float = 0.0  # tracking this far left of the path [m] (into the cones)


def _acc_fixed(core: Any) -> None:
    """A fixed scenario (set_scenario and set_fixed: the sensor file's path)."""
    n = 400
    t = np.arange(n) * 0.02
    speed = 15.0 + 3.0 * np.sin(t / 2.0)
    speed[:40] = np.nan  # the lead appears after 0.8 s
    core.set_scenario(speed, np.full(n, 30.0))
    core.set_fixed(18.0, 25.0)


CASES = {
    "dlc_plain": Case("VDSim-DLC-v0"),
    "dlc_cones_kept": Case("VDSim-DLC-v0", dict(terminate_on_cone=False, time_limit=2.5),
                           tracks=True, offset=1.2),
    "dlc_uniform_network_sensor": Case(
        "VDSim-DLC-v0", dict(latency=LatencyModel.uniform(0.0, 0.05, 2), network=BURSTY,
                             obs_delay=LatencyModel.uniform(0.0, 0.06, 5), action_history=3,
                             time_limit=2.0, channel_delays={"steer": 0.01,
                                                             "longitudinal": 0.03},
                             actuator=ACTUATOR), trace=True),
    "dlc_normal_queue": Case(
        "VDSim-DLC-v0", dict(latency=LatencyModel.normal(0.03, 0.02, 7), overrun="queue",
                             time_limit=1.5)),
    "dlc_empirical_l1_heun_accel": Case(
        "VDSim-DLC-v0", dict(latency=EMPIRICAL, level="L1", integrator="heun",
                             longitudinal="accel", time_limit=1.2)),
    "dlc_fixed_randomized": Case(
        "VDSim-DLC-v0", dict(network=NetworkModel(drop=0.2), actuator=ACTUATOR, time_limit=1.0,
                             randomize={"mass": [0.9, 1.15], "cg_x": [-0.1, 0.1],
                                        "friction": [0.8, 1.0],
                                        "cornering_stiffness": [0.85, 1.15],
                                        "actuator_lag": [0.01, 0.06],
                                        "latency": {"mean": [0.0, 0.04], "jitter": [0.0, 0.5]},
                                        "steer_delay": [0.0, 0.03],
                                        "longitudinal_delay": [0.02, 0.08],
                                        "loss": [0.0, 0.1], "obs_delay": [0.0, 0.05]})),
    "dlc_measured": Case("VDSim-DLC-v0", dict(latency=LatencyModel.measured()), measured=True),
    "dlc_etd2_accel": Case("VDSim-DLC-v0", dict(integrator="etd2", longitudinal="accel",
                                                latency=LatencyModel.fixed(0.013),
                                                obs_delay=LatencyModel.fixed(0.03),
                                                time_limit=1.4)),
    "pathfollow_lazy_course": Case(
        "VDSim-PathFollow-v0", dict(course_length=400.0, speed_range=(18.0, 26.0),
                                    time_limit=3.0, latency=LatencyModel.uniform(0.0, 0.03, 1),
                                    obs_delay=LatencyModel.normal(0.02, 0.01, 2),
                                    action_history=2), trace=True, tracks=True),
    "pathfollow_randomized": Case(
        "VDSim-PathFollow-v0", dict(course_length=80.0, actuator=ACTUATOR, network=NET,
                                    time_limit=1.5,
                                    randomize={"mass": [0.9, 1.1], "friction": [0.8, 1.0],
                                               "latency": [0.0, 0.04],
                                               "obs_delay": [0.0, 0.04]})),
    "acc_drawn": Case("VDSim-ACC-v0", dict(latency=LatencyModel.normal(0.05, 0.03, 3),
                                           network=BURSTY, action_history=4, time_limit=3.0)),
    "acc_fixed_scenario": Case("VDSim-ACC-v0", dict(latency=LatencyModel.fixed(0.03),
                                                    obs_delay=LatencyModel.fixed(0.04),
                                                    time_limit=2.0), tweak=_acc_fixed),
    "acc_randomized": Case("VDSim-ACC-v0", dict(
        time_limit=2.5, randomize={"mass": [0.9, 1.1], "latency": {"mean": [0.0, 0.05]},
                                   "loss": [0.0, 0.1], "longitudinal_delay": [0.0, 0.05]})),
    "dyno_speed_driver": Case("VDSim-Dyno-v0", dict(
        cycle=["urban_stop_and_go", "highway"], driver={"delay_s": 0.3},
        latency=LatencyModel.uniform(0.0, 0.15, 8), network=NET,
        obs_delay=LatencyModel.uniform(0.0, 0.2, 9), action_history=2, time_limit=8.0,
        observe_driver_delay=True), trace=True),
    "dyno_pedal_line": Case("VDSim-Dyno-v0", dict(
        driver={"mode": "pedal", "delay_s": 0.2}, latency=EMPIRICAL, time_limit=6.0,
        pedal_actuator={"time_constant": 0.2, "rate_limit": 2.0})),
    "dyno_randomized_driver": Case("VDSim-Dyno-v0", dict(
        driver="accel", time_limit=5.0,
        randomize={"driver_delay": [0.1, 0.5], "latency": {"mean": [0.0, 0.1]},
                   "obs_delay": [0.0, 0.2]})),
    "speed_task": Case("VDSimTest-Speed-v0", dict(latency=LatencyModel.normal(0.02, 0.01, 1),
                                                  network=NET, time_limit=1.0,
                                                  action_history=1)),
}


# ---------------------------------------------------------------- driving a core


class Driver:
    """A core stepped through its own bindings: its rows, seeded actions and delays, and
    episode resets drawn from a numpy generator (as the env's reset does in Python, or the
    vector env's in C++)."""

    def __init__(self, core: Any, gen: np.random.Generator, measured: bool) -> None:
        self.core = core
        self.gen = gen
        self.measured = measured
        self.obs = np.zeros(len(core.obs_names), np.float32)
        self.terms = np.zeros(len(core.term_names))
        self.info = np.zeros(len(core.info_names))
        self.two = len(core.action_names) == 2

    def reset(self) -> tuple[Any, ...]:
        core, g = self.core, self.gen
        if core.draws_start:
            state = tuple(core.draw_start(g.bit_generator))
        else:  # the speed task draws its start in Python
            v_set = float(g.uniform(10.0, 20.0))
            state = (v_set * float(g.uniform(0.5, 1.5)), v_set)
        if core.randomizes:
            core.randomize_episode(g.bit_generator)
        core.reset(state, self.obs, self.info, int(g.integers(2**63)))
        return state

    def step(self, a: np.ndarray, delay: float) -> int:
        d = delay if self.measured else math.nan
        if self.two:
            return int(self.core.step(float(a[0]), float(a[1]), self.obs, self.terms,
                                      self.info, d))
        return int(self.core.step(float(a[0]), self.obs, self.terms, self.info, d))

    def row(self, flags: int) -> tuple[int, bytes, bytes, bytes]:
        return flags, self.obs.tobytes(), self.terms.tobytes(), self.info.tobytes()


def twin_generator(gen: np.random.Generator) -> np.random.Generator:
    """A generator in the same state as ``gen`` (and then independent of it)."""
    g = np.random.Generator(np.random.PCG64())
    g.bit_generator.state = gen.bit_generator.state
    return g


def next_action(case: Case, drv: Driver, acts: np.random.Generator) -> np.ndarray:
    """Seeded random actions (beyond [-1, 1]: the clamp), or for a tracking path core a
    noisy steer along the path and speed control from its observation."""
    noise = acts.uniform(-1.2, 1.2, len(drv.core.action_names))
    if not case.tracks:
        return noise
    e_y, e_psi, vx, v_ref = drv.obs[0] * 2.0, drv.obs[1] * 0.5, drv.obs[2] * 30.0, \
        drv.obs[5] * 30.0
    steer = -(0.5 * e_psi + 0.3 * (e_y - case.offset)) / 0.6
    return np.clip([steer + 0.1 * noise[0], 0.4 * (v_ref - vx) + 0.2 * noise[1]], -1.2, 1.2)


def rich_core(case: Case, seed: int = 3) -> tuple[Any, Driver, np.random.Generator]:
    """The case's env core after two kinds of episodes: the env's own (gym.make, reset,
    step) and resets and steps in C++. Returns the core, its driver (whose generator
    keeps its episodes' draws) and the action generator."""
    env = gym.make(case.env_id, **case.kwargs)
    acts = np.random.default_rng(seed + 100)
    env.reset(seed=seed)
    n_act = env.action_space.shape[0]
    for _ in range(40):
        if case.measured:
            env.unwrapped.set_next_delay(float(acts.uniform(0.0, 0.05)))
        _, _, term, trunc, _ = env.step(acts.uniform(-1.0, 1.0, n_act).astype(np.float32))
        if term or trunc:
            env.reset()
    core = env.unwrapped.core
    if case.tweak is not None:
        case.tweak(core)
    if case.trace:
        core.session.trace_decimation = 7
    drv = Driver(core, np.random.default_rng(seed + 200), case.measured)
    drv.reset()
    for _ in range(60):
        if drv.step(next_action(case, drv, acts), float(acts.uniform(0.0, 0.05))) & ENDED:
            drv.reset()
    return core, drv, acts


def unpickled(drv: Driver) -> Driver:
    """A driver of a copy of drv's core through pickle, its generator in drv's state."""
    return Driver(pickle.loads(pickle.dumps(drv.core)), twin_generator(drv.gen), drv.measured)


def run_all(case: Case, drivers: list[Driver], acts: np.random.Generator, steps: int = STEPS,
            reset_at: int = 97, repickle_every: int = 0) -> int:
    """Steps every driver with the same actions (and measured delays), resetting all at
    each episode end and once at ``reset_at``; asserts every step's rows bit for bit
    against the first's. With ``repickle_every``, a further copy of the first driver's
    core is unpickled every that many steps and joins them (pickles of many states).
    Returns how many resets happened."""
    resets = 0
    first = drivers[0]
    for i in range(steps):
        if repickle_every and i and i % repickle_every == 0:
            drivers.append(unpickled(first))
        action = next_action(case, first, acts)
        delay = float(acts.uniform(0.0, 0.05))
        rows = [d.row(d.step(action, delay)) for d in drivers]
        for k, r in enumerate(rows[1:], 1):
            assert r == rows[0], f"step {i}: copy {k}'s rows differ from the original's"
        if rows[0][0] & ENDED or i == reset_at:
            starts = [_canon(d.reset()) for d in drivers]
            assert starts == [starts[0]] * len(starts), f"reset after step {i}: another start"
            for k, d in enumerate(drivers[1:], 1):
                assert d.row(0) == first.row(0), f"reset after step {i}: copy {k}'s observation"
            resets += 1
    return resets


# ---------------------------------------------------------------- what is observable


def _canon(x: Any) -> Any:
    """Values compared bit for bit: floats by their bits (NaN payloads, signed zeros)."""
    if isinstance(x, float):
        return ("f", struct.pack("<d", x))
    if isinstance(x, np.ndarray):
        return (str(x.dtype), x.shape, x.tobytes())
    if isinstance(x, (list, tuple)):
        return tuple(_canon(v) for v in x)
    if isinstance(x, dict):
        return tuple(sorted((k, _canon(v)) for k, v in x.items()))
    if isinstance(x, (bool, int, str)) or x is None:
        return x
    raise TypeError(f"no canonical form for {type(x).__name__}")


def fingerprint(core: Any) -> dict[str, Any]:
    """Everything the bindings show of a core without changing it (a drawn course's
    lazily built points included: course_points_built, not course_arrays)."""
    fp: dict[str, Any] = {}
    for name in ("tick", "time", "n_lost", "n_discarded", "n_overrun", "n_skipped", "next_k",
                 "next_sample", "pending_commands", "episode_draws", "obs_names",
                 "action_names", "term_names", "info_names", "summary_names",
                 "time_limit_ticks", "action_history", "has_latency", "has_network",
                 "has_obs_delay", "randomizes", "task_info_size", "control_period",
                 "draws_start"):
        fp[name] = getattr(core, name)
    fp["summary"] = core.summary()
    fp["obs_scale"] = core.obs_scale()
    fp["command_in_force"] = core.command_in_force()
    fp["command_in_force_later"] = core.command_in_force(core.tick + 1000)
    if isinstance(core, _core.DynoEnvCore):
        for name in ("speed", "filtered_accel", "pedal", "driver_pedal", "axle_torque",
                     "energy_j", "distance", "driver_delay_steps", "cycle_index", "periods"):
            fp[name] = getattr(core, name)
    else:
        s = core.session
        state = np.zeros(_core.STATE_SIZE)
        s.get_state(state)
        fp["state"] = state
        for name in ("steps_taken", "steps_rejected", "realized_steer", "pending",
                     "trace_decimation"):
            fp[name] = getattr(s, name)
        fp["command"] = s.command
    if isinstance(core, _core.PathEnvCore):
        for name in ("course_serial", "cone_hits", "course_points_built"):
            fp[name] = getattr(core, name)
    if isinstance(core, _core.AccEnvCore):
        fp["scenario"] = core.scenario()
        fp["periods"] = core.periods
    return {k: _canon(v) for k, v in fp.items()}


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("name", sorted(CASES))
def test_unpickled_core_steps_bit_for_bit(name: str) -> None:
    case = CASES[name]
    core, drv, acts = rich_core(case)
    blob = pickle.dumps(core)
    twin = pickle.loads(blob)
    assert type(twin) is type(core) and twin is not core
    assert pickle.dumps(twin) == blob  # write -> read -> write: the same bytes
    assert fingerprint(twin) == fingerprint(core)
    drivers = [drv, Driver(twin, twin_generator(drv.gen), case.measured)]
    # and copies of the states 25, 50, ... steps on (mid-episode, after resets)
    resets = run_all(case, drivers, acts, repickle_every=25)
    assert resets >= 2 and len(drivers) == 2 + (STEPS - 1) // 25
    # after the same actions and resets, every member is equal again (each is written)
    for d in drivers[1:]:
        assert fingerprint(d.core) == fingerprint(core)
        assert pickle.dumps(d.core) == pickle.dumps(core)
    # what was recorded, and what a mode-C peek sees
    if case.trace:
        ta, tb = core.session.take_trace(), twin.session.take_trace()
        assert len(ta) > 0 and _canon(ta) == _canon(tb)
    other = drivers[1]
    fa, fb = core.peek(drv.obs, drv.info), twin.peek(other.obs, other.info)
    assert drv.row(fa) == other.row(fb)
    if isinstance(core, _core.PathEnvCore):  # the whole course, built on demand on both
        assert _canon(core.course_arrays()) == _canon(twin.course_arrays())


@pytest.mark.parametrize("name", sorted(CASES))
def test_restore_from_unpickled_snapshot(name: str) -> None:
    """``core.restore(pickle.loads(pickle.dumps(core.snapshot())))``, after the core has
    moved on, puts it back: it then steps as the snapshot itself does."""
    case = CASES[name]
    core, drv, acts = rich_core(case, seed=5)
    snap = core.snapshot()
    gen_at_snap = twin_generator(drv.gen)
    blob = pickle.dumps(snap)
    for _ in range(30):  # the core moves on (and a reset in between)
        drv.step(next_action(case, drv, acts), 0.01)
    drv.reset()
    core.restore(pickle.loads(blob))
    assert pickle.dumps(core) == blob
    drv.gen = gen_at_snap
    ref = Driver(snap, twin_generator(gen_at_snap), case.measured)
    run_all(case, [drv, ref], acts, steps=120, reset_at=50)
    assert pickle.dumps(core) == pickle.dumps(snap)


def test_pickle_protocols_and_copies() -> None:
    core, drv, acts = rich_core(CASES["pathfollow_lazy_course"])
    blob = pickle.dumps(core)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.dumps(pickle.loads(pickle.dumps(core, protocol=protocol))) == blob
    # copy and deepcopy go through the same state
    for twin in (copy.copy(core), copy.deepcopy(core)):
        assert twin is not core and pickle.dumps(twin) == blob
    # a loaded core is its own: stepping it leaves the original (and the blob) unchanged
    twin = pickle.loads(blob)
    Driver(twin, np.random.default_rng(0), False).step(np.zeros(2), 0.0)  # (not tracking)
    assert pickle.dumps(core) == blob and pickle.dumps(twin) != blob


def test_blob_sizes_bounded() -> None:
    """A blob holds one core: tens of KiB for a DLC or ACC core, more for a long course."""
    sizes = {}
    for name in ("dlc_plain", "acc_drawn", "dyno_speed_driver", "pathfollow_lazy_course"):
        core, _, _ = rich_core(CASES[name])
        sizes[name] = len(core.__getstate__())
    assert all(1_000 < n < 2_000_000 for n in sizes.values()), sizes


def _blob(name: str = "dlc_plain") -> tuple[Any, bytes]:
    core, _, _ = rich_core(CASES[name])
    return core, core.__getstate__()


def _load(cls: Any, state: bytes) -> Any:
    obj = cls.__new__(cls)
    obj.__setstate__(state)
    return obj


def test_refuses_truncated_and_corrupted_blobs() -> None:
    core, blob = _blob()
    cls = type(core)
    assert pickle.dumps(_load(cls, blob)) == pickle.dumps(core)  # the good one loads
    for n in (0, 5, 30, len(blob) // 2, len(blob) - 1):
        with pytest.raises(ValueError, match="truncated|not a vdsim state blob"):
            _load(cls, blob[:n])
    with pytest.raises(ValueError, match="truncated blob: its state has"):
        _load(cls, blob[:-1])
    with pytest.raises(ValueError, match="bytes after the end"):
        _load(cls, blob + b"\0")
    rng = np.random.default_rng(1)
    for i in rng.integers(60, len(blob), 20):  # one byte changed in the state
        bad = bytearray(blob)
        bad[i] ^= 0x10
        with pytest.raises(ValueError, match="corrupted blob"):
            _load(cls, bytes(bad))
    bad = bytearray(blob)
    bad[0] ^= 0xFF
    with pytest.raises(ValueError, match="not a vdsim state blob"):
        _load(cls, bytes(bad))
    with pytest.raises(ValueError, match="not a vdsim state blob"):
        _load(cls, pickle.dumps({"not": "a core"}))
    bad = bytearray(blob)
    bad[8] += 1  # the archive format
    with pytest.raises(ValueError, match="archive format"):
        _load(cls, bytes(bad))


def test_refuses_another_core_type() -> None:
    _, acc_blob = _blob("acc_drawn")
    with pytest.raises(ValueError, match=r"holds a vdsim::EnvCore<vdsim::AccTask>, not a "
                                         r"vdsim::EnvCore<vdsim::PathTask>"):
        _load(_core.PathEnvCore, acc_blob)
    with pytest.raises(ValueError, match="DriveCycleTask"):
        _load(_core.AccEnvCore, _blob("dyno_pedal_line")[1])
    with pytest.raises(TypeError):  # restore takes a core of its own type
        _blob("dlc_plain")[0].restore(_load(_core.AccEnvCore, acc_blob))


def test_blob_header_names_the_build() -> None:
    """The header records the build that wrote the blob (vdsim_gym._build_info's git
    sha), which the refusal of another build's layout names."""
    from vdsim_gym import _build_info

    _, blob = _blob()
    assert str(_build_info.GIT_SHA).encode() in blob[:200]
