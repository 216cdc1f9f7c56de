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
