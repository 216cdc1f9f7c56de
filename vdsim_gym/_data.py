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


def _agents_folder(name: str, what: str) -> Path:
    """``agents/<name>``: a wheel carries it as ``vdsim_gym/_data/<name>``; a source tree
    has it at the top level."""
    candidates = (_PKG / "_data" / name, _PKG.parent / "agents" / name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"{what} folder not found (looked in {candidates[0]} and {candidates[1]}); "
        "reinstall the package with `pip install .`")


@cache
def hyperparams_dir() -> Path:
    """``agents/hyperparams`` (rl-zoo3 files of agents/train.py)."""
    return _agents_folder("hyperparams", "hyperparameter")


@cache
def models_dir() -> Path:
    """``agents/models`` (the trained policies of docs/RESULTS.md, one run folder each)."""
    return _agents_folder("models", "shipped models")
