"""Side by side: the env step cost of two builds of vdsim_gym (e.g. before and after a
change), in one run. Each build runs in its own interpreter as a worker; blocks alternate
between them (A, B, A, B, ...) so that the shared machine's load hits both alike; the
ratio of each block pair is reported as median (min, max), beside each build's best
block.

    python benchmarks/compare_builds.py OLD_PYTHON NEW_PYTHON [--repeats 9]

Workloads: a single ``gym.make("VDSim-DLC-v0")`` env (L2, 20 m/s, ISO 3888-1) replaying
the Stanley + PI baseline's episode (recorded once per worker) after a seeded reset, and
``gym.make_vec`` of 64 such envs (threads=1) replaying its first 100 actions on every row
(and the same batches through ``step_core``, the C++ batch step without the Python side),
and the physics alone: the episode's commands replayed on the env's core session
(``command_now`` and ``advance(40)`` per 20 ms step, CPU time, best of five); the same
physics under 300 seeded random commands held for 20 ms each (RL's first rollouts: the
event rule's one-tick steps; a seeded reset every 25), best of five; and
``VDSim-PathFollow-v0``'s reset (a new random course each: 200 resets after a seeded one).
Prints CPU us per step for each build (thread time: every workload is single-threaded)
and NEW / OLD.
"""

from __future__ import annotations

import argparse
import json
import statistics
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
core = env.unwrapped._core.session
commands = []  # what reached the vehicle at each step (sync: the command in force)
env.reset(seed=0)
for a in actions:
    env.step(a)
    commands.append(core.command)
def physics():
    env.reset(seed=0)
    t0 = time.thread_time()
    for c in commands:
        core.command_now(*c)
        core.advance(40)
    return (time.thread_time() - t0) / len(commands)
def single():
    env.reset(seed=0)
    t0 = time.thread_time()
    for a in actions:
        env.step(a)
    return (time.thread_time() - t0) / len(actions)
def vector():
    vec.reset(seed=0)
    t0 = time.thread_time()
    for a in batches:
        vec.step(a)
    return (time.thread_time() - t0) / len(batches)
def vector_core():
    vec.reset(seed=0)
    t0 = time.thread_time()
    for a in batches:
        vec.step_core(a.astype(np.float64))
    return (time.thread_time() - t0) / len(batches)
random_cmds = [env.unwrapped.action_to_command(a)
               for a in np.random.default_rng(0).uniform(-1, 1, size=(300, 2))]
def physics_random():
    t = 0.0
    for k, c in enumerate(random_cmds):
        if k % 25 == 0:
            env.reset(seed=k)
        t0 = time.thread_time()
        core.command_now(*c)
        core.advance(40)
        t += time.thread_time() - t0
    return t / len(random_cmds)
path_env = gym.make("VDSim-PathFollow-v0")
def path_reset():
    path_env.reset(seed=0)
    t0 = time.thread_time()
    for _ in range(200):
        path_env.reset()
    return (time.thread_time() - t0) / 200
for line in sys.stdin:
    print(json.dumps({"single": single(), "vector": vector(), "vector_core": vector_core(),
                      "physics": min(physics() for _ in range(5)),
                      "physics_random": min(physics_random() for _ in range(5)),
                      "path_reset": path_reset()}), flush=True)
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
    blocks: dict[str, list[dict[str, float]]] = {n: [] for n in workers}
    try:
        for _ in range(args.repeats):
            for name, w in workers.items():
                w.stdin.write("go\n")
                w.stdin.flush()
                blocks[name].append(json.loads(w.stdout.readline()))
    finally:
        for w in workers.values():
            w.stdin.close()
            w.wait()
    print(f"{'workload':<34}{'old us/step':>12}{'new us/step':>12}"
          f"  new/old per block pair: median (min, max)")
    for k, label in (("single", "gym.make DLC L2 env.step"),
                     ("vector", "make_vec N=64 threads=1 step"),
                     ("vector_core", "  its C++ batch step alone"),
                     ("physics", "L2 physics alone per 20 ms step"),
                     ("physics_random", "  the same, random commands"),
                     ("path_reset", "PathFollow reset (per reset)")):
        old = [b[k] for b in blocks["old"]]
        new = [b[k] for b in blocks["new"]]
        ratios = [n / o for o, n in zip(old, new, strict=True)]
        print(f"{label:<34}{min(old) * 1e6:>12.2f}{min(new) * 1e6:>12.2f}"
              f"  {statistics.median(ratios):.3f} ({min(ratios):.3f}, {max(ratios):.3f})")
    print(f"(us/step: the best of {args.repeats} alternating blocks each)", file=sys.stderr)

if __name__ == "__main__":
    main()
