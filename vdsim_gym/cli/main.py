"""``vdsim-gym`` command line: demo, bench, accuracy, handling, validate, delay-budget,
sweep, tolerance, compare, train, seeds-report, benchmark, acc, acc-metrics, dyno-table,
render, export, serve.

A user error (a bad option value, an unknown key, a missing extra, an --out that is a
file) prints one line, ``vdsim-gym <command>: error: <message>``, and exits with 2, as
argparse does; Ctrl-C (and SIGTERM during a training) prints "interrupted" and exits with
130. Anything else is a bug and keeps its traceback (set VDSIM_GYM_TRACEBACK=1 to get one
for user errors too).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from vdsim_gym.cli import (
    acc,
    acc_metrics,
    accuracy,
    bench,
    benchmark,
    compare,
    delay_budget,
    demo,
    dyno_table,
    export,
    handling,
    render,
    seeds_report,
    serve,
    sweep,
    tolerance,
    train,
    validate,
)
from vdsim_gym.errors import VDSimError

# Each command's parser (``cli/<command>.py``: ``add_parser``), in the order of
# `vdsim-gym --help`.
ADDERS = (demo.add_parser, bench.add_parser, accuracy.add_parser, handling.add_parser,
          validate.add_parser, delay_budget.add_parser, sweep.add_parser,
          tolerance.add_parser, compare.add_parser, train.add_parser,
          seeds_report.add_parser, benchmark.add_parser, acc.add_parser, acc_metrics.add_parser,
          dyno_table.add_parser, render.add_parser, export.add_parser, serve.add_parser)
TRACEBACK_ENV = "VDSIM_GYM_TRACEBACK"
# Extras that provide an optional import, for the hint of an ImportError.
_EXTRAS = {"matplotlib": "plot", "stable_baselines3": "train", "torch": "train",
           "ray": "ray", "tqdm": "all", "mcap": "export", "pygame": "render",
           "imageio_ffmpeg": "render", "vehiclemodels": "validation", "osqp": "mpc",
           "scipy": "mpc", "rliable": "stats"}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (no usage block) and a record of the options that
    take a value (see ``_join_dash_values``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.options: set[str] = set()  # before super(): it adds -h through add_argument
        self.value_options: set[str] = set()
        self.commands: dict[str, _Parser] = {}  # build_parser's: name -> subcommand parser
        super().__init__(*args, **kwargs)

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.options.update(action.option_strings)
        if action.option_strings and action.nargs is None:
            self.value_options.update(action.option_strings)
        return action

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> _Parser:
    parser = _Parser(prog="vdsim-gym", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for add in ADDERS:
        add(sub)
    for p in sub.choices.values():
        parser.options |= p.options
        parser.value_options |= p.value_options
    parser.commands = dict(sub.choices)
    return parser


def command_parser(command: str, prog: str) -> _Parser:
    """The parser of ``vdsim-gym <command>`` as a program of its own, named ``prog``
    (agents/train.py is ``vdsim-gym train``): the same options, defaults and help."""
    parser: _Parser = build_parser().commands[command]
    parser.prog = prog
    return parser


# ---------------------------------------------------------------------------- errors


def _join_dash_values(argv: list[str], parser: _Parser) -> list[str]:
    """``--delays -5ms`` as ``--delays=-5ms``: argparse takes a value that starts with "-"
    (and is not a plain negative number) for an option and says only "expected one
    argument"; joined, the value reaches its check and gets a message that names it."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        tok = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        if tok in parser.value_options and nxt is not None and nxt.startswith("-") \
                and nxt != "--" and nxt.split("=")[0] not in parser.options:
            out.append(f"{tok}={nxt}")
            i += 2
            continue
        out.append(tok)
        i += 1
    return out


def _user_message(exc: BaseException, args: argparse.Namespace) -> str | None:
    """The message of a user error; None for anything else (a bug: keep the traceback).
    A user error is a ``VDSimError`` (every check of the package raises one), an --out
    that cannot be written, or a missing optional extra."""
    if isinstance(exc, VDSimError):
        return str(exc)
    if isinstance(exc, (FileExistsError, NotADirectoryError, PermissionError)):
        return (f"cannot write {exc.filename!r}: {exc.strerror}; pass --out a folder you "
                "can write")
    if isinstance(exc, ImportError):
        name = (exc.name or "").split(".")[0]
        if name == "vdsim_gym":
            return None  # a broken install or a bug, not a missing extra
        extra = _EXTRAS.get(name)
        hint = f"; pip install 'vdsim-gym[{extra}]'" if extra and "pip install" not in \
            str(exc) else ""
        if name == "matplotlib" and hasattr(args, "no_plot"):
            hint += " or pass --no-plot"
        return f"{exc}{hint}"
    return None


def _run(args: argparse.Namespace, prog: str) -> int:
    """Runs a parsed command: a user error as one line ``<prog>: error: <message>`` and
    exit 2, Ctrl-C as "interrupted" and exit 130."""
    try:
        return args.func(args)
    except KeyboardInterrupt:
        sys.stdout.flush()
        print("interrupted", file=sys.stderr, flush=True)
        raise SystemExit(130) from None
    except (VDSimError, ImportError, OSError) as exc:
        message = _user_message(exc, args)
        if message is None or os.environ.get(TRACEBACK_ENV):
            raise
        sys.stdout.flush()
        one_line = " ".join(message.split())
        print(f"{prog}: error: {one_line}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    raw = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(_join_dash_values(raw, parser))
    return _run(args, f"vdsim-gym {args.command}")


def script(command: str, prog: str, argv: Sequence[str] | None = None) -> int:
    """``vdsim-gym <command>`` run as the program ``prog`` (the thin scripts
    agents/train.py and agents/compare.py): its parser (``command_parser``) and the same
    one-line errors, exit codes and Ctrl-C handling as ``main``, named ``prog``."""
    parser = command_parser(command, prog)
    raw = list(sys.argv[1:] if argv is None else argv)
    return _run(parser.parse_args(_join_dash_values(raw, parser)), prog)


if __name__ == "__main__":
    sys.exit(main())
