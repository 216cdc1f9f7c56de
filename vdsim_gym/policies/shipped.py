"""The trained policies that ship with the package (docs/RESULTS.md): their names and run
folders."""

from __future__ import annotations

from pathlib import Path

from vdsim_gym.errors import TrainingError


def shipped_models() -> list[str]:
    """Names of the trained policies that ship with the package (docs/RESULTS.md):
    ``agents/models/<name>`` in a source tree, ``vdsim_gym/_data/models`` in a wheel."""
    from vdsim_gym._data import models_dir

    return sorted(p.name for p in models_dir().iterdir() if (p / "model.zip").is_file())


def shipped_model(name: str) -> Path:
    """The run folder of the shipped policy ``name`` (``shipped_models()``, e.g.
    "dlc_ppo"): ``load_policy(shipped_model("dlc_ppo"))``, or ``str()`` of it as a sweep
    controller spec (``load_controller``). An unknown name is a
    TrainingError listing the shipped ones."""
    from vdsim_gym._data import models_dir

    names = shipped_models()
    if not isinstance(name, str) or name not in names:
        raise TrainingError(f"no shipped model {name!r}; the package ships "
                            f"{', '.join(names) or 'none'}")
    return models_dir() / name
