"""Mode B's schedule against a slow, obviously-correct Python reference.

The reference below is written from the spec text (docs/EVAL_MODES.md), in plain Python
floats, without the core's AsyncTimeline:

- time is tick * substep_dt; the grid sample k is at tick k P;
- sample k starts at t_start = max(t_k, finish of the previous sample), the controller is
  called at the first substep at or after t_start, and the command applies at
  ceil((t_start + c_k) / substep_dt) (a quotient within 1e-9 relative of an integer is
  that integer);
- overrun: the finish lies past the next grid point t_{k+1};
- skip: the next sample is the first grid point at or after the finish (the ones in
  between are skipped); queue: the next sample is k + 1, whenever the worker gets to it;
- a command applies only if its apply tick is before the end of the run;
- the trace has a row per grid point before the end and a closing row at the end.

Each ClosedLoopEval run uses a list-backed latency model, so the delays are exactly the
drawn sequence; samples must match the reference exactly (==), and the realized steer
observed on the trace must be the command the reference says was in force.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
from _helpers import through_the_action
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from vdsim_gym import Plant
from vdsim_gym.config.latency import FixedLatency
from vdsim_gym.eval import ClosedLoopEval

TOL = 1e-9


def ceil_tick(seconds: float, dt: float) -> int:
    q = seconds / dt
    n = round(q)
    if abs(q - n) <= TOL * max(1.0, abs(q)):
        return int(n)
    return math.ceil(q)


def reference_schedule(delays, dt, P, end_tick, policy):
    """Rows (k, t_sample, t_call, t_apply, c_k, overrun, applied) and the skipped count."""
    tc = P * dt
    n_grid = -(-end_tick // P)
    rows = []
    skipped = 0
    free = 0.0  # when the worker is free [s]
    k, i = 0, 0
    while k < n_grid:
        t_k = (k * P) * dt
        t_start = max(t_k, free)
        call_tick = ceil_tick(t_start, dt)
        if call_tick >= end_tick:
            break
        c = delays[i]
        i += 1
        t_finish = t_start + c
        apply_tick = ceil_tick(t_finish, dt)
        first_free = ceil_tick(t_finish, tc)  # first grid point at or after the finish
        overrun = first_free > k + 1
        rows.append((k, t_k, call_tick * dt, apply_tick * dt, c, overrun, apply_tick < end_tick))
        free = t_finish
        if policy == "skip":
            nxt = max(k + 1, first_free)
            skipped += min(nxt, n_grid) - (k + 1)
            k = nxt
        else:
            k += 1
    return rows, skipped


class _ListSampler:
    def __init__(self, values):
        self.values = list(values)
        self.i = 0

    def draw(self) -> float:
        v = self.values[self.i]
        self.i += 1
        return v


@dataclass(frozen=True)
class ListLatency(FixedLatency):
    """Test-only model: the delays are the given sequence, in call order."""

    values: tuple = ()

    def sampler(self, seed=None):
        return _ListSampler(self.values)


def steer_of(k: int) -> float:
    return 1e-4 * (k + 1)


PLANT = Plant(level="L1")  # the runs' vehicle: what a command becomes through the action


def applied_steer(steer: float) -> float:
    """A steer command as the command env applies it (``_helpers.through_the_action``)."""
    return through_the_action(PLANT, (steer, 0.0))[0]


def run_b(delays, dt, P, end_tick, policy):
    seen = []

    def controller(obs, t):
        seen.append((obs["t"], t))
        k = round(t / (P * dt))
        return (steer_of(k), 0.0)

    ev = ClosedLoopEval(
        plant_kwargs=dict(level="L1", substep_dt=dt), controller=controller,
        control_period=P * dt, mode="virtual_async", overrun=policy,
        latency=ListLatency(0.0, values=tuple(delays)), duration=end_tick * dt,
        initial_state={"vx": 5.0},
    )
    return ev.run(), seen


def check_against_reference(delays, dt, P, end_tick, policy):
    res, seen = run_b(delays, dt, P, end_tick, policy)
    ref, skipped = reference_schedule(delays, dt, P, end_tick, policy)
    s = res.samples
    got = list(zip(s["k"].tolist(), s["t_sample"].tolist(), s["t_call"].tolist(),
                   s["t_apply"].tolist(), s["c_k"].tolist(), s["overrun"].tolist(),
                   s["applied"].tolist(), strict=True))
    assert got == ref
    assert res.stats["n_overrun"] == sum(r[5] for r in ref)
    assert res.stats["n_unapplied"] == sum(not r[6] for r in ref)
    assert res.stats["n_skipped"] == (skipped if policy == "skip" else 0)
    # The controller saw the observation of its own sample time.
    assert all(obs_t == t for obs_t, t in seen)
    assert [t for _, t in seen] == [r[1] for r in ref]
    # The plant really applied each command at its apply tick: the realized steer over
    # the substep before each grid row is the command in force there per the reference.
    applied = [(round(r[3] / dt), applied_steer(steer_of(r[0]))) for r in ref if r[6]]
    for i, t in enumerate(res.trace["t"][1:], start=1):
        tick = round(t / dt)
        in_force = [u for a, u in applied if a <= tick - 1]
        expected = in_force[-1] if in_force else 0.0
        assert res.trace["delta_rw"][i] == expected, (i, t)
    # Trace grid rows carry the timing of the command in force.
    grid = res.trace["t_apply"][:-1]
    assert res.trace["t"][:-1].tolist() == [(i * P) * dt for i in range(len(grid))]
    for i, t_apply in enumerate(grid):
        tick = i * P
        in_force = [r for r in ref if r[6] and round(r[3] / dt) <= tick]
        if in_force:
            assert t_apply == in_force[-1][3]
            assert res.trace["t_sample"][i] == in_force[-1][1]
        else:
            assert math.isnan(t_apply) and res.trace["overrun"][i] == 0
    assert len(res.trace["t"]) == -(-end_tick // P) + 1 and res.trace["t"][-1] == end_tick * dt


# ------------------------------------------------------------------ strategies

@st.composite
def cases(draw):
    dt = draw(st.sampled_from([5e-4, 1e-3, 2.5e-4, 1e-2 / 3]))
    P = draw(st.sampled_from([1, 2, 3, 5, 8, 40]))
    tc = P * dt
    n_periods = draw(st.integers(1, 25))
    extra = draw(st.integers(0, P - 1))
    end_tick = n_periods * P + extra if n_periods * P + extra > 0 else P
    one = st.one_of(
        st.floats(0.0, 3.0 * tc, allow_nan=False, allow_infinity=False),
        st.integers(0, 3 * P).map(lambda m: m * dt),   # whole numbers of substeps
        st.integers(0, 3).map(lambda m: m * tc),       # whole periods, c_k == Tc included
        st.just(tc),
        st.just(2.5 * tc),
        st.just(0.0),
    )
    chain = st.integers(1, 12).map(lambda n: [2.5 * tc] * n)  # long overrun chains
    pieces = draw(st.lists(st.one_of(one.map(lambda c: [c]), chain), min_size=1, max_size=40))
    delays = [c for piece in pieces for c in piece]
    n_need = -(-end_tick // P) + 1
    delays = (delays * (n_need // len(delays) + 1))[:n_need]
    return delays, dt, P, end_tick


@pytest.mark.parametrize("policy", ["skip", "queue"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
@example(case=([0.02] * 30, 5e-4, 40, 30 * 40))             # c_k == Tc exactly
@example(case=([0.05] * 30, 5e-4, 40, 30 * 40))             # 2.5 Tc: a long overrun chain
@example(case=([0.0035, 0.0005, 0.02, 0.06, 0.0] * 6, 5e-4, 40, 30 * 40))  # multiples of dt
@example(case=([0.021, 0.019, 0.0399999, 0.04, 0.0400001] * 6, 5e-4, 40, 28 * 40 + 7))
def test_b_schedule_matches_reference(policy, case):
    delays, dt, P, end_tick = case
    check_against_reference(delays, dt, P, end_tick, policy)


def test_reference_sanity():
    """The reference itself on hand-worked cases (Tc = 20 ms, dt = 0.5 ms, 5 periods)."""
    # fixed 10 ms: applies 20 ticks after each grid tick, no overrun
    rows, skipped = reference_schedule([0.01] * 6, 5e-4, 40, 200, "skip")
    assert [(r[0], round(r[3] / 5e-4)) for r in rows] == [(k, 40 * k + 20) for k in range(5)]
    assert skipped == 0 and not any(r[5] for r in rows)
    # 50 ms under skip: samples 0, 3 (first grid at/after 50 ms is 60 ms); 1, 2 and 4 skipped
    rows, skipped = reference_schedule([0.05] * 6, 5e-4, 40, 200, "skip")
    assert [r[0] for r in rows] == [0, 3] and skipped == 3
    assert [r[6] for r in rows] == [True, False]  # 3 applies at 110 ms > 100 ms end
    # 50 ms under queue: every sample, each 30 ms later than the last
    rows, _ = reference_schedule([0.05] * 6, 5e-4, 40, 200, "queue")
    assert [r[0] for r in rows] == [0, 1] and [r[3] for r in rows] == [0.05, 0.1]
    assert [r[6] for r in rows] == [True, False]


def test_b_fixed_delays_shift_the_apply_tick():
    """Fixed 5 ms at Tc 20 ms: every command applies 10 substeps after its sample."""
    res, _ = run_b([0.005] * 11, 5e-4, 40, 400, "queue")
    np.testing.assert_array_equal(np.round(res.samples["t_apply"] / 5e-4),
                                  np.arange(10) * 40 + 10)
    assert res.stats["n_overrun"] == 0
