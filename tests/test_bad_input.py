"""Bad input to the library gets a clear error that names the cause and the fix, and the
object stays usable. (The command line's errors: tests/test_cli_errors.py.)

Every case is one parametrized row: the call, a regex the message must match (naming the
argument and the value or the bound), and then a recovery step on the same object.
"""

from __future__ import annotations

import math
import os

import gymnasium as gym
import numpy as np
import pytest

from vdsim_gym import LatencyModel, Plant, _core
from vdsim_gym.config.latency import (
    LATENCY_KINDS,
    MAX_DELAY_S,
    EmpiricalLatency,
    FixedLatency,
    MeasuredLatency,
    NormalLatency,
    UniformLatency,
)
from vdsim_gym.config.vehicle import load_vehicle
from vdsim_gym.errors import ConfigError
from vdsim_gym.eval import ClosedLoopEval, sweep
from vdsim_gym.timing import whole_ticks

DLC = {"preset": "lane_change_3p5_30"}


# ------------------------------------------------------------------ latency models

@pytest.mark.parametrize("make, match", [
    (lambda: LatencyModel.fixed(-1.0), r"fixed latency c must be >= 0 s.*got -1\.0"),
    (lambda: LatencyModel.fixed(1e6), r"c = 1000000\.0 s exceeds .*MAX_DELAY_S = 60 s"),
    (lambda: LatencyModel.fixed(1e300), r"exceeds the longest supported delay"),
    (lambda: LatencyModel.fixed(math.nan), r"finite number of seconds, got nan"),
    (lambda: LatencyModel.normal(-0.01, 0.005), r"normal latency mu must be >= 0 s"),
    (lambda: LatencyModel.normal(0.01, 10.0), r"up to mu \+ 8\.6 sd = 86\.01 s"),
    (lambda: LatencyModel.uniform(0.03, 0.01), r"lo <= hi.*swap them"),
    (lambda: LatencyModel.uniform(0.0, 0.01, seed=-1), r"seed must be an integer"),
    (lambda: FixedLatency(0.01, 0.02), r"takes 2 positional arguments but 3"),
    (lambda: MeasuredLatency(0.01), r"takes 1 positional argument but 2"),
])
def test_latency_model_rejects_nonsense_in_every_constructor(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()
    assert LatencyModel.fixed(MAX_DELAY_S).max_delay == MAX_DELAY_S  # the bound itself is fine


def test_latency_parameters_by_name_reach_the_core():
    """Each kind is its own class, its parameters named in Python and in the core's spec;
    the kinds are the core's enum's, one class each."""
    u = LatencyModel.uniform(0.002, 0.03, seed=5)
    n = LatencyModel.normal(0.01, 0.002, seed=5)
    f = LatencyModel.fixed(0.02)
    assert (type(u), type(n), type(f)) == (UniformLatency, NormalLatency, FixedLatency)
    assert (u.lo, u.hi, n.mu, n.sd, f.c) == (0.002, 0.03, 0.01, 0.002, 0.02)
    assert not hasattr(f, "lo") and not hasattr(u, "mu") and (f.seed, u.seed) == (0, 5)
    kinds = {c.kind: c for c in (FixedLatency, UniformLatency, NormalLatency,
                                 EmpiricalLatency, MeasuredLatency)}
    assert set(kinds) == set(_core.LatencyKind.__members__) == set(LATENCY_KINDS)
    with pytest.raises(TypeError, match="not a core LatencyKind"):
        type("Bogus", (LatencyModel,), {"kind": "bogus"})
    su, sn, sf = u.spec(), n.spec(), f.spec()
    assert (su.lo, su.hi, su.c, sn.mu, sn.sd, sf.c) == (0.002, 0.03, 0.0, 0.01, 0.002, 0.02)
    assert str(LatencyModel.measured().spec().kind).endswith("measured")
    draws = np.asarray(u.sampler().draw_many(1000))
    assert draws.min() >= 0.002 and draws.max() <= 0.03


def test_latency_tick_conversions_are_guarded_against_overflow():
    with pytest.raises(ValueError, match=r"too long: .* more than the clock's limit of 2\*\*53"):
        whole_ticks(1e300, 5e-4, "duration")
    assert whole_ticks(0.06, 5e-4, "x") == 120


# ------------------------------------------------------------------ environments

def _env(**kw):
    return gym.make("VDSim-DLC-v0", **{**DLC, **kw})


@pytest.mark.parametrize("kwargs, match", [
    ({"terminate_on_cone": "no"}, r"terminate_on_cone must be True or False, got 'no'"),
    ({"terminate_on_cone": 0}, r"terminate_on_cone must be True or False"),
    ({"speed": 1e4}, r"speed must be in \(0, 70\] m/s, got 10000\.0"),
    ({"speed": -5.0}, r"speed must be in \(0, 70\]"),
    ({"latency": 0.02}, r"LatencyModel\.fixed\(0\.02\)"),
    ({"control_period": 0.0203}, r"not a whole multiple of substep_dt"),
    ({"overrun": "later"}, r"overrun must be one of \('skip', 'queue'\)"),
    ({"level": "L3"}, r"level must be one of"),
    ({"vehicle": 42}, r"vehicle must be a name under envs/vehicles"),
])
def test_env_kwargs_rejected_with_the_cause(kwargs, match):
    with pytest.raises((ValueError, ConfigError), match=match):
        _env(**kwargs)
    env = _env()
    env.reset(seed=0)
    env.close()


@pytest.mark.parametrize("action, match", [
    (np.array(["0.1", "0.2"]), r"2 real numbers .*dtype <U3"),
    (np.array([0.1 + 1j, 0.0]), r"2 real numbers .*dtype complex128"),
    ("ab", r"2 real numbers"),
    ([0.1, 0.2, 0.3], r"shape \(2,\)"),
    (np.array([np.nan, 0.0]), r"NaN"),
    (np.array([1.5, 0.0]), r"out of range.*np\.clip"),
    (np.array([0.0, -np.inf]), r"inf"),
])
def test_bad_actions_rejected_and_env_stays_usable(action, match):
    env = _env()
    obs, _ = env.reset(seed=1)
    with pytest.raises(ValueError, match=match):
        env.step(action)
    obs2, *_ = env.step(np.zeros(2, np.float32))  # same episode goes on
    assert obs2.shape == obs.shape and env.unwrapped.trajectory.shape == (2, 2)


def test_measured_delay_is_bounded():
    env = _env(latency=LatencyModel.measured())
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"in \[0, MAX_DELAY_S = 60\], got 1e\+300"):
        env.unwrapped.set_next_delay(1e300)
    env.unwrapped.set_next_delay(0.01)
    env.step(np.zeros(2))


