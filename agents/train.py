#!/usr/bin/env python3
"""Train a stable-baselines3 agent on a VDSim env (docs/TRAINING.md).

    python agents/train.py --algo ppo --env VDSim-DLC-v0 [--latency uniform:0:40ms]
                           [--randomize mass=0.9:1.15,friction=0.8:1.0,latency=0:40ms]
                           [--action-history K] [--timesteps N] [--seed S] [--out runs]

Hyperparameters come from agents/hyperparams/<algo>.yml (rl-zoo3's format); the run
folder holds the model, its normalization statistics and the exact configuration. This
file is `vdsim-gym train` under its own name (the options and errors are
vdsim_gym.cli.train's; the logic is vdsim_gym.training.train).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

PROG = "agents/train.py"


def build_parser() -> Any:
    from vdsim_gym.cli.main import command_parser

    return command_parser("train", PROG)


def main(argv: Sequence[str] | None = None) -> int:
    from vdsim_gym.cli.main import script

    return script("train", PROG, argv)


if __name__ == "__main__":
    sys.exit(main())
