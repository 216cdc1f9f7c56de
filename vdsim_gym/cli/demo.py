"""``vdsim-gym demo``: the baseline through the double lane changes
(``vdsim_gym.eval.demo.run_demo``)."""

from __future__ import annotations

import argparse
from typing import Any

from vdsim_gym.cli.options import _number_in, _out_dir, add_integrator_option
from vdsim_gym.eval.demo import SCENARIOS as DEMO_PRESETS


def _presets(text: str) -> list[str]:
    names = [p.strip() for p in text.split(",")]
    for name in names:
        if name not in DEMO_PRESETS:
            raise argparse.ArgumentTypeError(
                f"unknown preset {name!r}; choose from {', '.join(DEMO_PRESETS)} "
                "(comma-separated)")
    return names


def _run(args: argparse.Namespace) -> int:
    from vdsim_gym.eval.demo import run_demo

    run_demo(out=args.out, presets=args.presets, speed=args.speed, level=args.level,
             integrator=args.integrator)
    return 0


def add_parser(sub: Any) -> None:
    demo = sub.add_parser("demo", help="baseline through the double lane changes: table + PNG")
    demo.add_argument("--out", type=_out_dir, default="demo_out",
                      help="output folder (default: demo_out)")
    demo.add_argument("--presets", type=_presets, default=",".join(DEMO_PRESETS),
                      help=f"comma-separated DLC presets (default: {','.join(DEMO_PRESETS)})")
    demo.add_argument("--speed", type=_number_in("m/s"), default=None,
                      help="entry speed [m/s] (default: each preset's scenario file)")
    demo.add_argument("--level", default="L2", choices=("L1", "L2"))
    add_integrator_option(demo)
    demo.set_defaults(func=_run)


__all__ = ["add_parser"]
