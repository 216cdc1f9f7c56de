"""Throughput measured side by side in one run (``vdsim-gym bench``: ``run_bench``).

Reports, for L2 and L1 and for the default physics (etd3), the default before it
(etd2) and the reference configuration (heun on every 0.5 ms substep), agent
steps through ``gym.make``, the env's own C++ core step and the physics alone over the
same substeps (the baseline's DLC episode replayed through each, resets untimed); the
default env's step under the commands RL sends (the baseline's actions plus N(0, 0.3),
and uniform random actions) beside the smooth one; the ratios between them;
stable-baselines3 SAC's share of ``learn()`` spent in the env; and, when installed,
highway-env ``lane-keeping-v0`` for comparison. The cases are interleaved block by block
and timed in CPU time (single-threaded work); each row is the best of ``repeats`` blocks,
and each ratio of the physics gives min/median/max over the blocks' ratios (the two cases
of a ratio ran back to back in each block).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from vdsim_gym._checks import check_integer
from vdsim_gym._stages import Stages


@dataclass(frozen=True)
class Row:
    name: str
    per_call_us: float  # wall time per call [µs]
    calls_per_s: float
    substeps_per_s: float | None


def unphysical(level: str, env: Row, core: Row, phys: Row, env_ref: Row, core_ref: Row
               ) -> list[str]:
    """Warnings for figures that cannot be physical: a step cheaper than the work it
    contains (the env step holds its core step, the core step the physics), or the
    reference (ten substeps per step of the default) cheaper than the default. They mean
    the machine's load moved between the blocks."""
    out = []
    for outer, inner, what in ((env, core, "env step"), (core, phys, "C++ core step"),
                               (env_ref, core_ref, "reference env step")):
        if outer.per_call_us < 0.97 * inner.per_call_us:
            out.append(f"warning: {level}: {what} ({outer.per_call_us:.2f} us) cheaper than "
                       f"the work it contains ({inner.per_call_us:.2f} us): not physical, "
                       "the load moved; rerun on a quieter machine")
    if core_ref.per_call_us < core.per_call_us:
        out.append(f"warning: {level}: the reference core step is cheaper than the default's:"
                   " not physical; rerun on a quieter machine")
    return out


def load_warning() -> str | None:
    """A warning when the one-minute load average exceeds the cores: figures measured
    then mostly measure the other work."""
    try:
        load, cores = os.getloadavg()[0], os.cpu_count() or 1
    except (OSError, AttributeError):
        return None
    if load <= cores:
        return None
    return (f"warning: load average {load:.1f} above the {cores} cores: the figures below "
            "mostly measure the other work; rerun on a quieter machine")


def check_count(value: int, what: str) -> int:
    """A count of calls, steps or repeats: an integer >= 1."""
    return check_integer(value, what, minimum=1)


