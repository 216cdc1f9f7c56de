"""Side by side: the env step cost of two builds of vdsim_gym (e.g. before and after a
change), in one run. Each build runs in its own interpreter as a worker; blocks alternate
between them (A, B, A, B, ...) so that the shared machine's load hits both alike, and the
best block of each is compared.

    python benchmarks/compare_builds.py OLD_PYTHON NEW_PYTHON [--repeats 9]

Workloads: a single ``gym.make("VDSim-DLC-v0")`` env (L2, 20 m/s, ISO 3888-1) replaying
the Stanley + PI baseline's episode (recorded once per worker) after a seeded reset, and
``gym.make_vec`` of 64 such envs (threads=1) replaying its first 100 actions on every row
(and the same batches through ``step_core``, the C++ batch step without the Python side).
Prints us per step for each build and NEW / OLD.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

WORKER = r"""
import json, sys, time
import numpy as np, gymnasium as gym
import vdsim_gym  # noqa: F401
env = gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0, level="L2")
vec = gym.make_vec("VDSim-DLC-v0", num_envs=64, threads=1, preset="iso3888_1", speed=20.0)
from vdsim_gym.controllers import stanley_pi
policy = stanley_pi(env)
obs, _ = env.reset(seed=0)
actions, done = [], False
while not done:  # the baseline's episode, replayed in every block
    a = policy.predict(obs[None], episode_start=np.array([not actions]))[0][0]
    actions.append(np.asarray(a, np.float32))
    obs, _, term, trunc, _ = env.step(a)
    done = term or trunc
batches = [np.tile(a, (64, 1)) for a in actions[:100]]
def single():
    env.reset(seed=0)
    t0 = time.perf_counter()
    for a in actions:
        env.step(a)
    return (time.perf_counter() - t0) / len(actions)
def vector():
    vec.reset(seed=0)
    t0 = time.perf_counter()
    for a in batches:
        vec.step(a)
    return (time.perf_counter() - t0) / len(batches)
def vector_core():
    vec.reset(seed=0)
    t0 = time.perf_counter()
    for a in batches:
        vec.step_core(a.astype(np.float64))
    return (time.perf_counter() - t0) / len(batches)
for line in sys.stdin:
    print(json.dumps({"single": single(), "vector": vector(), "vector_core": vector_core()}),
          flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old_python")
    ap.add_argument("new_python")
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    # Outside the repository, so that each interpreter imports its own installed build.
    workers = {name: subprocess.Popen([py, "-c", WORKER], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True,
                                      cwd=tempfile.gettempdir())
               for name, py in (("old", args.old_python), ("new", args.new_python))}
    best: dict[str, dict[str, float]] = {n: {} for n in workers}
    try:
        for _ in range(args.repeats):
            for name, w in workers.items():
                w.stdin.write("go\n")
                w.stdin.flush()
                r = json.loads(w.stdout.readline())
                for k, v in r.items():
                    best[name][k] = min(v, best[name].get(k, float("inf")))
    finally:
        for w in workers.values():
            w.stdin.close()
            w.wait()
    print(f"{'workload':<34}{'old us/step':>12}{'new us/step':>12}{'new/old':>9}")
    for k, label in (("single", "gym.make DLC L2 env.step"),
                     ("vector", "make_vec N=64 threads=1 step"),
                     ("vector_core", "  its C++ batch step alone")):
        o, n = best["old"][k] * 1e6, best["new"][k] * 1e6
        print(f"{label:<34}{o:>12.2f}{n:>12.2f}{n / o:>9.3f}")
    print(f"(best of {args.repeats} alternating blocks each)", file=sys.stderr)


if __name__ == "__main__":
    main()
