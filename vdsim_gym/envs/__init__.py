"""Gymnasium environments of vdsim_gym and their registration.

Registration is data with string entry points; importing this module (which
``import vdsim_gym`` does) registers every id once. Re-importing or reloading does not
register again, so no "overriding environment" warning appears.
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

# Time limits are the envs' own, in seconds of simulated time (``time_limit``; DLC max(15 s,
# 1.5 x course length / speed),
# PathFollow 40 s), so they hold for any control period; a registration in steps would
# cut a 10 ms DLC episode at half the course. (``gym.make(id, max_episode_steps=N)`` still
# adds Gymnasium's TimeLimit of N steps for those who want one.)
# gym.make_vec(id, num_envs=N) builds the C++-batched VDSimVectorEnv (docs/VECTOR.md).
ENV_SPECS: tuple[dict[str, Any], ...] = (
    {"id": "VDSim-DLC-v0", "entry_point": "vdsim_gym.envs.dlc:DoubleLaneChangeEnv",
     "vector_entry_point": "vdsim_gym.envs.vector:make_dlc_vec"},
    {"id": "VDSim-PathFollow-v0", "entry_point": "vdsim_gym.envs.path_follow:PathFollowEnv",
     "vector_entry_point": "vdsim_gym.envs.vector:make_path_follow_vec"},
    {"id": "VDSim-ACC-v0", "entry_point": "vdsim_gym.envs.acc:ACCEnv",
     "vector_entry_point": "vdsim_gym.envs.vector:make_acc_vec"},
    {"id": "VDSim-Dyno-v0", "entry_point": "vdsim_gym.envs.dyno:DynoEnv",
     "vector_entry_point": "vdsim_gym.envs.vector:make_dyno_vec"},
)
ENV_IDS: tuple[str, ...] = tuple(spec["id"] for spec in ENV_SPECS)


def _register_all() -> None:
    for spec in ENV_SPECS:
        if spec["id"] not in registry:
            register(**spec)


_register_all()

__all__ = ["ENV_IDS"]