def test_unknown_reset_options_are_errors():
    env = _env()
    with pytest.raises(ValueError, match=r"unknown reset options \['speed'\].*gym\.make kwargs"):
        env.reset(seed=0, options={"speed": 3.0})
    env.reset(seed=0, options={})  # what vector wrappers pass
    env.reset(seed=0, options=None)


def test_step_after_the_episode_ended_raises_reset_needed():
    env = _env(speed=20.0)
    env.reset(seed=0)
    terminated = truncated = False
    while not (terminated or truncated):  # full right lock: off the corridor quickly
        _, _, terminated, truncated, info = env.step(np.array([1.0, 0.0]))
    with pytest.raises(gym.error.ResetNeeded, match=r"episode ended \(off_corridor\).*reset"):
        env.step(np.zeros(2))
    env.reset(seed=0)
    env.step(np.zeros(2))


# ------------------------------------------------------------------ plant

@pytest.mark.parametrize("command, match", [
    ((10.0, 0.0), r"road-wheel steer 10\.0 rad is beyond 10 x the vehicle's max_steer = 0\.6"),
    ((0.0, 1e12), r"force \[N\] command 1000000000000\.0 is beyond 10 x the vehicle's "
                  r"range \[-25000, 4687\.5\]"),
    ((0.0, -1e6), r"beyond 10 x the vehicle's range \[-25000, 4687\.5\]"),
])
def test_plant_commands_beyond_the_vehicle_are_refused(command, match):
    p = Plant(longitudinal="force")
    p.reset({"vx": 10.0})
    with pytest.raises(ValueError, match=match):
        p.step(command)
    assert p.tick == 0
    lo, hi = p.longitudinal_range
    p.step((0.6, hi))
    p.step((-0.6, lo))
    assert p.tick == 2 * p.ticks_per_period


