"""A sweep of the delay-compensated Stanley against the same sweep of Stanley.

``eval.sweep`` of ``stanley_dc_pi`` and of ``stanley_pi`` on VDSim-DLC-v0 over the same
delays and seeds (by default 0, 10, 20, 40 and 60 ms x 64 seeds: 320 episodes each), the
two interleaved in blocks, in CPU time (the sweep runs on one thread here); prints each
block's seconds and the ratio stanley_dc_pi / stanley_pi, min / median / max over the
blocks (the target: at most 2).

    python benchmarks/bench_compensated_sweep.py [--repeats 3] [--seeds 64]
        [--delays 0,10,20,40,60ms]
"""

from __future__ import annotations

import argparse
import statistics
import time

from vdsim_gym.config.delays import parse_delays
from vdsim_gym.controllers import stanley_dc_pi, stanley_pi
from vdsim_gym.eval import sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seeds", type=int, default=64)
    ap.add_argument("--delays", default="0,10,20,40,60ms")
    args = ap.parse_args()
    lats = parse_delays(args.delays)
    cases = {"stanley_pi": stanley_pi, "stanley_dc_pi": stanley_dc_pi}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.repeats):
        for name, factory in cases.items():
            t0 = time.process_time()
            sweep(factory, "VDSim-DLC-v0", latencies=lats, seeds=args.seeds, progress=False)
            times[name].append(time.process_time() - t0)
    episodes = len(lats) * args.seeds
    print(f"VDSim-DLC-v0, {episodes} episodes a sweep ({args.delays} x {args.seeds} seeds), "
          f"CPU s per block:")
    for name, t in times.items():
        print(f"  {name:15s} " + " ".join(f"{x:6.2f}" for x in t))
    ratios = [a / b for a, b in zip(times["stanley_dc_pi"], times["stanley_pi"], strict=True)]
    print(f"stanley_dc_pi / stanley_pi: {statistics.median(ratios):.2f} "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")


if __name__ == "__main__":
    main()
