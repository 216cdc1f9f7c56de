"""Mode C (wall clock): every exit path joins both threads, errors are re-raised after the
joins, stop() from the controller and from another thread, the watchdog, affinity flags,
stats keys and types, trace/sample consistency. Nothing here asserts a wall-clock figure:
those are under the ``timing`` marker at the end (``pytest -m timing``)."""

from __future__ import annotations

import _thread
import math
import threading
import time

import numpy as np
import pytest

from vdsim_gym.errors import ControllerError
from vdsim_gym.eval import ClosedLoopEval

PLANT = {"level": "L1", "longitudinal": "pedal"}


def make(controller, duration=0.3, **kw):
    return ClosedLoopEval(plant_kwargs=PLANT, controller=controller, control_period=0.02,
                          mode="wallclock", duration=duration, **kw)


def no_runner_threads() -> bool:
    return not any(t.name == "vdsim-ctrl" for t in threading.enumerate())


def cruise(obs, t):
    return (0.0, 0.2)


def test_normal_end_stats_keys_and_types():
    res = make(cruise).run()
    s = res.stats
    assert no_runner_threads()
    for key in ("control_period_s", "wake_jitter_s", "sample_to_apply_s"):
        assert set(s[key]) == {"p50", "p99", "max"}
        assert all(isinstance(v, float) for v in s[key].values())
    assert isinstance(s["rtf"], float) and s["rtf"] > 0
    assert s["rtf_windows"] is None  # a 0.3 s run has no two whole 1 s windows
    assert isinstance(s["sim_max_lag_s"], float) and s["sim_max_lag_s"] >= 0
    assert s["sim_ticks"] == s["sim_ticks_planned"] == 600
    assert s["stopped_early"] is False and s["t_stop"] is None
    assert s["failsafe_latches"] == 0 and isinstance(s["n_overrun"], int)
    assert s["sim_affinity_applied"] is False and s["ctrl_affinity_applied"] is False
    assert set(s["quality"]) == {"ok", "reasons", "warnings"}
    assert isinstance(s["quality"]["ok"], bool)
    assert s["load1_start"] is None or isinstance(s["load1_start"], float)
    assert res.meta["eval_mode"] == "wallclock" and res.meta["cpu_affinity"] is None
    assert res.trace["t"][-1] == pytest.approx(0.3)  # the closing row at the end


def test_trace_and_samples_are_consistent():
    res = make(lambda obs, t: (0.0, min(t, 0.5)), duration=0.4).run()
    tr, sm = res.trace, res.samples
    n = len(sm["k"])
    assert len(tr["t"]) == n + 1 and n >= 2
    assert np.all(np.diff(tr["t"]) >= 0)  # irregular, never backwards
    np.testing.assert_array_equal(tr["t"][:-1], sm["t_sample"])
    assert np.all(sm["t_apply"] >= sm["t_sample"])
    # the command in force at each snapshot is the previous sample's
    np.testing.assert_array_equal(tr["u_pedal"][1:-1], sm["u_pedal"][:-1])
    assert tr["u_pedal"][0] == 0.0 and math.isnan(tr["u_pedal"][-1])
    assert np.all(np.diff(sm["k"]) >= 1) and np.all(sm["applied"])
    assert np.all(sm["c_k"] == sm["t_compute_s"])  # measured


def test_controller_exception_is_reraised_after_the_joins():
    def bad(obs, t):
        if t > 0.05:
            raise RuntimeError("boom")
        return (0.0, 0.0)

    ev = make(bad, duration=2.0)
    t0 = time.perf_counter()
    with pytest.raises(ControllerError, match="controller raised at sample .*RuntimeError: boom"):
        ev.run()
    assert time.perf_counter() - t0 < 1.5  # the sim thread was stopped, not run out
    assert no_runner_threads()
    assert make(cruise, duration=0.1).run().stats["n_samples"] > 0  # usable again


def test_nan_command_is_a_clear_error_and_threads_join():
    ev = make(lambda obs, t: (0.0, float("nan")))
    with pytest.raises(ValueError, match="controller output at sample k=0.*finite"):
        ev.run()
    assert no_runner_threads()


