"""Throughput measured side by side in one run (``vdsim-gym bench``).

Reports core substeps/s for L1 and L2, agent steps/s through ``gym.make``, the ratio of
env-step cost to core-only cost for the same substeps (the baseline's DLC episode replayed
through both), and, when installed, highway-env ``lane-keeping-v0`` for comparison. Each
figure is the best of ``repeats`` timed blocks, the least noisy estimate on a shared
machine.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Row:
    name: str
    per_call_us: float  # wall time per call [µs]
    calls_per_s: float
    substeps_per_s: float | None


class Stages:
    """A stderr line as each measured configuration starts, with the time so far: the
    table comes only at the end (after ~30 s for ``--vector``); stdout keeps the table."""

    def __init__(self, label: str, total: int, enabled: bool = True) -> None:
        self.label, self.total, self.enabled = label, total, enabled
        self.k = 0
        self.t0 = time.perf_counter()

    def _print(self, text: str) -> None:
        if self.enabled:
            print(text, file=sys.stderr, flush=True)

    def start(self, what: str) -> None:
        self.k += 1
        self._print(f"[{self.label} {self.k}/{self.total}] {what} "
                    f"(at {time.perf_counter() - self.t0:.0f} s)")

    def done(self) -> None:
        self._print(f"[{self.label}] done in {time.perf_counter() - self.t0:.1f} s")


def check_count(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{what} must be an integer >= 1, got {value!r}")
    return value


def best_time(fn: Callable[[], None], calls: int, repeats: int) -> float:
    """Best seconds per call over ``repeats`` blocks of ``calls`` calls."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def _baseline_episode(env: Any) -> list[np.ndarray]:
    """The Stanley + PI baseline's actions over one episode from reset(seed=0)."""
    from vdsim_gym.controllers import stanley_pi

    policy = stanley_pi(env)
    obs, _ = env.reset(seed=0)
    actions, done = [], False
    while not done:
        action, _ = policy.predict(obs)
        actions.append(action)
        obs, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    return actions


def core_and_env_rows(env_id: str, level: str, repeats: int) -> tuple[Row, Row, Row]:
    """Env steps and core-only advances over the same substeps and the same states.

    The baseline's episode is recorded once, then replayed through ``gym.make`` and, as
    plain commands, through a bare core session started from the same state, and through
    the env with a fixed 10 ms latency (skip). Blocks alternate so that a change in machine
    load hits all alike; the best block counts.
    """
    import gymnasium as gym

    import vdsim_gym.envs  # noqa: F401  (registration)
    from vdsim_gym.latency import LatencyModel

    env = gym.make(env_id, level=level, terminate_on_cone=False)
    base = env.unwrapped
    actions = _baseline_episode(env)
    commands = [base.action_to_command(a) for a in actions]
    session = base.physics.make_session()  # same physics as the env, no task
    substeps = base.ticks_per_period

    delayed = gym.make(env_id, level=level, terminate_on_cone=False,
                       latency=LatencyModel.fixed(0.01))

    def replay(e: Any) -> Callable[[], None]:
        def run() -> None:
            e.reset(seed=0)
            for a in actions:
                e.step(a)
        return run

    def replay_core() -> None:
        env.reset(seed=0)
        session.reset(*base.state[:6].tolist())
        for c in commands:
            session.command_now(*c)
            session.advance(substeps)

    core_s = env_s = lat_s = float("inf")
    for _ in range(repeats):
        core_s = min(core_s, best_time(replay_core, 1, 1) / len(actions))
        env_s = min(env_s, best_time(replay(env), 1, 1) / len(actions))
        lat_s = min(lat_s, best_time(replay(delayed), 1, 1) / len(actions))
    env.close()
    delayed.close()
    core = Row(f"core {level} advance({substeps})", core_s * 1e6, 1 / core_s, substeps / core_s)
    step = Row(f"gym.make({env_id}) {level} step", env_s * 1e6, 1 / env_s, substeps / env_s)
    lat = Row("  same, latency fixed 10 ms (skip)", lat_s * 1e6, 1 / lat_s, substeps / lat_s)
    return core, step, lat


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


def run(calls: int = 2000, repeats: int = 5, highway: bool = True,
        progress: bool = True) -> list[str]:
    """Measure and return the printed report lines.

    ``calls`` sizes the highway-env row only (blocks of max(calls // 10, 10) steps); the
    VDSim rows time one whole baseline episode per block. ``progress``: a stderr line as
    each configuration starts.
    """
    check_count(calls, "calls")
    check_count(repeats, "repeats")
    stages = Stages("bench", 3 if highway else 2, progress)
    lines = [f"{'case':<42} {'us/call':>10} {'calls/s':>12} {'substeps/s':>12}"]
    rows: list[Row] = []
    ratios: list[str] = []
    for level in ("L1", "L2"):
        stages.start(f"core, env and env with latency, {level}")
        core, env, lat = core_and_env_rows("VDSim-DLC-v0", level, repeats)
        substeps = round(core.substeps_per_s / core.calls_per_s)
        rows += [core, env, lat]
        overhead = (env.per_call_us - core.per_call_us) / core.per_call_us
        ratios.append(
            f"{level}: env step / core advance({substeps}) = "
            f"{env.per_call_us / core.per_call_us:.3f}"
            f"  (Python + task overhead {100 * overhead:.1f} % of core; aim <= 25 %)"
        )
        ratios.append(f"{level}: env step with 10 ms latency / without = "
                      f"{lat.per_call_us / env.per_call_us:.3f}")
    if highway:
        stages.start("highway-env lane-keeping-v0, when installed")
        hw = highway_row(calls, repeats)
        if hw is not None:
            rows.append(hw)
            dlc = next(r for r in rows if r.name.startswith("gym.make") and " L2 " in r.name)
            ratios.append(
                f"VDSim-DLC-v0 L2 agent steps/s / highway-env lane-keeping-v0 = "
                f"{dlc.calls_per_s / hw.calls_per_s:.1f}"
            )
        else:
            ratios.append("highway-env not installed: `pip install highway-env` to compare")
    stages.done()
    for r in rows:
        sub = f"{r.substeps_per_s:12.0f}" if r.substeps_per_s else f"{'-':>12}"
        lines.append(f"{r.name:<42} {r.per_call_us:10.2f} {r.calls_per_s:12.0f} {sub}")
    return lines + [""] + ratios
