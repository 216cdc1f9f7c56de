"""``vdsim_gym.eval.provenance`` is ``vdsim_gym.traces.provenance``: provenance moved to the trace
layer, below the plant that writes traces with it (docs/ARCHITECTURE.md, "Layers"). Its
names stay importable from here."""

from __future__ import annotations

from vdsim_gym.traces.provenance import (
    GIT_DIRTY,
    GIT_SHA,
    VERSION,
    accel_conversion,
    build_info,
    param_hash,
    physics_dict,
    plant_meta,
)

__all__ = ["GIT_DIRTY", "GIT_SHA", "VERSION", "accel_conversion", "build_info", "param_hash",
           "physics_dict", "plant_meta"]
