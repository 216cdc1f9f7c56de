"""vdsim_gym: Gymnasium environments for vehicle control under command latency."""

from __future__ import annotations

try:
    from vdsim_gym import _core  # noqa: F401  (a missing build fails here, explained below)
except ImportError as _exc:  # the source tree without a build (or a broken install)
    from pathlib import Path as _Path

    _here = _Path(__file__).resolve().parent
    raise ImportError(
        f"vdsim_gym's compiled core (vdsim_gym._core) is missing: Python imported the "
        f"package from {_here}, which has no built extension. Install it first: "
        "`pip install .` (or the editable dev install in README.md, 'Developing'), and run "
        "Python from outside the repository root, or after that install."
    ) from _exc
from vdsim_gym import envs as _envs  # noqa: F401  (importing registers the Gymnasium ids)
from vdsim_gym.config.latency import (
    EmpiricalLatency,
    FixedLatency,
    LatencyModel,
    MeasuredLatency,
    NormalLatency,
    UniformLatency,
)
from vdsim_gym.config.network import NetworkModel
from vdsim_gym.config.vehicle import ActuatorConfig, VehicleConfig, load_vehicle
from vdsim_gym.errors import ConfigError
from vdsim_gym.sb3_vec_env import make_sb3_vec_env
from vdsim_gym.sim.plant import Plant
from vdsim_gym.traces.provenance import GIT_DIRTY as __git_dirty__
from vdsim_gym.traces.provenance import GIT_SHA as __git_sha__
from vdsim_gym.traces.provenance import VERSION as __version__

__all__ = [
    "ActuatorConfig",
    "ConfigError",
    "EmpiricalLatency",
    "FixedLatency",
    "LatencyModel",
    "MeasuredLatency",
    "NetworkModel",
    "NormalLatency",
    "Plant",
    "UniformLatency",
    "VehicleConfig",
    "__git_dirty__",
    "__git_sha__",
    "__version__",
    "load_vehicle",
    "make_sb3_vec_env",
]

