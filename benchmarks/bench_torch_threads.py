"""Side by side, in one run: torch on one thread against torch's default (one per core)
for what training and sweeps do with the package's 64x64 PPO networks: a deterministic
predict on a batch of 64 observations (what a sweep calls every step) and a short PPO
training on VDSim-DLC-v0 (8 envs, 1024-step rollouts), each alone and beside a busy
process that loads one core (another training, a test run).

    python benchmarks/bench_torch_threads.py [--repeats 5] [--timesteps 16384]

Each measurement runs in a fresh process (torch's thread count is process-wide); the
predict timings alternate between the settings and keep the best block. Prints
milliseconds per batch, seconds per training and the ratios default / one thread.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import subprocess
import sys
import time

CHILD = r"""
import json, sys, time
import numpy as np
import torch
threads, what, repeats, timesteps = sys.argv[1:5]
if threads != "default":
    torch.set_num_threads(int(threads))
from vdsim_gym.policies import load_policy, shipped_model
from vdsim_gym.training import train
if what == "predict":
    policy = load_policy(shipped_model("dlc_ppo"))
    obs = np.random.default_rng(0).normal(size=(64, 16)).astype(np.float32)
    policy.predict(obs)
    best = float("inf")
    for _ in range(int(repeats)):
        t = time.perf_counter()
        for _ in range(50):
            policy.predict(obs)
        best = min(best, (time.perf_counter() - t) / 50)
    print(json.dumps({"value": best * 1e3}))
else:
    import tempfile
    with tempfile.TemporaryDirectory() as out:
        t = time.perf_counter()
        train("ppo", "VDSim-DLC-v0", timesteps=int(timesteps), out=out, run_name="b",
              hyperparams={"n_steps": 128}, eval_freq=10**9, checkpoint_freq=0,
              progress_bar=False, tensorboard=False, num_threads=None)
        print(json.dumps({"value": time.perf_counter() - t}))
"""


def _spin(stop: float) -> None:  # a process that keeps one core busy
    x = 0
    while time.perf_counter() < stop:
        x += 1


def measure(threads: str, what: str, repeats: int, timesteps: int) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, threads, what, str(repeats),
                          str(timesteps)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["value"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--timesteps", type=int, default=16_384)
    args = ap.parse_args()
    print(f"{'workload':34s} {'load':>10s} {'default':>10s} {'1 thread':>10s} {'ratio':>7s}")
    for what, unit in (("predict", "ms/batch"), ("train", "s")):
        for busy in (False, True):
            spinner = None
            if busy:
                spinner = mp.Process(target=_spin, args=(time.perf_counter() + 3600,))
                spinner.start()
            try:
                default = measure("default", what, args.repeats, args.timesteps)
                one = measure("1", what, args.repeats, args.timesteps)
            finally:
                if spinner is not None:
                    spinner.terminate()
                    spinner.join()
            label = (f"{what} ({unit})" if what == "predict"
                     else f"train {args.timesteps} steps ({unit})")
            print(f"{label:34s} {'1 core' if busy else 'none':>10s} {default:10.2f} "
                  f"{one:10.2f} {default / one:7.2f}")


if __name__ == "__main__":
    main()
