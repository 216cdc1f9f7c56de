"""``gym.make_vec`` of VDSim-DLC-v0 against EnvPool's C++ port of highway-env's
``lane-keeping-v0`` (``envpool.make_gymnasium("LaneKeeping-v0")``, a kinematic bicycle),
side by side in one run.

Throughput at N envs, blocks alternating between the two (VDSim, EnvPool, VDSim, ...):
- on 1 thread: VDSim steps inline (``threads=1``); EnvPool's one worker thread steps
  while the caller waits. CPU time of the whole process (``time.process_time``: every
  thread's), so the work is compared, not where it runs;
- on 2 threads: wall time (``threads=2``, ``num_threads=2``), the throughput a training
  loop sees on this 2-core machine.
VDSim runs three action streams: the Stanley + PI baseline's recorded batch (smooth, what
an evaluation sends), the same plus N(0, 0.3) noise, clipped (PPO-like exploration), and
uniform random actions (what RL's first rollouts send; the default physics sizes its steps by
the error they make, shorter under both noisy streams: docs/PHYSICS.md "Step-size rule"). EnvPool
runs uniform random actions. Episode ends autoreset on both sides (NEXT_STEP).

Construction: N=10,000 envs built and reset once, each case in a fresh interpreter
(alternating), CPU seconds and resident memory per env (``/proc/self/statm``).

Prints env-steps/s per case and VDSim / EnvPool per block pair: median (min, max).

    pip install 'vdsim-gym[bench]'  # or envpool alone; 1.2.5 was measured
    python benchmarks/bench_envpool.py [--num-envs 64] [--steps 200] [--repeats 9]
        [--construct 10000] [--construct-repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

CONSTRUCT = r"""
import json, os, sys, time
kind, n = sys.argv[1], int(sys.argv[2])
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
if kind == "envpool":
    import envpool
    import warnings
    warnings.simplefilter("ignore")  # its spaces warn on float64 bounds
    r0 = rss(); t0 = time.process_time()
    env = envpool.make_gymnasium("LaneKeeping-v0", num_envs=n, num_threads=1, seed=0)
    t1 = time.process_time()
    env.reset()
else:
    import gymnasium as gym
    import vdsim_gym  # noqa: F401
    r0 = rss(); t0 = time.process_time()
    env = gym.make_vec("VDSim-DLC-v0", num_envs=n)
    t1 = time.process_time()
    env.reset(seed=0)
