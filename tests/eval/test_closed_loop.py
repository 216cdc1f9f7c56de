"""ClosedLoopEval: mode A against a plain Plant loop, B fixed(0) against A, seeds,
early stop, bad input and a raising controller."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from _helpers import seen_in_float32, through_the_action

import vdsim_gym
from vdsim_gym import LatencyModel, Plant
from vdsim_gym.errors import ControllerError
from vdsim_gym.eval import ClosedLoopEval, EvalResult

TC = 0.02
DT = 5e-4
PLANT = dict(level="L2", substep_dt=DT, longitudinal="force",
             actuator={"time_constant": 0.03, "rate_limit": 2.0})
STATE0 = {"vx": 15.0, "Y": 0.2}


def controller(obs, t):
    """Deterministic, state-dependent: a yaw-damped steer and a speed P loop."""
    return (0.02 * math.sin(3.0 * t) - 0.05 * obs["r"] - 0.01 * obs["Y"],
            800.0 * (16.0 - obs["vx"]))


def make(**kw):
    args = dict(plant_kwargs=PLANT, controller=controller, control_period=TC, duration=1.0,
                initial_state=STATE0)
    args.update(kw)
    return ClosedLoopEval(**args)


def same(a: dict, b: dict, skip=()) -> bool:
    return a.keys() == b.keys() and all(
        np.array_equal(a[c], b[c], equal_nan=True) for c in a if c not in skip)


# ------------------------------------------------------------------ A and B fixed(0)

def test_sync_equals_plain_plant_loop_bit_for_bit():
    """Mode A is a plain Plant.step loop whose controller sees the observation in float32
    and whose command goes through the env's action (a slow Python reference)."""
    res = make(mode="sync").run()
    plant = Plant(**PLANT, control_period=TC)
    obs = plant.reset(STATE0)
    rows = [obs]
    for k in range(50):
        obs = plant.step(through_the_action(plant, controller(seen_in_float32(obs), k * TC)))
        rows.append(obs)
    for col in ("X", "Y", "psi", "vx", "vy", "r", "ax", "ay", "beta", "delta_rw"):
        assert np.array_equal(res.trace[col], [o[col] for o in rows]), col
    assert np.array_equal(res.trace["t"], [o["t"] for o in rows])
    assert len(res.samples["k"]) == 50 and res.samples["applied"].all()
    assert np.isnan(res.trace["u_steer"][-1])  # the closing row has no command
    assert res.stats["n_overrun"] == res.stats["n_skipped"] == res.stats["n_unapplied"] == 0


def test_the_controller_sees_the_plant_observation_keys():
    """The callback's observation dict has Plant.observe's keys (t the sample time)."""
    seen = []
    make(mode="sync", duration=0.04,
         controller=lambda obs, t: seen.append((dict(obs), t)) or (0.0, 0.0)).run()
    plant = Plant(**PLANT, control_period=TC)
    ref = plant.reset(STATE0)
    (obs0, t0), (obs1, t1) = seen
    assert set(obs0) == set(ref) and t0 == obs0["t"] == 0.0 and t1 == obs1["t"] == TC
    assert obs0 == seen_in_float32(ref)


@pytest.mark.parametrize("policy", ["skip", "queue"])
def test_b_fixed_zero_equals_a_bit_for_bit(policy):
    a = make(mode="sync").run()
    b = make(mode="virtual_async", latency=LatencyModel.fixed(0.0), overrun=policy).run()
    assert same(a.trace, b.trace)
    assert same(a.samples, b.samples, skip=("t_compute_s",))
    assert {k: v for k, v in a.stats.items() if k != "t_compute_max_s"} == \
        {k: v for k, v in b.stats.items() if k != "t_compute_max_s"}


def test_duration_not_a_whole_number_of_periods():
    """The last period is cut at the duration; A and B fixed(0) still agree."""
    a = make(mode="sync", duration=0.105).run()
    b = make(mode="virtual_async", overrun="queue", duration=0.105).run()
    assert a.trace["t"][-1] == 210 * DT and len(a.samples["k"]) == 6
    assert same(a.trace, b.trace)


def test_delay_changes_the_run_and_is_recorded():
    b = make(mode="virtual_async", latency=LatencyModel.fixed(0.01)).run()
    a = make(mode="sync").run()
    assert not np.array_equal(a.trace["Y"], b.trace["Y"])
    assert np.allclose(b.samples["t_apply"] - b.samples["t_sample"], 0.01)
    # Row 0 has no computed command yet (NaN times); later rows carry the one in force.
    assert np.isnan(b.trace["t_sample"][0]) and b.trace["overrun"][0] == 0
    assert b.trace["u_steer"][0] == 0.0
    assert np.allclose(b.trace["t_sample"][1:-1], b.trace["t"][:-2])


