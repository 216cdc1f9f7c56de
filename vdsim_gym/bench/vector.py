"""Vector throughput measured side by side in one run (``vdsim-gym bench --vector``:
``run_bench_vector``).

- VDSimVectorEnv (``gym.make_vec``) at N = 1, 16, 64 with 1 and 2 threads, against the
  core-only vector step of the same work (the same recorded actions and substeps through
  the C++ batch step alone, without the Python env) and against the physics alone
  (no path task): the share of core throughput kept.
- gymnasium CartPole-v1 ``SyncVectorEnv``, highway-env ``lane-keeping-v0``, and EnvPool's
  CartPole and LaneKeeping (its C++ port of lane-keeping-v0) for reference, when installed.
- The same at N = 64 on 2 threads with the reference physics (heun on every 0.5 ms
  substep, the default before the training-grade stepping): the before/after ratio.
- stable-baselines3 PPO ``learn()`` on ``make_sb3_vec_env(VDSim-DLC-v0, 8)``, default
  physics and the reference physics: the share of its wall time spent inside the env
  (step_wait, reset).

Best of ``repeats`` alternating blocks per figure, for a shared machine.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym._stages import Stages
from vdsim_gym.bench.throughput import REFERENCE, best_time, check_count
from vdsim_gym.envs.vector import VDSimVectorEnv

ENV_ID = "VDSim-DLC-v0"
SIZES = (1, 16, 64)  # num_envs measured
THREADS = (1, 2)


@dataclass(frozen=True)
class VRow:
    name: str
    num_envs: int
    threads: int | None
    agent_steps_per_s: float
    substeps_per_s: float | None


def _recorded_actions(num_envs: int, steps: int) -> np.ndarray:
    """The Stanley + PI baseline's batched actions over ``steps`` steps, (T, N, 2)."""
    from vdsim_gym.controllers import stanley_pi

    venv = VDSimVectorEnv(ENV_ID, num_envs, threads=1, terminate_on_cone=False)
    policy = stanley_pi(venv.envs[0])
    obs, _ = venv.reset(seed=0)
    out = np.zeros((steps, num_envs, 2))
    for t in range(steps):
        out[t] = policy.predict(obs, episode_start=np.full(num_envs, t == 0))[0]
        obs, *_ = venv.step(out[t])
    venv.close()
    return out


def vector_rows(num_envs: int, threads: int, steps: int, repeats: int, **physics: Any
                ) -> tuple[VRow, VRow, VRow]:
    """Over the same recorded actions, alternating blocks: the vector env's step, the C++
    batch step alone (the same work without the Python env: task included) and the
    physics alone (no task); ``physics``: env keywords (default: the default physics)."""
    check_count(steps, "steps")
    check_count(repeats, "repeats")
    actions = _recorded_actions(num_envs, steps)
    venv = VDSimVectorEnv(ENV_ID, num_envs, threads=threads, terminate_on_cone=False,
                          **physics)
    ticks = venv.envs[0].ticks_per_period

    # Each block resets (untimed: resets are per-row Python, not the batch step) and
    # returns the seconds of its steps.
    def timed(step: Callable[[np.ndarray], Any]) -> Callable[[], float]:
        def run() -> float:
            venv.reset(seed=0)
            t0 = time.perf_counter()
            for a in actions:
                step(a)
            return time.perf_counter() - t0
        return run

    runs = (timed(venv.step_core), timed(venv.step), timed(venv.advance_physics))
    best = [float("inf")] * 3
    for _ in range(repeats):
        for k, fn in enumerate(runs):
            best[k] = min(best[k], fn() / steps)
    core_s, env_s, phys_s = best
    venv.close()
    n = num_envs

    def row(name: str, sec: float) -> VRow:
        return VRow(name, n, threads, n / sec, n * ticks / sec)

    return (row(f"make_vec {ENV_ID}", env_s), row("  core vector step (C++ only)", core_s),
            row("  physics only (no task)", phys_s))


