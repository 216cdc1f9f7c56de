"""What the classical baselines cost against one step of the env they drive.

For each baseline (Stanley + PI on VDSim-DLC-v0, the PID ACC and IDM on VDSim-ACC-v0, the
cycle follower on VDSim-Dyno-v0; with ``--cases`` also the delay-compensating ones and the
MPC: ``stanley_dc_pi`` and ``mpc_pi`` predicting across 40 ms, ``acc_pid_dc`` across
200 ms) a block times, in CPU time (single-threaded work):
- K single-observation ``predict`` calls;
- K env steps, replaying the baseline's own actions from one closed-loop episode (its
  first 2,000 steps) from reset(seed=0), resets untimed;
- K/64 ``predict`` calls on a batch of 64 rows;
- for Stanley + PI also the same law written in numpy on the same observation (the
  controller before its C++ kernel, for scale).
Blocks alternate; the script prints each ratio's min / median / max over the blocks
(the target: a single predict at most 0.3 x a step).

    python benchmarks/bench_baselines.py [--repeats 5] [--calls 20000] [--cases a,b,...]
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.controllers import (
    acc_pid,
    acc_pid_dc,
    cycle_follower,
    idm_follower,
    mpc_pi,
    stanley_dc_pi,
    stanley_pi,
)

CASES: list[tuple[str, str, Callable[[Any], Any]]] = [
    ("stanley_pi", "VDSim-DLC-v0", stanley_pi),
    ("acc_pid", "VDSim-ACC-v0", acc_pid),
    ("idm_follower", "VDSim-ACC-v0", idm_follower),
    ("cycle_follower", "VDSim-Dyno-v0", cycle_follower),
    ("stanley_dc_pi", "VDSim-DLC-v0", functools.partial(stanley_dc_pi, delay=0.04)),
    ("mpc_pi", "VDSim-DLC-v0", functools.partial(mpc_pi, delay=0.04)),
    ("acc_pid_dc", "VDSim-ACC-v0", functools.partial(acc_pid_dc, delay=0.2)),
]
DEFAULT_CASES = ("stanley_pi", "acc_pid", "idm_follower", "cycle_follower")


def numpy_stanley_pi(env: Any) -> Callable[[np.ndarray], np.ndarray]:
    """Stanley + PI as numpy on named columns (the law before its kernel)."""
    base = env.unwrapped
    names, scale, v = list(base.obs_names), np.asarray(base.obs_scale, float), base.vehicle
    integral = np.zeros(1)

    def col(obs: np.ndarray, name: str) -> np.ndarray:
        i = names.index(name)
        return obs[:, i] * scale[i]

    def predict(observation: np.ndarray) -> np.ndarray:
        nonlocal integral
        obs = np.asarray(observation, dtype=float).reshape(1, -1)
        e_y, e_psi, vx = col(obs, "e_y"), col(obs, "e_psi"), col(obs, "vx")
        kappa, r = col(obs, "kappa_ref"), col(obs, "r")
        e_front = e_y + v.cg_to_front * np.sin(e_psi)
        ff = np.arctan(v.wheelbase * kappa) + 0.0099 * vx * vx * kappa
        steer = ff - e_psi - np.arctan2(8.0 * e_front, np.abs(vx) + 1.0) - 0.0 * (r - vx * kappa)
        err = col(obs, "v_ref") - vx
        trial = integral + err * base.control_period
        integral = np.where(np.abs(0.5 * err + 0.1 * trial) < 1.0, trial, integral)
        lon = np.clip(0.5 * err + 0.1 * integral, -1.0, 1.0)
        out = np.stack([np.clip(steer / v.max_steer, -1.0, 1.0), lon], axis=1)
        return out.astype(np.float32)[0]

    return predict


def cpu_per_call(fn: Callable[[], Any], calls: int) -> float:
    t0 = time.thread_time()
    for _ in range(calls):
        fn()
    return (time.thread_time() - t0) / calls


def episode_actions(env: Any, policy: Any, limit: int = 2000) -> list[np.ndarray]:
    """The baseline's actions over its closed-loop episode from reset(seed=0)."""
    obs, _ = env.reset(seed=0)
    actions: list[np.ndarray] = []
    for k in range(limit):
        action, _ = policy.predict(obs, episode_start=np.array([k == 0]))
        actions.append(action)
        obs, _, term, trunc, _ = env.step(action)
        if term or trunc:
            break
    return actions


def step_cost(env: Any, actions: list[np.ndarray], calls: int) -> float:
    """CPU seconds per env step replaying ``actions`` from reset(seed=0) (resets untimed)."""
    total, done = 0.0, 0
    while done < calls:
        env.reset(seed=0)
        chunk = actions[:calls - done]
        t0 = time.thread_time()
        for a in chunk:
            env.step(a)
        total += time.thread_time() - t0
        done += len(chunk)
    return total / calls


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES),
                    help=f"comma-separated, of {', '.join(n for n, _, _ in CASES)}")
    args = ap.parse_args()
    chosen = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = sorted(set(chosen) - {n for n, _, _ in CASES})
    if unknown or not chosen:
        ap.error(f"--cases: unknown {unknown}; choose from {[n for n, _, _ in CASES]}")
    if args.calls < 64 or args.repeats < 1:
        ap.error("--calls must be at least 64 (the batch rows time calls // 64 batches of "
                 "64) and --repeats at least 1")
    setups = []
    for name, env_id, make in (c for c in CASES if c[0] in chosen):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=0)
        policy = make(env)
        actions = episode_actions(env, policy)
        getattr(policy, "reset", lambda: None)()  # the timed calls start afresh
        batch = np.repeat(obs[None], 64, axis=0)
        setups.append((name, env, policy, obs, actions, batch))
    ratios: dict[str, list[float]] = {}
    best: dict[str, float] = {}

    def note(key: str, value: float) -> None:
        best[key] = min(best.get(key, float("inf")), value)

    for _ in range(args.repeats):
        for name, env, policy, obs, actions, batch in setups:
            single = cpu_per_call(lambda p=policy, o=obs: p.predict(o), args.calls)
            step = step_cost(env, actions, args.calls)
            rows = cpu_per_call(lambda p=policy, b=batch: p.predict(b), args.calls // 64) / 64
            note(f"{name} predict", single)
            note(f"{name} env step", step)
            note(f"{name} batch row", rows)
            ratios.setdefault(f"{name}: single predict / env step", []).append(single / step)
            ratios.setdefault(f"{name}: batch-of-64 row / env step", []).append(rows / step)
            if name == "stanley_pi":
                ref = numpy_stanley_pi(env)
                numpy_single = cpu_per_call(lambda r=ref, o=obs: r(o), args.calls)
                note("stanley_pi numpy law", numpy_single)
                ratios.setdefault("stanley_pi: numpy law / C++ kernel (single)", []).append(
                    numpy_single / single)
    print(f"best block, us per call ({args.repeats} blocks of {args.calls} calls, CPU time):")
    for key, value in best.items():
        print(f"  {key:32s} {1e6 * value:8.3f}")
    print("ratios, median (min, max) over the blocks:")
    for key, values in ratios.items():
        print(f"  {key:48s} {statistics.median(values):7.3f} "
              f"({min(values):.3f}, {max(values):.3f})")


if __name__ == "__main__":
    main()
