"""Construction cost: one ``gym.make``, and ``gym.make_vec`` of N envs with its first reset.

Prints CPU seconds (this process's, single-threaded work) per case, min / median / max
over the repeats, and the peak Python allocation of the vector build per env
(tracemalloc; the C++ cores' own memory is not in it). Run it under two builds one after
the other to compare them (the target: N = 10,000 built and reset in under 1 s):

    python benchmarks/bench_construction.py [--n 10000] [--repeats 3]

``--resets``: also one episode reset in C++ per row for each env (a 256-row batch's
``VectorEnvCore.reset_rows``, the autoreset's call; the rows' whole draw and reset: for
PathFollow a new 300 m course; for the randomized DLC the vehicle and latency draws
applied), CPU us per row over 40 calls, and a single env's ``reset()`` of the same env,
min / median / max over the repeats.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
import tracemalloc

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)

RANDOMIZE = {"mass": [0.9, 1.15], "cg_x": [-0.1, 0.1], "friction": [0.8, 1.0],
             "cornering_stiffness": [0.85, 1.15],
             "latency": {"mean": [0.0, 0.04], "jitter": [0.0, 0.5]}}
# (label, id, kwargs) of the reset-cost cases
RESET_ENVS: tuple[tuple[str, str, dict], ...] = (
    ("VDSim-DLC-v0", "VDSim-DLC-v0", {}),
    ("VDSim-DLC-v0 randomized", "VDSim-DLC-v0", {"randomize": RANDOMIZE}),
    ("VDSim-PathFollow-v0", "VDSim-PathFollow-v0", {}),
    ("VDSim-ACC-v0", "VDSim-ACC-v0", {}),
    ("VDSim-Dyno-v0", "VDSim-Dyno-v0", {}))


def _stats(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} (min {min(xs):.3f}, max {max(xs):.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="envs in the vector build")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--env", default="VDSim-DLC-v0")
    ap.add_argument("--resets", action="store_true", help="also time a reset in C++ per env")
    args = ap.parse_args()
    single, build, reset = [], [], []
    for _ in range(args.repeats):
        gc.collect()
        t0 = time.process_time()
        for _ in range(20):
            gym.make(args.env).close()
        single.append((time.process_time() - t0) / 20 * 1e3)
        t0 = time.process_time()
        venv = gym.make_vec(args.env, num_envs=args.n)
        t1 = time.process_time()
        venv.reset(seed=0)
        t2 = time.process_time()
        build.append(t1 - t0)
        reset.append(t2 - t1)
        venv.close()
        del venv
    gc.collect()
    tracemalloc.start()
    venv = gym.make_vec(args.env, num_envs=min(args.n, 1000))
    venv.reset(seed=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"{args.env}: one gym.make {_stats(single)} ms")
    print(f"make_vec N={args.n}: build {_stats(build)} s, first reset {_stats(reset)} s")
    print(f"Python allocations of a N={min(args.n, 1000)} build + reset: "
          f"{peak / min(args.n, 1000) / 1024:.1f} KiB per env (peak, tracemalloc)")
    if args.resets:
        for label, env_id, kw in RESET_ENVS:
            print(f"{label}: one reset in C++ {_stats(_reset_cost(env_id, kw, args.repeats))}"
                  f" us per row; a single env's reset() "
                  f"{_stats(_single_reset_cost(env_id, kw, args.repeats))} us")


def _single_reset_cost(env_id: str, kw: dict, repeats: int, calls: int = 400) -> list[float]:
    """CPU us of an unseeded ``reset()`` of one env (its Python and its core's)."""
    env = gym.make(env_id, **kw)
    env.reset(seed=0)
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            env.reset()
        out.append((time.process_time() - t0) / calls * 1e6)
    return out


def _reset_cost(env_id: str, kw: dict, repeats: int, rows: int = 256,
                calls: int = 40) -> list[float]:
    """CPU us per row of ``reset_rows`` over every row of a ``rows``-row batch."""
    venv = gym.make_vec(env_id, num_envs=rows, threads=1, **kw)
    venv.reset(seed=0)
    session, mask = venv.unwrapped._session, np.ones(rows, bool)
    out = []
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(calls):
            session.reset_rows(mask)
        out.append((time.process_time() - t0) / (calls * rows) * 1e6)
    venv.close()
    return out


if __name__ == "__main__":
    main()