def _sync_row(name: str, make: Callable[[], gym.Env], num_envs: int, steps: int,
              repeats: int) -> VRow:
    venv = gym.vector.SyncVectorEnv([make] * num_envs)
    venv.reset(seed=0)
    action = venv.action_space.sample()

    def run() -> None:
        for _ in range(steps):
            venv.step(action)

    sec = min(best_time(run, 1, 1) for _ in range(repeats)) / steps
    venv.close()
    return VRow(name, num_envs, None, num_envs / sec, None)


def reference_rows(steps: int, repeats: int) -> list[VRow]:
    rows = [_sync_row("gymnasium CartPole-v1 SyncVectorEnv", lambda: gym.make("CartPole-v1"),
                      64, steps, repeats)]
    try:
        import highway_env  # noqa: F401

        rows.append(_sync_row("highway-env lane-keeping-v0 SyncVectorEnv",
                              lambda: gym.make("lane-keeping-v0"), 4, max(steps // 20, 5),
                              repeats))
    except ImportError:
        pass
    try:
        import envpool
    except ImportError:
        return rows
    # CartPole, and the C++ port of highway-env's lane-keeping-v0 (a kinematic bicycle;
    # benchmarks/bench_envpool.py compares it in detail), random actions, 2 worker threads.
    rng = np.random.default_rng(0)
    for task, act in (("CartPole-v1", np.zeros(64, dtype=np.int32)),
                      ("LaneKeeping-v0", rng.uniform(-1, 1, (64, 1)).astype(np.float32))):
        with warnings.catch_warnings():  # EnvPool's spaces warn on float64 bounds
            warnings.simplefilter("ignore")
            pool = envpool.make_gymnasium(task, num_envs=64, num_threads=2, seed=0)
            pool.reset()

            def run(pool: Any = pool, act: np.ndarray = act) -> None:
                for _ in range(steps):
                    pool.step(act)

            sec = min(best_time(run, 1, 1) for _ in range(repeats)) / steps
            pool.close()
        rows.append(VRow(f"EnvPool {task}", 64, 2, 64 / sec, None))
    return rows


def ppo_env_share(num_envs: int = 8, total_timesteps: int = 16384, light: bool = True,
                  hyper: Mapping[str, Any] | None = None, **env_kwargs: Any
                  ) -> tuple[float, float]:
    """(learn wall time [s], share of it inside the env) for SB3 PPO on
    ``make_sb3_vec_env(ENV_ID, num_envs)``: the VecEnv's step_wait and reset timed inside
    SB3's own loop. ``light``: 256 steps per env and rollout, batch 256, 4 epochs, so the
    env's share is not flattered by a heavy update; else SB3's defaults (2048 steps per
    env, batch 64, 10 epochs). ``hyper``: PPO keywords instead (e.g. ``{"n_steps": 2048,
    "batch_size": 2048, "n_epochs": 1}``, one epoch of whole-rollout batches). torch runs on
    one thread, as training does."""
    import torch
    from stable_baselines3 import PPO

    from vdsim_gym.sb3_vec_env import make_sb3_vec_env

    venv = make_sb3_vec_env(ENV_ID, num_envs, seed=0, threads=0, **env_kwargs)
    spent = [0.0]

    def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[0] += time.perf_counter() - t0
        return wrapper

    venv.step_wait = timed(venv.step_wait)  # type: ignore[method-assign]
    venv.reset = timed(venv.reset)  # type: ignore[method-assign]
    if hyper is None:
        hyper = {"n_steps": 256, "batch_size": 256, "n_epochs": 4} if light else {}
    # torch on one thread, as `vdsim-gym train` runs it (docs/BENCHMARKS.md, "Torch threads
    # in training and sweeps"); restored after.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = PPO("MlpPolicy", venv, seed=0, device="cpu", verbose=0, **hyper)
        t0 = time.perf_counter()
        model.learn(total_timesteps=total_timesteps)
        wall = time.perf_counter() - t0
    finally:
        torch.set_num_threads(threads)
        venv.close()
    return wall, spent[0] / wall


def run_bench_vector(steps: int = 50, repeats: int = 15, ppo: bool = True,
                     progress: bool = True) -> list[str]:
    """Measure and return the printed report lines; ``progress``: a stderr line as each
    configuration starts (the whole run takes ~30 s)."""
    check_count(steps, "steps")
    check_count(repeats, "repeats")
    stages = Stages("bench --vector", len(SIZES) * len(THREADS) + 2 + 4 * ppo, progress)
    lines = [f"{'case':<44} {'N':>4} {'threads':>7} {'agent steps/s':>14} {'substeps/s':>12}"]
    rows: list[VRow] = []
    ratios: list[str] = []
    by: dict[tuple[int, int], tuple[VRow, VRow, VRow]] = {}
    for n in SIZES:
        for t in THREADS:
            stages.start(f"make_vec {ENV_ID} N={n} threads={t}, C++ step, physics only")
            by[(n, t)] = vector_rows(n, t, steps, repeats)
            rows += list(by[(n, t)])
    for (n, t), (env, core, phys) in by.items():
        ratios.append(f"N={n:<3} threads={t}: env / C++ vector step = "
                      f"{env.agent_steps_per_s / core.agent_steps_per_s:.3f}"
                      + ("  (aim >= 0.97 at N=64)" if n == 64 else "")
                      + f"; env / physics only = "
                      f"{env.agent_steps_per_s / phys.agent_steps_per_s:.3f}")
    for n in (16, 64):
        speedup = by[(n, 2)][0].agent_steps_per_s / by[(n, 1)][0].agent_steps_per_s
        ratios.append(f"N={n}: 2 threads / 1 thread = {speedup:.2f}"
                      + ("  (aim >= 1.8)" if n == 64 else ""))
    stages.start(f"make_vec {ENV_ID} N=64 threads=2, reference physics (heun 0.5 ms)")
    ref_env, ref_core, _ = vector_rows(64, 2, steps, repeats, **REFERENCE)
    rows += [VRow(f"make_vec {ENV_ID}, reference physics", 64, 2,
                  ref_env.agent_steps_per_s, ref_env.substeps_per_s),
             VRow("  core vector step, reference physics", 64, 2,
                  ref_core.agent_steps_per_s, ref_core.substeps_per_s)]
    ratios.append(f"N=64 threads=2: make_vec default / reference physics = "
                  f"{by[(64, 2)][0].agent_steps_per_s / ref_env.agent_steps_per_s:.2f}x "
                  f"the agent steps/s (C++ vector step: "
                  f"{by[(64, 2)][1].agent_steps_per_s / ref_core.agent_steps_per_s:.2f}x)")
    stages.start("references: CartPole-v1, highway-env, EnvPool (when installed)")
    refs = reference_rows(steps, repeats)
    rows += refs
    best = by[(64, 2)][0].agent_steps_per_s
    for r in refs:
        ratios.append(f"VDSim make_vec N=64 2 threads / {r.name} = "
                      f"{best / r.agent_steps_per_s:.2f}")
    for r in rows:
        thr = "-" if r.threads is None else str(r.threads)
        sub = f"{r.substeps_per_s:12.0f}" if r.substeps_per_s else f"{'-':>12}"
        lines.append(f"{r.name:<44} {r.num_envs:>4} {thr:>7} {r.agent_steps_per_s:14.0f} {sub}")
    if ppo:
        try:
            for name, kw in (("default", {}), ("reference", REFERENCE)):
                stages.start(f"PPO learn, 16384 steps on 8 envs, {name} physics")
                wall, share = ppo_env_share(**kw)
                ratios.append(f"PPO learn(16384 steps, make_sb3_vec_env 8 envs, light "
                              f"update), {name} physics: {wall:.1f} s, env share "
                              f"{100 * share:.1f} %"
                              + ("  (issue 30 aim: < 5 %)" if name == "default" else ""))
            stages.start("PPO learn, 16384 steps on 8 envs, SB3's default hyperparameters")
            wall, share = ppo_env_share(light=False)
            ratios.append(f"PPO learn(16384 steps, 8 envs, SB3's default hyperparameters), "
                          f"default physics: {wall:.1f} s, env share {100 * share:.1f} %")
        except ImportError:
            ratios.append("stable-baselines3 not installed: pip install 'vdsim-gym[train]'")
    stages.done()
    return lines + [""] + ratios
