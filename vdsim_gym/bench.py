"""Throughput measured side by side in one run (``vdsim-gym bench``).

Reports core substeps/s for L1 and L2, agent steps/s through ``gym.make``, the ratio of
env-step cost to core-only cost for the same substeps, and, when installed, highway-env
``lane-keeping-v0`` for comparison. Each figure is the best of ``repeats`` timed blocks,
which is the least noisy estimate on a shared machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from vdsim_gym.plant import Plant


@dataclass(frozen=True)
class Row:
    name: str
    per_call_us: float  # wall time per call [µs]
    calls_per_s: float
    substeps_per_s: float | None


def best_time(fn: Callable[[], None], calls: int, repeats: int) -> float:
    """Best seconds per call over ``repeats`` blocks of ``calls`` calls."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def _core_step(level: str, substeps: int) -> Callable[[], None]:
    plant = Plant(level=level)
    plant.reset({"vx": 20.0})
    plant.session.command_now(0.01, 300.0)
    advance = plant.session.advance
    return lambda: advance(substeps)


def _env_step(env_id: str, level: str) -> tuple[Callable[[], None], int, object]:
    import gymnasium as gym

    import vdsim_gym.envs  # noqa: F401  (registration)

    env = gym.make(env_id, level=level)
    env.reset(seed=0)
    action = np.array([0.0, 0.1], dtype=np.float32)

    def step() -> None:
        _, _, term, trunc, _ = env.step(action)
        if term or trunc:
            env.reset()

    return step, env.unwrapped.ticks_per_period, env


def core_and_env_rows(env_id: str, level: str, calls: int, repeats: int) -> tuple[Row, Row]:
    """Core-only advance and env step for the same substeps, timed in alternating blocks
    so that a change in machine load hits both alike."""
    env_fn, substeps, env = _env_step(env_id, level)
    core_fn = _core_step(level, substeps)
    core_s = env_s = float("inf")
    for _ in range(repeats):
        core_s = min(core_s, best_time(core_fn, calls, 1))
        env_s = min(env_s, best_time(env_fn, calls, 1))
    env.close()  # type: ignore[attr-defined]
    core = Row(f"core {level} advance({substeps})", core_s * 1e6, 1 / core_s, substeps / core_s)
    step = Row(f"gym.make({env_id}) {level} step", env_s * 1e6, 1 / env_s, substeps / env_s)
    return core, step


def highway_row(calls: int, repeats: int) -> Row | None:
    try:
        import gymnasium as gym
        import highway_env  # noqa: F401
    except ImportError:
        return None
    env = gym.make("lane-keeping-v0")
    env.reset(seed=0)

    def step() -> None:
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()

    sec = best_time(step, max(calls // 10, 10), repeats)
    env.close()
    return Row("highway-env lane-keeping-v0 step", sec * 1e6, 1 / sec, None)


def run(calls: int = 2000, repeats: int = 5, highway: bool = True) -> list[str]:
    """Measure and return the printed report lines."""
    lines = [f"{'case':<42} {'us/call':>10} {'calls/s':>12} {'substeps/s':>12}"]
    rows: list[Row] = []
    ratios: list[str] = []
    for level in ("L1", "L2"):
        core, env = core_and_env_rows("VDSim-DLC-v0", level, calls, repeats)
        substeps = round(core.substeps_per_s / core.calls_per_s)
        rows += [core, env]
        overhead = (env.per_call_us - core.per_call_us) / core.per_call_us
        ratios.append(
            f"{level}: env step / core advance({substeps}) = "
            f"{env.per_call_us / core.per_call_us:.3f}"
            f"  (Python + task overhead {100 * overhead:.1f} % of core; aim <= 25 %)"
        )
    if highway:
        hw = highway_row(calls, repeats)
        if hw is not None:
            rows.append(hw)
            dlc = rows[3]
            ratios.append(
                f"VDSim-DLC-v0 L2 agent steps/s / highway-env lane-keeping-v0 = "
                f"{dlc.calls_per_s / hw.calls_per_s:.1f}"
            )
        else:
            ratios.append("highway-env not installed: `pip install highway-env` to compare")
    for r in rows:
        sub = f"{r.substeps_per_s:12.0f}" if r.substeps_per_s else f"{'-':>12}"
        lines.append(f"{r.name:<42} {r.per_call_us:10.2f} {r.calls_per_s:12.0f} {sub}")
    return lines + [""] + ratios