def test_stop_from_the_controller():
    ev = None

    def stopper(obs, t):
        if t >= 0.1:
            ev.stop()
        return (0.0, 0.1)

    ev = make(stopper, duration=5.0)
    res = ev.run()
    s = res.stats
    assert s["stopped_early"] and 0.1 <= s["t_stop"] < 5.0
    assert s["sim_ticks"] < s["sim_ticks_planned"]
    assert "sim_ticks_short" not in s["quality"]["reasons"]  # stopped, not short
    assert not res.samples["applied"][-1]  # the stopping call's command is not latched
    assert no_runner_threads()


def test_stop_from_another_thread():
    ev = make(cruise, duration=10.0)
    threading.Timer(0.2, ev.stop).start()
    t0 = time.perf_counter()
    res = ev.run()
    assert time.perf_counter() - t0 < 5.0
    assert res.stats["stopped_early"] and res.stats["t_stop"] < 10.0
    assert no_runner_threads()


# Real-time threads and a simulated Ctrl-C: on a fresh-clone CI run with the 2-core machine
# loaded by other jobs the run twice finished without the KeyboardInterrupt (not reproduced
# alone, nor under four busy loops; reported for a look at where the interrupt goes).
@pytest.mark.timing
def test_keyboard_interrupt_joins_both_threads():
    def interrupting(obs, t, calls=[]):  # noqa: B006  (one list per run)
        calls.append(t)
        if len(calls) == 5:  # Ctrl-C while the run is under way, whatever the machine's load
            _thread.interrupt_main()
        return (0.0, 0.2)

    ev = make(interrupting, duration=10.0)
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        ev.run()
    assert time.perf_counter() - t0 < 9.0  # stopped, not run to its end
    assert no_runner_threads()
    assert make(cruise, duration=0.1).run().stats["n_samples"] > 0  # usable afterwards


def test_watchdog_latches_while_the_controller_blocks():
    def blocking(obs, t, calls=[]):  # noqa: B006  (one list per run: see below)
        calls.append(t)
        if len(calls) == 3:
            time.sleep(0.3)  # the third call blocks far past the 50 ms timeout
        return (0.0, 0.3)

    guarded = ClosedLoopEval(plant_kwargs=PLANT, controller=lambda o, t, c=[]: blocking(o, t, c),
                             control_period=0.02,
                             mode="wallclock", duration=0.6, initial_state={"vx": 10.0},
                             watchdog={"timeout_s": 0.05, "failsafe_u": (0.0, -0.5)}).run()
    plain = ClosedLoopEval(plant_kwargs=PLANT, controller=lambda o, t, c=[]: blocking(o, t, c),
                           control_period=0.02,
                           mode="wallclock", duration=0.6, initial_state={"vx": 10.0}).run()
    assert guarded.stats["failsafe_latches"] >= 1 and plain.stats["failsafe_latches"] == 0
    assert guarded.meta["watchdog"] == {"timeout_s": 0.05, "failsafe_u": [0.0, -0.5]}
    # the fail-safe brake acted while the controller was blocked (~0.25 s at half brake)
    assert guarded.trace["vx"][-1] < plain.trace["vx"][-1] - 0.5
    assert "control_overrun" in guarded.stats["quality"]["warnings"]