# ------------------------------------------------------------------ seeds, measured

@pytest.mark.parametrize("model", [LatencyModel.uniform(0.0, 0.05, seed=7),
                                   LatencyModel.normal(0.02, 0.01, seed=7)])
@pytest.mark.parametrize("policy", ["skip", "queue"])
def test_same_seed_same_samples(model, policy):
    r1 = make(mode="virtual_async", latency=model, overrun=policy).run()
    r2 = make(mode="virtual_async", latency=model, overrun=policy).run()
    assert same(r1.samples, r2.samples, skip=("t_compute_s",))
    assert same(r1.trace, r2.trace)
    other = dataclasses.replace(model, seed=8)
    r3 = make(mode="virtual_async", latency=other, overrun=policy).run()
    assert not np.array_equal(r1.samples["c_k"][:10], r3.samples["c_k"][:10])
    assert r1.stats["n_overrun"] > 0 if model.kind == "uniform" else True
    assert (r1.samples["c_k"] >= 0).all()


def test_rerun_is_identical():
    ev = make(mode="virtual_async", latency=LatencyModel.uniform(0.0, 0.03, seed=1))
    assert same(ev.run().trace, ev.run().trace)


def test_measured_latency_uses_wall_time():
    res = make(mode="virtual_async", latency=LatencyModel.measured(), duration=0.2).run()
    assert np.array_equal(res.samples["c_k"], res.samples["t_compute_s"])
    assert (res.samples["c_k"] > 0).all()
    assert res.meta["latency_model"] == {"kind": "measured", "clock": "time.perf_counter"}


# ------------------------------------------------------------------ early stop

def stopping_at(k_stop, holder):
    def ctrl(obs, t):
        if round(t / TC) == k_stop:
            holder[0].stop()
        return controller(obs, t)
    return ctrl


def plant_after(n_periods):
    res = make(mode="sync", duration=n_periods * TC).run()
    return res.trace


def test_stop_during_call_sync():
    holder = []
    ev = make(mode="sync", controller=stopping_at(5, holder))
    holder.append(ev)
    res = ev.run()
    assert res.stats["stopped_early"] and res.stats["t_stop"] == 5 * 40 * DT
    assert len(res.samples["k"]) == 6
    assert res.samples["applied"].tolist() == [True] * 5 + [False]
    assert res.stats["n_unapplied"] == 1
    # five grid rows plus the closing row at t_stop; the plant was not advanced
    assert len(res.trace["t"]) == 6 and res.trace["t"][-1] == res.stats["t_stop"]
    ref = plant_after(5)
    assert same({c: res.trace[c] for c in ("X", "Y", "vx")}, {c: ref[c] for c in ("X", "Y", "vx")})
    assert res.meta["duration_s"] == 1.0


class StopAfter:
    """An env's eval stepper that calls ``ev.stop()`` as its n-th step ends."""

    def __init__(self, rec, n, ev):
        self.rec, self.n, self.ev = rec, n, ev

    def __getattr__(self, name):
        return getattr(self.rec, name)

    def __call__(self, *args):
        out = self.rec(*args)
        self.n -= 1
        if self.n == 0:
            self.ev.stop()
        return out


def test_stop_between_calls_ends_at_the_next_grid_time():
    for mode in ("sync", "virtual_async"):
        ev = make(mode=mode, latency=LatencyModel.fixed(0.004) if mode != "sync" else None)
        base = ev._env_run.base
        real = base.eval_stepper
        # another thread's stop() while the plant runs its seventh step
        base.eval_stepper = lambda *a, real=real, ev=ev: StopAfter(real(*a), 7, ev)
        res = ev.run()
        base.eval_stepper = real
        assert res.stats["stopped_early"]
        t_stop = res.stats["t_stop"]
        assert math.isclose(t_stop / TC, round(t_stop / TC))  # on the grid
        assert res.samples["applied"].all() and res.stats["n_unapplied"] == 0
        assert res.trace["t"][-1] == t_stop and res.samples["t_sample"].max() < t_stop
        k_stop = round(t_stop / TC)
        assert len(res.samples["k"]) == k_stop


