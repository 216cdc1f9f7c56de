"""The ``vdsim-gym`` command line and its jobs, which only import the library.

``main`` parses and dispatches (``vdsim_gym.cli.main``); each job is a module here:
``demo``, ``bench`` and ``bench_vector`` (throughput, side by side), ``accuracy`` (the
integrator gate), ``delay_budget`` (the baseline's e_y against computation delay),
``sweep`` (the sweep command's parsing, tables and plots), ``train`` and ``compare``
(agents/train.py and agents/compare.py are these commands under their own names,
``main.script``) and ``validate`` (``vdsim_gym.analysis.validation``'s table).
"""

from __future__ import annotations

from vdsim_gym.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