def test_affinity_flags():
    import os
    import sys

    res = make(cruise, duration=0.1, cpu_affinity={"sim": 0, "ctrl": [0]}).run()
    linux = sys.platform.startswith("linux") and 0 in os.sched_getaffinity(0)
    assert res.stats["sim_affinity_requested"] and res.stats["ctrl_affinity_requested"]
    assert res.stats["sim_affinity_applied"] is linux
    assert res.stats["ctrl_affinity_applied"] is linux
    assert res.meta["cpu_affinity"] == {"sim": 0, "ctrl": [0]}
    if linux:  # the caller's own affinity is untouched (the control thread was pinned)
        assert os.sched_getaffinity(0) != {0} or (os.cpu_count() or 1) == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"cpu_affinity": {"sim": 999}}, r"cpu_affinity\['sim'\] must be a CPU number"),
    ({"cpu_affinity": {"ctrl": []}}, r"cpu_affinity\['ctrl'\] must be a non-empty list"),
    ({"cpu_affinity": {"gpu": 0}}, "keys 'sim'"),
    ({"watchdog": {"timeout_s": 0.1}}, "'timeout_s' \\[s\\] and 'failsafe_u'"),
    ({"watchdog": {"timeout_s": -1, "failsafe_u": (0, 0)}}, "positive number of seconds"),
    ({"watchdog": {"timeout_s": 0.1, "failsafe_u": (0, 5)}}, r"failsafe_u.*outside"),
    ({"latency": "x"}, "latency"),
])
def test_bad_wallclock_options(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make(cruise, **kwargs)


def test_options_only_in_wallclock():
    with pytest.raises(ValueError, match="apply to mode='wallclock' only"):
        ClosedLoopEval(plant_kwargs=PLANT, controller=cruise, mode="sync",
                       watchdog={"timeout_s": 0.1, "failsafe_u": (0, 0)})


def test_env_form_on_a_path_env_tracks_like_mode_a():
    import gymnasium as gym

    from vdsim_gym.controllers import stanley_pi

    env = gym.make("VDSim-DLC-v0", preset="lane_change_3p5_30", speed=20.0, level="L1")
    policy = stanley_pi(env)
    a = ClosedLoopEval(env=env, policy=policy, mode="sync", duration=1.0).run()
    c = ClosedLoopEval(env=env, policy=policy, mode="wallclock", duration=1.0).run()
    assert c.meta["eval_mode"] == "wallclock" and c.meta["env_id"] == "VDSim-DLC-v0"
    assert c.trace["t"][0] < 0.05 and c.stats["n_samples"] >= 25
    assert {"e_y", "s", "u_steer", "u_pedal"} <= set(c.trace)  # the env core's columns
    # the same controller on the same course: the lateral error stays that of mode A
    assert abs(c.stats["e_y_rmse_m"] - a.stats["e_y_rmse_m"]) < 0.05
    assert no_runner_threads()


def test_env_form_ends_with_the_episode_and_the_dyno_runs_with_its_watchdog(tmp_path):
    import gymnasium as gym

    from vdsim_gym.controllers import cycle_follower

    class FullThrottle:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.array([1.0], np.float32), state

    lead = tmp_path / "lead.csv"  # a parked car 2 m ahead: full throttle hits it in ~1 s
    lead.write_text("time,lead_speed,distance\n" + "".join(
        f"{k * 0.02:.2f},0,2\n" for k in range(251)))
    acc = gym.make("VDSim-ACC-v0", sensor_csv=lead)
    res = ClosedLoopEval(env=acc, policy=FullThrottle(), mode="wallclock",
                         duration=5.0).run()
    assert res.stats["outcome"] == "collision" and not res.stats["stopped_early"]
    assert res.trace["t"][-1] < 3.0 and res.trace["gap"][-2] <= 0.5
    assert "sim_ticks_short" not in res.stats["quality"]["reasons"]
    dyno = gym.make("VDSim-Dyno-v0")
    res = ClosedLoopEval(env=dyno, policy=cycle_follower(dyno), mode="wallclock",
                         duration=0.5, watchdog={"timeout_s": 0.3, "failsafe_u": [-1.0]}).run()
    assert res.meta["watchdog"] == {"timeout_s": 0.3, "failsafe_u": [-1.0]}
    assert res.stats["n_samples"] >= 3 and "u_reference" in res.samples
    with pytest.raises(ValueError, match="failsafe_u.*2 action values|failsafe_u.*expected"):
        ClosedLoopEval(env=dyno, policy=cycle_follower(dyno), mode="wallclock",
                       watchdog={"timeout_s": 0.3, "failsafe_u": [0.0, 1.0]})
    assert no_runner_threads()


def test_skip_and_queue_after_a_long_call():
    def slow_once(obs, t, calls=[]):  # noqa: B006  (counts calls across the run)
        calls.append(t)
        if len(calls) == 1:
            time.sleep(0.07)  # 3.5 periods
        return (0.0, 0.1)

    skip = make(lambda o, t, c=[]: slow_once(o, t, c), duration=0.4, overrun="skip").run()
    queue = make(lambda o, t, c=[]: slow_once(o, t, c), duration=0.4, overrun="queue").run()
    assert skip.stats["n_skipped"] >= 2 and skip.samples["overrun"][0]
    assert queue.stats["n_skipped"] == 0 and queue.samples["overrun"][0]
    assert list(queue.samples["k"][:4]) == [0, 1, 2, 3]  # every slot taken, late ones at once
    assert skip.samples["k"][1] >= 3


# ------------------------------------------------------------------ timing (pytest -m timing)


@pytest.mark.timing
def test_rtf_band_at_low_load():
    res = make(cruise, duration=3.0).run()
    assert abs(res.stats["rtf"] - 1.0) <= 0.02, res.stats
    assert res.stats["quality"]["ok"], res.stats["quality"]


@pytest.mark.timing
@pytest.mark.parametrize("how", ["sleep", "spin"])
@pytest.mark.parametrize("overrun", ["skip", "queue"])
def test_sim_keeps_ticking_while_the_controller_blocks(how, overrun):
    """At least 80 % of the 120 substeps of 3 Tc happen while the controller blocks."""
    marks = {}

    def blocking(obs, t):
        if "start" not in marks and t >= 0.1:
            marks["start"] = t
            end = time.perf_counter() + 0.06
            if how == "sleep":
                time.sleep(0.06)
            else:
                while time.perf_counter() < end:  # holds the GIL
                    pass
        return (0.0, 0.1)

    res = make(blocking, duration=0.5, overrun=overrun).run()
    i = int(np.flatnonzero(res.samples["t_sample"] == marks["start"])[0])
    ticks = round((res.samples["t_apply"][i] - res.samples["t_sample"][i]) / 5e-4)
    assert ticks >= 96, ticks


@pytest.mark.parametrize("env_id,kw", [("VDSim-DLC-v0", {}),
                                       ("VDSim-PathFollow-v0", {"course_length": 80.0})])
def test_peek_tracks_the_car_as_a_fresh_projection_does(env_id: str, kw: dict) -> None:
    """Mode C reads a path env by peek() while only the plant moves (the task is never
    stepped): each peek carries the projection hint of the previous one, so it searches
    near the car. Peeking every period gives the observation a single peek from the
    reset's hint gives at the end (the projection's whole-course search), bit for bit."""
    import gymnasium as gym

    import vdsim_gym  # noqa: F401

    cores = []
    for _ in range(2):
        env = gym.make(env_id, **kw)
        env.reset(seed=3)
        cores.append(env.unwrapped)
    obs = [np.zeros(len(b.obs_names), np.float32) for b in cores]
    info = [np.zeros(len(b.info_names)) for b in cores]
    for b in cores:
        b.core.latch(np.array([0.02, 0.3]))
    period = cores[0].ticks_per_period
    for _ in range(150):  # 3 s of driving
        for b in cores:
            b.core.session.advance(period)
        cores[0].core.peek(obs[0], info[0])  # the hint follows the car
    cores[1].core.peek(obs[1], info[1])  # one search from the reset's hint
    np.testing.assert_array_equal(obs[0], obs[1])
    np.testing.assert_array_equal(info[0], info[1])
    assert info[0][cores[0].info_names.index("s")] > 30.0  # the car moved along the path


def test_a_path_env_ends_its_wallclock_run_as_its_steps_end_the_episode():
    """Mode C scores a copy of the task at each snapshot, so a path task's terminal states
    (found only when scoring) end the run as they end a stepped episode: a full-lock
    steer leaves the corridor about when the stepped env does; a good driver's run ends
    at the course's end (the task's truncation), not at the duration."""
    import gymnasium as gym

    from vdsim_gym.controllers import stanley_pi

    class FullLock:
        def predict(self, obs, state=None, episode_start=None, deterministic=True):
            return np.array([[1.0, 0.3]]), state

    env = gym.make("VDSim-DLC-v0")
    env.reset(seed=0)
    steps = 0
    while True:
        _, _, term, trunc, info = env.step(np.array([1.0, 0.3]))
        steps += 1
        if term or trunc:
            break
    stepped_end = steps * env.unwrapped.control_period
    res = ClosedLoopEval(env=env, policy=FullLock(), mode="wallclock", duration=4.0).run()
    assert res.stats["outcome"] == info["outcome"] == "off_corridor"
    assert abs(res.trace["t"][-1] - stepped_end) < 0.2  # the wall clock's own timing
    short = gym.make("VDSim-PathFollow-v0", course_length=30.0)
    res = ClosedLoopEval(env=short, policy=stanley_pi(short), mode="wallclock").run()
    assert res.stats["outcome"] == "course_end" and not res.stats["stopped_early"]
    assert res.trace["t"][-1] < short.unwrapped.time_limit
    assert no_runner_threads()
