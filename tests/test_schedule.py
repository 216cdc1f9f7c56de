"""The command schedule: which command is in force at each substep, against a Python reference."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from vdsim_gym import Plant


def reference_in_force(initial: float, pushes: list[tuple[int, float]], n: int) -> list[float]:
    """Slow and obvious: at substep k the command in force is the last one pushed (in
    push order among equal ticks) whose apply tick is <= k; else the initial one."""
    order = sorted(range(len(pushes)), key=lambda i: (pushes[i][0], i))
    out = []
    for k in range(n):
        due = [pushes[i][1] for i in order if pushes[i][0] <= k]
        out.append(due[-1] if due else initial)
    return out


@settings(max_examples=60, deadline=None)
@given(
    pushes=st.lists(
        st.tuples(st.integers(0, 40), st.floats(-0.3, 0.3, allow_nan=False)), max_size=12
    )
)
def test_schedule_applies_each_command_at_its_tick(pushes):
    plant = Plant(level="L1")
    plant.reset({"vx": 10.0})
    session = plant.session
    session.command_now(0.01, 0.0)
    for tick, steer in pushes:
        session.schedule(tick, steer, 0.0)
    realized = []
    for _ in range(45):
        session.advance(1)
        realized.append(session.realized_steer)
    assert realized == reference_in_force(0.01, pushes, 45)
    assert session.pending == 0


def test_schedule_past_tick_applies_at_next_substep_and_drop_pending():
    plant = Plant(level="L1")
    plant.reset({"vx": 10.0})
    s = plant.session
    s.advance(10)
    s.schedule(3, 0.2, 0.0)  # already past: takes effect at the next substep
    s.schedule(20, 0.1, 0.0)
    s.advance(1)
    assert s.realized_steer == 0.2 and s.pending == 1
    s.drop_pending()
    s.advance(15)
    assert s.realized_steer == 0.2 and s.pending == 0


# ------------------------------------------------------- the clock's conversions (timing)

def test_timing_rounding_rules_against_plain_python():
    """timing's conversions (the C++ helpers of schedule.hpp) against obviously-correct
    Python: floor / nearest (half to even, Python's round) with the clock's relative
    tolerance of 1e-9, on values that sit on, near and between whole ticks."""
    import math

    import numpy as np

    from vdsim_gym.timing import ceil_ticks, floor_ticks, nearest_ticks, nearest_ticks_array

    def near(q: float) -> bool:
        return abs(q - round(q)) <= 1e-9 * max(1.0, abs(q))

    rng = np.random.default_rng(0)
    dts = (5e-4, 1e-3, 0.02, 0.05, 0.1)
    values = [0.06, 0.0604, 0.0599, 0.3, 0.31, 0.29, 1.25, 30.0, 0.0]
    values += [float(v) for v in rng.uniform(0.0, 5.0, 200)]
    values += [k * dt for k in range(0, 50) for dt in dts]  # on the grid, float products
    for dt in dts:
        for s in values:
            q = s / dt
            n, exact = nearest_ticks(s, dt)
            assert n == round(q) and exact == near(q), (s, dt)
            assert floor_ticks(s, dt) == (round(q) if near(q) else math.floor(q)), (s, dt)
            assert ceil_ticks(s, dt) == (round(q) if near(q) else math.ceil(q)), (s, dt)
        arr = np.array(values)
        assert nearest_ticks_array(arr, dt).tolist() == [nearest_ticks(s, dt)[0] for s in values]
    assert floor_ticks(0.06, 0.0005) == 120 == ceil_ticks(0.06, 0.0005)  # not 119 or 121
    assert nearest_ticks(1e300, 1e-3) == (2**53, False)  # saturates: no int64 overflow