# ------------------------------------------------------------------ vehicle files

@pytest.mark.parametrize("text, match", [
    ("- mass: 1500\n", r"must be a mapping of field: value .*got a list"),
    ("mass: .nan\n", r"'mass' = nan is outside its range \(0, 100000\]"),
    ("mass: -1500\n", r"'mass' = -1500\.0 is outside its range"),
    ("max_steer: 35\n", r"'max_steer' = 35\.0 is outside its range \(0, 1\.5\]"),
    ("tire: {mu: .inf}\n", r"'tire\.mu' = inf is outside its range"),
    ("track: 1550\n", r"'track' = 1550\.0 is outside its range \(0, 5\]"),
    ("front_drive_share: 1.5\n", r"'front_drive_share' = 1\.5 is outside its range \[0, 1\]"),
    ("mass: [1, 2]\n", r"'mass' must be a number"),
    ("mass: 1500\n  bad indent: [\n", r"not valid YAML"),
])
def test_vehicle_file_values_checked_against_declared_ranges(tmp_path, text, match):
    path = tmp_path / "car.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as err:
        load_vehicle(str(path))
    if "list" not in match and "YAML" not in match:
        assert str(path) in str(err.value)  # names the file
    assert load_vehicle("generic_sedan").mass == 1500.0


# ------------------------------------------------------------------ evaluation and sweeps

def _hold(obs, t):
    return (0.0, 0.0)


def test_overrun_in_sync_mode_is_an_error_not_dropped():
    with pytest.raises(ValueError, match=r"mode='sync' has no computation delay.*overrun='queue'"):
        ClosedLoopEval(controller=_hold, mode="sync", overrun="queue", duration=0.1)
    res = ClosedLoopEval(controller=_hold, mode="sync", duration=0.1).run()
    assert len(res.samples["k"]) == 5


def test_eval_refuses_delays_longer_than_the_run():
    with pytest.raises(ValueError, match=r"up to 2 s, longer than the run \(duration=1 s\)"):
        ClosedLoopEval(controller=_hold, mode="virtual_async", latency=LatencyModel.fixed(2.0),
                       duration=1.0)


def test_sweep_on_a_non_vdsim_env_names_the_need():
    class Zero:
        def predict(self, obs, **kw):
            return np.zeros((len(obs), 2)), None

    with pytest.raises(ValueError, match=r"'CartPole-v1' is not a VDSim env.*VDSim-DLC-v0"):
        sweep(Zero(), "CartPole-v1", latencies=[None], seeds=1, progress=False)


@pytest.mark.parametrize("make", [
    lambda: gym.make("VDSim-DLC-v0", **DLC),
    lambda: gym.make("VDSim-DLC-v0", **DLC).unwrapped,
    lambda: gym.make_vec("VDSim-DLC-v0", num_envs=2, **DLC),
])
@pytest.mark.parametrize("how", ["deepcopy", "copy", "pickle"])
def test_copy_and_pickle_are_refused_with_the_factory_to_use(make, how):
    import copy
    import functools
    import pickle

    env = make()
    env.reset(seed=0)
    op = {"deepcopy": copy.deepcopy, "copy": copy.copy, "pickle": pickle.dumps}[how]
    if how == "copy" and not hasattr(env, "envs") and env is not env.unwrapped:
        env = env.unwrapped  # a shallow copy of a wrapper copies no env; the base refuses
    with pytest.raises(TypeError, match=r"holds C\+\+ env cores.*functools\.partial"):
        op(env)
    factory = pickle.loads(pickle.dumps(functools.partial(gym.make, "VDSim-DLC-v0", **DLC)))
    a, b = factory(), gym.make("VDSim-DLC-v0", **DLC)
    np.testing.assert_array_equal(a.reset(seed=3)[0], b.reset(seed=3)[0])
    env.close()