def best_time(fn: Callable[[], None], calls: int, repeats: int) -> float:
    """Best seconds per call over ``repeats`` blocks of ``calls`` calls."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - t0) / calls)
    return best


def replay_seconds(env: Any, actions: Any) -> float:
    """CPU seconds (this thread) of stepping ``env`` through ``actions`` from
    ``reset(seed=0)``; an episode end resets, untimed, and the replay goes on."""
    env.reset(seed=0)
    total, t0 = 0.0, time.thread_time()
    for a in actions:
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            total += time.thread_time() - t0
            env.reset()
            t0 = time.thread_time()
    return total + time.thread_time() - t0


def baseline_episode(env: Any) -> list[np.ndarray]:
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


# The reference configuration (heun every substep); the default before (etd2, second order,
# until 2026-12-06).
REFERENCE: dict[str, Any] = {"integrator": "heun"}
PREVIOUS: dict[str, Any] = {"integrator": "etd2"}


@dataclass(frozen=True)
class Ratio:
    """A cost ratio other / default over the blocks: min, median, max."""

    name: str
    lo: float
    median: float
    hi: float

    @classmethod
    def of(cls, name: str, other: list[float], default: list[float]) -> Ratio:
        r = np.array(other) / np.array(default)
        return cls(name, float(r.min()), float(np.median(r)), float(r.max()))

    def line(self) -> str:
        return (f"{self.name} = {self.median:.2f} (min {self.lo:.2f}, max {self.hi:.2f}) "
                "x the default's cost")


def core_and_env_rows(env_id: str, level: str, repeats: int
                      ) -> tuple[list[Row], list[Ratio]]:
    """Env steps and core-only steps over the same substeps and the same states, for the
    default physics, the default before it and the reference configuration.

    The baseline's episode is recorded once, then replayed through ``gym.make`` (the
    default and the reference), through each env's own C++ core step (``core.step``
    with its buffers: the same work without the Python env), through a bare session as
    plain commands (physics only, no task) and through the env with a fixed 10 ms
    latency (skip), and with every delay of a loop (a 25 ms sensor age, between step ends,
    10 ms of computation, a lossy network, 10 ms of steering dead time). Blocks alternate
    so that a change in machine load hits all alike; each is timed in CPU time and the
    best block counts. Rows: env default, core default, physics default, env with latency,
    env reference, core reference, env previous, core previous, env with every delay.
    Ratios: the previous default's and the reference's env and core steps over the
    default's, per block.
    """
    import gymnasium as gym

    import vdsim_gym.envs  # noqa: F401  (registration)
    from vdsim_gym.config.latency import LatencyModel
    from vdsim_gym.config.network import NetworkModel

    env = gym.make(env_id, level=level, terminate_on_cone=False)
    ref = gym.make(env_id, level=level, terminate_on_cone=False, **REFERENCE)
    prev = gym.make(env_id, level=level, terminate_on_cone=False, **PREVIOUS)
    base: Any = env.unwrapped  # a VDSim env: its own attributes
    actions = baseline_episode(ref)
    pairs = [tuple(float(v) for v in a) for a in actions]
    commands = [base.action_to_command(a) for a in actions]
    session = base.physics.make_session()  # same physics as the env, no task
    substeps = base.ticks_per_period
    delayed = gym.make(env_id, level=level, terminate_on_cone=False,
                       latency=LatencyModel.fixed(0.01))
    every = gym.make(env_id, level=level, terminate_on_cone=False,
                     latency=LatencyModel.fixed(0.01), obs_delay=LatencyModel.fixed(0.025),
                     network=NetworkModel(drop=0.05), channel_delays={"steer": 0.01})

    # The commands RL sends (docs/PHYSICS.md, "Noisy-command gate"): the baseline's
    # actions plus N(0, 0.3), clipped (PPO-like exploration), and uniform random actions,
    # seeded, replayed open loop.
    rng = np.random.default_rng(0)
    noisy = [np.clip(a + 0.3 * rng.standard_normal(a.shape), -1.0, 1.0).astype(np.float32)
             for a in actions]
    uniform = [rng.uniform(-1.0, 1.0, np.shape(a)).astype(np.float32) for a in actions]

    # Each replay resets (untimed: a reset is not a step) and returns the seconds of its
    # steps (replay_seconds).
    def replay(e: Any, stream: list[np.ndarray] = actions) -> Callable[[], float]:
        return lambda: replay_seconds(e, stream)

    def replay_core(e: Any) -> Callable[[], float]:
        u = e.unwrapped

        def run() -> float:
            e.reset(seed=0)
            step, (o, t, i) = u.core.step, u.rows
            t0 = time.thread_time()
            for a0, a1 in pairs:
                step(a0, a1, o, t, i)
            return time.thread_time() - t0
        return run

    def replay_physics() -> float:
        env.reset(seed=0)
        session.reset(*base.state[:6].tolist())
        t0 = time.thread_time()
        for c in commands:
            session.command_now(*c)
            session.advance(substeps)
        return time.thread_time() - t0

    runs = [replay(env), replay_core(env), replay_physics, replay(delayed), replay(ref),
            replay_core(ref), replay(prev), replay_core(prev), replay(every),
            replay(env, noisy), replay(env, uniform)]
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(repeats):
        for k, fn in enumerate(runs):
            times[k].append(fn() / len(actions))
    best = [min(t) for t in times]
    for e in (env, ref, delayed, prev, every):
        e.close()
    names = [f"gym.make({env_id}) {level} step", f"  its C++ core step ({level})",
             f"  physics only, session advance({substeps})",
             "  same env, latency fixed 10 ms (skip)",
             f"gym.make {level} step, reference (heun 0.5 ms)",
             f"  its C++ core step, reference ({level})",
             f"gym.make {level} step, etd2 (before)",
             f"  its C++ core step, etd2 ({level})",
             "  same env, every delay (sensor 25 ms, ...)",
             "  same env, noisy actions (baseline + N(0, 0.3))",
             "  same env, uniform random actions"]
    ratios = [Ratio.of(f"{level}: env step, etd2 (default before)", times[6], times[0]),
              Ratio.of(f"{level}: C++ core step, etd2 (default before)", times[7], times[1]),
              Ratio.of(f"{level}: env step, reference (heun 0.5 ms)", times[4], times[0]),
              Ratio.of(f"{level}: C++ core step, reference (heun 0.5 ms)", times[5],
                       times[1]),
              Ratio.of(f"{level}: env step with every delay (sensor 25 ms, compute 10 ms, "
                       "network 5 % loss, steer 10 ms) / without", times[8], times[0]),
              Ratio.of(f"{level}: env step under noisy actions (baseline + N(0, 0.3)) / "
                       "smooth", times[9], times[0]),
              Ratio.of(f"{level}: env step under uniform random actions / smooth",
                       times[10], times[0])]
    return ([Row(n, sec * 1e6, 1 / sec, substeps / sec) for n, sec in zip(names, best,
                                                                          strict=True)],
            ratios)


def sac_env_share(total_timesteps: int = 3000,
                  progress: Callable[[int], None] | None = None,
                  **env_kwargs: Any) -> tuple[float, float]:
    """(learn wall time [s], share of it inside the env) for SB3 SAC on one env
    (``gym.make("VDSim-DLC-v0")``, as off-policy users step it): the env's step and
    reset timed inside SB3's own loop. ``progress(steps)`` is called every 500 steps (SAC's
    gradient step per env step makes this stage the bench's longest: 45-57 s per physics
    on one torch thread at rest, on the 2-core machine)."""
    import gymnasium as gym
    from stable_baselines3 import SAC
    from stable_baselines3.common.callbacks import BaseCallback

    import vdsim_gym.envs  # noqa: F401  (registration)

    spent = [0.0]

    class Timed(gym.Wrapper):
        def step(self, action: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return self.env.step(action)
            finally:
                spent[0] += time.perf_counter() - t0

        def reset(self, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return self.env.reset(**kwargs)
            finally:
                spent[0] += time.perf_counter() - t0

    class Progress(BaseCallback):
        def _on_step(self) -> bool:
            if progress is not None and self.num_timesteps % 500 == 0:
                progress(self.num_timesteps)
            return True

    import torch

    env = Timed(gym.make("VDSim-DLC-v0", **env_kwargs))
    model = SAC("MlpPolicy", env, learning_starts=500, seed=0, device="cpu", verbose=0)
    # one torch thread, as `vdsim-gym train` trains (--num-threads 1): torch's default of
    # one thread per core made the stage 5x slower when the cores were shared
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        t0 = time.perf_counter()
        model.learn(total_timesteps=total_timesteps, callback=Progress())
        wall = time.perf_counter() - t0
    finally:
        torch.set_num_threads(threads)
        env.close()
    return wall, spent[0] / wall


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


def run_bench(calls: int = 2000, repeats: int = 5, highway: bool = True, sac: bool = True,
              progress: bool = True) -> list[str]:
    """Measure and return the printed report lines.

    ``calls`` sizes the highway-env row only (blocks of max(calls // 10, 10) steps); the
    VDSim rows time one whole baseline episode per block. ``sac``: SB3 SAC's env share
    (about 2 minutes: two runs). ``progress``: a stderr line as each configuration starts
    and its results on stdout as it finishes.
    """
    check_count(calls, "calls")
    check_count(repeats, "repeats")
    stages = Stages("bench", 2 + highway + 2 * sac, progress)
    busy = load_warning()
    if busy:
        stages._print(busy)
    lines = ([busy] if busy else []) + [
        f"{'case':<46} {'us/call':>10} {'calls/s':>12} {'substeps/s':>12}"]
    rows: list[Row] = []
    ratios: list[str] = []
    for level in ("L2", "L1"):
        stages.start(f"{level}: env, C++ core and physics; default, previous and reference physics")
        level_rows, physics_ratios = core_and_env_rows("VDSim-DLC-v0", level, repeats)
        env, core, phys, lat, env_ref, core_ref, *_ = level_rows
        rows += level_rows
        # aims: the default no dearer than the default before it, and >= 5x cheaper
        # than the reference
        ratios += [r.line() + ("  (aim >= 1)" if "default before" in r.name else
                               "  (aim <= 2.5)" if "actions" in r.name else
                               "" if "every delay" in r.name else "  (aim >= 5)")
                   for r in physics_ratios]
        ratios += [
            f"{level}: env step / its C++ core step = {env.per_call_us / core.per_call_us:.3f}"
            f"  (aim <= 1.5; reference physics: "
            f"{env_ref.per_call_us / core_ref.per_call_us:.3f})",
            f"{level}: env step with 10 ms latency / without = "
            f"{lat.per_call_us / env.per_call_us:.3f}"]
        ratios += unphysical(level, env, core, phys, env_ref, core_ref)
        stages.result([f"{r.name}: {r.per_call_us:.2f} us/call" for r in level_rows[:2]])
    if sac:
        try:
            for name, kw in (("default", {}), ("reference", REFERENCE)):
                stages.start(f"SB3 SAC learn, 3000 steps on one env, {name} physics")
                wall, share = sac_env_share(progress=stages.progress, **kw)
                ratios.append(f"SAC learn(3000 steps, 1 env), {name} physics: {wall:.1f} s, "
                              f"env share {100 * share:.1f} %")
                stages.result(ratios[-1:])
        except ImportError:
            ratios.append("stable-baselines3 not installed: pip install 'vdsim-gym[train]'")
    if highway:
        stages.start("highway-env lane-keeping-v0, when installed")
        hw = highway_row(calls, repeats)
        if hw is not None:
            rows.append(hw)
            ratios.append(
                f"VDSim-DLC-v0 L2 agent steps/s / highway-env lane-keeping-v0 = "
                f"{rows[0].calls_per_s / hw.calls_per_s:.1f}"
            )
        else:
            ratios.append("highway-env not installed: `pip install highway-env` to compare")
    stages.done()
    for r in rows:
        sub = f"{r.substeps_per_s:12.0f}" if r.substeps_per_s else f"{'-':>12}"
        lines.append(f"{r.name:<46} {r.per_call_us:10.2f} {r.calls_per_s:12.0f} {sub}")
    return lines + [""] + ratios
