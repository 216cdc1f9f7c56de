"""The SB3 algorithms by name: the ones training offers (``ALGOS``, ``check_algo``), every
model class a saved model may be loaded as (``algo_class``), and the ``--algo`` check of the
controller specs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vdsim_gym.errors import ConfigError, TrainingError

# Every model class by its upper-case name: (module, class). The training algorithms are
# the lower-case ALGOS; TQC and CrossQ come from sb3-contrib (the train extra).
_MODEL_CLASSES: dict[str, tuple[str, str]] = {
    "PPO": ("stable_baselines3", "PPO"), "SAC": ("stable_baselines3", "SAC"),
    "TD3": ("stable_baselines3", "TD3"), "TQC": ("sb3_contrib", "TQC"),
    "CROSSQ": ("sb3_contrib", "CrossQ"), "A2C": ("stable_baselines3", "A2C"),
    "DDPG": ("stable_baselines3", "DDPG")}
ALGOS = ("ppo", "sac", "td3", "tqc", "crossq")


def check_algo(algo: str) -> str:
    name = str(algo).lower()
    if name not in ALGOS:
        raise TrainingError(f"unknown algorithm {algo!r}; choose from {', '.join(ALGOS)}")
    return name


def algo_class(algo: str) -> Any:
    """The SB3 (or sb3-contrib) class of an algorithm name ("ppo", "tqc", "CrossQ", ...);
    a missing package is an ImportError naming the extra."""
    import importlib

    name = str(algo).upper()
    if name not in _MODEL_CLASSES:
        raise TrainingError(f"unknown algorithm {algo!r}; choose from "
                            f"{', '.join(_MODEL_CLASSES)}")
    module, cls = _MODEL_CLASSES[name]
    try:
        return getattr(importlib.import_module(module), cls)
    except ImportError as exc:
        package = module.replace("_", "-")
        raise ImportError(f"{cls} needs {package}; pip install 'vdsim-gym[train]'") from exc


def check_algo_in(algo: Any, where: Path) -> str:
    """``check_algo`` for a run's config.yml: the error names the file."""
    try:
        return check_algo(algo)
    except TrainingError as exc:
        raise TrainingError(f"{where}: {exc}") from None


# The upper-case names a saved model may be loaded as (--algo of the controller specs).
MODEL_ALGOS = tuple(_MODEL_CLASSES)


def check_model_algo(algo: str) -> str:
    """``--algo`` of a controller spec: a model class name (``MODEL_ALGOS``), upper case."""
    if not isinstance(algo, str) or algo.upper() not in MODEL_ALGOS:
        raise ConfigError(f"--algo {algo!r}: not an SB3 algorithm; use one of "
                          f"{', '.join(MODEL_ALGOS)}")
    return algo.upper()
