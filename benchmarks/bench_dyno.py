"""Side by side, in one run: the cost of a VDSim-Dyno-v0 step through ``gym.make`` against
its C++ core's step alone, and of the vector env per env step at N = 64 against the
single env; plus the Python robot driver and bench (one call each) against one env step.

    python benchmarks/bench_dyno.py [--repeats 7] [--steps 2000]

Blocks alternate between the workloads and the best block of each is kept (robust to
the shared machine's load). Prints microseconds per step and the ratios.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.controllers import cycle_follower
from vdsim_gym.dyno import DynoBench, RobotDriver


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--steps", type=int, default=1800)
    args = ap.parse_args()
    n = args.steps

    env = gym.make("VDSim-Dyno-v0", cycle="urban_stop_and_go")
    policy = cycle_follower(env, lookahead_s=0.5)
    obs, _ = env.reset(seed=0)
    actions = []
    for _ in range(n):  # one recorded episode's actions, replayed by every workload
        a = policy.predict(obs)[0]
        actions.append(a)
        obs, _, term, trunc, _ = env.step(a)
        if term or trunc:
            obs, _ = env.reset(seed=0)
    actions = np.asarray(actions, dtype=np.float32)
    core = env.unwrapped._core
    u = env.unwrapped
    vec = gym.make_vec("VDSim-Dyno-v0", num_envs=64, threads=1, cycle="urban_stop_and_go")
    batches = np.repeat(actions[:200, None, :], 64, axis=1)

    def env_block() -> float:
        env.reset(seed=0)
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        return (time.perf_counter() - t0) / n

    def core_block() -> float:
        env.reset(seed=0)
        step, o, te, inf = core.step, u._obs, u._terms, u._info
        t0 = time.perf_counter()
        for a in actions.astype(float):
            step(float(a[0]), o, te, inf)
        return (time.perf_counter() - t0) / n

    def vec_block() -> float:
        vec.reset(seed=0)
        t0 = time.perf_counter()
        for b in batches:
            vec.step(b)
        return (time.perf_counter() - t0) / (len(batches) * 64)

    def python_block() -> float:
        bench, drv, v = DynoBench(), RobotDriver(), 0.0
        t0 = time.perf_counter()
        for a in actions:
            ref = 20.0 * (float(a[0]) + 1.0)
            for _ in range(2):  # two substeps of 0.05 s per 0.1 s env step
                v = bench.step(*drv.step(ref, v, 0.05), 0.05)
        return (time.perf_counter() - t0) / n

    blocks = {"env": env_block, "core": core_block, "vec64": vec_block,
              "python": python_block}
    best = {k: float("inf") for k in blocks}
    for _ in range(args.repeats):
        for k, fn in blocks.items():
            best[k] = min(best[k], fn())
    us = {k: v * 1e6 for k, v in best.items()}
    print(f"VDSim-Dyno-v0 step (2 substeps, driver in speed mode), best of {args.repeats}:")
    print(f"  gym.make env.step          {us['env']:7.2f} us")
    print(f"  C++ core step alone        {us['core']:7.2f} us   env / core = "
          f"{us['env'] / us['core']:.2f}")
    print(f"  make_vec N=64, per env     {us['vec64']:7.2f} us   single / vector = "
          f"{us['env'] / us['vec64']:.1f}")
    print(f"  Python DynoBench+RobotDriver {us['python']:5.2f} us   python / env = "
          f"{us['python'] / us['env']:.1f}")


if __name__ == "__main__":
    main()
