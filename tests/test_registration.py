"""Registration: string entry points, a fresh process can gym.make, re-import is silent."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import gymnasium as gym

import vdsim_gym.envs


def test_registration_fresh_process_make_and_no_matplotlib(tmp_path) -> None:
    code = (
        "import sys, gymnasium as gym\n"
        "env = gym.make('vdsim_gym:VDSim-DLC-v0')\n"
        "env.reset(seed=0)\n"
        "env.step(env.action_space.sample())\n"
        "assert env.spec.max_episode_steps is None and env.unwrapped.time_limit == 15.0\n"
        "assert 'matplotlib' not in sys.modules, 'physics/env import pulled in matplotlib'\n"
        "print('ok')\n"
    )
    # Run outside the source tree: `python -c` puts the working directory on sys.path, and
    # a checkout's vdsim_gym/ folder (without the built _core) must not shadow the install.
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_registration_is_idempotent_without_warnings() -> None:
    before = {k: v for k, v in gym.registry.items() if k.startswith("VDSim-")}
    assert set(before) == set(vdsim_gym.envs.ENV_IDS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(vdsim_gym.envs)
        vdsim_gym.envs._register_all()
    after = {k: v for k, v in gym.registry.items() if k.startswith("VDSim-")}
    assert after == before


def test_registration_entry_points_are_strings_with_time_limits() -> None:
    for env_id in vdsim_gym.envs.ENV_IDS:
        spec = gym.spec(env_id)
        assert isinstance(spec.entry_point, str)
        assert spec.max_episode_steps is None  # the envs' limits are in seconds
        env = gym.make(env_id)
        # seconds; ACC, Dyno: None, their episodes end with their scenario or cycle
        assert env.unwrapped.time_limit == {"VDSim-DLC-v0": 15.0, "VDSim-PathFollow-v0": 40.0,
                                            "VDSim-ACC-v0": None,
                                            "VDSim-Dyno-v0": None}[env_id]
        env.close()
