"""The classical baselines' C++ kernels (csrc/vdsim/baselines.hpp), the
delay-compensating controllers' single-track model (csrc/vdsim/single_track.hpp) and gap
prediction (csrc/vdsim/gap_prediction.hpp), and a trained actor's kernel
(csrc/vdsim/mlp.hpp, ``vdsim_gym.policies.compiled``), the
controllers' way into the core: ``vdsim_gym.controllers`` builds its laws on these (the layers above
the envs reach the core through the layers below, docs/ARCHITECTURE.md, "Layers")."""

from __future__ import annotations

from vdsim_gym._core import (
    ACCKernel,
    BaselineKernel,
    CompositeKernel,
    CycleFollowerKernel,
    IDMKernel,
    MlpPolicyKernel,
    PISpeedKernel,
    SingleTrackModel,
    StanleyKernel,
    predict_gap_obs,
)

__all__ = ["ACCKernel", "BaselineKernel", "CompositeKernel", "CycleFollowerKernel",
           "IDMKernel", "MlpPolicyKernel", "PISpeedKernel", "SingleTrackModel", "StanleyKernel",
           "predict_gap_obs"]