def test_unknown_env_kwarg_lists_every_valid_one():
    with pytest.raises(TypeError, match=r"DoubleLaneChangeEnv.__init__\(\) got an unexpected "
                                        r"keyword argument 'bogus_key'; valid keywords: "
                                        r".*level.*preset.*speed.*time_limit"):
        gym.make("VDSim-DLC-v0", bogus_key=1)
    with pytest.raises(TypeError, match=r"got unexpected keyword arguments 'a', 'b'; valid"):
        gym.make("VDSim-DLC-v0", b=1, a=2)
    from vdsim_gym.envs.dlc import DoubleLaneChangeEnv

    assert {"level", "vehicle", "latency", "preset", "speed", "reward_weights",
            "terminate_on_cone", "time_limit"} <= DoubleLaneChangeEnv.kwarg_names()


def test_durations_lengths_and_files_have_bounds_checked_before_allocating(tmp_path):
    """Each bound is checked before any allocation: a huge actuator dead time (its delay
    line holds every substep), control period (one step integrates it whole), random
    path (a reset builds it whole) or sensor file; a FIFO is refused, not read."""
    import os

    from vdsim_gym.envs import acc_scenarios
    from vdsim_gym.errors import ConfigError

    with pytest.raises(ConfigError, match=r"'dead_time' = 1000000.0 s is longer than the "
                                          r"bound of 1 s"):
        gym.make("VDSim-DLC-v0", actuator={"dead_time": 1e6})
    with pytest.raises(ValueError, match=r"control_period = 92195.0 s is longer than the "
                                         r"bound of 10 s"):
        gym.make("VDSim-DLC-v0", control_period=92195.0)
    with pytest.raises(ValueError, match=r"course_length = 10000000.0 m is longer than the "
                                         r"bound of 20000 m"):
        gym.make("VDSim-PathFollow-v0", course_length=1e7)
    gym.make("VDSim-DLC-v0", actuator={"dead_time": 0.05}).close()  # in range: fine
    big = tmp_path / "big.csv"
    with big.open("w") as fh:
        fh.write("time,lead_speed,distance\n")
        fh.truncate(acc_scenarios.MAX_SENSOR_CSV_BYTES + 1)
    with pytest.raises(ValueError, match=r"big.csv: the sensor file is 32.0 MiB, more than "
                                         r"the bound of 32 MiB"):
        acc_scenarios.load_sensor_csv(big, dt=0.1, set_speed=30.0)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="the sensor file must be a regular file"):
        acc_scenarios.load_sensor_csv(fifo, dt=0.1, set_speed=30.0)


@pytest.mark.parametrize("row, match", [
    ("0.1,inf,20", "row 3: a cell is not finite"),
    ("0.1,20,-5", r"row 3: lead_speed 20.0 m/s or distance -5.0 m outside"),
    ("0.1,900,20", r"row 3: lead_speed 900.0 m/s"),
])
def test_sensor_csv_refuses_infinite_and_absurd_values_naming_the_row(tmp_path, row, match):
    from vdsim_gym.envs.acc_scenarios import load_sensor_csv

    path = tmp_path / "s.csv"
    path.write_text(f"time,lead_speed,distance\n0.0,20,30\n{row}\n0.2,20,30\n")
    with pytest.raises(ValueError, match=match):
        load_sensor_csv(path, dt=0.1, set_speed=30.0)


