"""What ClosedLoopEval's env form costs over a plain gym loop running the same policy.

Both run the Stanley + PI baseline on VDSim-DLC-v0 (iso3888_1, no cone end) in mode B
with a fixed 10 ms computation delay for the same simulated time: the plain loop as
``env.step(policy.predict(obs)[0])`` on an env built with ``latency=fixed(0.01)``, the
evaluation as ``ClosedLoopEval(env=..., policy=..., mode="virtual_async",
latency=fixed(0.01))`` (which also records the trace and the samples); both timed from
their run's ``reset(seed=0)``, ``--runs`` runs per block. Blocks alternate,
each is timed in CPU time (single-threaded work), and the script prints the evaluation's
rate over the loop's, min / median / max over the blocks (the target: at least 0.9), after a
short untimed warm-up of both.

    python benchmarks/bench_eval_overhead.py [--repeats 7] [--duration 5] [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import LatencyModel
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.eval import ClosedLoopEval

KW = {"preset": "iso3888_1", "terminate_on_cone": False}


def plain_loop(duration: float, runs: int) -> tuple[float, int]:
    env = gym.make("VDSim-DLC-v0", latency=LatencyModel.fixed(0.01), **KW)
    policy = stanley_pi(env)
    steps = round(duration / env.unwrapped.control_period)
    env.reset(seed=0)  # the first reset's one-time work, untimed (as the eval's warm-up)
    t0 = time.thread_time()
    for _ in range(runs):
        obs, _ = env.reset(seed=0)  # a run starts from a reset, as the evaluation's does
        for _ in range(steps):
            obs, _, term, trunc, _ = env.step(policy.predict(obs)[0])
            if term or trunc:
                obs, _ = env.reset()
    return time.thread_time() - t0, runs * steps


def evaluation(duration: float, runs: int) -> tuple[float, int]:
    env = gym.make("VDSim-DLC-v0", **KW)
    ev = ClosedLoopEval(env=env, policy=stanley_pi(env), mode="virtual_async",
                        latency=LatencyModel.fixed(0.01), duration=duration, seed=0)
    n = 0
    t0 = time.thread_time()
    for _ in range(runs):
        n += int(ev.run().stats["n_samples"])
    return time.thread_time() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--duration", type=float, default=5.0, help="simulated seconds per run")
    ap.add_argument("--runs", type=int, default=10, help="runs per block (default 10)")
    args = ap.parse_args()
    loop_us, eval_us, ratios = [], [], []
    plain_loop(0.2, 1), evaluation(0.2, 1)  # warm-up (imports and allocations), untimed
    for _ in range(args.repeats):
        t_loop, n_loop = plain_loop(args.duration, args.runs)
        t_eval, n_eval = evaluation(args.duration, args.runs)
        loop_us.append(1e6 * t_loop / n_loop)
        eval_us.append(1e6 * t_eval / n_eval)
        ratios.append(loop_us[-1] / eval_us[-1])  # the evaluation's rate over the loop's
    print(f"plain loop (predict + step): {min(loop_us):.2f} us per sample (best block)")
    print(f"ClosedLoopEval mode B:       {min(eval_us):.2f} us per sample (best block)")
    print(f"ClosedLoopEval / plain loop rate = {statistics.median(ratios):.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}) over {args.repeats} blocks "
          "(aim >= 0.9)")


if __name__ == "__main__":
    main()
