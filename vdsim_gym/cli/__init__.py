"""The ``vdsim-gym`` command line: parsers only, the jobs are the library's.

``main`` builds the parser from each command's module and runs a command with its one-line
errors and exit codes (``vdsim_gym.cli.main``; ``main.script`` runs one command under
another name: agents/train.py and agents/compare.py). Each command has a module here,
named after it (``demo``, ``bench``, ``accuracy``, ``handling``, ``validate``,
``delay_budget``, ``sweep``, ``tolerance``, ``compare``, ``train``, ``seeds_report``,
``acc``, ``acc_metrics``, ``dyno_table``, ``render``, ``export``, ``serve``): its
``add_parser`` (options, help, defaults) and the small function that turns the parsed
arguments into the library call that does the work. ``options`` holds the checked option
types they share.
"""

from __future__ import annotations

from vdsim_gym.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