t2 = time.process_time()
print(json.dumps({"build": t1 - t0, "reset": t2 - t1, "kib_per_env": (rss() - r0) / n / 1024}))
"""


def _stats(xs: list[float], fmt: str = ".3f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}, {max(xs):{fmt}})"


def _vdsim(num_envs: int, threads: int, steps: int, env_kwargs: dict[str, Any]
           ) -> tuple[Any, dict[str, np.ndarray]]:
    import gymnasium as gym

    import vdsim_gym  # noqa: F401  (registration)
    from vdsim_gym.controllers import stanley_pi

    venv = gym.make_vec("VDSim-DLC-v0", num_envs=num_envs, threads=threads, **env_kwargs)
    policy = stanley_pi(venv.unwrapped.envs[0])
    obs, _ = venv.reset(seed=0)
    baseline = np.zeros((steps, num_envs, 2), np.float32)
    for t in range(steps):
        baseline[t] = policy.predict(obs, episode_start=np.full(num_envs, t == 0))[0]
        obs, *_ = venv.step(baseline[t])
    rng = np.random.default_rng(0)
    random = rng.uniform(-1.0, 1.0, size=(steps, num_envs, 2)).astype(np.float32)
    # PPO-like exploration: the baseline's actions plus N(0, 0.3), clipped (replayed)
    noise = np.clip(baseline + 0.3 * rng.standard_normal(baseline.shape), -1.0, 1.0)
    return venv, {"baseline": baseline, "random": random, "noise 0.3": noise.astype(np.float32)}


def _envpool(num_envs: int, threads: int, steps: int) -> tuple[Any, np.ndarray]:
    import envpool

    with warnings.catch_warnings():  # its spaces warn on float64 bounds (its reset too)
        warnings.simplefilter("ignore")
        env = envpool.make_gymnasium("LaneKeeping-v0", num_envs=num_envs,
                                     num_threads=threads, seed=0)
        env.reset()
    rng = np.random.default_rng(0)
    return env, rng.uniform(-1.0, 1.0, size=(steps, num_envs, 1)).astype(np.float32)


def _block(env: Any, actions: np.ndarray, clock: Callable[[], float],
           reset: Callable[[], Any]) -> float:
    """Env-steps per second of ``clock`` over one pass of ``actions`` (reset untimed)."""
    reset()
    t0 = clock()
    for a in actions:
        env.step(a)
    return actions.shape[0] * actions.shape[1] / (clock() - t0)


def throughput(num_envs: int, steps: int, repeats: int, env_kwargs: dict[str, Any] | None = None
               ) -> list[str]:
    lines = []
    for threads, clock, what in ((1, time.process_time, "CPU time"),
                                 (2, time.perf_counter, "wall time")):
        venv, streams = _vdsim(num_envs, threads, steps, env_kwargs or {})
        pool, pool_actions = _envpool(num_envs, threads, steps)
        rates: dict[str, list[float]] = {"envpool": [], **{name: [] for name in streams}}

        def vdsim_reset(venv: Any = venv) -> Any:
            return venv.reset(seed=0)

        for _ in range(repeats):
            for name, acts in streams.items():
                rates[name].append(_block(venv, acts, clock, vdsim_reset))
            rates["envpool"].append(_block(pool, pool_actions, clock, pool.reset))
        venv.close()
        pool.close()
        lines.append(f"N={num_envs}, {threads} thread(s), {what}: env-steps/s, median "
                     "(min, max) over the blocks")
        lines.append("  EnvPool LaneKeeping-v0, random actions   "
                     f"{_stats(rates['envpool'], '.0f')}")
        for name in streams:
            ratio = [v / p for v, p in zip(rates[name], rates["envpool"], strict=True)]
            lines.append(f"  VDSim-DLC-v0 L2, {name:8s} actions        "
                         f"{_stats(rates[name], '.0f')}   / EnvPool: {_stats(ratio)}")
    return lines


def construction(n: int, repeats: int) -> list[str]:
    results: dict[str, list[dict[str, float]]] = {"vdsim": [], "envpool": []}
    for _ in range(repeats):
        for kind in results:
            out = subprocess.run([sys.executable, "-c", CONSTRUCT, kind, str(n)],
                                 capture_output=True, text=True, check=True,
                                 cwd=tempfile.gettempdir())
            results[kind].append(json.loads(out.stdout.strip().splitlines()[-1]))
    lines = [f"N={n} envs built and reset, fresh interpreters, {repeats} alternating runs: "
             "median (min, max)"]
    for kind, label in (("vdsim", "VDSim-DLC-v0 make_vec"), ("envpool", "EnvPool LaneKeeping-v0")):
        r = results[kind]
        lines.append(f"  {label:24s} build {_stats([x['build'] for x in r])} s, "
                     f"reset {_stats([x['reset'] for x in r])} s, "
                     f"{_stats([x['kib_per_env'] for x in r], '.1f')} KiB per env")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200, help="steps per block")
    ap.add_argument("--repeats", type=int, default=9, help="blocks per case")
    ap.add_argument("--construct", type=int, default=10_000, help="N for construction (0: skip)")
    ap.add_argument("--construct-repeats", type=int, default=3)
    ap.add_argument("--env-kwargs", type=json.loads, default={},
                    help='gym.make_vec keywords of the VDSim side, e.g. \'{"integrator": "etd2"}\'')
    args = ap.parse_args()
    try:
        import envpool  # noqa: F401
    except ImportError:
        sys.exit("bench_envpool: EnvPool is not installed; pip install envpool")
    for line in throughput(args.num_envs, args.steps, args.repeats, args.env_kwargs):
        print(line, flush=True)
    if args.construct:
        for line in construction(args.construct, args.construct_repeats):
            print(line, flush=True)


if __name__ == "__main__":
    main()