def test_booleans_strings_and_impossible_delays_are_refused():
    """Accepted silently before: boolean actions ([True, False] read as full steer),
    max_step=True (one substep), speed="20" (now: must be a number), and a delay as long
    as the episode (LatencyModel.fixed(20) meant as 20 ms: one 20 s step)."""
    from vdsim_gym import LatencyModel

    env = gym.make("VDSim-DLC-v0")
    env.reset(seed=0)
    for bad in (np.array([True, False]), [True, False]):
        with pytest.raises(ValueError, match=r"action must be 2 real numbers"):
            env.step(bad)
    env.step(np.zeros(2, np.float32))  # the env goes on
    venv = gym.make_vec("VDSim-DLC-v0", num_envs=2)
    venv.reset(seed=0)
    with pytest.raises(ValueError, match=r"actions must be a \(2, 2\) array of real numbers"):
        venv.step(np.ones((2, 2), bool))
    venv.close()
    with pytest.raises(ValueError, match="max_step must be a finite number of seconds, got True"):
        gym.make("VDSim-DLC-v0", max_step=True)
    with pytest.raises(ValueError, match="speed must be a number of m/s, got str '20'"):
        gym.make("VDSim-DLC-v0", speed="20")
    with pytest.raises(ValueError, match=r"as long as the episode \(time_limit = 15 s\).*"
                                         r"LatencyModel.fixed\(0.02\)"):
        gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(20))
    gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.02)).close()


def test_sensor_csv_with_a_huge_cell_names_the_file(tmp_path):
    from vdsim_gym.envs.acc_scenarios import load_sensor_csv

    path = tmp_path / "huge.csv"
    path.write_text("time,lead_speed,distance\n0.0,20,30\n0.1,20," + "9" * 200_000 + "\n")
    with pytest.raises(ValueError, match=r"huge.csv, after line 2: not a readable CSV row "
                                         r"\(field larger than field limit"):
        load_sensor_csv(path, dt=0.1, set_speed=30.0)


def test_finite_commands_beyond_the_range_saturate_and_are_counted():
    """The reference workflow's proportional speed loop (fx = k (v_ref - vx)) asks for
    more force than the drivetrain has at its first sample: a real actuator saturates, so
    the Plant holds the limit and counts it, and ClosedLoopEval runs to its end with
    stats["n_saturated"]."""
    from vdsim_gym.eval import ClosedLoopEval

    p = Plant(longitudinal="force")
    p.reset({"vx": 10.0})
    lo, hi = p.longitudinal_range
    obs = p.step((0.9, 16150.0))
    assert obs["saturated"] == 1.0 and p.n_saturated == 1
    ref = Plant(longitudinal="force")
    ref.reset({"vx": 10.0})
    want = ref.step((0.6, hi))  # the same as the command held at both limits
    assert obs["vx"] == want["vx"] and obs["delta_rw"] == want["delta_rw"]

    def p_speed_loop(o, t):
        return (0.0, 1615.0 * (20.0 - o["vx"]))  # 16150 N at the first sample

    res = ClosedLoopEval(controller=p_speed_loop, mode="sync", duration=2.0,
                         plant_kwargs={"longitudinal": "force"},
                         initial_state={"vx": 10.0}).run()
    assert res.stats["n_saturated"] > 0 and not res.stats["stopped_early"]
    assert res.stats["n_saturated"] <= res.stats["n_samples"]


def test_vector_size_and_evaluation_length_have_bounds():
    with pytest.raises(ValueError, match="num_envs = 10000000 is more than the bound of 100000"):
        gym.make_vec("VDSim-DLC-v0", num_envs=10**7)
    with pytest.raises(ValueError, match=r"duration = 10000000.0 s is longer than the bound "
                                         r"of 86400 s"):
        ClosedLoopEval(controller=lambda obs, t: (0.0, 0.0), duration=1e7)


# ------------------------------------------------------------------ issue 45: silent acceptances

