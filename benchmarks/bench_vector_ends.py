"""``gym.make_vec`` with episode ends against the raw C++ batch step of the same work.

Random actions (seeded) drive N envs of each task at L2 until episodes end on their own
(off the road, cones, collisions, the time limit); the vector env autoresets (NEXT_STEP,
Gymnasium's default; ``--autoreset same_step``: SAME_STEP, the ended rows reset within the
step that ended them, their final observation and info reported). The raw reference
replays the very same work: the same actions, the same rows stepped at each step through
the C++ batch step alone (``VectorEnvCore.step`` with the rows' mask), and the rows the
vector env reset reset the same way but outside the timing. So the ratio raw / make_vec
is the share of the batch step's speed that the vector env keeps with its episode ends:
its Python per step, the ending rows' info and their resets. Single-threaded
(threads=1), CPU time, blocks interleaved; min / median / max of the ratio over the
blocks (the target: at least 0.95 at N >= 8).

    python benchmarks/bench_vector_ends.py [--repeats 5] [--steps 20000]
        [--envs VDSim-DLC-v0,VDSim-PathFollow-v0,VDSim-ACC-v0,VDSim-Dyno-v0] [--sizes 8,64,512]
        [--autoreset next_step|same_step] [--episode-steps K]

``--episode-steps K`` ends every row's episode after K steps at most (``max_episode_steps``;
frequent ends: K = 20, every row ends every 20 steps, so a reset's cost shows).
It also times the same vector env without that limit on the same actions, interleaved,
and prints free / make_vec: the share of its throughput without the ends that the env
keeps with them (the target: at least 0.9), with the free run's own ends per step (natural
ends: few under ``--actions mild``, small actions N(0, 0.1) clipped; ``uniform``: the
default, uniform in [-1, 1]).
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np

import vdsim_gym.envs  # noqa: F401  (registration)
from vdsim_gym.envs.vector import VDSimVectorEnv

LEVEL_KW: dict[str, dict[str, Any]] = {
    "VDSim-DLC-v0": {"level": "L2"},
    "VDSim-PathFollow-v0": {"level": "L2"},
    "VDSim-ACC-v0": {"level": "L2"},
    "VDSim-Dyno-v0": {},
}


def make_vec_block(venv: VDSimVectorEnv, actions: np.ndarray
                   ) -> tuple[float, list[np.ndarray], int]:
    """CPU seconds of the vector env's steps; the rows reset at each step; episode ends."""
    venv.reset(seed=0)
    resets: list[np.ndarray] = []
    ends = 0
    pending = np.zeros(venv.num_envs, bool)
    total = 0.0
    for a in actions:  # each step timed alone, as raw_block times its batch steps
        t0 = time.thread_time()
        _, _, term, trunc, _ = venv.step(a)
        total += time.thread_time() - t0
        resets.append(pending)
        pending = term | trunc
        ends += int(pending.sum())
    return total, resets, ends


def raw_block(venv: VDSimVectorEnv, actions: np.ndarray, resets: list[np.ndarray],
              same_step: bool = False) -> float:
    """CPU seconds of the C++ batch step alone over the same rows and actions. NEXT_STEP:
    the rows that ended at the previous step are reset and skip this one; SAME_STEP: they
    were reset right after it, and every row steps."""
    venv.reset(seed=0)
    session = venv._session
    obs, rew, flags, terms, info = venv._obs, venv._rewards, venv._flags, venv._terms, venv._info
    total = 0.0
    every = np.ones(venv.num_envs, np.uint8)
    for a, reset in zip(actions, resets, strict=True):
        if reset.any():
            for i in np.flatnonzero(reset).tolist():
                venv._reset_row(i, None, None)
        mask = every if same_step else (~reset).view(np.uint8)
        t0 = time.thread_time()
        session.step(a, mask, obs, rew, flags, terms, info)
        total += time.thread_time() - t0
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20000, help="env steps per block (N x T)")
    ap.add_argument("--envs", default=",".join(LEVEL_KW))
    ap.add_argument("--sizes", default="8,64,512")
    ap.add_argument("--autoreset", choices=("next_step", "same_step"), default="next_step",
                    help="the vector env's autoreset mode (Gymnasium's default: next_step)")
    ap.add_argument("--episode-steps", type=int, default=None,
                    help="max_episode_steps of the vector env (default: the registration's)")
    ap.add_argument("--actions", choices=("uniform", "mild"), default="uniform",
                    help="uniform in [-1, 1], or mild: N(0, 0.1) clipped")
    args = ap.parse_args()
    same = args.autoreset == "same_step"
    limited = args.episode_steps is not None
    head = (f"{'env':22s} {'N':>4s} {'ends/step':>9s} {'make_vec us/env-step':>21s} "
            f"{'raw us/env-step':>16s}  raw / make_vec: median (min, max)")
    if limited:
        head += "  | free ends/step  free / make_vec: median (min, max)"
    print(head)
    for env_id in args.envs.split(","):
        kw = LEVEL_KW.get(env_id, {})
        for n in (int(v) for v in args.sizes.split(",")):
            limit: dict[str, Any] = {"max_episode_steps": args.episode_steps} if limited else {}
            venv = VDSimVectorEnv(env_id, n, threads=1, autoreset_mode=args.autoreset,
                                  **limit, **kw)
            raw = VDSimVectorEnv(env_id, n, threads=1, **kw)
            free = VDSimVectorEnv(env_id, n, threads=1, autoreset_mode=args.autoreset,
                                  max_episode_steps=None, **kw) if limited else None
            steps = max(args.steps // n, 200)
            rng = np.random.default_rng(0)
            shape = (steps, n, venv.single_action_space.shape[0])
            actions = rng.uniform(-1.0, 1.0, size=shape) if args.actions == "uniform" \
                else np.clip(rng.normal(0.0, 0.1, size=shape), -1.0, 1.0)
            ratios, env_us, raw_us, free_ratios = [], [], [], []
            ends = free_ends = 0
            for _ in range(args.repeats):
                t_env, resets, ends = make_vec_block(venv, actions)
                t_raw = raw_block(raw, actions, resets, same)
                ratios.append(t_raw / t_env)
                env_us.append(1e6 * t_env / (steps * n))
                raw_us.append(1e6 * t_raw / (steps * n))
                if free is not None:
                    t_free, _, free_ends = make_vec_block(free, actions)
                    free_ratios.append(t_free / t_env)
            line = (f"{env_id:22s} {n:4d} {ends / steps:9.3f} {min(env_us):21.3f} "
                    f"{min(raw_us):16.3f}  {statistics.median(ratios):.3f} "
                    f"({min(ratios):.3f}, {max(ratios):.3f})")
            if free is not None:
                line += (f"  | {free_ends / steps:14.3f}  {statistics.median(free_ratios):.3f} "
                         f"({min(free_ratios):.3f}, {max(free_ratios):.3f})")
                free.close()
            venv.close()
            raw.close()
            print(line, flush=True)


if __name__ == "__main__":
    main()
