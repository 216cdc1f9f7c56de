"""Option types of the ``vdsim-gym`` parser: each checks its value before any work and
raises ``argparse.ArgumentTypeError`` with a message that names the fix."""

from __future__ import annotations

import argparse
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from vdsim_gym.sim.physics_options import DEFAULT_INTEGRATOR, INTEGRATORS


def _int_at_least(lo: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not an integer; give a whole number >= {lo}") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"must be an integer >= {lo}, got {value}")
        return value
    return parse


def _number_in(unit: str, hi: float = math.inf, why: str = "",
               allow_zero: bool = False) -> Callable[[str], float]:
    """A finite number > 0 (>= 0 with ``allow_zero``; and <= ``hi``), in ``unit``; ``why``
    explains the bound."""
    lo = ">= 0" if allow_zero else "> 0"
    bound = lo if hi == math.inf else f"{lo} and <= {hi:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not (0 <= value if allow_zero else 0 < value) \
                or not value <= hi:
            raise argparse.ArgumentTypeError(
                f"must be a number {bound} {unit}, got {text!r}{why}")
        return value
    return parse


def _non_negative(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0 m, got {text!r}")
    return value


def _out_dir(text: str) -> str:
    """A folder that exists or can be made: checked before any work, not after it."""
    path = Path(text).absolute()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file, not a folder; pass a folder "
                                         "path (it is created if missing)")
    existing = next(p for p in (path, *path.parents) if p.exists())
    if not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {existing} is a file, so no folder can "
                                         "be made under it; pass another folder path")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: no permission to write in {existing}; "
                                         "pass a folder you can write")
    return text


def _parse_json(text: str, what: str, example: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not JSON ({exc.msg} at character {exc.pos}); write {what}, e.g. "
            f"{example}") from None


def _json_objects(text: str) -> list[dict[str, Any]]:
    """A JSON array of objects (one scenario's env kwargs each)."""
    example = '\'[{"scenario": "follow"}, {"scenario": "hard_brake"}]\''
    value = _parse_json(text, "a JSON array of objects", example)
    if not isinstance(value, list) or not value or not all(isinstance(v, dict) for v in value):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a non-empty JSON array of objects; write e.g. {example}")
    return value


def _json_object_like(example: str) -> Callable[[str], dict[str, Any]]:
    """A JSON object; the error shows ``example`` (quoted for a shell)."""
    def parse(text: str) -> dict[str, Any]:
        value = _parse_json(text, "a JSON object", example)
        if not isinstance(value, dict):
            kind = {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
                type(value), "number")
            raise argparse.ArgumentTypeError(
                f"{text!r} is a JSON {kind}, not an object; write e.g. {example}")
        return value
    return parse


_json_object = _json_object_like('\'{"preset": "iso3888_2"}\'')


def _delays(text: str) -> str:
    from vdsim_gym.config.delays import parse_delays

    try:
        parse_delays(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text  # the command parses it again: cheap, and main() keeps its str API



def _losses(text: str) -> list[float]:
    """Loss probabilities "0,0.05,0.1" (or percentages "0,5,10%") for --loss."""
    body = text.strip()
    scale = 100.0 if body.endswith("%") else 1.0
    items = [t.strip() for t in body.rstrip("%").split(",")]
    out = []
    for t in items:
        try:
            p = float(t) / scale
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{t!r} is not a number; write loss probabilities like 0,0.05,0.1 "
                "(or 0,5,10%)") from None
        if not 0.0 <= p <= 1.0:
            raise argparse.ArgumentTypeError(f"loss {t!r} is not a probability in [0, 1] "
                                             "(percent: end the list with %)")
        out.append(p)
    return out


TRUST_HELP = ("unpickle the run folders' vecnormalize.pkl and the models' pickled entries "
              "as stable-baselines3 does, which runs whatever the files name: only for "
              "folders you trust. Without it they are read as data only and anything else "
              "is refused, naming it (docs/TRAINING.md, \"Trust\")")


def add_integrator_option(parser: argparse.ArgumentParser) -> None:
    """``--integrator`` (``args.integrator``, default the default physics')."""
    parser.add_argument("--integrator", default=DEFAULT_INTEGRATOR, choices=INTEGRATORS,
                        help=f"physics integrator (default {DEFAULT_INTEGRATOR}; heun on every "
                             "substep is the reference configuration, which reproduces the "
                             "figures published before the training-grade default)")


def add_trust_option(parser: argparse.ArgumentParser) -> None:
    """``--trust`` (``args.trust``, default False) for a command that loads run folders
    or model files: passed on as ``load_policy(..., trust=args.trust)`` /
    ``load_controller(..., trust=args.trust)``."""
    parser.add_argument("--trust", action="store_true", default=False, help=TRUST_HELP)


def run_groups(specs: list[str]) -> list[list[str]]:
    """``--runs`` given once per configuration: each a glob or comma-separated paths,
    expanded and sorted (a pattern that matches nothing stays as written, for the
    command's own missing-folder error)."""
    import glob

    return [sorted(p for part in spec.split(",") for p in (glob.glob(part) or [part]))
            for spec in specs]


__all__ = ["TRUST_HELP", "_delays", "_int_at_least", "_json_object", "_json_object_like",
           "_json_objects", "_losses", "_non_negative", "_number_in", "_out_dir",
           "add_integrator_option", "add_trust_option", "run_groups"]