def test_stop_during_call_b_skip():
    holder = []
    ev = make(mode="virtual_async", latency=LatencyModel.fixed(0.01),
              controller=stopping_at(5, holder))
    holder.append(ev)
    res = ev.run()
    assert res.stats["t_stop"] == 200 * DT
    assert res.samples["applied"].tolist() == [True] * 5 + [False]
    assert res.stats["n_unapplied"] == 1
    assert 0.11 not in res.trace["t_apply"]


def test_stop_in_queue_drops_the_pending_command():
    """Queue, c = 45 ms: sample 3's call is due at 135 ms, but the env core takes a queued
    sample when its observation is (at 60 ms), so a stop during that call ends the run
    there: sample 0's command applied at 45 ms; those of samples 1 and 2, due at 90 and
    135 ms, never apply."""
    holder = []
    ev = make(mode="virtual_async", latency=LatencyModel.fixed(0.045), overrun="queue",
              controller=stopping_at(3, holder))
    holder.append(ev)
    res = ev.run()
    assert res.stats["t_stop"] == 120 * DT
    assert res.samples["t_call"].tolist() == [0.0, 0.045, 0.09, 0.135]
    assert res.samples["applied"].tolist() == [True, False, False, False]
    assert res.stats["n_unapplied"] == 3
    assert res.trace["t"].tolist() == [0.0, 0.02, 0.04, 0.06] == \
        [round(t, 12) for t in res.trace["t"]]


def test_stop_before_run_has_no_effect_and_runs_are_reusable():
    ev = make(mode="virtual_async", latency=LatencyModel.fixed(0.01))
    full = ev.run()
    ev.stop()
    again = ev.run()
    assert not again.stats["stopped_early"] and again.stats["t_stop"] is None
    assert same(full.trace, again.trace)


def test_stop_tracking_uses_only_rows_that_ran():
    holder = []
    path = np.array([[-100.0, 0.0], [100.0, 0.0]])
    ev = make(mode="sync", controller=stopping_at(10, holder), reference_path=path)
    holder.append(ev)
    res = ev.run()
    e = res.trace["Y"][:10]
    assert math.isclose(res.stats["e_y_rmse_m"], float(np.sqrt(np.mean(e**2))))
    assert res.stats["e_y_n"] == 10


# ------------------------------------------------------------------ results, meta

def test_result_columns_and_meta():
    path = np.array([[-100.0, 0.0], [100.0, 0.0]])
    res = make(mode="virtual_async", latency=LatencyModel.uniform(0.0, 0.03, seed=3),
               overrun="queue", reference_path=path, plant_kwargs={**PLANT, "ref_point": "cg"}
               ).run()
    assert isinstance(res, EvalResult)
    assert set(res.samples) == {"k", "t_sample", "t_start", "t_call", "c_k", "t_apply",
                                "overrun", "applied", "u_steer", "u_fx", "t_compute_s"}
    assert {"t", "X", "Y", "u_steer", "u_fx", "t_sample", "t_apply", "c_k", "overrun",
            "e_y", "delta_rw"} <= set(res.trace)
    np.testing.assert_allclose(res.trace["e_y"], res.trace["Y"], atol=1e-12)
    m = res.meta
    assert m["eval_mode"] == "virtual_async" and m["control_period_s"] == TC
    assert m["latency_model"] == {"kind": "uniform", "lo_s": 0.0, "hi_s": 0.03, "seed": 3}
    assert m["overrun_policy"] == "queue" and m["level"] == "L2"
    assert m["vehicle"] == "generic_sedan" and len(m["param_hash"]) == 64
    assert m["actuator"]["time_constant"] == 0.03
    assert m["ref_point"]["setting"] == "cg" and m["ref_point"]["offset_m"] == [0.0, 0.0]
    assert m["delta_sw_ratio"] == 15.0 and m["tracking_point"] == "cg"
    assert m["vdsim_gym_version"] == vdsim_gym.__version__
    assert m["git_sha"] == vdsim_gym.__git_sha__ and "git_dirty" in m
    sync = make(mode="sync").run().meta
    assert sync["latency_model"] is None and sync["overrun_policy"] is None
    other = make(mode="sync", plant_kwargs={**PLANT, "level": "L1"}).run().meta
    assert other["param_hash"] != m["param_hash"]


