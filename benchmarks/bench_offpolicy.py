"""What a training step of each off-policy algorithm costs on this machine: SAC, TQC and
CrossQ (sb3-contrib) with their blocks of agents/hyperparams/<algo>.yml, on
VDSim-DLC-v0 (one env, VecNormalize, torch on one thread), each model built and warmed up
once (its learning_starts and a first gradient step untimed), then blocks of ``--steps``
env steps (one gradient step each) timed in CPU time, the algorithms alternating block by
block. Prints CPU ms per training step per algorithm and the ratios to SAC, min / median
/ max over the blocks (docs/BENCHMARKS.md; docs/RESULTS.md cites it for CrossQ's cost).

    python benchmarks/bench_offpolicy.py [--repeats 3] [--steps 200] [--algos sac,tqc,crossq]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

import numpy as np
import torch

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym import make_sb3_vec_env
from vdsim_gym.policies import algo_class
from vdsim_gym.training import load_hyperparams
from vdsim_gym.training.hyperparams import _eval_policy_kwargs

ENV_ID = "VDSim-DLC-v0"


def build(algo: str, warmup: int) -> Any:
    """The algorithm's model on one VDSim-DLC-v0 env with its file's hyperparameters
    (a buffer of 10 000), past its warm-up."""
    from stable_baselines3.common.vec_env import VecNormalize

    block = load_hyperparams(algo, ENV_ID)
    for key in ("n_timesteps", "normalize", "n_envs"):
        block.pop(key, None)
    policy = block.pop("policy")
    if isinstance(block.get("policy_kwargs"), str):
        block["policy_kwargs"] = _eval_policy_kwargs(block["policy_kwargs"], "policy_kwargs")
    block.update(buffer_size=10_000, learning_starts=warmup)
    venv = VecNormalize(make_sb3_vec_env(ENV_ID, 1, seed=0))
    model = algo_class(algo)(policy, venv, seed=0, device="cpu", **block)
    model.learn(warmup + 1, progress_bar=False)  # the warm-up and one gradient step
    return model


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=200, help="env steps per timed block")
    p.add_argument("--algos", default="sac,tqc,crossq")
    p.add_argument("--warmup", type=int, default=300)
    args = p.parse_args()
    torch.set_num_threads(1)
    algos = [a.strip() for a in args.algos.split(",") if a.strip()]
    models = {a: build(a, args.warmup) for a in algos}
    per_step: dict[str, list[float]] = {a: [] for a in algos}
    for r in range(args.repeats):
        order = algos[r % len(algos):] + algos[:r % len(algos)]  # alternate who goes first
        for a in order:
            t = time.process_time()
            models[a].learn(args.steps, reset_num_timesteps=False, progress_bar=False)
            per_step[a].append((time.process_time() - t) / args.steps)
    print(f"CPU ms per training step on {ENV_ID} (one env, one gradient step per step, "
          f"torch on 1 thread), {args.repeats} blocks of {args.steps} steps:")
    for a in algos:
        v = np.array(per_step[a]) * 1e3
        print(f"  {a:>7}: median {np.median(v):7.2f}  (min {v.min():.2f}, max {v.max():.2f})")
    if "sac" in algos:
        print("ratios to SAC, median (min, max) over the blocks:")
        for a in algos:
            if a == "sac":
                continue
            q = [x / s for x, s in zip(per_step[a], per_step["sac"], strict=True)]
            print(f"  {a} / sac: {statistics.median(q):.2f} ({min(q):.2f}, {max(q):.2f})")


if __name__ == "__main__":
    main()
