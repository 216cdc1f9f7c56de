"""``make_sb3_vec_env``: stable-baselines3's VecEnv on the C++ vector session.

This module is light: SB3 (and torch) load at the first call, not at ``import vdsim_gym``.
The class is ``vdsim_gym.sb3_vec_env.VDSimSB3VecEnv`` (in ``_sb3_vec_env``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vdsim_gym._sb3_vec_env import VDSimSB3VecEnv


def make_sb3_vec_env(env_id: str, num_envs: int, *, seed: int | None = None,
                     threads: int = 0, **kwargs: Any) -> VDSimSB3VecEnv:
    """An SB3 ``VecEnv`` of ``num_envs`` ``env_id`` envs stepped by the C++ vector session.

    Args:
        env_id: a registered VDSim id.
        num_envs: batch size.
        seed: env i is seeded ``seed + i`` at the first ``reset()`` (as ``VecEnv.seed``).
        threads: C++ worker threads; 0 = all cores from 16 envs up (inline below),
            1 = inline.
        **kwargs: env kwargs (``latency``, ``level``, ...), ``per_env_kwargs`` and
            ``max_episode_steps`` (default: the registration's), as ``VDSimVectorEnv``.
    """
    from vdsim_gym._sb3_vec_env import VDSimSB3VecEnv
    from vdsim_gym.envs.vector import VDSimVectorEnv

    venv = VDSimVectorEnv(env_id, num_envs, threads=threads, autoreset_mode="same_step",
                          **kwargs)
    env = VDSimSB3VecEnv(venv)
    if seed is not None:
        env.seed(seed)
    return env


def __getattr__(name: str) -> Any:
    if name == "VDSimSB3VecEnv":
        from vdsim_gym._sb3_vec_env import VDSimSB3VecEnv

        return VDSimSB3VecEnv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
