"""Gymnasium environments of vdsim_gym and their registration.

Registration is data with string entry points; importing this module (which
``import vdsim_gym`` does) registers every id once. Re-importing or reloading does not
register again, so no "overriding environment" warning appears.
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

# Time limits live here, not in the envs: steps of the default 20 ms control period.
# gym.make_vec(id, num_envs=N) builds the C++-batched VDSimVectorEnv (docs/VECTOR.md).
ENV_SPECS: tuple[dict[str, Any], ...] = (
    # The DLC course (~180 m) takes ~9 s at 20 m/s; 15 s leaves room for slower drivers.
    {"id": "VDSim-DLC-v0", "entry_point": "vdsim_gym.envs.dlc:DoubleLaneChangeEnv",
     "max_episode_steps": 750, "vector_entry_point": "vdsim_gym.envs.vector:make_dlc_vec"},
    # 300 m at the lowest reference speed (8 m/s) takes 37.5 s: 40 s.
    {"id": "VDSim-PathFollow-v0", "entry_point": "vdsim_gym.envs.path_follow:PathFollowEnv",
     "max_episode_steps": 2000,
     "vector_entry_point": "vdsim_gym.envs.vector:make_path_follow_vec"},
)
ENV_IDS: tuple[str, ...] = tuple(spec["id"] for spec in ENV_SPECS)


def _register_all() -> None:
    for spec in ENV_SPECS:
        if spec["id"] not in registry:
            register(**spec)


_register_all()

__all__ = ["ENV_IDS"]
