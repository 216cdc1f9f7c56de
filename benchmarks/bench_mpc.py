"""What the MPC baseline's predict costs against one step of the env it drives.

``mpc_pi`` on VDSim-DLC-v0 (L2), predicting across ``--delay`` (40 ms by default, as in
bench_baselines.py), its road-wheel rate bound ``--max-steer-rate`` (the MPC's default,
1 rad/s: no bound binds on this episode; 0.15 rad/s: some rows go to OSQP). Its
closed-loop episode from reset(seed=0) is recorded first: its observations and actions.
A block then times, in CPU time (``time.thread_time``: the work is single-threaded):
- single-observation ``predict`` on each recorded observation in order (episode_start on
  the first), the controller's per-speed QPs kept from the recording (a sweep's or a
  training's steady state);
- the same with a fresh controller every pass, no QP built yet (every model speed's QP
  built on its first use: the cost of the first controller's first episode), and with the
  QPs of the controllers before it kept (``mpc.SHARED_QPS``: a sweep's next cell);
- ``predict`` on batches of 64 rows, row j of call t the recorded observation at step
  (t + j * steps / 64) mod steps (64 envs at different points of the episode, so at
  different speeds), per row;
- env steps replaying the MPC's recorded actions from reset(seed=0) (resets untimed).
Blocks alternate; the script prints the best block of each, each ratio's min / median /
max over the blocks (the target: the MPC at most 10 env steps per row) and how many rows
went to OSQP (the rest met every bound with the unconstrained minimizer).

    python benchmarks/bench_mpc.py [--repeats 5] [--passes 3] [--delay 0.04]
        [--max-steer-rate 1.0]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.controllers import mpc as mpc_module
from vdsim_gym.controllers import mpc_pi

ENV_ID = "VDSim-DLC-v0"
BATCH = 64


def record(env: Any, policy: Any) -> tuple[np.ndarray, list[np.ndarray]]:
    """The observations and actions of the policy's closed-loop episode from seed 0."""
    obs, _ = env.reset(seed=0)
    observations, actions = [], []
    done, first = False, True
    while not done:
        action, _ = policy.predict(obs, episode_start=np.array([first]))
        observations.append(obs)
        actions.append(action)
        obs, _, term, trunc, _ = env.step(action)
        done, first = term or trunc, False
    return np.stack(observations), actions


def single_cost(policy: Any, observations: np.ndarray, passes: int) -> float:
    """CPU seconds per single-observation predict over the episode's observations."""
    starts = [np.array([k == 0]) for k in range(len(observations))]
    t0 = time.thread_time()
    for _ in range(passes):
        for obs, start in zip(observations, starts, strict=True):
            policy.predict(obs, episode_start=start)
    return (time.thread_time() - t0) / (passes * len(observations))


def cold_cost(make: Any, observations: np.ndarray, passes: int) -> float:
    """As ``single_cost``, a fresh controller ``make()`` each pass (its build untimed) with
    no QP built yet (the process's shared QPs cleared)."""
    total = 0.0
    for _ in range(passes):
        mpc_module.SHARED_QPS.clear()
        total += single_cost(make(), observations, 1)
    return total / passes


def warm_fresh_cost(make: Any, observations: np.ndarray, passes: int) -> float:
    """As ``single_cost``, a fresh controller ``make()`` each pass, the QPs built by the
    controllers before it kept (a sweep's next cell)."""
    total = 0.0
    for _ in range(passes):
        total += single_cost(make(), observations, 1)
    return total / passes


def batch_row_cost(policy: Any, batches: list[np.ndarray], passes: int) -> float:
    """CPU seconds per row of the 64-row batch predicts."""
    t0 = time.thread_time()
    for _ in range(passes):
        for batch in batches:
            policy.predict(batch)
    return (time.thread_time() - t0) / (passes * len(batches) * BATCH)


def step_cost(env: Any, actions: list[np.ndarray], passes: int) -> float:
    """CPU seconds per env step replaying ``actions`` from reset(seed=0), resets untimed."""
    total = 0.0
    for _ in range(passes):
        env.reset(seed=0)
        t0 = time.thread_time()
        for a in actions:
            env.step(a)
        total += time.thread_time() - t0
    return total / (passes * len(actions))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--passes", type=int, default=3,
                    help="passes over the recorded episode per timing in a block")
    ap.add_argument("--delay", type=float, default=0.04)
    ap.add_argument("--max-steer-rate", type=float, default=1.0)
    args = ap.parse_args()
    if args.repeats < 1 or args.passes < 1:
        ap.error("--repeats and --passes must be at least 1")
    env = gym.make(ENV_ID)

    def make() -> Any:
        return mpc_pi(env, delay=args.delay, mpc={"max_steer_rate": args.max_steer_rate})

    policy = make()
    observations, actions = record(env, policy)
    steps = len(observations)
    batches = [observations[(t + np.arange(BATCH) * steps // BATCH) % steps]
               for t in range(steps)]
    batch_policy = make()
    for batch in batches:  # its per-speed QPs built once, untimed
        batch_policy.predict(batch)

    def osqp_rows() -> int:
        return sum(s.osqp_solves for p in (policy, batch_policy) for s in p.lateral._solvers)

    before = osqp_rows()
    best: dict[str, float] = {}
    ratios: dict[str, list[float]] = {}
    for _ in range(args.repeats):
        step = step_cost(env, actions, args.passes)
        costs = {"single predict": single_cost(policy, observations, args.passes),
                 "single predict, fresh controller": cold_cost(make, observations,
                                                               args.passes),
                 "single predict, fresh controller, QPs kept": warm_fresh_cost(
                     make, observations, args.passes),
                 "batch-of-64 row": batch_row_cost(batch_policy, batches, args.passes)}
        best["env step"] = min(best.get("env step", float("inf")), step)
        for key, value in costs.items():
            best[key] = min(best.get(key, float("inf")), value)
            ratios.setdefault(f"{key} / env step", []).append(value / step)
    timed_rows = args.repeats * args.passes * steps * (1 + BATCH)
    print(f"mpc_pi on {ENV_ID}, delay {1e3 * args.delay:g} ms, max_steer_rate "
          f"{args.max_steer_rate:g} rad/s, its episode from seed 0: {steps} steps; "
          f"{args.repeats} blocks of {args.passes} passes, CPU time")
    print("best block, us per call (per row for the batch):")
    for key, value in best.items():
        print(f"  {key:36s} {1e6 * value:8.2f}")
    print("ratios, median (min, max) over the blocks:")
    for key, values in ratios.items():
        print(f"  {key:46s} {statistics.median(values):7.2f} "
              f"({min(values):.2f}, {max(values):.2f})")
    print(f"rows solved by OSQP (a bound met): {osqp_rows() - before} of {timed_rows} "
          "timed (kept controllers)")


if __name__ == "__main__":
    main()
