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


def core_row(level: str, substeps: int, calls: int, repeats: int) -> Row:
    plant = Plant(level=level)
    plant.reset({"vx": 20.0})
    plant.session.command_now(0.01, 300.0)
    advance = plant.session.advance
    sec = best_time(lambda: advance(substeps), calls, repeats)
    return Row(f"core {level} advance({substeps})", sec * 1e6, 1 / sec, substeps / sec)


def env_row(env_id: str, level: str, calls: int, repeats: int) -> tuple[Row, int]:
    import gymnasium as gym

    import vdsim_gym.envs  # noqa: F401  (registration)

    env = gym.make(env_id, level=level)
    env.reset(seed=0)
    action = np.array([0.0, 0.1], dtype=np.float32)
    substeps = env.unwrapped.ticks_per_period

    def step() -> None:
        _, _, term, trunc, _ = env.step(action)
        if term or trunc:
            env.reset()

    sec = best_time(step, calls, repeats)
    env.close()
    return Row(f"gym.make({env_id}) {level} step", sec * 1e6, 1 / sec, substeps / sec), substeps


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
        env, substeps = env_row("VDSim-DLC-v0", level, calls, repeats)
        core = core_row(level, substeps, calls, repeats)
        rows += [core, env]
        overhead = (env.per_call_us - core.per_call_us) / core.per_call_us
        ratios.append(
            f"{level}: env step / core advance({substeps}) = {env.per_call_us / core.per_call_us:.3f}"
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