@pytest.mark.parametrize("kwargs, match", [
    ({"obs_delay": LatencyModel.fixed(60)},
     r"sensor delay obs_delay=.* is 60 s, as long as the episode \(time_limit = 15 s\).*"
     r"not milliseconds: for 20 ms write obs_delay=LatencyModel.fixed\(0.02\)"),
    ({"randomize": {"obs_delay": [20, 50]}},
     r"randomize\['obs_delay'\]'s upper bound is 50 s, as long as the episode.*"
     r"not milliseconds"),
    ({"randomize": {"latency": [0, 40]}},
     r"randomize\['latency'\]'s upper bound is 40 s, as long as the episode"),
    ({"network": __import__("vdsim_gym").NetworkModel(jitter=LatencyModel.fixed(60))},
     r"network delay NetworkModel\(jitter=.* is 60 s, as long as the episode.*"
     r"NetworkModel\(jitter=LatencyModel.fixed\(0.02\)\)"),
], ids=["obs_delay", "randomize-obs_delay", "randomize-latency", "network-jitter"])
def test_delays_as_long_as_the_episode_are_refused_with_the_unit_slip(kwargs, match):
    """Accepted silently before (only latency= was checked against the episode): a sensor
    or network delay of 60 s on the 15 s DLC, randomized ranges meant as milliseconds."""
    with pytest.raises(ConfigError, match=match):
        gym.make("VDSim-DLC-v0", **kwargs)
    gym.make("VDSim-DLC-v0", obs_delay=LatencyModel.fixed(0.02),
             randomize={"latency": [0.0, 0.04]}).close()  # the seconds forms pass


def test_train_randomize_option_in_milliseconds_is_refused():
    """``train --randomize obs_delay=0:50`` (ms meant, no unit): the parsed ranges build
    the env, which refuses a sensor age as long as the episode."""
    from vdsim_gym.sim.randomization import parse_randomize_text

    with pytest.raises(ConfigError, match=r"randomize\['obs_delay'\]'s upper bound is 50 s.*"
                                          r"seconds, not milliseconds"):
        gym.make("VDSim-DLC-v0", randomize=parse_randomize_text("obs_delay=0:50"))
    gym.make("VDSim-DLC-v0", randomize=parse_randomize_text("obs_delay=0:50ms")).close()


def test_absurd_randomized_scales_and_boolean_samples_are_refused():
    with pytest.raises(ConfigError, match=r"randomize\['mass'\]: a scale must be >= 0.1, got "
                                          r"\[1e-09, 1e-09\].*load that vehicle"):
        gym.make("VDSim-DLC-v0", randomize={"mass": [1e-9, 1e-9]})
    with pytest.raises(ConfigError, match=r"cornering_stiffness'\]: a scale must be >= 0.1"):
        gym.make("VDSim-DLC-v0", randomize={"cornering_stiffness": [1e-6, 1.0]})
    with pytest.raises(ConfigError, match=r"empirical latency samples must be real numbers of "
                                          r"seconds \(not booleans.*got \[True, False\]"):
        LatencyModel.empirical([True, False])
    with pytest.raises(ConfigError, match="empirical latency samples must be real numbers"):
        LatencyModel.empirical(np.array([True, False]))
    assert LatencyModel.empirical([0.01, 0.02]).max_delay == 0.02


MPC_BAD = [
    ({"dt": 1e-9}, r"dt must be the plan's step \[s\] in \[0.001, 1\], got 1e-09"),
    ({"dt": 100}, r"dt must be the plan's step \[s\] in \[0.001, 1\], got 100"),
    ({"dt": True}, r"dt must be .* got True"),
    ({"delay": 1e6}, r"delay must be a number of seconds >= 0 and <= 60, got 1000000.0.*"
                     r"not milliseconds"),
    ({"steer_limit": 100}, r"steer_limit must be a fraction of the vehicle's max_steer in "
                           r"\(0, 1\], got 100"),
    ({"horizon": 20000}, r"horizon must be a whole number of steps in \[1, 500\] \(the "
                         r"condensed QP is dense.*got 20000"),
    ({"horizon": math.inf}, r"horizon must be a whole number of steps in \[1, 500\].*got inf"),
    ({"horizon": math.nan}, r"horizon must be a whole number of steps in \[1, 500\].*got nan"),
    ({"horizon": True}, r"horizon must be a whole number of steps.*got True"),
]


