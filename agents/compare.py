#!/usr/bin/env python3
"""Compare trained policies and baselines across computation delays (docs/TRAINING.md).

    python agents/compare.py --env VDSim-DLC-v0 --policies runs/<run>/model.zip stanley
                             --delays 0,10,20,40ms --seeds 64 [--out compare_out]

Each policy (a run folder or model.zip from agents/train.py, whose observation
normalization is applied; a saved SB3 model; or a baseline spec: stanley[:k=v,...],
acc_pid, idm, cycle_follower) is swept over the delays and seeds on the C++ vector
session; the summary table is printed, and sweep.csv, sweep_summary.csv and sweep.png
(each metric against the delay with 95 % interval bands) are written. This file is
`vdsim-gym compare` under its own name (vdsim_gym.cli.compare; the sweep is
`vdsim-gym sweep`'s, vdsim_gym.eval.sweeps.compare.run_sweep).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

PROG = "agents/compare.py"


def build_parser() -> Any:
    from vdsim_gym.cli.main import command_parser

    return command_parser("compare", PROG)


def main(argv: Sequence[str] | None = None) -> int:
    from vdsim_gym.cli.main import script

    return script("compare", PROG, argv)


if __name__ == "__main__":
    sys.exit(main())