def test_pedal_longitudinal_column():
    res = make(mode="sync", plant_kwargs=dict(level="L1", longitudinal="pedal"),
               controller=lambda obs, t: (0.0, 0.1), duration=0.1).run()
    assert "u_pedal" in res.samples and "u_fx" not in res.trace


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("kwargs, message", [
    (dict(control_period=0.0203), "not a whole multiple of substep_dt"),
    (dict(duration=0.01234), "duration = 0.01234 s is not a whole multiple"),
    (dict(duration=-1.0), "duration must be positive"),
    (dict(mode="wallclock", latency=LatencyModel.fixed(0.01)), "measures the real delay"),
    (dict(mode="async"), "mode must be one of"),
    (dict(mode="virtual_async", overrun="drop"), "overrun must be one of"),
    (dict(mode="virtual_async", latency=0.01), "latency must be a LatencyModel"),
    (dict(mode="sync", latency=LatencyModel.fixed(0.01)), "mode='sync' has no computation"),
    (dict(controller=None), "controller must be a callable"),
    (dict(plant_kwargs={"control_period": 0.02}), "not in plant_kwargs"),
    # the command env under the callback takes timing keywords: plant_kwargs does not
    (dict(plant_kwargs={"latency": LatencyModel.fixed(0.01)}),
     "Plant() got an unexpected keyword argument 'latency'"),
    (dict(reference_path=[[0.0, 0.0]]), "reference path must be an (M >= 2, 2)"),
])
def test_bad_arguments(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=None) as err:
        make(**kwargs)
    assert message in str(err.value)


def test_policy_object_is_pointed_at_the_env_form():
    class Policy:
        def predict(self, obs):
            return obs, None
    with pytest.raises(ValueError, match="SB3-style predict"):
        make(controller=Policy())


@pytest.mark.parametrize("make_model, message", [
    (lambda: LatencyModel.fixed(-0.01), "cannot be negative"),
    (lambda: LatencyModel.fixed(float("nan")), "finite number"),
    (lambda: LatencyModel.uniform(0.02, 0.01), "lo <= hi"),
    (lambda: LatencyModel.normal(0.01, -0.001), "sd must be >= 0"),
])
def test_bad_latency_models(make_model, message):
    with pytest.raises(ValueError) as err:
        make_model()
    assert message in str(err.value)


@pytest.mark.parametrize("mode", ["sync", "virtual_async"])
@pytest.mark.parametrize("output, message", [
    ((0.1,), "shape (2,)"),
    ((0.1, 2.0, 3.0), "shape (2,)"),
    ((float("nan"), 0.0), "must be finite"),
    ("ab", "got 'ab'"),
    (None, "got None"),
])
def test_bad_controller_output(mode, output, message):
    def ctrl(obs, t):
        return output if t > 0.05 else (0.0, 0.0)
    ev = make(mode=mode, controller=ctrl)
    with pytest.raises(ValueError) as err:
        ev.run()
    text = str(err.value)
    assert "sample k=3, t=0.06 s" in text and message in text


@pytest.mark.parametrize("mode", ["sync", "virtual_async"])
def test_controller_raising_reraises_with_context_and_leaves_eval_reusable(mode):
    state = {"fail": True}

    def ctrl(obs, t):
        if state["fail"] and t >= 0.1:
            raise ZeroDivisionError("boom")
        return controller(obs, t)

    ev = make(mode=mode, controller=ctrl,
              latency=LatencyModel.fixed(0.01) if mode != "sync" else None)
    with pytest.raises(ControllerError) as err:
        ev.run()
    assert isinstance(err.value.__cause__, ZeroDivisionError)
    assert err.value.k == 5 and "k=5, t=0.1 s" in str(err.value) and "boom" in str(err.value)
    state["fail"] = False
    clean = make(mode=mode, latency=LatencyModel.fixed(0.01) if mode != "sync" else None).run()
    assert same(ev.run().trace, clean.trace)


@pytest.mark.parametrize("mode", ["sync", "virtual_async"])
def test_a_pedal_beyond_its_range_saturates_and_ten_times_it_raises(mode):
    """docs/EVAL_MODES.md, "Checks": a pedal in (1, 10] is held at full drive and counted;
    beyond 10 x the range it is a unit slip, refused naming the sample."""
    pedal = dict(level="L1", longitudinal="pedal")
    res = make(mode=mode, plant_kwargs=pedal, controller=lambda obs, t: (0.0, 1.5),
               duration=0.2).run()
    assert res.stats["n_saturated"] == res.stats["n_samples"] == 10
    assert not res.stats["stopped_early"]
    assert np.all(res.trace["u_pedal"][:-1] == 1.0)  # the command held at the limit
    with pytest.raises(vdsim_gym.errors.InvalidActionError,
                       match=r"sample k=0, t=0 s: pedal command 10.5 is beyond 10 x"):
        make(mode=mode, plant_kwargs=pedal, controller=lambda obs, t: (0.0, 10.5),
             duration=0.2).run()
