"""What a step costs under the commands RL sends (uniform random actions in its first
rollouts, PPO-like exploration noise later) against the baseline's smooth episode, per
integrator.

VDSim-DLC-v0 at L2 (no cone end; ``--case acc``: VDSim-ACC-v0's follow scenario at L2,
``longitudinal="accel"``), each integrator stepping the same action streams from
reset(seed=0): the baseline's closed-loop actions (replayed; Stanley + PI, or the ACC's
PID), uniform random actions in the action box (seeded: full throttle and full brake,
hard steer, changing every 20 ms), and the baseline's actions plus N(0, sigma) noise,
sigma 0.3 and 0.5, clipped (the noisy-command gate's streams,
``vdsim_gym.eval.noisy_gate``, seed 0). Episode ends reset untimed. Blocks interleave,
CPU time; each figure is the best block, each ratio min / median / max over the blocks.

    python benchmarks/bench_random_actions.py [--case dlc|acc] [--repeats 5] [--steps 2000]
        [--extra '{"etd3 20 ms": {"max_step": 0.02}}']

Why it matters: PPO's rollouts are such actions, and ``etd3`` (the default) and ``etd2``
(the default before it) size their steps by the error they make (docs/PHYSICS.md,
"Step-size rule"): shorter under hard, changing commands. The ``etd3 tol 6e-4`` rows take
a 3x looser tolerance (``step_tol=6e-4``), to show what the tolerance costs.
"""

from __future__ import annotations

import argparse
import json
import statistics
from typing import Any

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.bench.throughput import baseline_episode, replay_seconds
from vdsim_gym.eval.noisy_gate import CASES as NOISY_CASES
from vdsim_gym.eval.noisy_gate import record_stream

# name: gym.make physics keywords; "etd3 tol 6e-4": the default with a 3x looser step-size
# tolerance (docs/PHYSICS.md, "Step-size rule").
CONFIGS: dict[str, dict[str, Any]] = {
    "etd3": {"integrator": "etd3"},
    "etd3 tol 6e-4": {"integrator": "etd3", "step_tol": 6e-4},
    "etd2": {"integrator": "etd2"},
    "semi_implicit": {"integrator": "semi_implicit"},
    "heun": {"integrator": "heun"},
}


def cost(env: Any, actions: np.ndarray) -> float:
    """CPU seconds per step over ``actions`` from reset(seed=0), resets untimed."""
    return replay_seconds(env, actions) / len(actions)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--case", choices=("dlc", "acc"), default="dlc")
    ap.add_argument("--extra", type=json.loads, default={},
                    help="more configurations beside the fixed ones: a JSON object of name -> "
                         "gym.make physics keywords")
    args = ap.parse_args()
    configs = {**CONFIGS, **args.extra}
    case = NOISY_CASES[args.case]
    if args.case == "dlc":
        envs = {name: gym.make("VDSim-DLC-v0", level="L2", terminate_on_cone=False, **kw)
                for name, kw in configs.items()}
        smooth = np.array(baseline_episode(envs["heun"]))
    else:
        envs = {name: gym.make(case.env_id, level="L2", **case.env_kwargs, **kw)
                for name, kw in configs.items()}
        smooth = record_stream(case, "L2", "noise_0", seed=0)
    dim = smooth.shape[1]
    space = envs["heun"].action_space
    smooth = np.resize(smooth, (args.steps, dim)).astype(np.float32)
    rand = np.random.default_rng(0).uniform(space.low, space.high, (args.steps, dim))
    streams = {"baseline": smooth, "random": rand.astype(np.float32)}
    for sigma in ("0.3", "0.5"):  # PPO-like: the baseline's action plus N(0, sigma)
        noisy = record_stream(case, "L2", f"noise_{sigma}", seed=0)
        streams[f"noise {sigma}"] = np.resize(noisy, (args.steps, dim)).astype(np.float32)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.repeats):
        for name, env in envs.items():
            for label, actions in streams.items():
                times.setdefault((name, label), []).append(cost(env, actions))
    print(f"{case.env_id} L2: us per env step (best of {args.repeats} blocks, {args.steps} "
          f"steps each):")
    for (name, label), values in times.items():
        print(f"  {name:14s} {label:9s} {1e6 * min(values):8.2f}")

    def ratio(a: tuple[str, str], b: tuple[str, str], what: str) -> None:
        r = [x / y for x, y in zip(times[a], times[b], strict=True)]
        print(f"  {what:54s} {statistics.median(r):6.2f} ({min(r):.2f}, {max(r):.2f})")

    print("ratios, median (min, max) over the blocks:")
    for name in configs:
        for label in streams:
            if label != "baseline":
                ratio((name, label), (name, "baseline"), f"{name}: {label} / baseline actions")
    for label in streams:
        ratio(("etd3", label), ("etd2", label), f"{label}: etd3 / etd2")
    ratio(("etd3", "random"), ("semi_implicit", "random"), "random actions: etd3 / semi_implicit")
    ratio(("etd3", "noise 0.3"), ("semi_implicit", "noise 0.3"),
          "noise 0.3: etd3 / semi_implicit")
    for name in args.extra:
        for label in streams:
            ratio((name, label), ("etd3", label), f"{label}: {name} / etd3")
    ratio(("etd3 tol 6e-4", "random"), ("etd3", "random"),
          "random actions: etd3 step_tol 6e-4 / etd3")
    ratio(("heun", "random"), ("etd3", "random"), "random actions: heun 0.5 ms / etd3")


if __name__ == "__main__":
    main()