@pytest.mark.parametrize("kwargs, match", MPC_BAD, ids=[str(k) for k, _ in MPC_BAD])
def test_absurd_mpc_parameters_are_refused(kwargs, match):
    pytest.importorskip("osqp")
    from vdsim_gym.controllers.condensed_qp import CondensedMPC
    from vdsim_gym.controllers.mpc import MPCSteer

    env = gym.make("VDSim-DLC-v0")
    with pytest.raises(ConfigError, match=match):
        MPCSteer.from_env(env, **kwargs)
    if "horizon" in kwargs:
        with pytest.raises(ConfigError, match=match):
            CondensedMPC(kwargs["horizon"])
    MPCSteer.from_env(env)  # the defaults build
    env.close()


def test_mpc_on_an_env_without_a_path_is_one_clear_error():
    pytest.importorskip("osqp")
    from vdsim_gym.controllers.mpc import mpc_pi

    with pytest.raises(ConfigError, match=r"the MPC steers along a path and does not drive "
                                          r"VDSim-Dyno-v0: its observation has no e_y.*path env"):
        mpc_pi(gym.make("VDSim-Dyno-v0"))


@pytest.mark.parametrize("spec, env_id, drivers", [
    ("mpc", "VDSim-Dyno-v0", "cycle_follower"),
    ("stanley", "VDSim-ACC-v0", "acc_pid, acc_pid_dc, idm, idm_dc"),
])
def test_a_controller_that_does_not_drive_the_env_is_one_cli_line(spec, env_id, drivers,
                                                                   tmp_path, capsys):
    """Before: an AttributeError traceback (mpc on the dyno), a KeyError deep in the first
    batch (stanley on the ACC env). Now one line naming the baselines that do drive it."""
    pytest.importorskip("osqp")
    from vdsim_gym.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["tolerance", "--controllers", spec, "--env", env_id, "--seeds", "1",
                   "--no-plot", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"--controllers {spec}: does not drive {env_id}" in err
    assert err.endswith(f"the baselines that drive it: {drivers}")


def test_numpy_scalars_are_numbers_and_bools_are_not():
    """np.float32 / np.int64 values were refused where Python floats and ints pass
    (LatencyModel, NetworkModel, whole_ticks, the MPC's weights and horizon)."""
    from vdsim_gym import NetworkModel

    f32, i64 = np.float32(0.02), np.int64(2)
    assert LatencyModel.fixed(f32).c == pytest.approx(0.02)
    assert LatencyModel.uniform(np.float32(0.0), f32, seed=i64).hi == pytest.approx(0.02)
    net = NetworkModel(drop=np.float32(0.25), burst=(np.float32(0.5), np.float64(0.5)),
                       jitter=LatencyModel.fixed(f32))
    assert net.drop == 0.25 and net.burst == (0.5, 0.5)
    assert whole_ticks(np.float32(0.5), 5e-4, "t") == 1000
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(f32),
                   randomize={"mass": [np.float32(0.9), np.float32(1.1)]})
    env.close()
    for bad in (lambda: LatencyModel.fixed(True), lambda: NetworkModel(drop=True),
                lambda: NetworkModel(burst=(True, 0.5)), lambda: whole_ticks(True, 5e-4, "t")):
        with pytest.raises(ConfigError):
            bad()
    with pytest.raises(ConfigError, match=r"obs_delay must be a LatencyModel, got the number "
                                          r"np.float32\(0.03\); for a delay of 0.03 s "
                                          r"pass obs_delay=LatencyModel.fixed\(0.03\)"):
        gym.make("VDSim-DLC-v0", obs_delay=np.float32(0.03))
    if pytest.importorskip("osqp"):
        from vdsim_gym.controllers.mpc import MPCSteer

        env = gym.make("VDSim-DLC-v0")
        mpc = MPCSteer.from_env(env, dt=np.float32(0.05), horizon=np.int64(20),
                                q_y=np.float32(2.0), delay=np.float32(0.01))
        assert mpc.horizon == 20 and mpc.dt == pytest.approx(0.05)
        env.close()


