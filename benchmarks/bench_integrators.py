"""Side by side, in one run: the cost of an L2 (and L1) VDSim-DLC-v0 step in the reference
configuration (integrator="heun", 0.5 ms substeps), with integrator="semi_implicit" at
2.5 and 5 ms substeps and on the 0.5 ms grid with steps of up to 5 ms (multirate), with
integrator="etd2" (second order, steps sized by their error) and with the default
(etd3, third order, docs/PHYSICS.md), through gym.make, the env's C++ core alone, and
the vector env's C++ batch step (N = 64, one thread). Prints CPU microseconds per step
(median, min-max over the repeats), the ratio of the medians to the reference, and the
ratio of the default to etd2 block by block (median [min-max]; in each block the two ran
back to back).

    python benchmarks/bench_integrators.py [--repeats 7]

Blocks alternate between the configurations (single-threaded work, timed in CPU time).
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import vdsim_gym  # noqa: F401  (registration)
from vdsim_gym.controllers import stanley_pi
from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR

CONFIGS = (("heun 0.5 ms (reference)", {"integrator": "heun"}),
           ("semi_implicit 2.5 ms", {"integrator": "semi_implicit", "substep_dt": 2.5e-3,
                                     "max_step": 2.5e-3}),
           ("semi_implicit 5 ms", {"integrator": "semi_implicit", "substep_dt": 5e-3}),
           ("semi_implicit (max_step 5 ms)", {"integrator": "semi_implicit"}),
           ("etd2 (max_step 5 ms)", {"integrator": "etd2"}),
           (f"default: {DEFAULT_INTEGRATOR}", {}))
PREVIOUS = "etd2 (max_step 5 ms)"  # the second-order method the default improves on


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    for level in ("L2", "L1"):
        base = gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0, level=level,
                        integrator="heun")
        policy = stanley_pi(base)
        obs, _ = base.reset(seed=0)
        actions = []
        while True:  # the baseline's episode, replayed by every configuration
            a = policy.predict(obs)[0]
            actions.append(a)
            obs, _, term, trunc, _ = base.step(a)
            if term or trunc:
                break
        envs = [gym.make("VDSim-DLC-v0", preset="iso3888_1", speed=20.0, level=level,
                         terminate_on_cone=False, **kw) for _, kw in CONFIGS]
        vecs = [gym.make_vec("VDSim-DLC-v0", num_envs=64, threads=1, preset="iso3888_1",
                             speed=20.0, level=level, terminate_on_cone=False, **kw)
                for _, kw in CONFIGS]
        batch = np.repeat(np.asarray(actions[:100], np.float64)[:, None, :], 64, axis=1)
        times: dict[tuple[str, str], list[float]] = {
            (name, what): [] for name, _ in CONFIGS for what in ("env", "core", "vec")}
        for _ in range(args.repeats):
            for (name, _), env, vec in zip(CONFIGS, envs, vecs, strict=True):
                env.reset(seed=0)
                t0 = time.process_time()
                for a in actions:
                    env.step(a)
                times[name, "env"].append((time.process_time() - t0) / len(actions))
                u = env.unwrapped
                env.reset(seed=0)
                step, o, te, inf = u._core.step, u._obs, u._terms, u._info
                acts = [tuple(map(float, a)) for a in actions]
                t0 = time.process_time()
                for a0, a1 in acts:
                    step(a0, a1, o, te, inf)
                times[name, "core"].append((time.process_time() - t0) / len(acts))
                vec.reset(seed=0)
                t0 = time.process_time()
                for b in batch:
                    vec.step_core(b)
                times[name, "vec"].append((time.process_time() - t0) / (len(batch) * 64))
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{level}, VDSim-DLC-v0 (ISO 3888-1, 20 m/s), {args.repeats} blocks, CPU us per "
              "env step: median [min-max] (cost relative to the reference; to etd2 per block: "
              "median [min-max]):")
        ref = CONFIGS[0][0]
        for name, _ in CONFIGS:
            cells = []
            for what in ("env", "core", "vec"):
                # the ratio to etd2 block by block (the two ran back to back in each
                # block): median [min-max]
                r = np.array(times[name, what]) / np.array(times[PREVIOUS, what])
                cells.append(f"{what} {med[name, what] * 1e6:6.2f} "
                             f"[{min(times[name, what]) * 1e6:.2f}-"
                             f"{max(times[name, what]) * 1e6:.2f}] "
                             f"({med[name, what] / med[ref, what]:.2f}; "
                             f"{np.median(r):.2f} [{r.min():.2f}-{r.max():.2f}])")
            print(f"  {name:<30} " + "  ".join(cells))


if __name__ == "__main__":
    main()
