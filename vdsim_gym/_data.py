"""Locate the YAML data (vehicles, scenarios) in an installed wheel or a source tree."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PKG = Path(__file__).resolve().parent


@cache
def data_root() -> Path:
    """The ``envs/`` data folder.

    A wheel carries it as ``vdsim_gym/_data/envs`` (installed by CMake); an editable
    install runs the package from the source tree, where it is the top-level ``envs/``.
    """
    for candidate in (_PKG / "_data" / "envs", _PKG.parent / "envs"):
        if (candidate / "vehicles").is_dir():
            return candidate
    raise FileNotFoundError(
        f"vdsim_gym data folder not found (looked in {_PKG / '_data' / 'envs'} and "
        f"{_PKG.parent / 'envs'}); reinstall the package with `pip install .`"
    )


def vehicles_dir() -> Path:
    return data_root() / "vehicles"


def scenarios_dir() -> Path:
    return data_root() / "scenarios"


def data_dir() -> Path:
    """Data files (lead profiles, drive cycles)."""
    return data_root() / "data"


def cycles_dir() -> Path:
    """Drive cycles of VDSim-Dyno-v0 (YAML segment lists)."""
    return data_root() / "cycles"


@cache
def hyperparams_dir() -> Path:
    """``agents/hyperparams`` (rl-zoo3 files of agents/train.py): a wheel carries it as
    ``vdsim_gym/_data/hyperparams``; a source tree has it at the top level."""
    for candidate in (_PKG / "_data" / "hyperparams", _PKG.parent / "agents" / "hyperparams"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"hyperparameter folder not found (looked in {_PKG / '_data' / 'hyperparams'} and "
        f"{_PKG.parent / 'agents' / 'hyperparams'}); reinstall the package with `pip install .`"
    )


@cache
def models_dir() -> Path:
    """``agents/models`` (the trained policies of docs/RESULTS.md, one run folder each): a
    wheel carries it as ``vdsim_gym/_data/models``; a source tree has it at the top level."""
    for candidate in (_PKG / "_data" / "models", _PKG.parent / "agents" / "models"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"shipped models folder not found (looked in {_PKG / '_data' / 'models'} and "
        f"{_PKG.parent / 'agents' / 'models'}); reinstall the package with `pip install .`"
    )