@pytest.mark.parametrize("make", [
    lambda v: gym.make("VDSim-DLC-v0", speed=v(20.0)),
    lambda v: gym.make("VDSim-DLC-v0", time_limit=v(12.0)),
    lambda v: gym.make("VDSim-DLC-v0", step_tol=v(1e-4)),
    lambda v: gym.make("VDSim-PathFollow-v0", course_length=v(300.0)),
    lambda v: gym.make("VDSim-PathFollow-v0", stall_time=v(2.0)),
    lambda v: gym.make("VDSim-ACC-v0", duration=v(30.0)),
    lambda v: gym.make("VDSim-ACC-v0", set_speed=v(25.0)),
    lambda v: gym.make("VDSim-ACC-v0", time_headway=v(1.5)),
], ids=["dlc speed", "time_limit", "step_tol", "course_length", "stall_time",
        "acc duration", "acc set_speed", "acc time_headway"])
def test_env_keywords_take_numpy_scalars_and_refuse_bools(make):
    """The envs' numeric keywords take numpy scalars as Python numbers (np.float32 was
    refused by hand-written isinstance checks) and refuse a bool where a number is meant
    (True passed as 1)."""
    env = make(np.float32)
    env.reset(seed=0)
    env.step(env.action_space.sample() * 0)
    env.close()
    make(np.float64).close()
    with pytest.raises(ConfigError):
        make(lambda x: True)


def test_a_compensating_controllers_delay_takes_numpy_scalars():
    """RowDelays (stanley_dc's and the MPC's predicted delay) refused np.float32."""
    from vdsim_gym.controllers.prediction import RowDelays

    assert RowDelays(np.float32(0.04)).delay == pytest.approx(0.04)
    for bad in (True, float("nan"), -0.01):
        with pytest.raises(ConfigError, match="delay must be a finite number"):
            RowDelays(bad)


@pytest.mark.parametrize("horizon", ["inf", "nan", "2.5", "0"])
def test_an_mpc_spec_with_a_non_integral_horizon_names_it(horizon):
    """mpc:horizon=inf / nan raised a raw OverflowError / ValueError from int()."""
    from vdsim_gym.policies import load_controller

    with pytest.raises(ConfigError, match=f"horizon must be a whole number of steps >= 1, "
                                          f"got {horizon.replace('.', '[.]')}"):
        load_controller(f"mpc:horizon={horizon}")


@pytest.mark.parametrize("load", [
    lambda p: __import__("vdsim_gym.config.vehicle", fromlist=["x"]).load_vehicle(p),
    lambda p: __import__("vdsim_gym.envs.courses", fromlist=["x"]).load_scenario(p),
    lambda p: __import__("vdsim_gym.dyno.config", fromlist=["x"]).load_dyno(p),
    lambda p: __import__("vdsim_gym.sim.randomization",
                         fromlist=["x"]).parse_randomize_text(str(p)),
], ids=["vehicle", "scenario", "dyno bench", "--randomize file"])
def test_a_fifo_given_as_a_yaml_file_is_refused_not_read(tmp_path, load):
    """A FIFO named as a YAML input blocked forever in read (the --randomize file) or was
    reported "not found": every YAML input goes through the one reader, which refuses
    what is not a regular file."""
    fifo = tmp_path / "input.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="must be a regular file"):
        load(fifo)


def test_a_fifo_given_as_the_hyperparameter_file_is_refused(tmp_path):
    """train --conf FIFO blocked forever in read_text."""
    from vdsim_gym.training.hyperparams import load_hyperparams

    fifo = tmp_path / "ppo.yml"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="the hyperparameter file must be a regular file"):
        load_hyperparams("ppo", "VDSim-DLC-v0", fifo)
